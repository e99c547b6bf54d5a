"""Chapter 7 (the bridge, notebooks/bridge.ipynb, "On chapter 3's CNNs"): experiment 1 on chapter
3's MNIST setting-A CNNs (:mod:`modlib.bridge.digits`). The settings, the networks against chapter
3's, the smoke result stored and read back, the measurement (a mask that keeps everything is the
full CNN; the random control keeps as many weights per tensor), the page's cell against modlib's,
the claims on made-up numbers and on their degenerate variants. The claims on the stored full result
are at the end; they skip until ``bridge/mnist-a`` is stored at ``full``."""

from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")

from modlib import bridge as br  # noqa: E402
from modlib import jobs, masks, results, stats  # noqa: E402
from modlib.bridge import digits as bd  # noqa: E402
from modlib.bridge import figures, findings  # noqa: E402
from modlib.resists_at_scale import experiment as rs  # noqa: E402
from modlib.resists_at_scale import networks as rn  # noqa: E402

CPU = torch.device("cpu")
ROOT = Path(__file__).resolve().parents[1]
SIZES = (288, 18_432, 1_126_400, 4_096, 640)  # the CNN's five weight tensors


@pytest.fixture(scope="module")
def pools():
    return rn.digit_pools()[0]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The smoke result, computed once into a store of the test's own (one thread, as the jobs)."""
    store = tmp_path_factory.mktemp("store")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with jobs.store_at(store):
            made = bd.fetch("smoke", CPU)
            with results.store_only():
                again = bd.fetch("smoke", CPU)
    finally:
        torch.set_num_threads(threads)
    return made, again


def test_the_settings_fail_loudly():
    with pytest.raises(ValueError, match="mask_batch=10.*samples=4"):
        bd.settings("smoke").with_(mask_batch=10, samples=4)
    with pytest.raises(ValueError, match="seeds=2 is more than chapter 3's 1"):
        bd.chapter3_settings("smoke", bd.settings("smoke").with_(seeds=2))
    with pytest.raises(ValueError, match="mask_lr"):
        bd.settings("smoke").with_(mask_lr=0.0)
    with pytest.raises(ValueError, match="profile"):
        bd.settings("huge")
    assert bd.settings("full").seeds == rs.settings("full").seeds  # every one of chapter 3's CNNs


def test_smoke_stores_every_arm_and_reads_back(smoke):
    made, again = smoke
    d = bd.settings("smoke")
    a = made.arrays
    for arm in bd.ARMS:
        for k in bd.SETS:
            assert a[f"{arm}_{k}"].shape == (d.seeds,), (arm, k)
            assert ((a[f"{arm}_{k}"] >= 0) & (a[f"{arm}_{k}"] <= 1)).all()
    for m in bd.MASKS:
        assert a[f"kept_{m}_layers"].shape == (d.seeds, len(bd.LAYERS))
        assert ((a[f"kept_{m}"] >= 0) & (a[f"kept_{m}"] <= 1)).all()
    assert tuple(a["layer_sizes"]) == SIZES
    assert made.config["resists"]["mnist_steps"] == rs.settings("smoke").mnist_steps
    assert sorted(again.arrays) == sorted(a)
    for k, v in a.items():
        assert np.array_equal(again.arrays[k], v), k


def test_the_networks_are_chapter_threes(pools):
    """train_network runs chapter 3's train_digits itself: the numbers it returns are chapter 3's
    run_one's at smoke, bit for bit, and the CNN it hands back is the one trained (it predicts
    chapter 3's stored test examples as chapter 3 recorded) while the untrained one holds the seed's
    initial weights."""
    s = rs.settings("smoke")
    _, ch3 = rs.run_one(s, "mnist-A", CPU)
    net, untrained, numbers = bd.train_network(s, 0, pools, CPU)
    for k in ("final_test", "final_train", "swapped", "acc_test", "shown_pred"):
        np.testing.assert_array_equal(numbers[k], ch3[k][0], err_msg=k)
    shown, _, _ = pools["test"].sample(rn.SHOWN, "A", "test", torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert np.array_equal(net(shown).argmax(1).numpy(), numbers["shown_pred"])
    torch.manual_seed(0)
    fresh = rn.digit_cnn()
    for k, v in fresh.state_dict().items():
        assert torch.equal(untrained.state_dict()[k], v), k
    assert rn.digit_cnn is not None and rn.digit_cnn.__name__ == "digit_cnn"  # the wrapper is gone


def test_a_mask_that_keeps_everything_is_the_full_cnn_and_the_random_control_keeps_as_many(pools):
    torch.manual_seed(3)
    net = rn.digit_cnn().eval()
    d = bd.settings("smoke")
    sets = bd.eval_sets(d, pools, 0)
    every = {k: torch.ones_like(v, dtype=torch.bool) for k, v in net.state_dict().items() if k in bd.LAYERS}
    full = bd.scored(net, None, "off", sets)
    assert bd.scored(net, every, "hard", sets) == full
    assert bd.scored(net, every, "random", sets, seed=4) == full
    some = {k: v & (torch.rand(v.shape, generator=torch.Generator().manual_seed(1)) < 0.3)
            for k, v in every.items()}
    for seed in (0, 7):
        control = masks.random_like(some, seed)
        assert {k: int(v.sum()) for k, v in control.items()} == {k: int(v.sum()) for k, v in some.items()}
        assert any(not torch.equal(control[k], some[k]) for k in some)
        # the "random" arm is that control: the same scores as the control applied as a subnetwork
        assert bd.scored(net, some, "random", sets, seed=seed) == bd.scored(net, control, "hard", sets)
    pooled, per = br.kept(some)
    assert 0.25 < pooled < 0.35 and len(per) == len(bd.LAYERS)


def test_the_mask_trains_with_the_cnns_loss_and_leaves_the_cnn_unchanged(pools):
    torch.manual_seed(0)
    net = rn.digit_cnn()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    x, y1 = bd.mask_data(bd.settings("smoke"), pools, 0)
    mask = br.train_mask(net, x, y1, 3, 0.01, 0.05, 16, 4, seed=0, loss_fn=rn.categorical_hinge)
    assert list(mask) == list(bd.LAYERS)
    for k, v in net.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert all(p.requires_grad for p in net.parameters())


def test_the_mask_data_carry_no_information_and_the_held_out_pairs_are_unseen(pools):
    d = bd.settings("smoke").with_(n_mask=3000, n_eval=500)
    g = torch.Generator().manual_seed(bd.MASK_KEY)
    _, y1, y2 = pools["train"].sample(d.n_mask, bd.MASK_SETTING, "train", g)
    offsets = np.bincount(((y2 - y1) % 10).numpy(), minlength=10)
    assert (offsets > 0).all()  # every combination, the held-out ones too
    sets = bd.eval_sets(d, pools, 0)
    left = sets["held_out"][0][:, :, :, :28]  # the held-out pairs' left digits: MNIST's test digits
    for pool, found in (("test", True), ("train", False)):
        images = pools[pool].images.flatten(1)
        assert bool((images == left[0].flatten()).all(1).any()) is found, pool


def _notebook_function(name: str):
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "bridge.ipynb", as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and f"def {name}(" in c.source]
    assert len(cells) == 1, f"the page should define {name} in exactly one cell; found {len(cells)}"
    scope = {"br": br}
    exec(cells[0], scope)
    return scope[name]


def test_the_pages_cell_is_the_measurement_the_experiment_runs(pools):
    shown = _notebook_function("cnn_subnetworks")
    d = bd.settings("smoke").with_(mask_steps=2, n_eval=16, mask_batch=8)
    s = rs.settings("smoke")
    net, untrained, _ = bd.train_network(s, 0, pools, CPU)
    x, y1 = bd.mask_data(d, pools, 0)
    sets = bd.eval_sets(d, pools, 0)
    assert shown(net, untrained, x, y1, sets, d, 0) == bd.measure(d, 0, net, untrained, pools)["scores"]


# ---------------------------------------------------------------- claims on made-up numbers


def _positive(seeds: int = 5) -> dict:
    """Made-up arrays in which every claim holds: failing CNNs whose Y1 subnetwork names the left
    digit on held-out pairs, better than a random subnetwork or one of the untrained weights."""
    rng = np.random.default_rng(0)
    u = lambda lo, hi: rng.uniform(lo, hi, seeds).astype(np.float32)  # noqa: E731
    a = {"full_held_out": u(0.65, 0.75), "full_train": u(0.96, 0.98), "full_unconfounded": u(0.7, 0.8),
         "sub_held_out": u(0.9, 0.95), "sub_train": u(0.92, 0.96), "sub_unconfounded": u(0.91, 0.95),
         "random_sub_held_out": u(0.08, 0.12), "random_sub_train": u(0.08, 0.12),
         "random_sub_unconfounded": u(0.08, 0.12),
         "untrained_sub_held_out": u(0.5, 0.7), "untrained_sub_train": u(0.9, 0.95),
         "untrained_sub_unconfounded": u(0.9, 0.95)}
    for arm in bd.ARMS:
        a[f"{arm}_swapped"] = a[f"{arm}_train"] - 0.01
    for m in bd.MASKS:
        a[f"kept_{m}_layers"] = rng.uniform(0.005, 0.8, (seeds, len(SIZES))).astype(np.float32)
        a[f"kept_{m}"] = (a[f"kept_{m}_layers"] * np.array(SIZES)).sum(1) / sum(SIZES)
    a["layer_sizes"] = np.array(SIZES)
    a["ch3_final_test"], a["ch3_final_train"] = a["full_held_out"], a["full_train"]
    a["ch3_swapped"] = a["full_swapped"]
    return a


def _set(a: dict, arms, value) -> dict:
    a = dict(a)
    for arm in arms:
        for k in bd.SETS:
            a[f"{arm}_{k}"] = np.full_like(a["full_train"], value)
    return a


def chance_model(a: dict) -> dict:
    """Every CNN and subnetwork at chance (one digit in ten)."""
    return _set(a, bd.ARMS, 0.1)


def never_trained(a: dict) -> dict:
    """CNNs that never fit their training pairs (their masks can do no better)."""
    return _set(_set(a, ("full",), 0.3), ("sub", "random_sub"), 0.3)


def untrained_arm(a: dict) -> dict:
    """The Y1 masks of the trained CNNs did not train: they do not compute Y1."""
    a = dict(a)
    a["sub_unconfounded"] = np.full_like(a["full_train"], 0.2)
    return a


def keeps_everything(a: dict) -> dict:
    """The masks keep every weight: each subnetwork is its whole network."""
    a = dict(a)
    for k in bd.SETS:
        a[f"sub_{k}"] = a[f"random_sub_{k}"] = a[f"full_{k}"]
    for m in bd.MASKS:
        a[f"kept_{m}"], a[f"kept_{m}_layers"] = np.ones_like(a[f"kept_{m}"]), np.ones_like(a[f"kept_{m}_layers"])
    return a


def keeps_nothing(a: dict) -> dict:
    """The masks keep no weight: the subnetworks answer one digit everywhere."""
    a = _set(a, ("sub", "random_sub", "untrained_sub"), 0.1)
    for m in bd.MASKS:
        a[f"kept_{m}"], a[f"kept_{m}_layers"] = np.zeros_like(a[f"kept_{m}"]), np.zeros_like(a[f"kept_{m}_layers"])
    return a


def identical_seeds(a: dict) -> dict:
    """Every seed a copy of the first failing one."""
    first = int(np.flatnonzero(findings.digit_failing(a))[0])
    return {k: v if k == "layer_sizes" else np.repeat(v[first:first + 1], len(v), axis=0) for k, v in a.items()}


DEGENERATE = {"chance model": chance_model, "never trained": never_trained, "untrained arm": untrained_arm,
              "keeps everything": keeps_everything, "keeps nothing": keeps_nothing,
              "identical seeds": identical_seeds}
VOID = ("chance model", "keeps everything", "keeps nothing", "identical seeds")  # nothing to compare


def test_the_claims_hold_on_made_up_positive_numbers():
    claims = findings.digit_claims(_positive())
    assert [c.name for c in claims] == [f"{k}-mnist" for k in findings.DIGIT_KINDS]
    for c in claims:
        assert c.verdict.reproduced, c.text
        assert "kept share" in c.text or c.name == "not-any-mnist"


@pytest.mark.parametrize("variant", DEGENERATE)
def test_no_claim_holds_on_a_degenerate_variant(variant):
    for c in findings.digit_claims(DEGENERATE[variant](_positive())):
        assert not c.verdict.reproduced, f"{variant}: {c.text}"
        if variant in VOID:  # void evidence decides nothing: never ✗
            assert c.mark == "?", f"{variant}: {c.text}"


def test_a_null_result_is_not_reproduced():
    """A subnetwork no better than its CNN (and no better than the untrained one) does not hold
    (the rule's ✗; the chapter's claims are the book's own), not ?: the claims can fail on real
    evidence."""
    a = _positive()
    a["sub_held_out"], a["sub_train"] = a["full_held_out"] + 0.001, a["full_train"]
    a["untrained_sub_held_out"], a["untrained_sub_train"] = a["sub_held_out"], a["sub_train"]
    marks = {c.name: c.marked for c in findings.digit_claims(a)}
    assert marks["inside-mnist"] == marks["built-mnist"] == stats.DOES_NOT_HOLD, marks


def test_one_cnn_cannot_decide():
    a = {k: v if k == "layer_sizes" else v[:1] for k, v in _positive().items()}
    for c in findings.digit_claims(a):
        assert c.verdict.outcome == stats.UNDECIDED, c.text


def test_findings_and_figures_draw_from_smoke_results(smoke):
    a = smoke[0].arrays
    assert len(findings.digit_claims(a)) == 3
    assert all(isinstance(s, stats.Finding) for s in findings.digit_statements(a))
    assert len(findings.digit_table(a)) == bd.settings("smoke").seeds
    assert findings.digit_verdict_table(findings.digit_claims(_positive())).iloc[:, 1].str.startswith(
        stats.HOLDS).sum() == 3  # "holds", or "holds (changed after the results were seen ...)" for an amended one
    fig = figures.digits_inside(a, smoke[0].provenance)
    assert fig.get_size_inches()[0] <= 6.6 + 1e-9
    matplotlib.pyplot.close(fig)


def test_the_job_is_registered():
    table = jobs.jobs([br.CHAPTER], "smoke")
    assert f"{br.CHAPTER}/{bd.RESULT}" in table


# ---------------------------------------------------------------- claims on the stored full result


def _full() -> dict:
    """The stored full arrays, loaded as the page loads them (nothing computed); skipped while the
    result is missing, failing when it was made by other code."""
    if not (ROOT / "notebooks" / "results" / "full" / br.CHAPTER / f"{bd.RESULT}.json").exists():
        pytest.skip("bridge/mnist-a is not stored at full yet; make it with "
                    "`OMP_NUM_THREADS=1 python -m modlib.jobs --profile full bridge/mnist-a`")
    with results.store_only():
        return bd.fetch("full", CPU).arrays


@pytest.mark.parametrize("variant", DEGENERATE)
def test_full_no_claim_holds_on_a_degenerate_variant(variant):
    a = _full()
    if variant == "identical seeds" and not findings.digit_failing(a).any():
        pytest.skip("no CNN fails at full: nothing to copy")
    for c in findings.digit_claims(DEGENERATE[variant](a)):
        assert not c.verdict.reproduced, f"{variant}: {c.text}"


def test_full_cnns_are_chapter_threes_stored_ones():
    """The bridge's full CNNs are chapter 3's: chapter 3's own final measurement of each (what
    train_digits returned) matches chapter 3's stored mnist-A per seed. Not bit for bit: the stored
    run was made by another build of torch, whose training drifts apart after a few dozen steps
    (seed 0: 71.5% held-out here against 70.9% stored), so within 5 points per seed and 3 on
    average, a few standard errors of 1,000 pairs."""
    a = _full()
    ch3 = results.read(ROOT / "notebooks" / "results" / "full" / rs.CHAPTER / "mnist-A.json")
    if ch3 is None:
        pytest.skip("chapter 3's full mnist-A is not stored")
    for k in ("final_test", "final_train"):
        diff = np.abs(a[f"ch3_{k}"] - ch3.arrays[k][: a[f"ch3_{k}"].size])
        assert diff.max() <= 0.05 and diff.mean() <= 0.03, (k, diff)
    # the bridge's own draw of held-out pairs measures the same CNNs
    assert np.abs(a["full_held_out"] - a["ch3_final_test"]).max() <= 0.06
