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
                        ("control failed", {"controls": False}), ("floor or ceiling", {"measurable": False})):
        v = stats.verdict(0.1, 0.3, **{"units": 5, "paper": 0.4, **kwargs})
        assert v.outcome == stats.UNDECIDED and why in v.why and v.mark == "?"
    assert stats.verdict(0.1, 0.3, units=5, paper=0.4).mark == "✓"
    with pytest.raises(ValueError, match="paper=0"):
        stats.verdict(0.1, 0.3, units=5, paper=0)


def test_small_n_intervals_are_wider_than_a_percentile_bootstrap():
    d = np.array([0.05, 0.11, 0.08, 0.06, 0.10])
    mean, low, high = stats.t_interval(d)
    _, b_low, b_high = stats.paired_difference(d, np.zeros(5))
    assert mean == pytest.approx(d.mean()) and low < b_low and high > b_high
    assert stats.sign_test([1, 2, 3, 4, 5]) == pytest.approx(0.0625)  # 5 of 5 cannot reach 0.05
    assert stats.sign_test([1, -1, 0]) == 1.0
    d, low, high = stats.welch_interval([1.0, 1.1, 0.9], [0.0, 0.1, -0.1])
    assert d == pytest.approx(1.0) and 0 < low < 1 < high
    with pytest.raises(ValueError, match="at least 2 units"):
        stats.t_interval([0.3])
