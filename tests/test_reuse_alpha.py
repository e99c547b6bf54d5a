"""Chapter 4's reuse test at depth 4 with the pair masks' α chosen on a network held aside (issue 52,
modlib.weight_masks.reuse_alpha): the rule picks the strongest α whose tuning masks do their pair, the
tuning masks are trained as the reported networks' are, the reported networks run at the α the rule
picked from the stored tuning results, and the claims move when the analysis is framed wrong."""

import numpy as np
import pytest
import torch

from modlib import claims, stats
from modlib.weight_masks import causes, findings
from modlib.weight_masks import experiment as ex
from modlib.weight_masks import reuse_alpha as ra


def _table(pair1: float, pair2: float) -> np.ndarray:
    """A tuning table [5, 2] whose pair masks alone keep ``pair1`` and ``pair2`` of a network at 0.9."""
    t = np.full((5, 2), 0.01)
    t[0] = 0.9
    t[1, 0], t[3, 1] = 0.9 * pair1, 0.9 * pair2
    return t


def test_the_rule_takes_the_strongest_alpha_whose_masks_do_their_pair():
    assert ra.choose({4e-4: _table(0.9, 0.85), 2e-4: _table(0.95, 0.95)}) == 4e-4
    assert ra.choose({4e-4: _table(0.9, 0.7), 2e-4: _table(0.95, 0.81)}) == 2e-4  # one mask under the bar
    assert ra.choose({4e-4: _table(0.3, 0.9), 2e-4: _table(0.6, 0.5)}) == 2e-4  # none: the best weaker mask
    assert ra.choose({4e-4: _table(0.6, 0.9), 2e-4: _table(0.6, 0.5)}) == 4e-4  # none, a tie broken by order
    assert np.allclose(ra.alone(_table(0.5, 0.25)), [0.5, 0.25])


def test_bad_input_names_the_choices():
    with pytest.raises(ValueError, match=r"seed=7.*\[0, 1, 2, 3, 4\]"):
        ra.fetch("full", 7, "cpu")
    with pytest.raises(ValueError, match=r"alpha=0\.001.*0\.0004, 0\.0002"):
        ra.fetch_tune("full", 1e-3, "cpu")
    with pytest.raises(ValueError, match="profile='default'.*smoke, full"):
        ra.fetch("default", 0, "cpu")
    assert list(ra.seeds("paper")) == [] and ra.tune_seed("full") == 5
    assert ra.name("full", 2) == "reusealpha512x4-seed2"
    assert ra.tune_name("full", 2e-4) == "reusealpha512x4-tune0.0002-seed5"
    # the held-aside network is none of the reported ones
    assert ra.tune_seed("full") not in ra.seeds("full") and ra.tune_seed("smoke") not in ra.seeds("smoke")


def test_the_tuning_masks_are_the_reported_networks_masks_at_that_alpha():
    """tune trains the network and the pair masks as causes.reuse_control does (its streams and mask
    seeds), so the α chosen on the held-aside network is the α the reported masks are trained at."""
    s = ex.settings("smoke").with_(hidden=(8, 8, 8))
    _, tuned = ra.tune(s, 0, torch.device("cpu"), 1e-3)
    _, full = causes.reuse_control(s.with_(alpha_double=1e-3), 0, torch.device("cpu"), original=True)
    assert np.array_equal(tuned["table"], full["table"][[0, 3, 4, 5, 6]])
    assert np.array_equal(tuned["kept"], full["kept"][1:3])


def _runs(same: float, pairs: float, forced: float, alone: float = 0.9, n: int = 5) -> dict:
    """Arrays of ``n`` networks stacked as reuse_alpha.decided stacks them: hidden-layer IoU of two
    pair-1 masks ``same``, of the pair masks ``pairs``, of the copied network's ``forced``; pair masks
    alone keep ``alone`` of their pair."""
    L = 5
    def layers(v, k):  # noqa: E306  (networks differ a little)
        return np.array([0.0, *[v + 0.01 * k] * (L - 2), 0.0])
    table = np.array([[1, 1], [0.95, 0.95], [0.02, 0.02], [alone, 0.01], [0.02, 0.9], [0.01, alone], [0.9, 0.02]])
    copy_table = np.array([[1, 1], [alone, 0.01], [0.02, 0.9], [0.01, alone], [0.9, 0.02]])
    one = lambda k: {"iou": layers(pairs, k), "iou_same": layers(same, k), "iou_random": layers(0.01, 0),  # noqa: E731
                     "copy_iou": layers(forced, 0.004 * k * k), "copy_iou_random": layers(0.01, 0), "table": table,
                     "kept": np.full((4, L), 0.05), "copy_table": copy_table, "copy_kept": np.full((2, L), 0.05),
                     "whole": np.array([[1, 1], [0.95, 0.95], [0.02, 0.02]]), "whole_kept": np.full(L, 0.1),
                     "sizes": np.full(L, 100.0)}
    return findings.stack([one(k) for k in range(n)])


def _decide(r: dict) -> dict[str, str]:
    with claims.apart():
        said = (findings.reuse(r["iou"], r["iou_same"], r["iou_random"], r["table"], r["kept"], r["sizes"][0],
                               cid=ra.CLAIMS[0])
                + findings.reuse_control(r, "", where="deep-alpha"))
    return {c.verdict.claim.split("/")[1]: c.verdict.outcome for c in said if c.verdict is not None}


def test_the_claims_read_the_right_arms_and_move_when_framed_wrong():
    good = _decide(_runs(same=0.8, pairs=0.05, forced=0.79))
    assert set(good) == set(ra.CLAIMS) and set(good.values()) == {stats.REPRODUCED}  # own claims: "holds"
    # arms swapped: the pairs overlapping more than one pair's masks is reuse, not its absence
    assert _decide(_runs(same=0.05, pairs=0.8, forced=0.79))["reuse-deep-alpha"] == stats.NOT_REPRODUCED
    # forced reuse that the overlap does not find: the control fails
    assert _decide(_runs(same=0.8, pairs=0.05, forced=0.05))["control-apart-deep-alpha"] == stats.NOT_REPRODUCED
    # pair masks that do not do their pair (the profile's α at depth 4): nothing can be decided
    weak = _decide(_runs(same=0.8, pairs=0.05, forced=0.79, alone=0.2))
    assert set(weak.values()) == {stats.UNDECIDED}


def test_the_stored_networks_ran_at_the_alpha_the_rule_picks_from_the_stored_tuning():
    found = ra.stored("full")
    if len(found) < len(ra.seeds("full")):
        pytest.skip("the reusealpha results are not all stored here")
    tuned = ra.stored_tuning("full")
    alpha = ra.choose({r.config["tune_alpha"]: r.arrays["table"] for r in tuned})
    assert {r.config["alpha_double"] for r in found} == {alpha}
    assert {r.config["seed"] for r in found} == set(ra.seeds("full"))
    held = {r.metrics["network"] for r in tuned}
    assert len(held) == 1 and held.isdisjoint(r.metrics["network"] for r in found)  # one network held aside
    with claims.apart():
        said = ra.decided("full")
    assert {c.verdict.claim for c in said if c.verdict is not None} == {f"weight_masks/{c}" for c in ra.CLAIMS}
