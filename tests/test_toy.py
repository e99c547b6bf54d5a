import numpy as np
import pytest
import torch

from modlib import redundant_input_toy as toy
from modlib.data import toy as toy_data
from modlib.training import stack


def test_toy_data_follows_both_formulations():
    g = torch.Generator().manual_seed(0)
    x, y = toy_data.redundant_toy("a", 3000, generator=g)
    assert ((x[:, 0] > 0).float() == y).all()  # X1 decides Y1
    assert not ((x[:, 0] > 0) & (x[:, 1] > 0)).any()  # the cell (1,1) is held out
    xt, yt = toy_data.redundant_toy("a", 500, split="test", generator=g)
    assert (yt == 1).all() and (xt >= 0).all() and (xt <= 1).all()
    xb, yb = toy_data.redundant_toy("b", 3000, generator=g)
    assert (xb.abs() >= toy_data.PUSH).all() and (xb.abs() <= 5 + toy_data.PUSH).all()
    assert ((xb[:, 0] > 0).float() == yb).all()
    assert not ((xb[:, 0] > 0) & (xb[:, 1] > 0)).any()
    xc, _ = toy_data.redundant_toy("b", 4000, reveal=0.0, generator=g)
    share = ((xc[:, 0] > 0) & (xc[:, 1] > 0)).float().mean()
    assert 0.22 < share < 0.28  # the control keeps the held-out quadrant as often as the others


def test_mutual_information_goes_from_the_paper_setting_to_none():
    assert abs(toy_data.toy_mutual_information(1.0) - 0.2516) < 1e-3
    values = [toy_data.toy_mutual_information(r) for r in (1.0, 0.75, 0.5, 0.0)]
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


def test_snapshot_and_curve_epochs():
    assert toy.snapshot_epochs(1024) == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    epochs = toy.curve_epochs(1024, 25)
    assert epochs[0] == 0 and epochs[-1] == 1024 and epochs == sorted(set(epochs))
    assert toy.PAPER_EPOCHS in toy.curve_epochs(4096, 40)


def test_playground_batches_go_over_the_fixed_set_in_order_and_carry_the_remainder():
    updates, done = toy.playground_batches(187, 10, 3)
    assert done == [0, 18, 36, 54]  # 18 updates an epoch
    assert [len(u) for u in updates[:18]] == [10] * 18
    assert updates[18] == list(range(180, 187)) + list(range(10))  # 7 left over + 10
    assert [len(u) for u in updates[19:36]] == [10] * 17
    # every point is used once an epoch, in the same order every epoch
    flat = [i for u in updates for i in u]
    assert flat == (list(range(187)) * 3)[:len(flat)]
    assert len(flat) == 3 * 187 - 7  # the last epoch's remainder is never applied
    assert toy.playground_batches(187, 10, 1024)[1][-1] == 18_432  # the paper's run


@pytest.mark.parametrize("design", toy.TERNARY)
def test_ternary_controls_keep_the_cell_unseen_and_x2_uncorrelated_with_y1(design):
    g = torch.Generator().manual_seed(0)
    for f in toy_data.FORMULATIONS:
        x, y = toy.ternary_toy(f, 20_000, design, generator=g)
        assert ((x[:, 0] > 0).float() == y).all()  # X1 decides Y1
        low, high = toy.held_out_band(f, design)
        in_cell = (x[:, 0] > 0) & (x[:, 1] > low) & (x[:, 1] < high)
        assert not in_cell.any()  # the test cell is held out
        xt, yt = toy.ternary_toy(f, 500, design, split="test", generator=g)
        assert (yt == 1).all() and (xt[:, 0] > 0).all()
        assert ((xt[:, 1] > low) & (xt[:, 1] < high)).all()  # ... and is where the test points are
        only_negative = (x[:, 1] > 0) & (x[:, 1] < toy.BAND_GAP[f])
        if design == "middle":
            assert (y[only_negative] == 0).all()  # the middle band means Y1 = 0
        corr = torch.corrcoef(torch.stack([x[:, 1], y]))[0, 1]
        assert abs(corr) < 0.03, f"({f}, {design}) X2 correlates with Y1: {corr:.3f}"
        xb, yb = toy_data.redundant_toy(f, 20_000, generator=g)
        assert torch.corrcoef(torch.stack([xb[:, 1], yb]))[0, 1] < -0.2  # the binary design's does
    bits = {"middle": 0.171, "corner": 0.250, "even": 0.110}[design]
    assert abs(toy.mutual_information(design, 1.0) - bits) < 1e-3
    with pytest.raises(ValueError, match=r"formulation='c'.*'a', 'b'"):
        toy.ternary_toy("c", 5, design, generator=g)
    with pytest.raises(ValueError, match=r"design='side'.*'middle', 'corner', 'even'"):
        toy.ternary_toy("a", 5, "side", generator=g)


def test_smoke_sweep_has_every_setting_and_sane_shapes(store):
    s = toy.settings("smoke")
    sweep = toy.run("smoke", torch.device("cpu"), progress=False)
    assert set(sweep.groups) == {(a, l) for a in s.activations for l in s.losses}
    k = len(toy.snapshot_epochs(s.epochs))
    for design, r in s.conditions:
        a = sweep.arrays("relu", "mse", "b", r, design)
        assert a["grids"].shape == (s.grid_seeds, k, s.grid_resolution, s.grid_resolution)
        assert a["test_acc"].shape == (s.seeds,)
        assert ((a["test_acc"] >= 0) & (a["test_acc"] <= 1)).all()
        assert a["reliance"].shape == (s.seeds, len(toy.curve_epochs(s.epochs, s.curve_points)))
    assert {("middle", 1.0), ("corner", 1.0)} <= set(s.conditions)
    with pytest.raises(ValueError, match="design='middle', reveal=0.5"):
        sweep.arrays("relu", "mse", "b", 0.5, "middle")
    table = sweep.table()
    assert len(table) == len(s.formulations) * len(s.activations) * len(s.losses) * len(s.conditions)
    assert np.isfinite(table.reliance_median).all()
