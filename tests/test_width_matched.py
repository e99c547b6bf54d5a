"""Chapter 4's width curve at matched density (issue 52, modlib.weight_masks.width_matched): the
narrow end's α is searched for the wide end's kept share, the smoke results pair into a point of the
width curve, and the claim width-spares-matched is read on sparing, moves when the ends are swapped,
and stays undecided where a narrow mask misses its density or a network is not stored."""

import numpy as np
import pytest

from modlib import claims, stats
from modlib.weight_masks import causes, findings
from modlib.weight_masks import width_matched as wm

SEEDS = 3


def test_the_ends_are_the_narrowest_width_and_the_alpha_curves_weakest_alpha():
    assert wm.narrows("full") == [(256, 256), (512, 512)] and wm.wide_alpha("full") == 1e-4
    assert wm.name((256, 256), "×", 2) == "narrow256x2-mul-seed2" and wm.wide_name("full", 0) == "alphacurve0.0001-seed0"
    assert not wm.name((512, 512), "+", 0).startswith("width")  # the width curve's claims read "width*"
    with pytest.raises(ValueError, match="narrow ends"):
        wm.fetch("full", (1024, 1024), "+", 0, "cpu")
    assert list(wm.seeds("default")) == []


def test_smoke_results_match_their_target_and_pair_into_a_point():
    hidden = wm.narrows("smoke")[0]
    for op in causes.OP_NAMES:
        r = wm.fetch("smoke", hidden, op, 0, "cpu")
        m = r.metrics
        assert m["probes"][0]["lam"] == pytest.approx(wm.ex.settings("smoke").alpha)  # from the profile's α
        assert m["alpha"] in [p["lam"] for p in m["probes"]] and m["target_kept"] == r.config["target_kept"]
    narrow, wide = wm.points("smoke", hidden, wm.stored("smoke"))
    assert len(narrow) == len(wide) == 1 and narrow[0]["table"].shape == (5, 2) and "matched" in narrow[0]


def _point(spared: float, share: float, seed: int, matched: bool = True) -> dict:
    """A point of the width curve whose worse mask's removal leaves the other operation ``spared``
    (as a share of the full network's accuracy) where a random removal as dense leaves 0.8."""
    table = np.array([[1.0, 1.0], [0.9, 0.3], [0.2, spared], [0.3, 0.9], [spared, 0.2]])
    table[[2, 4], [1, 0]] += 0.01 * seed  # networks differ a little
    control = np.array([[0.3, 0.3], [0.9, 0.8], [0.3, 0.3], [0.8, 0.9]])
    return {"table": table, "control": control, "kept": np.full((2, 3), share), "share": np.array([share, share]),
            "seed": np.float64(seed), "matched": np.float64(matched)}


def _decide(narrow, wide):
    with claims.apart():
        return findings.width_matched(narrow, wide, "256×2", "1024×2 at α 0.0001", SEEDS)


def test_the_wide_end_sparing_more_is_read_and_swapping_the_ends_moves_it():
    narrow = [_point(0.2, 0.03, k) for k in range(SEEDS)]
    wide = [_point(0.7, 0.03, k) for k in range(SEEDS)]
    assert _decide(narrow, wide).outcome == stats.HOLDS  # the book's own hypothesis
    assert _decide(wide, narrow).outcome != stats.HOLDS


def test_a_narrow_mask_off_its_density_or_a_missing_network_leaves_it_undecided():
    wide = [_point(0.7, 0.03, k) for k in range(SEEDS)]
    off = [_point(0.2, 0.03, k, matched=k != 1) for k in range(SEEDS)]
    f = _decide(off, wide)
    assert f.outcome == stats.UNDECIDED and "check failed" in f.text
    f = _decide([_point(0.2, 0.03, 0)], wide)
    assert f.outcome == stats.UNDECIDED and "only 1 of 3 narrow networks are stored yet" in f.text
