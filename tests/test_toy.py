import numpy as np
import torch

from modlib import data, toy
from modlib.training import stack


def test_toy_data_follows_both_formulations():
    g = torch.Generator().manual_seed(0)
    x, y = data.redundant_toy("a", 3000, generator=g)
    assert ((x[:, 0] > 0).float() == y).all()  # X1 decides Y1
    assert not ((x[:, 0] > 0) & (x[:, 1] > 0)).any()  # the cell (1,1) is held out
    xt, yt = data.redundant_toy("a", 500, split="test", generator=g)
    assert (yt == 1).all() and (xt >= 0).all() and (xt <= 1).all()
    xb, yb = data.redundant_toy("b", 3000, generator=g)
    assert (xb.abs() >= data.PUSH).all() and (xb.abs() <= 5 + data.PUSH).all()
    assert ((xb[:, 0] > 0).float() == yb).all()
    assert not ((xb[:, 0] > 0) & (xb[:, 1] > 0)).any()
    xc, _ = data.redundant_toy("b", 4000, reveal=0.0, generator=g)
    share = ((xc[:, 0] > 0) & (xc[:, 1] > 0)).float().mean()
    assert 0.22 < share < 0.28  # the control keeps the held-out quadrant as often as the others


def test_mutual_information_goes_from_the_paper_setting_to_none():
    assert abs(data.toy_mutual_information(1.0) - 0.2516) < 1e-3
    values = [data.toy_mutual_information(r) for r in (1.0, 0.75, 0.5, 0.0)]
    assert values == sorted(values, reverse=True) and values[-1] == 0.0


def test_reliance_is_zero_for_a_model_that_ignores_x2():
    net = torch.nn.Linear(2, 1)
    with torch.no_grad():
        net.weight[:] = torch.tensor([[2.0, 0.0]])
    template, params = stack([net])
    x = torch.randn(1, 50, 2)
    assert toy.reliance(template, params, x).item() == 0.0
    with torch.no_grad():
        params["weight"][0] = torch.tensor([[2.0, -1.0]])
    assert abs(toy.reliance(template, params, x).item() - 0.5) < 1e-6


def test_snapshot_and_curve_steps():
    assert toy.snapshot_steps(1024) == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    steps = toy.curve_steps(1024, 25)
    assert steps[0] == 0 and steps[-1] == 1024 and steps == sorted(set(steps))


def test_smoke_sweep_has_every_setting_and_sane_shapes(store):
    s = toy.settings("smoke")
    sweep = toy.run("smoke", torch.device("cpu"), progress=False)
    assert set(sweep.groups) == {(a, l) for a in s.activations for l in s.losses}
    a = sweep.arrays("relu", "mse", "b", 1.0)
    k = len(toy.snapshot_steps(s.steps))
    assert a["grids"].shape == (s.grid_seeds, k, s.grid_resolution, s.grid_resolution)
    assert a["test_acc"].shape == (s.seeds,) and ((a["test_acc"] >= 0) & (a["test_acc"] <= 1)).all()
    assert a["reliance"].shape == (s.seeds, len(toy.curve_steps(s.steps, s.curve_points)))
    table = sweep.table()
    assert len(table) == len(s.formulations) * len(s.activations) * len(s.losses) * len(s.reveals)
    assert np.isfinite(table.reliance_median).all()
