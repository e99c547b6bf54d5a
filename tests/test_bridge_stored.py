"""Chapter 7's stored full results (notebooks/results/full/bridge/toy-a, toy-b) against the stored
networks and masks they were scored with: each seed's network rebuilt from the stored weights, and
each stored mask applied to it, gives the stored scores (the smoke version of this check is in
tests/test_bridge.py). Nothing is trained; a store made by other code fails."""

from pathlib import Path

import numpy as np
import pytest
import torch

from modlib import bridge as br
from modlib import results

CPU = torch.device("cpu")
ROOT = Path(__file__).resolve().parents[1]
SEEDS = 20  # of the 100 stored per formulation: every fifth, so that the check stays quick


@pytest.fixture(scope="module")
def full():
    b = br.settings("full")
    if not all((ROOT / "notebooks" / "results" / "full" / br.CHAPTER / f"{n}.json").exists()
               for n in br.result_names(b)):
        pytest.skip("chapter 7's full results are not stored")
    s = br.toy_settings("full", b)
    with results.store_only():
        return s, {f: br.fetch("full", f, CPU).arrays for f in b.formulations}


def _seeds(a) -> range:
    n = len(a["full_held_out"])
    return range(0, n, max(1, n // SEEDS))


def test_full_stored_networks_and_masks_give_the_stored_scores(full):
    """The network, its Y1 subnetwork and its "use X2" removal, scored again on the seed's own
    training and held-out points, give the stored accuracies; the masks keep the stored shares."""
    from modlib.redundant_input_toy.members import member_data

    s, arrays = full
    for f, a in arrays.items():
        for seed in _seeds(a):
            net = br.experiment.network(s, a, seed)
            x, y, xt, yt = member_data(s, f, br.CONDITION, seed)
            sets = {"held_out": (xt, yt), "train": (x, y)}
            got = br.scored(net, None, "off", sets)
            assert got["held_out"] == pytest.approx(a["full_held_out"][seed]), (f, seed)
            assert got["train"] == pytest.approx(a["full_train"][seed]), (f, seed)
            for arm, name, mode in (("sub", "y1", "hard"), ("ablated", "x2", "complement")):
                mask = br.experiment.stored_mask(net, a, name, seed)
                assert br.kept(mask)[0] == pytest.approx(a[f"kept_{name}"][seed]), (f, seed, name)
                got = br.scored(net, mask, mode, sets)
                assert got["held_out"] == pytest.approx(a[f"{arm}_held_out"][seed]), (f, seed, arm)
                assert got["train"] == pytest.approx(a[f"{arm}_train"][seed]), (f, seed, arm)


def test_full_scores_move_when_a_mask_is_replaced_by_a_random_one(full):
    """The check above can fail: with a seed's "use X2" mask replaced by a random mask of the same
    per-layer counts, the removal's held-out scores over the checked seeds are not the stored ones."""
    from modlib.redundant_input_toy.members import member_data

    s, arrays = full
    differ = 0
    for f, a in arrays.items():
        gen = torch.Generator().manual_seed(0)
        for seed in _seeds(a):
            net = br.experiment.network(s, a, seed)
            x, y, xt, yt = member_data(s, f, br.CONDITION, seed)
            x2 = br.experiment.stored_mask(net, a, "x2", seed)
            random = {k: m.flatten()[torch.randperm(m.numel(), generator=gen)].reshape(m.shape) for k, m in x2.items()}
            got = br.scored(net, random, "complement", {"held_out": (xt, yt), "train": (x, y)})
            differ += not np.isclose(got["held_out"], a["ablated_held_out"][seed])
    assert differ >= 5, f"a random mask as dense gave the stored scores in all but {differ} seeds"


def test_full_the_mutation_harness_scores_masks_as_the_experiment_does(full):
    """modlib.bridge.mutations makes "random mask as dense" by scoring the masks again from the stored
    networks: given the stored masks, that gives the stored score of every arm that reads a mask (so
    a moved verdict is the random masks', not the rescoring's); its random masks keep each tensor's
    count of kept weights and are not the learned ones."""
    from modlib.bridge import mutations

    s, arrays = full
    b = br.settings("full")
    cuts = np.cumsum(arrays["a"]["mask_layers"])[:-1]
    for f, a in arrays.items():
        with mutations.one_thread():
            got = mutations.toy_rescored(s, b, a, f)
        for arm in ("sub", "random_sub", "untrained_sub", "ablated", "random_ablated"):
            for k in ("held_out", "train", "unconfounded"):
                np.testing.assert_allclose(got[f"{arm}_{k}"], a[f"{arm}_{k}"], atol=1e-6, err_msg=f"{f} {arm}_{k}")
        np.testing.assert_allclose(got["x2_fit"], a["x2_fit"], atol=1e-6, err_msg=f)
        random = mutations.toy_random(a)
        for m in br.experiment.MASKS:
            counts = [[p.sum() for p in np.split(v, cuts)] for v in (a[f"mask_{m}"][0], random[f"mask_{m}"][0])]
            assert counts[0] == counts[1] and (random[f"mask_{m}"] != a[f"mask_{m}"]).any(), (f, m)


@pytest.fixture(scope="module")
def controls():
    """The stored control of rule 2 without its mask (rule2-random-a, rule2-random-b; issue 53)."""
    b = br.settings("full")
    if not all((ROOT / "notebooks" / "results" / "full" / br.CHAPTER / f"{br.RANDOM_X2}-{f}.json").exists()
               for f in b.formulations):
        pytest.skip("chapter 7's rule-2 control is not stored")
    with results.store_only():
        return {f: br.fetch_random_exclusive("full", f, CPU).arrays for f in b.formulations}


def test_full_the_rule_two_control_gives_its_stored_scores(full, controls):
    """Every twentieth seed's first two random "use X2" masks, drawn again and removed outside the
    stored Y1 mask, give the stored draws' scores and removed shares; the arm is the draws' mean."""
    from modlib.redundant_input_toy.members import member_data

    s, arrays = full
    for f, c in controls.items():
        a = arrays[f]
        draws = c["kept_random_x2_excl"].shape[1]
        assert draws >= 20
        np.testing.assert_allclose(c["random_x2_excl_held_out"], c["random_x2_excl_held_out_draws"].mean(1), atol=1e-6)
        for seed in _seeds(a)[::4]:
            net = br.experiment.network(s, a, seed)
            x, y, xt, yt = member_data(s, f, br.CONDITION, seed)
            y1, x2 = (br.experiment.stored_mask(net, a, m, seed) for m in ("y1", "x2"))
            for d in range(2):
                r = br.experiment.masks.random_like(x2, br.experiment.RANDOM_X2_KEY + draws * seed + d)
                removed = {k: r[k] & ~y1[k] for k in r}
                assert sum(int(v.sum()) for v in r.values()) == sum(int(v.sum()) for v in x2.values())
                got = br.scored(net, removed, "complement", {"held_out": (xt, yt), "train": (x, y)})
                assert got["held_out"] == pytest.approx(c["random_x2_excl_held_out_draws"][seed, d]), (f, seed, d)
                assert got["train"] == pytest.approx(c["random_x2_excl_train_draws"][seed, d]), (f, seed, d)
                assert br.kept(removed)[0] == pytest.approx(c["kept_random_x2_excl"][seed, d]), (f, seed, d)


def test_full_rule_two_with_a_random_mask_loses_what_the_mask_adds(full, controls):
    """The mutation "random mask as dense" on the claim that rule 2 needs its mask, read on the
    effect itself and not only on the gates it trips: with the "use X2" mask replaced by a random
    one of its per-layer counts (the harness's draw), rule 2 minus the stored control falls under
    the margin, where with the mask it is beyond it (the stored verdict)."""
    from modlib import claims, stats
    from modlib.bridge import findings, mutations

    s, arrays = full
    for f, c in controls.items():
        a = br.with_random_exclusive(br.with_exclusive(s, arrays[f], f), c)
        fails = findings.failing(a)
        margin = claims.get(f"bridge/repair-excl-needs-mask-{f}").margin
        real = stats.paired(findings.both(a, "ablated_excl")[fails], findings.both(a, "random_x2_excl")[fails])
        assert real.low > 0 and real.mean >= margin, (f, real)
        with mutations.one_thread():
            m = br.with_random_exclusive(br.with_exclusive(s, mutations.toy_random(arrays[f]), f), c)
        moved = stats.paired(findings.both(m, "ablated_excl")[fails], findings.both(m, "random_x2_excl")[fails])
        assert moved.mean < margin, (f, moved)
