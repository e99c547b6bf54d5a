"""The book's verdict rule and the small-n statistics behind it (modlib.stats)."""

import numpy as np
import pytest

from modlib import stats


def test_the_rule_gives_each_outcome_for_the_reason_it_names():
    assert stats.verdict(0.1, 0.3, units=5, paper=0.4).outcome == stats.REPRODUCED
    assert stats.verdict(-0.3, -0.1, units=5, paper=-0.4).outcome == stats.REPRODUCED  # the paper's side
    assert stats.verdict(-0.1, 0.04, units=5, paper=0.4).outcome == stats.NOT_REPRODUCED
    assert stats.verdict(0.1, 0.3, units=5, paper=-0.4).outcome == stats.NOT_REPRODUCED  # the other side
    assert stats.verdict(-0.1, 0.5, units=5, paper=0.4).outcome == stats.UNDECIDED  # too wide for either
    for why, kwargs in (("one unit", {"units": 1}), ("did not train", {"trained": False}),
                        ("control did not pass", {"controls": False}), ("floor or ceiling", {"measurable": False})):
        v = stats.verdict(0.1, 0.3, **{"units": 5, "paper": 0.4, **kwargs})
        assert v.outcome == stats.UNDECIDED and why in v.why and v.mark == "?"
    assert stats.verdict(0.1, 0.3, units=5, paper=0.4).mark == "✓"
    with pytest.raises(ValueError, match="paper=0"):
        stats.verdict(0.1, 0.3, units=5, paper=0)


def test_the_rule_as_written_below_the_margin_and_at_a_stated_margin():
    # clear of 0 but below the margin is not reproduced, even where the paper's own effect is smaller
    # than the margin (the interval then reaches the paper's number but not the size that counts)
    v = stats.verdict(0.02, 0.04, units=5, paper=0.03)
    assert v.outcome == stats.NOT_REPRODUCED and "below the margin of +0.05" in v.why
    v = stats.verdict(-0.04, -0.02, units=5, paper=-0.5)
    assert v.outcome == stats.NOT_REPRODUCED and "below the margin of -0.05" in v.why
    # within the margin of no effect on both sides: not reproduced; wider than the margin: undecided
    v = stats.verdict(-0.03, 0.04, units=5, paper=0.03)
    assert v.outcome == stats.NOT_REPRODUCED and "within the margin of no effect" in v.why
    # no effect that counts on the paper's side fits, though the other side is open: not reproduced
    v = stats.verdict(-0.3, 0.04, units=5, paper=0.03)
    assert v.outcome == stats.NOT_REPRODUCED and "short of the margin" in v.why
    # a stated margin is the margin: "reproduced ... below the stated margin" cannot be printed
    v = stats.verdict(0.15, 0.26, units=3, paper=0.5, source=stats.STATED)
    assert v.outcome == stats.NOT_REPRODUCED and "below the margin of +0.50" in v.why
    assert stats.verdict(0.15, 0.96, units=3, paper=0.5, source=stats.STATED).reproduced
    for low, high in ((0.15, 0.26), (0.15, 0.56), (-0.5, 0.6), (-0.3, 0.2)):
        v = stats.verdict(low, high, units=3, paper=0.5, source=stats.STATED)
        assert not (v.reproduced and "below" in v.why)
    with pytest.raises(ValueError, match="makes paper=\\+0.50 the margin"):
        stats.verdict(0.1, 0.3, units=5, paper=0.5, margin=0.05, source=stats.STATED)
    with pytest.raises(ValueError, match="margin=-0.1"):
        stats.verdict(0.1, 0.3, units=5, paper=0.5, margin=-0.1)
    # a measure that holds its claim's allowance: the side of 0 decides
    assert stats.verdict(0.01, 0.3, units=5, paper=0.2, margin=0.0).reproduced
    assert stats.verdict(-0.3, -0.01, units=5, paper=0.2, margin=0.0).outcome == stats.NOT_REPRODUCED
    assert stats.verdict(-0.01, 0.3, units=5, paper=0.2, margin=0.0).outcome == stats.UNDECIDED


def test_the_rule_needs_the_estimate_at_the_margin_and_a_failure_wholly_short_of_it():
    # clear of 0 but with an estimate short of the margin: undecided, not reproduced (+0.01 to +0.06)
    v = stats.verdict(0.01, 0.06, units=5, paper=0.5)
    assert v.outcome == stats.UNDECIDED and "falls short of the margin of +0.05" in v.why
    # clear of 0 with an estimate at the margin: reproduced, though the interval reaches below it
    v = stats.verdict(0.01, 0.30, units=5, paper=1.0)
    assert v.reproduced and "below the paper's +1.00" in v.why
    assert stats.verdict(0.01, 0.30, units=5, paper=1.0, estimate=0.04).outcome == stats.UNDECIDED
    assert "below" not in stats.verdict(0.6, 1.2, units=5, paper=1.0).why
    # a failure needs the whole interval short of the margin: -0.30 to +0.90 against a paper's +1.00
    # is undecided (it was "excludes the paper's +1.00" before)
    v = stats.verdict(-0.30, 0.90, units=5, paper=1.0)
    assert v.outcome == stats.UNDECIDED and "wide enough for no effect" in v.why
    # the direction: mirrored intervals get mirrored outcomes
    for low, high in ((0.01, 0.06), (0.06, 0.2), (0.01, 0.04), (-0.3, 0.9), (-0.2, -0.1), (0.01, 0.3)):
        a = stats.verdict(low, high, units=5, paper=0.5).outcome
        assert stats.verdict(-high, -low, units=5, paper=-0.5).outcome == a
    # an Effect decides on its own mean, not on the interval's middle (Newcombe's is not symmetric)
    e = stats.paired([1, 1, 1, 1, 1], [0, 0, 0, 0, 0], shares=True)
    assert e.verdict(paper=0.5).reproduced and f"estimate {e.mean:+.2f}" in e.verdict(paper=0.5).why


def test_small_n_intervals_are_t_intervals_and_exact_tests():
    d = np.array([0.05, 0.11, 0.08, 0.06, 0.10])
    mean, low, high = stats.t_interval(d)
    assert mean == pytest.approx(d.mean())
    # Student's t with 4 degrees of freedom: 2.776 standard errors either side
    assert high - mean == pytest.approx(2.776 * d.std(ddof=1) / np.sqrt(5), rel=1e-3)
    assert stats.sign_test([1, 2, 3, 4, 5]) == pytest.approx(0.0625)  # 5 of 5 cannot reach 0.05
    assert stats.sign_test([1, -1, 0]) == 1.0
    e = stats.unpaired([1.0, 1.1, 0.9], [0.0, 0.1, -0.1])
    assert e.mean == pytest.approx(1.0) and 0 < e.low < 1 < e.high and e.interval == "Welch t"
    with pytest.raises(ValueError, match="at least 2 units"):
        stats.t_interval([0.3])
    with pytest.raises(ValueError, match="paired by unit"):
        stats.paired([0.1, 0.2], [0.1, 0.2, 0.3])


def test_shares_get_newcombe_intervals_so_five_of_five_against_none_is_decided():
    # 5 of 5 against 0 of 5: the differences do not vary, but that is an effect, not a floor
    for effect in (stats.paired([1] * 5, [0] * 5, shares=True), stats.unpaired([1] * 5, [0] * 5, shares=True)):
        assert effect.measurable and effect.units == 5 and "Newcombe" in effect.interval
        assert 0.3 < effect.low < 0.45 and effect.high == 1.0
        assert effect.verdict(paper=0.5).outcome == stats.REPRODUCED
    assert "McNemar p = 0.062" in stats.paired([1] * 5, [0] * 5, shares=True).test  # sign test of discordant pairs
    assert "Fisher's exact p = 0.0079" in stats.unpaired([1] * 5, [0] * 5, shares=True).test
    # 5 of 5 against 5 of 5: both arms at the ceiling
    tie = stats.unpaired([1.0] * 5, [1.0] * 5, shares=True).verdict(paper=0.2)
    assert tie.outcome == stats.UNDECIDED and "floor or ceiling" in tie.why
    # 3 of 5 against 1 of 5: too few to decide either way
    assert stats.unpaired([1, 1, 1, 0, 0], [1, 0, 0, 0, 0], shares=True).verdict(paper=0.5).outcome == stats.UNDECIDED
    with pytest.raises(ValueError, match="1 or 0 per unit"):
        stats.paired([0.5, 1.0], [0.0, 1.0], shares=True)
    # accuracies that happen to be 1.00 in every unit are measurements, not shares
    assert stats.paired([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]).interval == "paired t"


def test_identical_units_count_once_in_either_arm():
    flat = stats.paired([0.9] * 5, [0.1] * 5)  # five identical seeds: one unit in effect
    v = flat.verdict(paper=0.8)
    assert flat.units == 1 and v.outcome == stats.UNDECIDED and "identical" in v.why
    one_arm = stats.unpaired([0.7] * 3, [0.5, 0.49, 0.51, 0.5, 0.52])  # one arm's three units are one
    v = one_arm.verdict(paper=0.3)
    assert v.outcome == stats.UNDECIDED and "one arm's seeds are identical" in v.why
    assert one_arm.over == "3 and 5 seeds"
    # both arms constant and different: Welch's interval has no width; it must not pass as a result
    v = stats.unpaired([0.9] * 4, [0.1] * 4).verdict(paper=0.5)
    assert v.outcome == stats.UNDECIDED and np.isfinite(stats.unpaired([0.9] * 4, [0.1] * 4).low)


def test_effects_write_their_interval_test_and_units():
    e = stats.paired([0.9, 0.8, 0.85], [0.1, 0.2, 0.1], unit="base model")
    assert e.text(percent=False) == ("+0.72 (95% paired t interval over 3 base models +0.46 to +0.98; "
                                     "sign test p = 0.25)")
    assert e.text().startswith("+72 points (95% paired t interval over 3 base models +46 to +98 points")
    assert stats.paired([0.5, 0.5], [0.5, 0.5]).text(percent=False).startswith("0.00 (")  # no "+0.00"


def test_scipy_backed_tests_give_the_textbook_values():
    # Wilson at z = 1.96 from its closed form, at shares of 0, between and 1
    for k, n in ((0, 5), (3, 7), (5, 5), (17, 40)):
        p, z = k / n, 1.96
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        assert stats.wilson(k, n) == pytest.approx((max(0, centre - half), min(1, centre + half)), abs=1e-12)
    with pytest.raises(ValueError, match="n=0"):
        stats.wilson(0, 0)
    # the sign test: 2 * P(X <= 1) for X ~ Binomial(6, 1/2) = 2 * 7 / 64
    assert stats.sign_test([1, 1, 1, 1, 1, -1]) == pytest.approx(14 / 64, abs=1e-12)
    # the permutation test counts every one of the C(6, 3) = 20 splits (the observed one is the
    # largest), and ties count as "that large" though summed in another order: of the 20 splits of
    # 0.1, 0.1, 0.2, 0.2, 0.3, 0.3, 8 tie the observed 0 (one of each value per group), 6 exceed it
    assert stats.permutation_test([3, 4, 5], [0, 1, 2]) == pytest.approx((3.0, 1 / 20))
    assert stats.permutation_test([0.1, 0.2, 0.3], [0.3, 0.2, 0.1])[1] == pytest.approx(14 / 20)
    with pytest.raises(ValueError, match="at least 2 values; got 1 and 3"):
        stats.permutation_test([1.0], [1.0, 2.0, 3.0])
    # Welch's interval: the Welch-Satterthwaite degrees of freedom, worked by hand
    a, b = np.array([1.0, 1.4, 0.9, 1.3]), np.array([0.2, 0.1, 0.5])
    va, vb = a.var(ddof=1) / 4, b.var(ddof=1) / 3
    dof = (va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 2)
    from scipy.stats import t
    half = t.ppf(0.975, dof) * np.sqrt(va + vb)
    e = stats.unpaired(a, b)
    assert (e.low, e.high) == pytest.approx((a.mean() - b.mean() - half, a.mean() - b.mean() + half), abs=1e-12)
    # units that all agree: an interval of no width, and no warning of lost precision
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert stats.t_interval([0.8] * 5) == pytest.approx((0.8, 0.8, 0.8))
        assert stats.unpaired([0.7] * 3, [0.5, 0.49, 0.51]).low == pytest.approx(0.2 - 4.303 * 0.01 / np.sqrt(3), abs=1e-3)


def test_units_to_decide_reads_the_spread_and_the_side_of_the_margin():
    """The planning count: n at which Student's (paired) or Welch's (unpaired) 95% interval would
    clear 0 for an estimate at or past the margin, or lie short of the margin for one below it; it
    grows with the spread, respects the claim's direction, and is None where no count exists."""
    from scipy import stats as st

    rng = np.random.default_rng(0)
    a = 0.2 + rng.normal(0, 0.1, 3)
    b = np.zeros(3)
    n = stats.units_to_decide("paired", a, b, margin=0.05)
    d = a - b
    assert n is not None and n >= 2
    half = lambda k: st.t.ppf(0.975, k - 1) * d.std(ddof=1) / np.sqrt(k)  # noqa: E731
    assert half(n) < d.mean() and (n == 2 or half(n - 1) >= d.mean())  # the first n that clears 0
    assert stats.units_to_decide("paired", 0.2 + 3 * (a - 0.2), b, margin=0.05) > n  # more spread, more units
    assert stats.units_to_decide("paired", b, a, margin=0.05) is not None  # the opposite effect: short of the margin
    below = stats.units_to_decide("paired", 0.02 + (a - 0.2) / 10, b, margin=0.05)  # short of the margin
    assert below is not None and below >= 2
    assert stats.units_to_decide("paired", b, a, margin=0.05, direction=-1) == n  # the direction flips the sides
    on_margin = 0.0499 + (a - a.mean())  # just short of the margin, with the spread of a
    assert stats.units_to_decide("paired", on_margin, b, margin=0.05) is None  # more than 200 units
    assert stats.units_to_decide("shares", a, b, margin=0.05) is None
    welch = stats.units_to_decide("unpaired", a, rng.normal(0, 0.1, 4), margin=0.05)
    assert welch is not None and welch >= 2


def test_units_frame_lists_each_open_claim_with_the_units_it_would_need():
    """claims.units_frame: a claim left open by its interval gets a row with claims.units_needed (the
    same count as stats.units_to_decide under the claim's margin); a decided claim gets none."""
    from modlib import claims

    key = "structural_compositionality/sv-plural-subject-draws-target"  # paired, margin 0.1, direction +1
    a, b = 0.3 + np.array([-0.4, 0.1, 0.3]), np.zeros(3)  # mean +0.3, its interval reaching below 0
    with claims.apart():
        v = claims.decide(key, stats.paired(a, b, unit="base model"))
        assert v.outcome == stats.UNDECIDED and v.open
        frame = claims.units_frame("structural_compositionality")
        need = claims.units_needed(key)
    assert need == stats.units_to_decide("paired", a, b, margin=0.1) and need > 3
    row = frame[frame["claim"] == claims.get(key).name].iloc[0]
    assert row["units now"] == 3 and row["units needed"] == need
    with claims.apart():  # shares of units: Newcombe's interval, for which no t count is given
        claims.decide(key, stats.paired(np.array([1, 0, 1, 0]), np.array([0, 1, 0, 0]), shares=True))
        assert claims.units_needed(key) is None
        assert claims.units_frame("structural_compositionality").iloc[0]["units needed"] == "no t interval"
    with claims.apart():
        claims.decide(key, stats.paired(a + 1.0, b, unit="base model"))  # decided: no row
        assert claims.get(key).name not in set(claims.units_frame("structural_compositionality")["claim"])


def test_one_unit_prints_its_value_without_an_interval_and_no_negative_zero():
    """Issue 57: one unit has a value, not an interval ("-0.29 to -0.29 over 1 seed" read as one);
    a mean that rounds to zero from below prints 0.00, not -0.00."""
    e = stats.paired([0.30], [0.59], unit="network")
    assert e.text(percent=False) == "-0.29 (one network alone, no interval)"
    v = e.verdict(paper=0.2, margin=0)
    assert v.outcome == stats.UNDECIDED and v.why == "one unit only (one network alone gives -0.29, no interval)"
    assert stats.undecided_reason(v) == "one unit only"
    assert stats.mean_pm(np.array([-0.001, -0.002])) == "0.00 ± 0.00"
    assert stats.mean_pm(np.array([-0.004])) == "0.00"


def test_a_number_that_rounds_to_zero_prints_without_a_sign():
    """Issue 57 (chapter 6 printed "-0.00" in its tables and statements): stats.number."""
    assert stats.number(-0.004) == "0.00" and stats.number(-0.004, sign=True) == "0.00"
    assert stats.number(0.001, sign=True) == "0.00" and stats.number(0.0) == "0.00"
    assert stats.number(-0.006) == "-0.01" and stats.number(0.42, sign=True) == "+0.42"
    assert stats.number(0.42) == "0.42" and stats.number(-0.0004, places=3) == "0.000"


def test_an_interval_end_never_prints_a_signed_zero():
    """Issue 57 (the ledger and chapter 6 printed "+0.00 to +0.50"): stats.bound prints an end clear
    of 0 with the places that show its side, and an end that rounds to 0 even so without a sign."""
    for x in (0.0, -0.0, 1e-7, -1e-7, 0.001, -0.004, 0.004999):
        for margin in (0.0, 0.05, 0.1):
            text = stats.bound(x, margin)  # a rounded zero is "0.00"; anything else shows its side
            assert text == "0.00" if float(text) == 0 else text[0] in "+-", (x, margin, text)
    assert stats.bound(0.0, 0.05) == "0.00" and stats.bound(-1e-7, 0.1) == "0.00"
    assert stats.bound(0.004, 0.1) == "+0.004" and stats.bound(-0.004, 0) == "-0.004"
    assert stats.bound(0.048, 0.05) == "+0.048" and stats.bound(0.5, 0.1) == "+0.50"
    e = stats.unpaired([0.5, 0.9, 0.1, 0.6, 0.4], [0.3, 0.2, 0.4, 0.1])
    assert "+0.00 " not in e.text(percent=False) and "-0.00 " not in e.text(percent=False)


def test_a_rank_correlation_never_prints_p_0_beside_an_interval_that_spans_0():
    """Issue 57: rho = 1 over 3 units has the interval -1 to +1 and, by scipy's t approximation,
    p = 0; the page prints the exact permutation p instead (1/3: 2 of the 3! orderings reach |rho| = 1),
    and the same wherever the approximation cannot serve."""
    e = stats.correlation([0.1, 0.2, 0.3], [1.0, 2.0, 3.0])
    assert (e.low, e.high) == (-1.0, 1.0) and e.test == "permutation p = 0.33", e.test
    assert stats.correlation([1, 2, 3], [1, 3, 2]).test == "permutation p = 1"
    assert stats.correlation(range(5), range(5)).test == "permutation p = 0.017"  # 2 / 5!
    assert stats.correlation(range(12), range(12)).test == f"permutation p = {2 / 479001600:.2g}"
    assert stats.correlation([1, 2, 3, 4, 5, 6], [1, 3, 2, 5, 4, 6]).test.startswith("p = 0.0")  # scipy's


def test_a_partial_rank_correlation_removes_what_the_third_quantity_explains():
    rng = np.random.default_rng(0)
    z = rng.normal(size=200)
    x, y = z + 0.3 * rng.normal(size=200), z + 0.3 * rng.normal(size=200)  # related only through z
    assert stats.correlation(x, y).mean > 0.8
    e = stats.partial_correlation(x, y, z)
    assert abs(e.mean) < 0.15 and e.low < 0 < e.high and e.n == 200
    w = rng.normal(size=200)  # unrelated to both: holding it fixed changes little
    assert abs(stats.partial_correlation(x, y, w).mean - stats.correlation(x, y).mean) < 0.02
    d = x + 0.5 * rng.normal(size=200)  # related beyond z
    assert stats.partial_correlation(x, d, z).low > 0.3
    assert not stats.partial_correlation(x, np.ones(200), z).measurable
    with pytest.raises(ValueError, match="given must be"):
        stats.partial_correlation(x, y, z[:10])
