import numpy as np
import pytest

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
    with pytest.raises(ValueError, match="unknown profile 'huge'"):
        modularity.main(["--profile", "huge"])
