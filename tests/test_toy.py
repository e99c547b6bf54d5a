import numpy as np
import pytest
import torch

from modlib import claims
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


# ---------------------------------------------------------------- the later studies (baselines, mechanism, scale)

def test_members_are_the_sweeps_data_and_initial_weights(store):
    s = toy.settings("smoke").with_(activations=("relu",), losses=("mse",))
    _, arrays = toy.run_group(s, "relu", "mse", torch.device("cpu"), progress=False)
    for j, cond in enumerate(s.conditions):
        x, y, _, _ = toy.members.member_data(s, "b", cond, 0)
        stored = arrays["train_x"][s.formulations.index("b"), j]  # seed 0's, float16
        assert np.allclose(x.numpy(), stored.astype(np.float32), atol=1e-2)
        assert (y.numpy() == arrays["train_y"][s.formulations.index("b"), j]).all()
    net = toy.members.initial_network(s, 3)
    torch.manual_seed(3)
    again = toy.experiment.mlp(2, s.hidden, 1, "relu", init="playground")
    assert all(torch.equal(p, q) for p, q in zip(net.parameters(), again.parameters()))


def test_the_baselines_fit_their_training_points_and_the_linear_ones_have_known_answers():
    g = torch.Generator().manual_seed(0)
    x, y = toy_data.redundant_toy("a", 3000, generator=g)
    x, t = x.double(), 2 * y.double() - 1
    _, w = toy.baselines.least_squares(x, t)
    # the theory page's least-squares fit on targets in {0, 1} has b / a = -1/6; on +-1 the same ratio
    assert abs(float(w[1] / w[0]) + 1 / 6) < 0.03, w
    xs, ys = x[:200], t[:200]
    v, bias = toy.baselines.max_margin(xs, ys)
    margins = ys.numpy() * (xs.numpy() @ v.numpy() + bias)
    assert margins.min() > 1 - 1e-5 and abs(float(v[1] / v[0])) < 0.2, (margins.min(), v)
    net = toy.members.initial_network(toy.settings("smoke"), 0)
    for name in toy.baselines.BASELINES:
        z, _ = toy.baselines.fit(name, net, xs, ys, 256, 1e-10, 0)
        with torch.no_grad():
            assert ((z(xs) > 0).double() * 2 - 1 == ys).double().mean() >= 0.97, name


def test_zero_x2_starts_blind_to_x2():
    net = toy.mechanism.zero_x2(toy.members.initial_network(toy.settings("smoke"), 0))
    template, params = stack([net])
    g = toy.members.input_gradients(template, params, torch.randn(1, 50, 2))
    assert g[0, 1] == 0 and g[0, 0] > 0


def test_scaled_toy_gives_both_formulations_from_the_same_draws():
    g = torch.Generator().manual_seed(0)
    cells, u = toy.scale.draws(500, "train", g)
    a = toy.scale.scaled_toy(cells, u, "a", 1.0)
    b = toy.scale.scaled_toy(cells, u, "b", 5.0)
    assert torch.allclose(b, 5 * a + torch.sign(a) * toy_data.PUSH, atol=1e-5)  # (b) is (a) x5, pushed
    assert (a.abs() <= 1).all() and (b.abs() >= toy_data.PUSH - 1e-6).all()
    assert not ((a[:, 0] > 0) & (a[:, 1] > 0)).any()  # the held-out cell stays empty


def test_smoke_studies_have_every_arm_and_their_findings_and_figures_draw(store):
    import matplotlib

    matplotlib.use("Agg")
    from modlib.redundant_input_toy import figures, findings

    sweep = toy.run("smoke", torch.device("cpu"), progress=False)
    st = toy.studies.run("smoke", torch.device("cpu"), sweep)
    for study in toy.studies.STUDIES:
        for arm in st.arms(study):
            for cond in st.conditions(study):
                a = st.arrays(study, arm, "b", *cond)
                assert {"test_acc", "train_acc", "reliance"} <= set(a) and len(a["test_acc"]) == 2
    ordinary = st.arrays("mechanism", "ordinary", "b")
    assert np.allclose(ordinary["test_acc"], sweep.arrays("relu", "mse", "b")["test_acc"])
    zero = st.arrays("mechanism", "zero-x2", "b")
    assert (zero["grad_x2"][:, 0] == 0).all() and (ordinary["grad_x2"][:, 0] > 0).all()
    with pytest.raises(ValueError, match="no arm"):
        st.arrays("mechanism", "frozen")
    found = findings.studies(st)
    assert {"nogd-least-squares-b", "built-b", "inherited-b", "zero-gen-b", "early-b", "scale-b",
            "margin-x1", "formulation-control"} <= set(found)
    # the paper's claim (built) is marked ✓ when it holds; the book's own hypothesis (nogd) "holds"
    assert all(("✓" in f.text) == f.holds for k, f in found.items() if k.startswith("built-"))
    assert all(claims.untagged(f.text).endswith(" — holds.") == f.holds and "✓" not in f.text and "✗" not in f.text
               for k, f in found.items() if k.startswith("nogd-"))
    for fig in (figures.threshold_curve(sweep, toy.GENERALIZES), figures.quantile_seeds(sweep, "b"),
                figures.baseline_boundaries(st), figures.baseline_reliance(st), figures.diagram_zero_x2_start(),
                figures.mechanism_curves(st), figures.scale_figure(st)):
        assert fig.get_size_inches()[0] <= 6.6 + 1e-9


def _page_function(name: str):
    """The function ``name`` as chapter 1's page defines it (its cell's ``def``, run alone)."""
    import ast
    import json
    from pathlib import Path

    from modlib import models

    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks"
                     / "redundant_input_toy.ipynb").read_text())
    cells = ["".join(c["source"]) for c in nb["cells"]
             if c["cell_type"] == "code" and f"def {name}(" in "".join(c["source"])]
    assert len(cells) == 1, f"the page should define {name} in exactly one cell; found {len(cells)}"
    tree = ast.parse(cells[0])
    only = ast.Module([n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name], [])
    scope = {"torch": torch, "toy": toy, "models": models}
    exec(compile(only, name, "exec"), scope)
    return scope[name]


@pytest.mark.parametrize("activation, loss, formulation", [("relu", "mse", "b"), ("tanh", "ce", "a")])
def test_the_pages_training_by_hand_is_the_stacked_training_the_experiments_run(activation, loss,
                                                                               formulation):
    """Chapter 1 writes one network's training out (``train_by_hand``); run_group trains the same
    network, seed and schedule stacked with training.train_seeds: the weights must agree."""
    from modlib.models import mlp
    from modlib.training import train_seeds, unstack

    by_hand = _page_function("train_by_hand")
    s = toy.settings("default")
    assert tuple(s.hidden) == (8, 8, 8) and s.lr == 0.1 and s.batch == 10  # the page's defaults
    x, y = toy.training_set(formulation, "binary", 1.0, s.n_train, torch.Generator().manual_seed(0))
    ours = by_hand(x, y, activation, loss, epochs=3, seed=1)
    torch.manual_seed(1)
    template, params = stack([mlp(2, s.hidden, 1, activation, init="playground")])
    updates, _ = toy.playground_batches(s.n_train, s.batch, 3)
    updates = [torch.tensor(u) for u in updates]
    params = train_seeds(template, params, lambda t: (x[None, updates[t]], y[None, updates[t]]),
                         toy.loss_fn(loss), steps=len(updates), lr=s.lr, progress=False)
    theirs = unstack(template, params, 0)
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=name)
    torch.manual_seed(1)
    start = mlp(2, s.hidden, 1, activation, init="playground")
    assert not torch.equal(ours[0].weight, start[0].weight)  # and it trained


# ---------------------------------------------------------------- issue 51's controls

@pytest.mark.parametrize("design", toy.coverage.COVERAGE)
def test_coverage_controls_show_y1_at_one_band_uncorrelated_with_x2(design):
    cov = toy.coverage
    g = torch.Generator().manual_seed(0)
    for f in toy_data.FORMULATIONS:
        x, y = cov.coverage_toy(f, 20_000, design, generator=g)
        assert ((x[:, 0] > 0).float() == y).all()  # X1 decides Y1
        gap = toy.BAND_GAP[f]
        middle = (x[:, 1] > 0) & (x[:, 1] < gap)  # the band of Y2 = 1
        assert middle[y == 1].all()  # Y1 = 1 only in the middle band: the paper's coverage, one band
        for band in (x[:, 1] < 0, x[:, 1] > gap, middle):
            assert (y[band] == 0).any()  # Y1 = 0 in all three
        low, high = toy.held_out_band(f, "corner")  # the held-out cell (1, 2), as the corner controls'
        xt, yt = cov.coverage_toy(f, 500, design, split="test", generator=g)
        assert (yt == 1).all() and (xt[:, 0] > 0).all() and ((xt[:, 1] > low) & (xt[:, 1] < high)).all()
        assert not ((x[:, 0] > 0) & (x[:, 1] > low)).any()
        corr = torch.corrcoef(torch.stack([x[:, 1], y]))[0, 1]
        assert abs(corr) < 0.03, f"({f}, {design}) X2 correlates with Y1: {corr:.3f}"
        assert abs(float(y.mean()) - 1 / 3) < 0.02  # Y1 = 1 a third of the points, as in the paper's setting
    assert abs(cov.covariance(design)) < 1e-12
    bits = {"single": toy.mutual_information("binary", 1.0), "single-low": 0.109, "single-high": 0.459}[design]
    assert abs(cov.mutual_information(design) - bits) < 1e-3  # 'single' carries the paper's bits exactly


def test_the_norm_matched_zero_x2_start_is_blind_to_x2_with_the_ordinary_norm():
    s = toy.settings("smoke")
    for seed in range(3):
        ordinary = toy.members.initial_network(s, seed)
        net = toy.mechanism_norm.zero_x2_norm(toy.members.initial_network(s, seed))
        assert (net[0].weight[:, 1] == 0).all()
        assert torch.isclose(net[0].weight.norm(), ordinary[0].weight.norm())
        assert torch.equal(net[0].bias, ordinary[0].bias) and torch.equal(net[2].weight, ordinary[2].weight)
        ratio = net[0].weight[:, 0] / ordinary[0].weight[:, 0]
        assert torch.allclose(ratio, ratio[0]) and ratio[0] > 1  # the x1 weights scaled up, all alike


def test_the_gd_trajectory_leaves_least_squares_towards_the_max_margin_direction():
    g = torch.Generator().manual_seed(0)
    x, y = toy_data.redundant_toy("a", 300, generator=g)
    x, t = x.double(), 2 * y.double() - 1
    _, ls = toy.baselines.least_squares(x, t)
    at = [0, 100, 10_000]
    w = toy.trajectory.descend(x[None], t[None], 10_000, 0.1, at)[0]
    assert (w[0] == 0).all()
    ratio = w[1:, 1] / w[1:, 0]
    assert ratio[0] < 0 and ratio[1] > ratio[0]  # uses x2, less and less
    assert float(ls[1] / ls[0]) < ratio[1] < 0  # past least squares on the page's loss, not yet at 0
    assert toy.trajectory.record_steps(1000, 5) == [0, 1, 6, 32, 178, 1000]


def test_smoke_issue51_controls_store_every_arm_and_their_findings_and_figures_draw(store):
    import matplotlib

    matplotlib.use("Agg")
    from modlib.redundant_input_toy import figures, findings, scale_lr
    from modlib.redundant_input_toy.studies import coverage_arm, norm_arm, scale_lr_arm

    sweep = toy.run("smoke", torch.device("cpu"), progress=False)
    st = toy.studies.run("smoke", torch.device("cpu"), sweep)
    for d in toy.coverage.COVERAGE:
        assert coverage_arm(st, d, "a")["test_acc"].shape == (2,)
    matched = norm_arm(st, "b")
    assert (matched["grad_x2"][:, 0] == 0).all() and matched["test_acc"].shape == (2,)
    norms = st.stored["mechanism-norm"].arrays["init_norm"]
    assert np.allclose(norms[..., 0], norms[..., 1], rtol=1e-5)
    assert np.allclose(st.stored["scale-lr"].arrays["lr"], [0.1, 0.02, 0.004])
    for arm in scale_lr.ARMS:
        assert scale_lr_arm(st, arm, "b")["test_acc"].shape == (2,)
    # the scale-1 arms at 0.1 repeat the stored scale control's, seed by seed
    assert np.allclose(scale_lr_arm(st, "x1", "b")["test_acc"], st.arrays("scale", "x1", "b")["test_acc"])
    found = findings.issue51(st)
    assert {"single-a", "single-b", "info-b", "info-reliance-a", "reliance-single-b", "zero-norm-gen-b",
            "norm-gen-a", "inherited-norm-b", "scale-lr25-a", "scale-lr5-b", "interaction",
            "interaction-lr25", "interaction-lr5"} <= set(found)
    assert all("✓" not in f.text and "✗" not in f.text for f in found.values())  # the book's own hypotheses
    traj = toy.trajectory.run("smoke")
    for fig in (figures.coverage_figure(st), figures.trajectory_figure(st, traj)):
        assert fig.get_size_inches()[0] <= 6.6 + 1e-9


@pytest.mark.parametrize("profile", ["smoke", "default", "full", "paper"])
def test_the_coverage_controls_pair_with_the_sweeps_seeds(profile):
    """The coverage and the studies' claims pair each seed of their arms with the same seed of the
    sweep's paper setting: all must have as many seeds at every profile (at default they did not,
    and the page failed)."""
    from modlib.redundant_input_toy import baselines, coverage, mechanism, scale

    seeds = {m.__name__: m.settings(profile).seeds for m in (coverage, baselines, mechanism, scale)}
    assert set(seeds.values()) == {toy.settings(profile).seeds}, (toy.settings(profile).seeds, seeds)


@pytest.mark.parametrize("profile", ["smoke", "default", "full", "paper"])
def test_the_coverage_controls_train_as_long_as_the_sweep_they_are_compared_with(profile):
    assert toy.coverage.settings(profile).epochs == toy.settings(profile).epochs


def test_steps_note_names_the_flat_panels_and_whether_the_first_line_crosses_the_cell():
    from modlib.redundant_input_toy import findings
    grids = np.zeros((1, 3, 4, 4), dtype=np.uint8)  # [seeds, snapshots, x2, x1]: P(Y1 = 1) * 255
    grids[0, 0] = 100  # epoch 0: one class everywhere
    grids[0, 1, :, 2:] = 200  # epoch 1: a vertical line at x1 = 0, the cell all one class
    grids[0, 2, :, 2:] = 200
    grids[0, 2, 3, 3] = 100  # epoch 4: the line bends into the cell's corner
    arrays = {"grids": grids, "snapshot_epochs": [0, 1, 4], "windows": (-1.5, 1.5, -1.5, 1.5)}
    assert findings.steps_note(arrays, [0, 1]) == ("After epoch 0 the network says one class "
                                                   "everywhere (pale colour), so no black line.")
    assert findings.steps_note(arrays, [0, 4]).endswith(
        "; the first line, after epoch 4, already crosses the dashed cell.")
    assert findings.steps_note(arrays, [1, 4]) == ""
