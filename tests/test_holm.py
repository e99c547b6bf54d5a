"""Holm's correction over a chapter's claims (issue 53): stats.holm's step-down adjustment, and
claims.one_sided_p reading a decision's arms by the test behind its interval."""

import numpy as np
import pytest
from scipy import stats as st

from modlib import claims, stats


def test_holm_adjusts_step_down_and_keeps_the_order():
    got = stats.holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005}, alpha=0.05)
    # sorted: d 0.005*4=0.02, a 0.01*3=0.03, c 0.03*2=0.06, b max(0.06, 0.04)=0.06
    assert got["d"] == pytest.approx((0.02, True)) and got["a"] == pytest.approx((0.03, True))
    assert got["c"][0] == pytest.approx(0.06) and not got["c"][1]
    assert got["b"][0] == pytest.approx(0.06) and not got["b"][1]
    assert stats.holm({"x": 0.9}, alpha=0.025) == {"x": (0.9, False)}
    with pytest.raises(ValueError, match="alpha"):
        stats.holm({"x": 0.1}, alpha=0)


def _decision(key, effect):
    return claims.Decision(key, stats.REPRODUCED, "", effect.mean, effect.low, effect.high, effect.units,
                           arms=effect.arms, how=effect.how)


def test_one_sided_p_is_the_test_behind_the_interval_on_the_registered_side():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.1, 0.05, 30), rng.normal(0.0, 0.05, 30)
    key = "bridge/repair-excl-needs-mask-b"  # direction +1
    p = claims.one_sided_p(_decision(key, stats.paired(a, b)))
    assert p == pytest.approx(st.ttest_1samp(a - b, 0.0, alternative="greater").pvalue)
    assert claims.one_sided_p(_decision(key, stats.paired(b, a))) > 0.99  # the other side
    u = claims.one_sided_p(_decision(key, stats.unpaired(a, b)))
    assert u == pytest.approx(st.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue)
    x = np.arange(50.0)
    rho = claims.one_sided_p(_decision("bridge/predicts-b", stats.correlation(x, x + rng.normal(0, 5, 50))))
    assert rho < 1e-6


def test_every_claim_of_chapter_seven_is_corrected_together():
    saved = claims.saved("bridge")
    if not saved:
        pytest.skip("book/ledger/bridge.json is written when the page runs at full")
    h = claims.holm("bridge", made=saved)
    assert set(h) == set(saved)
    for k, (outcome, p, q, ok) in h.items():
        assert q >= p and ok == (q <= 0.025), k
        if outcome == stats.REPRODUCED:  # the rule's interval clears 0: uncorrected, one-sided p under 2.5 %
            assert p < 0.025 + 1e-9, (k, p)


def test_chapter_sevens_holm_counts_its_claims_not_its_controls():
    # issue 57: the random-mask controls are decided like claims, but a control that holds counts
    # against rule 2, so Holm's family on the page is the claims alone, named in plain words
    from modlib.bridge import findings

    rng = np.random.default_rng(1)
    a, b = rng.normal(0.1, 0.05, 30), rng.normal(0.0, 0.05, 30)
    made = {f"bridge/{cid}": _decision(f"bridge/{cid}", stats.paired(a, b))
            for cid in ("repair-excl-b", "repair-excl-needs-mask-b", "repair-excl-random-b")}
    assert findings.is_control("repair-excl-random-a") and not findings.is_control("repair-excl-a")
    frame = findings.holm_frame(made)
    assert len(frame) == 2 and not frame["claim"].str.contains("repair-excl").any()  # plain names, no ids
    text = findings.holm_statement(made).text
    assert text.startswith("Over the 2 claims of the chapter (its control, ")
    assert "2 of the 2 that hold still clear 0" in text


def test_chapter_sevens_late_claims_are_families_of_their_own():
    # issue 53: claims registered after the chapter's correction was read are corrected apart, one family
    # per batch, so that the correction read before does not move; a bad family name is refused
    from modlib.bridge import findings

    rng = np.random.default_rng(2)
    a, b = rng.normal(0.1, 0.05, 30), rng.normal(0.0, 0.05, 30)
    ids = ("repair-unseen-b", "repair-unseen-needs-mask-b", "excl-vs-left5-sized-mnist-fresh",
           "excl-vs-right5-ranked-mnist-fresh", "repair-excl-mnist-fresh")
    made = {f"bridge/{cid}": _decision(f"bridge/{cid}", stats.paired(a, b)) for cid in ids}
    assert [findings.family(cid) for cid in ids] == ["chapter", "blind", "sized", "ranked", "fresh"]
    for name, cid in zip(("chapter", "blind", "sized", "ranked", "fresh"), ids):
        assert list(findings.holm_frame(made, family=name)["claim"]) == [findings.plain_name(cid)]
    assert findings.holm_statement(made, family="blind").text.startswith("Over the 1 claims of rule 2 with blind masks against random masks,")
    with pytest.raises(ValueError, match="family='late'.*chapter, fresh, blind, sized, ranked"):
        findings.holm_frame(made, family="late")


def test_a_late_family_read_inside_the_chapters_family_says_whether_it_still_clears_0():
    from modlib.bridge import findings

    rng = np.random.default_rng(3)
    a = rng.normal(0.1, 0.05, 30)
    made = {f"bridge/{cid}": _decision(f"bridge/{cid}", stats.paired(a, a - 0.1 + rng.normal(0, 0.05, 30)))
            for cid in ("repair-unseen-b", "repair-excl-b", "repair-unseen-needs-mask-b")}
    text = findings.late_in_chapter("blind", made)
    assert text.startswith("Corrected with the chapter's 2 claims instead, as one family of 3")
    assert "the one that holds still clears 0" in text
    with pytest.raises(ValueError, match="family='chapter'.*blind, ranked, sized"):
        findings.late_in_chapter("chapter", made)
