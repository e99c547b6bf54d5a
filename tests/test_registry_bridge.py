"""Chapter 7's verdicts come from its claims registry (issue 50): every verdict the page prints on the
stored full results is decided for a claim of ``modlib/bridge/claims.toml``, every registered claim
is printed, the ledger the page saves holds the same claims, and the registry's changes since
registration are amendments on the record (nothing computed: the stored results are read)."""

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from modlib import bridge as br
from modlib import claims, results, stats
from modlib.bridge import (cut_controls, digit_cut, digit_surgery, outside_cut, surgery_fresh, surgery_ranked, surgery_sized,
                           surgery_target)
from modlib.bridge import digits as bd
from modlib.bridge import findings
from modlib.bridge import sprites as brs
from modlib.bridge import matched, unseen, unseen_controls, unseen_random

ROOT = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")
CHAPTER = "bridge"


@pytest.fixture(scope="module")
def printed():
    """Every claim the page prints at full, as the page decides them, and the decisions recorded."""
    b = br.settings("full")
    toys = (b, br.fresh(b))  # the chapter's networks, and the fresh ones of the claims' confirmatory copies
    names = [n for t in toys for n in br.result_names(t) + [f"{br.RANDOM_X2}-{f}{br.suffix(t)}" for f in t.formulations]]
    names += [bd.RESULT] + brs.result_names(brs.settings("full"))
    names += [f"{part.RESULT}-{f}" for part in (unseen, matched, unseen_controls, unseen_random) for f in b.formulations]
    names += digit_surgery.names("full") + surgery_fresh.names("full") + [digit_cut.RESULT, digit_cut.RANDOM]
    names += surgery_target.names("full") + [cut_controls.LEFT, cut_controls.SHIFTED]
    names += cut_controls.combined_names("full") + surgery_sized.recipe_names("full") + surgery_sized.names("full")
    names += surgery_ranked.recipe_names("full") + surgery_ranked.names("full")
    if not all((ROOT / "notebooks" / "results" / "full" / CHAPTER / f"{n}.json").exists() for n in names):
        pytest.skip("chapter 7's full results are not all stored")
    claims.forget(CHAPTER)
    s = br.toy_settings("full", b)
    with results.store_only():
        arrays, fresh = ({f: br.with_random_exclusive(br.with_exclusive(s, br.fetch("full", f, CPU, t).arrays, f,
                                                                          t.first_seed),
                                                      br.fetch_random_exclusive("full", f, CPU, t).arrays)
                          for f in t.formulations} for t in toys)
        mn = bd.fetch("full", CPU).arrays
        sa = {m: r.arrays for m, r in brs.run("full", CPU).items()}
    found = [c for f, a in arrays.items() for c in findings.claims(a, f) + findings.structure_claims(a, f)]
    found += [c for f, a in fresh.items() for c in findings.claims(a, f, True) + findings.structure_claims(a, f, True)]
    with results.store_only():
        blind = {f: br.merged(br.merged(br.merged(a, unseen.fetch("full", f, CPU).arrays),
                                        unseen_controls.fetch("full", f, CPU).arrays),
                              unseen_random.fetch("full", f, CPU).arrays) for f, a in arrays.items()}
        found += [c for f, a in arrays.items()
                  for c in findings.unseen_claims(blind[f], f) + findings.unseen_controls_claims(blind[f], f)
                  + findings.matched_claims(br.merged(a, matched.fetch("full", f, CPU).arrays), f)]
    found += findings.digit_claims(mn)
    with results.store_only():  # the surgery on the CNNs
        found += findings.surgery_claims(digit_surgery.stacked([r.arrays for r in digit_surgery.run("full", CPU)]))
        fresh_cut = digit_surgery.stacked([r.arrays for r in surgery_fresh.run("full", CPU)[1]])  # fresh CNNs
        found += findings.surgery_claims(fresh_cut, fresh=True)
        found += findings.cut_claims(digit_cut.fetch("full", CPU).arrays, fresh_cut,  # the cut without a mask
                                     digit_cut.fetch_random("full", CPU).arrays)
        found += findings.target_claims(digit_surgery.stacked([r.arrays for r in surgery_target.run("full", CPU)]),
                                        fresh_cut)  # rule 2 with masks for other targets
        for part, how in ((surgery_sized, "sized"), (surgery_ranked, "ranked")):  # ... that fit, as many weights
            found += findings.size_matched_claims(digit_surgery.stacked([r.arrays for r in part.run("full", CPU)[1]]), how)
        cut = digit_cut.fetch("full", CPU).arrays
        found += findings.left_claims(cut_controls.fetch_left("full", CPU).arrays, cut)  # the cut's controls
        found += findings.shifted_claims(cut_controls.fetch_shifted("full", CPU).arrays)
        found += findings.combined_claims(digit_surgery.stacked([r.arrays for r in cut_controls.run_combined("full", CPU)]),
                                          fresh_cut, cut)
        found += findings.outside_claims(digit_surgery.stacked([r.arrays for r in outside_cut.run("full", CPU)]))
    found += [c for cs in findings.all_sprite_claims(sa).values() for c in cs]
    return {c.name: c for c in found}, dict(claims.decisions(CHAPTER)), arrays


def test_every_printed_verdict_is_a_registered_claim(printed):
    found, _, _ = printed
    registered = claims.registry(CHAPTER)
    assert all(c.verdict is not None and c.verdict.claim == f"{CHAPTER}/{name}" for name, c in found.items())
    assert set(found) == set(registered)  # every registered claim is printed, each once
    assert all(registered[name].own for name in found)  # the book's own hypotheses: holds / does not hold


def test_the_ledger_holds_exactly_the_registered_claims(printed):
    _, decided, _ = printed
    saved = claims.saved(CHAPTER)
    if not saved:
        pytest.skip("book/ledger/bridge.json is written when the page runs at full")
    assert {k.split("/", 1)[1] for k in saved} == {c.id for c in claims.registry(CHAPTER).values()}
    assert {k: d.outcome for k, d in saved.items()} == {k: d.outcome for k, d in decided.items()}


def test_built_is_gated_on_the_networks_it_compares_and_prints_the_verdict_as_registered(printed):
    # issue 50: the density condition over the 30 failing networks of (a) (2.05 apart) leaves "built"
    # undecided; over all 100 it was inside (1.96), and as registered (no condition) the claim holds
    found, decided, arrays = printed
    a = arrays["a"]
    fails = findings.failing(a)
    ratio = lambda pick: np.median(a["kept_untrained"][pick]) / np.median(a["kept_y1"][pick])  # noqa: E731
    assert ratio(fails) > stats.DENSITY_RATIO >= ratio(slice(None))
    built = found["built-a"]
    assert built.verdict.outcome == stats.UNDECIDED and "networks compared" in built.verdict.why
    assert decided["bridge/built-a"].registered_outcome == stats.REPRODUCED
    assert "Changed after the results were seen" in built.text and built.text.endswith("registered: holds*.")
    assert "as registered: holds" in findings.verdict_table({f: [c for c in found.values() if c.name.endswith(f"-{f}")]
                                                            for f in ("a", "b")}, ("built",)).iloc[0, 1]


def test_rule_two_is_registered_as_post_hoc():
    registered = claims.registry(CHAPTER)
    for f in ("a", "b"):
        for kind in ("repair-excl", "repair-excl-vs-random"):
            assert registered[f"{kind}-{f}"].note.startswith("post hoc: designed after rule 1's results were seen")
        for kind in ("repair-excl-random", "repair-excl-needs-mask"):  # issue 53: its control, after a review saw it
            assert registered[f"{kind}-{f}"].note.startswith("control of a post hoc rule")
        assert not registered[f"repair-{f}"].note  # rule 1 was planned
    # the page says "designed after rule 1's results were seen", not "post hoc": the boxes' key uses
    # that word for every claim written down after its data, rule 1's too (issue 57)
    assert findings.KINDS["repair-excl"].startswith("(rule 2)") and findings.KINDS["repair"].startswith("(rule 1)")
    assert not any("post hoc" in k for k in (*findings.KINDS.values(), *findings.WHOLE.values()))


def test_the_confirmatory_copies_were_registered_before_their_networks_were_trained(printed):
    """Issue 53: every claim on the toy was written down after its results were seen; each has a copy
    that reads fresh networks, with the same fields, registered before those were computed (the
    registering commit against the results' own records, :func:`modlib.claims.written`)."""
    registered = claims.registry(CHAPTER)
    toy = [c for c in registered.values() if any(r.startswith("toy-") for r in c.reads)
           and c.section == "bridge-all-results"]  # not the copies, the blind masks' or "built" matched
    assert len(toy) == 20
    for c in toy:
        copy = registered[c.id + br.FRESH]
        assert claims.written(c) == "after" and claims.written(copy) == "before", c.id
        assert copy.reads == tuple(r + br.FRESH for r in c.reads) and copy.section == "bridge-fresh"
        assert not copy.amendments and copy.note.startswith(f"confirmatory copy of {c.id} (")
        same = ("whose", "arms", "direction", "margin", "trained", "mutations")
        assert all(getattr(copy, k) == getattr(c, k) for k in same), c.id
        assert copy.measure.endswith(c.measure.split(":", 1)[1]) and copy.units != c.units
    # the exploratory kept-share pattern, a hypothesis read on the fresh networks alone
    for f in ("a", "b"):
        kept = registered[f"kept-x2-predicts-{f}{br.FRESH}"]
        # committed while its networks were being trained, before any result was stored: counted post hoc
        assert claims.written(kept) == "after" and kept.reads == (f"toy-{f}{br.FRESH}",)
        assert f"kept-x2-predicts-{f}" not in registered


def test_the_blind_masks_claims_were_registered_before_their_masks_were_trained(printed):
    """Issue 53: the claims on masks that never saw the held-out cell (their controls and rule 2's
    random-masks control too), and on
    "built" at matched density, were registered after the networks they read were stored and seen,
    and before their own masks were trained (``written``: "newest")."""
    found, decided, _ = printed
    blind = [c for c in claims.registry(CHAPTER).values() if c.section == "bridge-unseen"]
    assert sorted(c.id for c in blind) == sorted(f"{k}-{f}" for k in findings.UNSEEN_KINDS for f in ("a", "b"))
    dense = [c for c in claims.registry(CHAPTER).values() if c.section == "bridge-matched"]  # "built" matched
    assert sorted(c.id for c in dense) == ["built-matched-a", "built-matched-b"]
    for c in blind + dense:
        parts = (matched,) if c in dense else (unseen, unseen_controls) if c.id.startswith(
            ("not-any-", "built-")) else (unseen, unseen_random) if c.id.startswith(
            ("repair-unseen-needs-mask-", "repair-unseen-random-")) else (unseen,)
        assert claims.written(c) == "newest"
        assert c.reads == (f"toy-{c.id[-1]}", *(f"{p.RESULT}-{c.id[-1]}" for p in parts)), c.id
        assert found[c.id].verdict.claim == f"{CHAPTER}/{c.id}" and f"{CHAPTER}/{c.id}" in decided


def test_the_late_claims_were_registered_before_their_results_in_families_of_their_own(printed):
    """Issue 53: rule 2 with blind masks against random masks, and rule 2 on the fresh CNNs against
    masks for other targets matched in size (at random, then by rank), were registered before the
    results they read were computed, each batch a Holm family of its own (so the chapter's
    correction, read before, does not move)."""
    found, decided, _ = printed
    late = {cid: c for cid, c in claims.registry(CHAPTER).items()
            if cid.removesuffix(br.FRESH).rsplit("-", 1)[0] in findings.LATE}
    assert sorted(late) == ["excl-vs-left5-ranked-mnist-fresh", "excl-vs-left5-sized-mnist-fresh",
                            "excl-vs-right5-ranked-mnist-fresh", "excl-vs-right5-sized-mnist-fresh",
                            "repair-unseen-needs-mask-a", "repair-unseen-needs-mask-b"]
    for cid, c in late.items():  # all their own results; the blind pair and the left-digit ranked claim read
        new = "sized" in cid or "right5-ranked" in cid  # toy-<f> or target-recipe-mnist too, seen before
        assert claims.written(c) == ("before" if new else "newest"), cid
        assert findings.family(cid) == ("sized" if "sized" in cid else "ranked" if "ranked" in cid else "blind")
        assert f"{CHAPTER}/{cid}" in decided and found[cid].verdict.claim == f"{CHAPTER}/{cid}"
    chapter = findings.holm_frame(family="chapter")
    assert not chapter["claim"].isin([findings.plain_name(cid) for cid in late]).any()


def test_the_box_and_the_summary_give_the_verdict_as_first_registered_first(printed):
    """Issue 57, one order for the book (chapter 4's): an amended claim's verdict as first registered,
    then the amendment and its verdict, in the box, the body and the Summary."""
    import json

    found, _, _ = printed
    said = findings.mark_of([found["built-a"]], "built-a")
    assert claims.untagged(said).startswith("as first registered: holds; as amended after the results were "
                                            "seen: ? cannot be decided here: the two masks are"), said
    # reader 17: the verdict as first registered is post hoc too, and labelled so
    assert said.startswith("as first registered: holds (post hoc); as amended"), said
    cells = json.loads((ROOT / "notebooks" / "bridge.ipynb").read_text())["cells"]
    text = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    box = next(t for t in text if "What we found" in t)
    under = next(t for t in text if "In plain words, the third row" in t)
    for shown in (box, under):
        assert shown.index("As first registered") < shown.index("br-built-first-a"), shown
        assert not re.search(r"br-found-built-[ab]`", shown) and "br-v-built-a" not in shown
    assert box.index("br-built-first-a") < box.index("br-built-now-a")


def test_each_claim_states_its_bar_for_trained():
    """Each claim's bar for "trained" says what it reads (a median), in its own words or as another
    registered claim's ("as repair-excl-mnist", or "as cut-dense-mnist; ..." or "as <id>, with ..." with a
    condition of its own)."""
    registered = claims.registry(CHAPTER)
    for c in registered.values():
        bar = c.trained
        while bar.startswith("as ") and re.split("[;,]", bar[3:])[0] in registered:  # "as <id>[; or , more]"
            bar = registered[re.split("[;,]", bar[3:])[0]].trained
        assert bar and ("median" in bar), c.id
    assert "The median, not every seed, because" in claims.registry(CHAPTER)["inside-a"].trained


def test_the_page_says_why_built_b_was_undecided_as_first_registered(printed):
    """Reader 14: (b)'s "built" reads ? under the rule as first registered, before any density
    condition, because its lead falls short of the margin while its interval reaches it; the page says
    so beside the density reason, so that the lead is not read as one that counts at matched density."""
    found, _, arrays = printed
    first = findings.built_first("built-b")
    assert claims.untagged(first).startswith("? cannot be decided here, as its lead, +4 points (+2 to +6), "
                                             "falls short of the margin of +5 points"), first
    # its lead reaches the margin: no such reason; reader 17: post hoc as the amended verdict beside it
    assert findings.built_first("built-a") == "holds (post hoc)"
    assert first.startswith("? cannot be decided here (post hoc), as"), first
    # reader 15: the ratio that decides (a), 2.05 against 2, printed as it decides, and what the first
    # amendment (medians over all networks, 1.96) gave, post hoc too (reader 17)
    turns = findings.built_turns(arrays)
    assert turns == ("Formulation (a)'s verdict turns on 2.05 against the factor of 2: with the medians over "
                     "all networks (1.96), it read: holds (post hoc)."), turns
    assert "2.05 times apart" in found["built-a"].text and "2.38 times apart" in found["built-b"].text
    assert findings.with_first(found["built-b"]).endswith("while its interval reaches it.")
    assert findings.with_first(found["built-a"]) == found["built-a"].text


def test_the_tables_say_worse_and_mark_what_holm_undoes(printed):
    """Reader 14: rule 1's cut is worse than a random one (its interval lies wholly below 0), and the
    decoders' "holds" that Holm's correction no longer clears carries a mark explained under the table."""
    found, _, _ = printed
    by_f = {f: [c for c in found.values() if c.name.endswith(f"-{f}")] for f in ("a", "b")}
    table = findings.verdict_table(by_f, ("repair-vs-random", "predicts"))
    assert list(table.iloc[:, 3]) == ["worse than a random cut",
                                      "not at the registered size: the whole interval lies below 0.3"]
    mono = [c for c in found.values() if c.name.endswith("-monolithic")]
    sprite = findings.sprite_verdict_table({"monolithic": mono})
    cell = sprite.iloc[0, 1]
    assert cell == f"holds {findings.HOLM_MARK}", cell  # "renders-monolithic"
    assert findings.table_note(sprite, []).startswith(findings.HOLM_MARK)


def test_the_appendix_says_what_each_amendment_changed_and_reads_one_sided(printed):
    """Reader 15: the appendix's line for an amended claim says what each amendment changed, from the
    registry's own record (the body's account: the density condition added, then its medians taken
    over the failing networks; the correlation read one-sided in the registered direction), the CNNs'
    "built" too; a "does not hold" of a one-sided claim reads as one-sided; the kept-share correlations
    are labelled exploratory; and Holm's table gives no Fisher z p where 3 seeds cannot give one."""
    found, decided, arrays = printed
    steps = ("Amended twice after the results were seen. What counts as a unit: first \u201c(no density "
             "condition)\u201d \u2192 \u201cthe two masks' median kept shares within a factor of 2, taken over all "
             "networks\u201d, then \u201call networks\u201d \u2192 \u201cthe failing ones\u201d")
    for cid in ("built-a", "built-b", "built-mnist"):
        line = findings.appendix_text(found[cid])
        assert steps in line and "was revised" not in line, line
    assert findings.appendix_text(found["built-a"]).endswith("Under the claim as registered: holds*.")
    for cid in ("predicts-a", "predicts-b"):
        line = findings.appendix_text(found[cid])
        assert "\u2192 \u201cone-sided, in the registered direction" in line and "was revised" not in line, line
        assert "the whole interval lies below +0.30" in line and "margin of no effect" not in line, line
    assert all(findings.EXPLORATORY in s.text for f, a in arrays.items() for s in findings.statements(a, f)
               if s.name.startswith("kept-predicts"))
    # the cut's controls (amended when the CNNs trained again on another CPU were not the stored ones): the
    # results a claim reads, a list, shown whole; a bar that grew shown whole, not as nothing become something
    line = findings.appendix_text(found["cut-dense-vs-left-mnist"])
    assert "\u201ccut-mnist, cut-mnist-left\u201d \u2192 \u201ccut-mnist-left\u201d" in line, line
    assert line.endswith("Under the claim as registered: ? cannot be decided here*."), line
    line = findings.appendix_text(found["excl-cut-vs-random-cut-mnist-fresh"])
    assert "\u201cas excl-cut-vs-cut-mnist-fresh\u201d \u2192 \u201cas excl-cut-vs-cut-mnist-fresh, as amended" in line, line
    note = findings.holm_no_p_note(decided)
    assert "Fisher's z is undefined with 3 seeds" in note and "permutation p = 1" in note, note
    # reader 17: the claim's own line says the same, not an interval over 3 seeds as if computed
    line = findings.appendix_text(found["predicts-compositional"])
    assert "Fisher z interval" not in line and line.count("Fisher's z is undefined with 3 seeds, so no interval, "
                                                          "shown as -1.00 to +1.00") == 2, line
    assert list(findings.holm_frame(decided)["one-sided p"]).count(findings.NO_P) == 1
