import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from modlib import results
from modlib import weight_masks as wm
from modlib.data import digits
from modlib.models import mlp


@pytest.mark.parametrize("profile", ["full", "paper"])
def test_profile_jobs_cover_every_seed_and_sweep_point_once(profile):
    s = wm.settings(profile)
    names = wm.names(profile, added=False)  # the page's own; the added experiments' follow them
    assert len(names) == len(set(names)) and wm.names(profile)[:len(names)] == names
    for k in range(s.seeds):
        assert f"addmul-seed{k}" in names and f"double-seed{k}" in names
    # the alpha sweep follows addmul-seed0 (it reuses that network); its main-alpha point is addmul-seed0
    alphas = [js.alpha for e, _, _, js in wm.jobs(s) if e == "alpha"]
    assert names[0] == "addmul-seed0" and names[1:1 + len(alphas)] == [f"alpha{a:g}-seed0" for a in alphas]
    assert sorted(alphas) == sorted(s.sweep_alphas) and s.alpha not in alphas
    shapes = [js.hidden for e, _, _, js in wm.jobs(s) if e == "shape"]
    assert shapes == list(s.sweep_shapes) and names[-len(shapes):] == [
        f"shape{wm.shape_name(h)}-seed0" for h in shapes]
    assert (400, 400, 200) in shapes  # the paper's small network, by its own shape
    assert wm.shape_name((400, 400, 200)) == "400-400-200" and wm.shape_name((800,) * 4) == "800x4"


def test_shorter_sweeps_keep_their_own_main_point():
    s = wm.settings("default")
    assert s.sweep_mask_steps != s.mask_steps
    alphas = [js.alpha for e, _, _, js in wm.jobs(s) if e == "alpha"]
    assert alphas == sorted({*s.sweep_alphas, s.alpha})


def _result(name, config, table_value):
    arrays = {"table": np.full((5, 2), table_value), "iou": np.zeros(4)}
    meta = {"profile": "full", "device": "test", "seeds": None}
    return results.Result(name, config, {}, arrays, meta)


def test_sweep_adds_the_main_point_from_addmul_seed0_when_masks_train_as_long():
    s = wm.settings("full")
    res = {"addmul": [_result("addmul-seed0", {"alpha": s.alpha, "hidden": list(s.hidden), "seed": 0}, 0.5)],
           "alpha": [_result(f"alpha{a:g}-seed0", {"alpha": a, "hidden": list(s.hidden), "seed": 0}, a)
                     for a in (1e-3, 1e-5)],
           "shape": []}
    points = wm.sweep(res, s, "alpha")
    assert list(points) == [1e-5, s.alpha, 1e-3]
    assert points[s.alpha] is res["addmul"][0]
    assert wm.sweep(res, s, "hidden") == {}  # no shape sweep stored: nothing to show
    short = s.with_(sweep_mask_steps=100)  # masks of another length: addmul-seed0 is not a sweep point
    assert list(wm.sweep(res, short, "alpha")) == [1e-5, 1e-3]
    with pytest.raises(ValueError, match="'depth'.*'alpha', 'hidden'"):
        wm.sweep(res, s, "depth")


def test_main_stops_before_starting_a_result_after_the_time_limit(store, capsys):
    wm.main(["--profile", "smoke", "--stop-after", "0"])
    assert "stopped after 0 s" in capsys.readouterr().out
    assert not store.exists()  # nothing computed, nothing half-written
    with pytest.raises(SystemExit):
        wm.main(["--profile", "smoke", "--stop-after", "-1"])
    assert "--stop-after=-1.0 is not valid" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        wm.main(["--profile", "huge"])
    assert "unknown profile 'huge'; valid profiles are smoke, default, full" in capsys.readouterr().err


def test_main_computes_only_the_results_asked_for(store, capsys):
    with pytest.raises(SystemExit):
        wm.main(["--profile", "smoke", "--only", "addmul-seed9"])
    err = capsys.readouterr().err
    assert "--only 'addmul-seed9' is not a result of profile smoke" in err and "cnn-seed0" in err
    assert not store.exists()
    wm.main(["--profile", "smoke", "--only", "alpha0.001-seed0"])
    assert "all 1 results asked for" in capsys.readouterr().out
    assert sorted(p.name for p in (store / "smoke" / wm.CHAPTER).glob("*.json")) == ["alpha0.001-seed0.json"]


def test_stored_loads_a_result_of_another_profile_without_computing(store):
    assert wm.stored("smoke", "cnn-seed0") is None
    with pytest.raises(ValueError, match="name='cnn-seed9' is not valid; choose one of .*'cnn-seed0'"):
        wm.stored("smoke", "cnn-seed9")
    wm.main(["--profile", "smoke", "--only", "alpha0.001-seed0"])
    assert wm.stored("smoke", "alpha0.001-seed0").name == "alpha0.001-seed0"


def test_removal_accuracy_reads_the_removed_class_and_the_others_off_the_diagonals():
    plain = np.eye(10) * 0.9 + 0.01  # rows: true class; the reference (the all-classes mask)
    removed = [plain.copy() for _ in range(10)]
    for c, m in enumerate(removed):
        m[c, c] = 0.1 * c  # class c is hurt, by a different amount each time
        m[(c + 1) % 10, (c + 1) % 10] = 0.5  # and one other class too
    acc = wm.removal_accuracy(np.stack([plain, *removed]))
    np.testing.assert_allclose(acc["own"], 0.1 * np.arange(10))
    np.testing.assert_allclose(acc["others"], (8 * 0.91 + 0.5) / 9)
    np.testing.assert_allclose(acc["reference"], 0.91)


def _arrays(root, name):
    r = results.read(root / "smoke" / wm.CHAPTER / f"{name}.json")
    return r.arrays


def test_a_result_is_the_same_alone_after_others_and_in_another_process(tmp_path, monkeypatch):
    """Each stored result depends only on its own config and seed: computed alone in a fresh process,
    or in this one after other results (the network then comes from the cache, and the global RNG
    is wherever the others left it), its arrays are identical bit for bit."""
    alone = tmp_path / "alone"
    env = {**os.environ, "MODLIB_RESULTS": str(alone), "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "modlib.weight_masks", "--profile", "smoke", "--only", "addmul-seed0",
                    "double-seed0", "cnn-seed0"], env=env, check=True, capture_output=True)

    after = tmp_path / "after"
    monkeypatch.setenv("MODLIB_RESULTS", str(after))
    monkeypatch.delenv("MODLIB_FULL_FROM_STORE", raising=False)
    wm.protocol._network.cache_clear()
    jobs = {job[1]: job for job in wm.jobs(wm.settings("smoke"))}
    sweep_point = next(name for name in jobs if name.startswith("alpha"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the other process: the same order of floating-point sums
    try:
        for name in (sweep_point, "double-seed0", "addmul-seed0", "cnn-seed0"):  # addmul's network is cached
            torch.rand(7)  # the global RNG moves on between results
            wm.experiment.fetch_job(jobs[name], "smoke", "cpu")
    finally:
        torch.set_num_threads(threads)
    for name in ("addmul-seed0", "double-seed0", "cnn-seed0"):
        a, b = _arrays(alone, name), _arrays(after, name)
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{name}: {k}")


def test_pairwise_runs_each_pair_alone_and_reads_its_own_slot():
    torch.manual_seed(0)
    model = wm.Pairwise(mlp(80, [16], 40))
    x, _ = digits.double_addition(6)
    other = x.clone()
    other[:, 40:] = digits.double_addition(6, generator=torch.Generator().manual_seed(1))[0][:, 40:]
    out, out_other = model(x), model(other)
    assert out.shape == (6, 40)
    torch.testing.assert_close(out[:, :20], out_other[:, :20])  # pair 2's digits do not reach pair 1's slot
    assert not torch.allclose(out[:, 20:], out_other[:, 20:])
    alone = torch.zeros_like(x)
    alone[:, :40] = x[:, :40]
    torch.testing.assert_close(out[:, :20], model.net(alone)[:, :20])  # the authors' zeroed input
    with wm.only_pair(model, 1):
        assert model.pairs == (1,) and torch.equal(model(x)[:, :20], torch.zeros(6, 20))
    assert model.pairs == (0, 1)


def test_a_fixed_layer_keeps_the_given_logits_and_the_others_train():
    s = wm.settings("smoke")
    torch.manual_seed(0)
    model = mlp(42, [16, 16], 20)
    stream = wm.protocol.task_batches("addmul", s.batch, 0, "cpu")
    given = torch.where(torch.rand(20, 16) < 0.5, -3.0, 3.0)  # the output layer's logits
    hard, logits = wm.train_mask(model, stream, wm.digit_loss, 30, 1e-2, s, seed=0,
                                         fixed={"4.weight": given}, logits=True)
    assert torch.equal(logits["4.weight"], given) and torch.equal(hard["4.weight"], given >= 0)
    assert not torch.equal(logits["0.weight"], torch.full((16, 42), 2.0))  # trained from the initial 2.0
    assert not torch.nn.utils.parametrize.is_parametrized(model[0])  # the masks are gone again
    assert all(p.requires_grad for p in model.parameters())
    with pytest.raises(ValueError, match="fixed names \\['9.weight'\\].*'0.weight'"):
        wm.train_mask(model, stream, wm.digit_loss, 1, 1e-2, s, seed=0, fixed={"9.weight": given})


def test_estimate_counts_every_result_of_a_profile(capsys):
    s = wm.settings("smoke").with_(sweep_shapes=((8, 8, 4),))
    total, table = wm.estimate(s, "cpu", steps=1)
    assert total > 0 and "total:" in table and "shape8-8-4-seed0" in table and "cnn" in table


def test_ctrl_c_during_mask_training_leaves_the_network_without_masks():
    s = wm.settings("smoke")
    torch.manual_seed(0)
    model = mlp(42, [16], 20)
    plain = model(torch.ones(3, 42))

    def interrupted():
        stream = wm.protocol.task_batches("addmul", s.batch, 0, "cpu")
        for k, batch in enumerate(stream):
            if k == 3:
                raise KeyboardInterrupt  # as Ctrl-C in a notebook does
            yield batch

    with pytest.raises(KeyboardInterrupt):
        wm.train_mask(model, interrupted(), wm.digit_loss, 10, 1e-2, s, seed=0)
    assert not torch.nn.utils.parametrize.is_parametrized(model[0])
    torch.testing.assert_close(model(torch.ones(3, 42)), plain)
    hard = wm.train_mask(model, wm.protocol.task_batches("addmul", s.batch, 0, "cpu"), wm.digit_loss,
                                 2, 1e-2, s, seed=0)  # the next run in the same kernel works
    assert set(hard) == {"0.weight", "2.weight"}


def test_the_class_removal_key_names_the_digits_it_learns_from(monkeypatch):
    job = next(j for j in wm.jobs(wm.settings("smoke")) if j[0] == "cnn")
    assert wm.experiment._config(job)["data"] == digits.mnist_source()
    monkeypatch.setattr(digits, "mnist_source", lambda: "mnist")
    assert wm.experiment._config(job)["data"] == "mnist"  # another source: another key, so a recompute


def _notebook_function(name: str):
    """The function ``name`` as chapter 4's page defines it (the cell that defines it, run alone)."""
    import nbformat

    nb = nbformat.read(os.path.join(os.path.dirname(__file__), "..", "notebooks", "weight_masks.ipynb"),
                       as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and f"def {name}(" in c.source]
    assert len(cells) == 1, f"the page should define {name} in exactly one cell; found {len(cells)}"
    scope = {"torch": torch, "masks": __import__("modlib.masks", fromlist=["masks"])}
    exec(cells[0], scope)
    return scope[name]


def test_the_pages_mask_training_loop_is_the_one_the_experiments_run():
    """Chapter 4 shows a mask-training loop written out; wm.train_mask (which the experiments
    call) must compute the same mask from the same seed when it draws one sample per batch."""
    by_hand = _notebook_function("train_mask_by_hand")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))

    def batches():
        g = torch.Generator().manual_seed(1)
        while True:
            x = torch.randn(32, 6, generator=g)
            yield x, (x[:, :3]).argmax(1)

    loss = torch.nn.functional.cross_entropy
    s = wm.settings("smoke").with_(samples=1, batch=32)
    ours = wm.train_mask(net, batches(), loss, 60, 1e-2, s, seed=3, lr=0.05)
    theirs = by_hand(net, batches(), loss, 60, alpha=1e-2, lr=0.05, seed=3)
    assert ours.keys() == theirs.keys()
    for name in ours:
        same = (ours[name] == theirs[name]).float().mean().item()
        assert same > 0.98, f"{name}: the page's loop and train_mask agree on only {same:.1%} of the weights"
    # and the loop really trains: the masks differ from the all-kept start
    assert any(not m.all() for m in theirs.values())


def test_the_pages_network_is_the_one_the_experiments_train():
    """Chapter 4 writes its network out (make_fnn); from one seed it must have the very layers and
    initial weights of modlib.models.mlp, which wm.train_network builds."""
    from modlib.models import mlp

    make_fnn = _notebook_function("make_fnn")
    for hidden in [(16,), (32, 24), (8, 8, 8)]:
        torch.manual_seed(5)
        ours = mlp(42, hidden, 20)
        torch.manual_seed(5)
        theirs = make_fnn(hidden)
        assert [type(m) for m in ours] == [type(m) for m in theirs]
        a, b = ours.state_dict(), theirs.state_dict()
        assert a.keys() == b.keys()
        assert all(torch.equal(a[k], b[k]) for k in a)


def test_the_pages_measurement_is_wm_score():
    """Chapter 4 writes its central measurement out (accuracy: both digits right, under a mask or
    with it removed); it must give wm.score's numbers, the plain network's included."""
    accuracy = _notebook_function("accuracy")
    torch.manual_seed(0)
    net = wm.train_network("addmul", wm.settings("smoke"), 0, "cpu")
    g = torch.Generator().manual_seed(3)
    x, y, _ = digits.arithmetic(400, generator=g)
    mask = {n: torch.rand(p.shape, generator=g) < 0.5  # half of every weight tensor, at random
            for n, p in net.named_parameters() if n.endswith("weight")}
    evals = {"all": (x, y, slice(None))}
    assert accuracy(net, x, y) == pytest.approx(wm.score(net, None, evals)["all"])
    for removed in (False, True):
        ours = accuracy(net, x, y, mask, removed=removed)
        theirs = wm.score(net, mask, evals, complement=removed)["all"]
        assert ours == pytest.approx(theirs), (removed, ours, theirs)
