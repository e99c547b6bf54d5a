"""The redundant-input toy (chapter 1, notebooks/redundant_input_toy.ipynb): does gradient descent
lean on a redundant input?

One *group* = one (activation, loss) pair; within a group every (formulation, training set, seed)
is a member of one batched model (:func:`modlib.training.train_seeds`). Member ``(f, c, s)``
starts from the same initial weights for every ``f`` and ``c`` (seeded by ``s``), so settings are
compared on paired seeds. A group's result is stored with :func:`modlib.results.fetch`.

The training sets (*conditions*): the binary design of :func:`modlib.data.toy.redundant_toy` at each
``reveal`` level, and two *ternary* controls (:func:`ternary_toy`), in which Y2 takes three values,
X2 is uncorrelated with Y1 and the held-out cell stays unseen: ``"middle"`` holds out (1, 1), the
binary design's test cell, between two bands of seen Y1 = 1 points; ``"corner"`` and ``"even"``
hold out (1, 2), a corner with seen points on two sides only, as the binary design's test cell is
(``"even"`` with its two seen neighbours equally common).

Training runs on the TensorFlow Playground's clock: a fixed training set of ``n_train`` points
(the authors' 500 points, less the held-out quadrant, half of them for training: about 187), gone
over in the same order every *epoch* with an update after every ``batch`` points
(:func:`playground_batches`). The paper's "1024 steps" are 1024 such epochs.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch
import torch.nn.functional as F

from modlib import profiles, results
from modlib.data import toy as toy_data
from modlib.models import ACTIVATIONS, mlp
from modlib.profiles import check_choice, check_choices, check_int, check_range, settings_for
from modlib.runtime import describe
from modlib.training import forward, stack, train_seeds

CHAPTER = "redundant_input_toy"
LOSSES = ("mse", "ce")
GENERALIZES = 0.9  # a seed "generalises" when its held-out-cell accuracy is at least this
PAPER_EPOCHS = 1024  # the paper's "1024 steps": Playground epochs
# the ternary controls: training weight of each cell (Y1, Y2), and the held-out test cell; in both,
# the mean of Y2 is the same given Y1 = 0 and given Y1 = 1, so X2 is uncorrelated with Y1
TERNARY = {
    "middle": ({(0, 0): 1, (0, 1): 1, (0, 2): 1, (1, 0): 1, (1, 2): 1}, (1, 1)),
    "corner": ({(0, 0): 2, (0, 1): 1, (0, 2): 1, (1, 0): 1, (1, 1): 3}, (1, 2)),
    # the corner again, its two seen neighbours (1, 1) and (0, 2) equally common
    "even": ({(0, 0): 4, (0, 1): 1, (0, 2): 1, (1, 0): 1, (1, 1): 1}, (1, 2)),
}
BAND_GAP = {"a": 1.0, "b": 5.6}  # how far up one value of Y2 moves the band of X2


@profiles.settings
class ToySettings:
    """Everything that decides a run of the toy; validated on construction."""

    seeds: int
    epochs: int = PAPER_EPOCHS
    batch: int = 10
    lr: float = 0.1
    hidden: tuple[int, ...] = (8, 8, 8)
    n_train: int = 187
    n_test: int = 200
    formulations: tuple[str, ...] = toy_data.FORMULATIONS
    activations: tuple[str, ...] = ("relu", "tanh")
    losses: tuple[str, ...] = LOSSES
    reveals: tuple[float, ...] = (1.0, 0.5, 0.0)
    controls: tuple[str, ...] = tuple(TERNARY)
    grid_seeds: int = 12
    grid_resolution: int = 41
    curve_points: int = 25

    def __post_init__(self):
        for name in ("seeds", "batch", "n_train", "n_test", "grid_seeds", "grid_resolution", "curve_points"):
            check_int(name, getattr(self, name), 1)
        check_int("epochs", self.epochs, 0)
        check_range("lr", self.lr, 0.0, 10.0, open_low=True)
        check_choices("formulations", self.formulations, toy_data.FORMULATIONS)
        check_choices("activations", self.activations, ACTIVATIONS)
        check_choices("losses", self.losses, LOSSES)
        check_choices("controls", self.controls, tuple(TERNARY))
        if len(self.reveals) == 0:
            raise ValueError("reveals is empty; give at least one value in [0, 1]")
        for r in self.reveals:
            check_range("reveals", r, 0.0, 1.0)
        for i, h in enumerate(self.hidden):
            check_int(f"hidden[{i}]", h, 1)
        if self.n_train < self.batch:
            raise ValueError(f"n_train={self.n_train} is smaller than batch={self.batch}; "
                             "an epoch must hold at least one update")

    @property
    def conditions(self) -> list[tuple[str, float]]:
        """The training sets, as ``(design, reveal)``: the binary design at every ``reveals`` level,
        then the ternary controls (their held-out cells unseen, so ``reveal`` 1)."""
        return [("binary", r) for r in self.reveals] + [(c, 1.0) for c in self.controls]


SETTINGS = {
    "smoke": ToySettings(seeds=2, epochs=8, n_train=60, n_test=40, reveals=(1.0, 0.0),
                         grid_seeds=2, grid_resolution=15, curve_points=6),
    # default: a reader's first run (the aim: 3 minutes of CPU for the page; benchmarks/default_cpu.csv): 10 seeds (as
    # the coverage controls and the studies, whose arms are paired with the sweep's seeds), the paper's 1024 epochs,
    # three reveal levels. Fewer seeds would not make it faster: the members train at once (vmap), so a sweep's time
    # is its 18,432 steps (measured side by side in one session: the four sweeps took 97 s of CPU with 8 seeds and 97 s
    # with 6; the page's total moves with the machine's load by more than that)
    "default": ToySettings(seeds=10, reveals=(1.0, 0.9, 0.0)),
    # four times the paper's epochs, so that the curves are seen to level off
    "full": ToySettings(seeds=100, epochs=4 * PAPER_EPOCHS, curve_points=40,
                        reveals=(1.0, 0.95, 0.9, 0.8, 0.75, 0.5, 0.25, 0.0)),
    # the paper's scale already fits on a CPU: the same settings as full
    "paper": ToySettings(seeds=100, epochs=4 * PAPER_EPOCHS, curve_points=40,
                         reveals=(1.0, 0.95, 0.9, 0.8, 0.75, 0.5, 0.25, 0.0)),
}


def settings(profile: str | None = None) -> ToySettings:
    return settings_for(SETTINGS, profile)


def snapshot_epochs(epochs: int) -> list[int]:
    """0, 1, 2, 4, ... up to ``epochs`` (and ``epochs`` itself): the epochs of the paper's Fig. 5."""
    out, e = [0], 1
    while e < epochs:
        out.append(e)
        e *= 2
    return out + [epochs] if epochs > 0 else out


def curve_epochs(epochs: int, points: int) -> list[int]:
    """About ``points`` log-spaced epochs from 0 to ``epochs``, including
    both ends and the paper's last epoch, ``PAPER_EPOCHS``."""
    grid = np.geomspace(1, max(epochs, 1), max(points - 1, 1))
    grid = np.unique(np.round(grid).astype(int))
    paper = [PAPER_EPOCHS] if PAPER_EPOCHS <= epochs else []
    return sorted({0, *[int(g) for g in grid if g <= epochs], *paper, epochs})


def playground_batches(n: int, batch: int, epochs: int
                       ) -> tuple[list[list[int]], list[int]]:
    """The Playground's updates: which training points each one averages
    over, and how many updates have happened at the end of each epoch.

    Every epoch goes over points 0..n-1 in one fixed order and updates
    after every ``batch``-th point of the epoch; the ``n % batch`` points
    left at an epoch's end join the next epoch's first update (n = 187,
    batch = 10: 18 updates an epoch, the first of 17 points from epoch 2).
    Returns ``(updates, done)``: ``updates[t]`` lists the points of update
    t; ``done[e]`` is the number of updates after ``e`` epochs.
    """
    updates, done, pending = [], [0], []
    for _ in range(epochs):
        for i in range(n):
            pending.append(i)
            if (i + 1) % batch == 0:
                updates.append(pending)
                pending = []
        done.append(len(updates))
    return updates, done


def ternary_toy(formulation: str, n: int, design: str = "middle", *,
                split: str = "train", generator: torch.Generator
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` points of a ternary control: ``x [n, 2]``, ``y1 [n]``.

    Y2 takes three values. ``split="train"`` draws the cells (Y1, Y2)
    with the weights of ``TERNARY[design]``, ``"test"`` only its held-out
    cell. X1 is made as in :func:`modlib.data.toy.redundant_toy`; the band of
    X2 is that of Y2 = 0 or 1 there, and Y2 = 2 moves the Y2 = 1 band up
    by ``BAND_GAP``. In training the mean of X2 is the same for both
    classes, yet one band of X2 occurs only with Y1 = 0.
    """
    check_choice("formulation", formulation, toy_data.FORMULATIONS)
    check_choice("design", design, tuple(TERNARY))
    check_choice("split", split, ("train", "test"))
    check_int("n", n, 1)
    weights, held_out = TERNARY[design]
    if split == "train":
        table = torch.tensor(list(weights))
        w = torch.tensor(list(weights.values()), dtype=torch.float)
        cells = table[torch.multinomial(w, n, replacement=True,
                                        generator=generator)]
    else:
        cells = torch.tensor([held_out] * n)  # [n, 2] values of (Y1, Y2)
    # the binary design's inputs for (Y1, min(Y2, 1)), then Y2 = 2 moved up
    make = toy_data.inputs_a if formulation == "a" else toy_data.inputs_b
    x = make(n, cells.clamp(max=1), generator)
    x[:, 1] += BAND_GAP[formulation] * (cells[:, 1] == 2)
    return x, cells[:, 0].to(torch.float32)


def window(formulation: str, design: str) -> tuple[float, ...]:
    """The plotting window ``(x1 low, x1 high, x2 low, x2 high)``; the
    ternary designs' is taller, to show the band of Y2 = 2."""
    low, high = toy_data.EXTENT[formulation]
    top = high + BAND_GAP[formulation] * (design in TERNARY)
    return (low, high, low, top)


def held_out_band(formulation: str, design: str) -> tuple[float, float]:
    """The x2 range ``(low, high)`` of the held-out test cell (x1 > 0)."""
    low, high = window(formulation, design)[2:]
    if design == "binary":
        return 0.0, high
    gap = BAND_GAP[formulation]
    return (0.0, gap) if TERNARY[design][1][1] == 1 else (gap, high)


def mutual_information(design: str, reveal: float) -> float:
    """I(Y1; Y2) in bits in the training distribution of a condition."""
    if design == "binary":
        return toy_data.toy_mutual_information(reveal)
    p = torch.zeros(2, 3, dtype=torch.float64)
    for (y1, y2), w in TERNARY[design][0].items():
        p[y1, y2] = w
    p /= p.sum()
    outer = p.sum(1, keepdim=True) * p.sum(0, keepdim=True)
    return float((p[p > 0] * torch.log2(p[p > 0] / outer[p > 0])).sum())


def binary_covariance(reveal: float) -> float:
    """Cov(Y1, Y2) in the training distribution of the binary design, the held-out cell at weight
    ``1 - reveal`` against 1 for each other cell (the paper's setting, ``reveal`` 1: -1/9)."""
    w = 1 - reveal
    return w / (3 + w) - ((1 + w) / (3 + w)) ** 2


def loss_fn(loss: str):
    """One member's loss on outputs ``[B, 1]`` and targets ``[B]`` in {0, 1}.

    ``"mse"``: the TensorFlow Playground's squared error ½(tanh(z) - t)² with t = ±1.
    ``"ce"``: binary cross-entropy on the logit z.
    """
    if loss == "mse":
        return lambda out, y: 0.5 * (
            (torch.tanh(out[:, 0]) - (2 * y - 1)) ** 2).mean()
    return lambda out, y: F.binary_cross_entropy_with_logits(out[:, 0], y)


def to_probability(z: torch.Tensor, loss: str) -> torch.Tensor:
    """The model's P(Y1 = 1) read off its logit ``z`` (both losses put the boundary at z = 0)."""
    return (torch.tanh(z) + 1) / 2 if loss == "mse" else torch.sigmoid(z)


def reliance(template, params, x: torch.Tensor) -> torch.Tensor:
    """E|∂z/∂x2| / E|∂z/∂x1| over the points ``x [M, N, 2]``, per member: ``[M]``.

    0 means the member ignores x2 (a compositional solution); near 1 or above, x2 matters as much as x1.
    """
    with torch.enable_grad():
        x = x.clone().requires_grad_(True)
        z = forward(template, params, x)
        (g,) = torch.autograd.grad(z.sum(), x)
    mean_abs = g.abs().mean(dim=1)  # [M, 2]
    return mean_abs[:, 1] / mean_abs[:, 0].clamp_min(1e-12)


def _group_config(s: ToySettings, activation: str, loss: str) -> dict:
    cfg = asdict(s)
    for k in ("activations", "losses"):
        cfg.pop(k)
    cfg.update(activation=activation, loss=loss, hidden=list(s.hidden),
               formulations=list(s.formulations), reveals=list(s.reveals))
    return cfg


def training_set(formulation: str, design: str, reveal: float, n: int,
                 generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """One member's training points ``x [n, 2]`` and targets ``y [n]``."""
    if design in TERNARY:
        return ternary_toy(formulation, n, design, generator=generator)
    return toy_data.redundant_toy(formulation, n, reveal=reveal, generator=generator)


def test_set(formulation: str, design: str, n: int,
             generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` points of the held-out test cell of a design: ``x [n, 2]``,
    ``y [n]`` (all 1)."""
    if design in TERNARY:
        return ternary_toy(formulation, n, design, split="test",
                           generator=generator)
    return toy_data.redundant_toy(formulation, n, split="test", generator=generator)


def run_group(s: ToySettings, activation: str, loss: str, device: torch.device,
              progress: bool = True) -> tuple[dict, dict]:
    """Train every (formulation, condition, seed) member of one group on the
    Playground's clock; returns ``(metrics, arrays)``.

    Arrays (F formulations, C conditions, S seeds, E curve epochs, G grid
    seeds, K snapshots): ``test_acc``, ``train_acc``, ``final_reliance``
    ``[F, C, S]``; ``curve_epochs [E]``, ``reliance``, ``test_acc_curve``,
    ``train_loss_curve`` ``[F, C, S, E]``; ``snapshot_epochs [K]``,
    ``grids [F, C, G, K, res, res]`` (uint8, P(Y1=1) x 255, row = x2) over
    ``windows [F, C, 4]``; ``train_x [F, C, n, 2]``, ``train_y [F, C, n]``
    (seed 0's training set, for plots).
    """
    conds = s.conditions
    nf, nc, ns = len(s.formulations), len(conds), s.seeds
    members = [(f, c, seed) for f in s.formulations for c in range(nc)
               for seed in range(ns)]
    xs, ys, xt, yt = [], [], [], []
    for f, c, seed in members:
        # each member's data from its own generator, keyed by who it is
        key = 10_000 * seed + 100 * s.formulations.index(f) + c
        g = torch.Generator().manual_seed(key)
        x, y = training_set(f, *conds[c], s.n_train, g)
        x_test, y_test = test_set(f, conds[c][0], s.n_test, g)
        xs.append(x), ys.append(y), xt.append(x_test), yt.append(y_test)
    x_train = torch.stack(xs).to(device)  # [M, n, 2]
    y_train = torch.stack(ys).to(device)  # [M, n]
    x_test, y_test = torch.stack(xt).to(device), torch.stack(yt).to(device)

    models = []
    for _, _, seed in members:
        torch.manual_seed(seed)
        models.append(mlp(2, s.hidden, 1, activation, init="playground").to(device))
    template, params = stack(models)

    updates, done = playground_batches(s.n_train, s.batch, s.epochs)
    updates = [torch.tensor(u, device=device) for u in updates]

    def batches(t):
        return x_train[:, updates[t]], y_train[:, updates[t]]

    e_curve, e_snap = curve_epochs(s.epochs, s.curve_points), snapshot_epochs(s.epochs)
    at_curve = {done[e] for e in e_curve}
    at_snap = {done[e] for e in e_snap}
    g_seeds = min(s.grid_seeds, ns)
    in_grid = torch.tensor([seed < g_seeds for _, _, seed in members], device=device)
    windows = np.array([[window(f, d) for d, _ in conds] for f in s.formulations])
    grid_in = torch.stack([window_grid(s.grid_resolution, windows[s.formulations.index(f), c])
                           for f, c, seed in members if seed < g_seeds]).to(device)
    lossf = loss_fn(loss)
    curves = {"reliance": [], "test_acc_curve": [], "train_loss_curve": []}
    grids = []

    def record(t, params):  # after t updates
        if t in at_curve:
            z_test = forward(template, params, x_test)[..., 0]
            curves["test_acc_curve"].append(((z_test > 0).float() == y_test).float().mean(1))
            curves["reliance"].append(reliance(template, params, x_test))
            z_train = forward(template, params, x_train)
            curves["train_loss_curve"].append(torch.vmap(lossf)(z_train, y_train))
        if t in at_snap:
            sub = {k: v[in_grid] for k, v in params.items()}
            z = forward(template, sub, grid_in)[..., 0]
            grids.append((to_probability(z, loss) * 255).round().to(torch.uint8))

    params = train_seeds(template, params, batches, lossf, steps=len(updates), lr=s.lr,
                         on_step=record, progress=progress, desc=f"{activation}/{loss}")
    with torch.no_grad():
        z_test = forward(template, params, x_test)[..., 0]
        z_train = forward(template, params, x_train)[..., 0]
    test_acc = ((z_test > 0).float() == y_test).float().mean(1)
    train_acc = ((z_train > 0).float() == y_train).float().mean(1)

    def shaped(t: torch.Tensor, *tail) -> np.ndarray:
        return t.detach().cpu().numpy().reshape(nf, nc, ns, *tail)

    res = s.grid_resolution
    grid_arr = torch.stack(grids, dim=1).cpu().numpy()  # [M_g, K, res*res]
    arrays = {
        "test_acc": shaped(test_acc), "train_acc": shaped(train_acc),
        "final_reliance": shaped(curves["reliance"][-1]),
        "curve_epochs": np.array(e_curve), "snapshot_epochs": np.array(e_snap),
        **{k: shaped(torch.stack(v, dim=1), len(e_curve)) for k, v in curves.items()},
        "grids": grid_arr.reshape(nf, nc, g_seeds, len(e_snap), res, res),
        "windows": windows,
        "train_x": shaped(x_train, s.n_train, 2)[:, :, 0].astype(np.float16),
        "train_y": shaped(y_train, s.n_train)[:, :, 0].astype(np.uint8),
    }
    rows = []
    for i, f in enumerate(s.formulations):
        for j, (design, r) in enumerate(conds):
            acc, rel = arrays["test_acc"][i, j], arrays["final_reliance"][i, j]
            rows.append({"formulation": f, "design": design, "reveal": r,
                         "test_acc_mean": float(acc.mean()),
                         "test_acc_std": float(acc.std()),
                         "share_generalizing": float((acc >= GENERALIZES).mean()),
                         "train_acc_mean": float(arrays["train_acc"][i, j].mean()),
                         "reliance_median": float(np.median(rel))})
    return {"rows": rows}, arrays


def window_grid(resolution: int, win) -> torch.Tensor:
    """A ``[resolution**2, 2]`` grid over ``win`` = (x1 low, x1 high, x2
    low, x2 high), row-major with x2 varying slowest (as ``toy_data.grid``)."""
    x1 = torch.linspace(float(win[0]), float(win[1]), resolution)
    x2 = torch.linspace(float(win[2]), float(win[3]), resolution)
    x2, x1 = torch.meshgrid(x2, x1, indexing="ij")
    return torch.stack([x1.reshape(-1), x2.reshape(-1)], dim=1)


class ToySweep:
    """All groups of one run of the toy, with look-ups by setting."""

    PER_SETTING = ("test_acc", "train_acc", "final_reliance", "reliance", "test_acc_curve",
                   "train_loss_curve", "grids", "windows", "train_x", "train_y")

    def __init__(self, s: ToySettings, groups: dict[tuple[str, str], results.Result], profile: str):
        self.settings, self.groups, self.profile = s, groups, profile

    @property
    def provenance(self) -> str:
        """Profile, device and seeds, for figure captions."""
        return next(iter(self.groups.values())).provenance

    def arrays(self, activation: str, loss: str, formulation: str, reveal: float = 1.0,
               design: str = "binary") -> dict:
        """The arrays of one setting, with the formulation and condition axes removed."""
        res = self.groups[(activation, loss)].arrays
        conds = self.settings.conditions
        if (design, reveal) not in conds:
            raise ValueError(f"no training set design={design!r}, reveal={reveal!r} in this "
                             f"sweep; choose from {conds}")
        i, j = self.settings.formulations.index(formulation), conds.index((design, reveal))
        return {k: (v[i, j] if k in self.PER_SETTING else v) for k, v in res.items()}

    def table(self):
        """One row per setting: a ``pandas.DataFrame`` of the sweep's measurements."""
        import pandas as pd

        rows = []
        for (activation, loss), res in self.groups.items():
            for row in res.metrics["rows"]:
                bits = mutual_information(row["design"], row["reveal"])
                rows.append({"formulation": row["formulation"], "activation": activation,
                             "loss": loss, "design": row["design"], "reveal": row["reveal"],
                             "I(Y1;Y2) bits": round(bits, 3),
                             **{k: v for k, v in row.items()
                                if k not in ("formulation", "design", "reveal")}})
        return pd.DataFrame(rows).sort_values(
            ["formulation", "activation", "loss", "design", "reveal"],
            ascending=[True, True, False, True, False], ignore_index=True)


def run(profile: str, device: torch.device, *, s: ToySettings | None = None,
        progress: bool = True) -> ToySweep:
    """Load (or compute and store) every group of the toy at ``profile``."""
    s = s or settings(profile)
    groups = {}
    for activation in s.activations:
        for loss in s.losses:
            groups[(activation, loss)] = results.fetch(
                CHAPTER, f"sweep-{activation}-{loss}", _group_config(s, activation, loss),
                lambda a=activation, l=loss: run_group(s, a, l, device, progress),
                profile=profile, device=describe(device), code=run_group)
    return ToySweep(s, groups, profile)
