import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from modlib import modularity, results


def test_full_profile_jobs_cover_every_seed_and_sweep_point_once():
    s = modularity.settings("full")
    names = modularity.names("full")
    assert len(names) == len(set(names))
    for k in range(s.seeds):
        assert f"addmul-seed{k}" in names and f"double-seed{k}" in names
    # the alpha sweep follows addmul-seed0 (it reuses that network); its main-alpha point is addmul-seed0
    alphas = [js.alpha for e, _, _, js in modularity.jobs(s) if e == "alpha"]
    assert names[0] == "addmul-seed0" and names[1:1 + len(alphas)] == [f"alpha{a:g}-seed0" for a in alphas]
    assert sorted(alphas) == sorted(s.sweep_alphas) and s.alpha not in alphas
    widths = [js.width for e, _, _, js in modularity.jobs(s) if e == "width"]
    assert widths == list(s.sweep_widths) and names[-len(widths):] == [f"width{w}-seed0" for w in widths]


def test_shorter_sweeps_keep_their_own_main_point():
    s = modularity.settings("default")
    assert s.sweep_mask_steps != s.mask_steps
    alphas = [js.alpha for e, _, _, js in modularity.jobs(s) if e == "alpha"]
    assert alphas == sorted({*s.sweep_alphas, s.alpha})


def _result(name, config, table_value):
    arrays = {"table": np.full((5, 2), table_value), "iou": np.zeros(4)}
    meta = {"profile": "full", "device": "test", "seeds": None}
    return results.Result(name, config, {}, arrays, meta)


def test_sweep_adds_the_main_point_from_addmul_seed0_when_masks_train_as_long():
    s = modularity.settings("full")
    res = {"addmul": [_result("addmul-seed0", {"alpha": s.alpha, "width": s.width, "seed": 0}, 0.5)],
           "alpha": [_result(f"alpha{a:g}-seed0", {"alpha": a, "width": s.width, "seed": 0}, a)
                     for a in (1e-3, 1e-5)],
           "width": []}
    points = modularity.sweep(res, s, "alpha")
    assert list(points) == [1e-5, s.alpha, 1e-3]
    assert points[s.alpha] is res["addmul"][0]
    assert modularity.sweep(res, s, "width") == {}  # no width sweep stored: nothing to show
    short = s.with_(sweep_mask_steps=100)  # masks of another length: addmul-seed0 is not a sweep point
    assert list(modularity.sweep(res, short, "alpha")) == [1e-5, 1e-3]
    with pytest.raises(ValueError, match="'depth'.*'alpha', 'width'"):
        modularity.sweep(res, s, "depth")


def test_main_stops_before_starting_a_result_after_the_time_limit(store, capsys):
    modularity.main(["--profile", "smoke", "--stop-after", "0"])
    assert "stopped after 0 s" in capsys.readouterr().out
    assert not store.exists()  # nothing computed, nothing half-written
    with pytest.raises(SystemExit):
        modularity.main(["--profile", "smoke", "--stop-after", "-1"])
    assert "--stop-after=-1.0 is not valid" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        modularity.main(["--profile", "huge"])
    assert "unknown profile 'huge'; valid profiles are smoke, default, full" in capsys.readouterr().err


def test_main_computes_only_the_results_asked_for(store, capsys):
    with pytest.raises(SystemExit):
        modularity.main(["--profile", "smoke", "--only", "addmul-seed9"])
    err = capsys.readouterr().err
    assert "--only 'addmul-seed9' is not a result of profile smoke" in err and "cnn-seed0" in err
    assert not store.exists()
    modularity.main(["--profile", "smoke", "--only", "alpha0.001-seed0"])
    assert "all 1 results asked for" in capsys.readouterr().out
    assert sorted(p.name for p in (store / "smoke" / modularity.CHAPTER).glob("*.json")) == ["alpha0.001-seed0.json"]


def test_stored_loads_a_result_of_another_profile_without_computing(store):
    assert modularity.stored("smoke", "cnn-seed0") is None
    with pytest.raises(ValueError, match="name='cnn-seed9' is not valid; choose one of .*'cnn-seed0'"):
        modularity.stored("smoke", "cnn-seed9")
    modularity.main(["--profile", "smoke", "--only", "alpha0.001-seed0"])
    assert modularity.stored("smoke", "alpha0.001-seed0").name == "alpha0.001-seed0"


def test_removal_accuracy_reads_the_removed_class_and_the_others_off_the_diagonals():
    plain = np.eye(10) * 0.9 + 0.01  # rows: true class
    removed = [plain.copy() for _ in range(10)]
    for c, m in enumerate(removed):
        m[c, c] = 0.1 * c  # class c is hurt, by a different amount each time
        m[(c + 1) % 10, (c + 1) % 10] = 0.5  # and one other class too
    acc = modularity.removal_accuracy(np.stack([plain, *removed]))
    np.testing.assert_allclose(acc["own"], 0.1 * np.arange(10))
    np.testing.assert_allclose(acc["others"], (8 * 0.91 + 0.5) / 9)
    np.testing.assert_allclose(acc["plain"], 0.91)


def _arrays(root, name):
    r = results.read(root / "smoke" / modularity.CHAPTER / f"{name}.json")
    return r.arrays


def test_a_result_is_the_same_alone_after_others_and_in_another_process(tmp_path, monkeypatch):
    """Each stored result depends only on its own config and seed: computed alone in a fresh process,
    or in this one after other results (the network then comes from the cache, and the global RNG
    is wherever the others left it), its arrays are identical bit for bit."""
    alone = tmp_path / "alone"
    env = {**os.environ, "MODLIB_RESULTS": str(alone), "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "modlib.modularity", "--profile", "smoke", "--only", "addmul-seed0",
                    "double-seed0", "cnn-seed0"], env=env, check=True, capture_output=True)

    after = tmp_path / "after"
    monkeypatch.setenv("MODLIB_RESULTS", str(after))
    monkeypatch.delenv("MODLIB_FULL_FROM_STORE", raising=False)
    modularity._network.cache_clear()
    jobs = {job[1]: job for job in modularity.jobs(modularity.settings("smoke"))}
    sweep_point = next(name for name in jobs if name.startswith("alpha"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the other process: the same order of floating-point sums
    try:
        for name in (sweep_point, "double-seed0", "addmul-seed0", "cnn-seed0"):  # addmul's network is cached
            torch.rand(7)  # the global RNG moves on between results
            modularity._fetch(jobs[name], "smoke", "cpu")
    finally:
        torch.set_num_threads(threads)
    for name in ("addmul-seed0", "double-seed0", "cnn-seed0"):
        a, b = _arrays(alone, name), _arrays(after, name)
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{name}: {k}")
