"""The redundant-input toy (chapter 1): does gradient descent lean on a redundant input?

One *group* = one (activation, loss) pair; within a group every (formulation, reveal, seed) is a
member of one batched model (:func:`modlib.training.train_seeds`). Member ``(f, r, s)`` starts
from the same initial weights for every ``f`` and ``r`` (seeded by ``s``), so settings are compared
on paired seeds. A group's result is stored with :func:`modlib.results.fetch`.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch
import torch.nn.functional as F

from modlib import data, profiles, results
from modlib.models import ACTIVATIONS, mlp
from modlib.profiles import check_choices, check_int, check_range, settings_for
from modlib.runtime import describe
from modlib.training import forward, stack, train_seeds

CHAPTER = "redundant_input_toy"
CODE = "modlib.toy"  # the code its stored results depend on (modlib.results.code_fingerprint)
LOSSES = ("mse", "ce")
GENERALIZES = 0.9  # a seed "generalises" when its held-out-cell accuracy is at least this


@profiles.settings
class ToySettings:
    """Everything that decides a run of the toy; validated on construction."""

    seeds: int
    steps: int = 1024
    batch: int = 10
    lr: float = 0.1
    hidden: tuple[int, ...] = (8, 8, 8)
    n_train: int = 300
    n_test: int = 200
    formulations: tuple[str, ...] = data.FORMULATIONS
    activations: tuple[str, ...] = ("relu", "tanh")
    losses: tuple[str, ...] = LOSSES
    reveals: tuple[float, ...] = (1.0, 0.5, 0.0)
    grid_seeds: int = 12
    grid_resolution: int = 41
    curve_points: int = 25

    def __post_init__(self):
        for name in ("seeds", "batch", "n_train", "n_test", "grid_seeds", "grid_resolution", "curve_points"):
            check_int(name, getattr(self, name), 1)
        check_int("steps", self.steps, 0)
        check_range("lr", self.lr, 0.0, 10.0, open_low=True)
        check_choices("formulations", self.formulations, data.FORMULATIONS)
        check_choices("activations", self.activations, ACTIVATIONS)
        check_choices("losses", self.losses, LOSSES)
        if len(self.reveals) == 0:
            raise ValueError("reveals is empty; give at least one value in [0, 1]")
        for r in self.reveals:
            check_range("reveals", r, 0.0, 1.0)
        for i, h in enumerate(self.hidden):
            check_int(f"hidden[{i}]", h, 1)


SETTINGS = {
    "smoke": ToySettings(seeds=2, steps=32, n_train=60, n_test=40, reveals=(1.0, 0.0),
                         grid_seeds=2, grid_resolution=15, curve_points=6),
    "default": ToySettings(seeds=20, reveals=(1.0, 0.9, 0.75, 0.5, 0.0)),
    "full": ToySettings(seeds=100, reveals=(1.0, 0.95, 0.9, 0.8, 0.75, 0.5, 0.25, 0.0)),
    # the paper's scale already fits on a CPU: the same settings as full
    "paper": ToySettings(seeds=100, reveals=(1.0, 0.95, 0.9, 0.8, 0.75, 0.5, 0.25, 0.0)),
}


def settings(profile: str | None = None) -> ToySettings:
    return settings_for(SETTINGS, profile)


def snapshot_steps(steps: int) -> list[int]:
    """0, 1, 2, 4, ... up to ``steps`` (and ``steps`` itself): the steps of the paper's Fig. 5."""
    out, s = [0], 1
    while s < steps:
        out.append(s)
        s *= 2
    return out + [steps] if steps > 0 else out


def curve_steps(steps: int, points: int) -> list[int]:
    """About ``points`` log-spaced steps from 0 to ``steps``, including both ends."""
    grid = np.unique(np.round(np.geomspace(1, max(steps, 1), max(points - 1, 1))).astype(int))
    return sorted({0, *[int(g) for g in grid if g <= steps], steps})


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


def run_group(s: ToySettings, activation: str, loss: str, device: torch.device,
              progress: bool = True) -> tuple[dict, dict]:
    """Train every (formulation, reveal, seed) member of one group; returns ``(metrics, arrays)``.

    Arrays (F formulations, R reveals, S seeds, C curve steps, G grid seeds, K snapshots):
    ``test_acc``, ``train_acc``, ``final_reliance`` ``[F, R, S]``; ``curve_steps [C]``,
    ``reliance``, ``test_acc_curve``, ``train_loss_curve`` ``[F, R, S, C]``; ``snapshot_steps [K]``,
    ``grids [F, R, G, K, res, res]`` (uint8, P(Y1=1) x 255, row = x2); ``train_x [F, R, n, 2]``,
    ``train_y [F, R, n]`` (seed 0's training set, for plots).
    """
    nf, nr, ns = len(s.formulations), len(s.reveals), s.seeds
    members = [(f, r, seed) for f in s.formulations for r in s.reveals for seed in range(ns)]
    xs, ys, xt, yt = [], [], [], []
    for f, r, seed in members:
        g = torch.Generator().manual_seed(10_000 * seed + 100 * s.formulations.index(f) + s.reveals.index(r))
        x, y = data.redundant_toy(f, s.n_train, reveal=r, generator=g)
        x_test, y_test = data.redundant_toy(f, s.n_test, split="test", generator=g)
        xs.append(x), ys.append(y), xt.append(x_test), yt.append(y_test)
    x_train, y_train = torch.stack(xs).to(device), torch.stack(ys).to(device)
    x_test, y_test = torch.stack(xt).to(device), torch.stack(yt).to(device)

    models = []
    for _, _, seed in members:
        torch.manual_seed(seed)
        models.append(mlp(2, s.hidden, 1, activation, init="playground").to(device))
    template, params = stack(models)

    order = torch.Generator().manual_seed(12345)
    picks = torch.randint(s.n_train, (s.steps, len(members), s.batch), generator=order).to(device)

    def batches(t):
        i = picks[t]
        return torch.gather(x_train, 1, i[..., None].expand(-1, -1, 2)), torch.gather(y_train, 1, i)

    c_steps, k_steps = curve_steps(s.steps, s.curve_points), snapshot_steps(s.steps)
    g_seeds = min(s.grid_seeds, ns)
    in_grid = torch.tensor([seed < g_seeds for _, _, seed in members], device=device)
    grid_x = {f: data.grid(f, s.grid_resolution)[0].to(device) for f in s.formulations}
    grid_in = torch.stack([grid_x[f] for f, _, _ in members])[in_grid]  # [M_g, res*res, 2]
    lossf = loss_fn(loss)
    curves = {"reliance": [], "test_acc_curve": [], "train_loss_curve": []}
    grids = []

    def record(t, params):
        if t in c_steps:
            z_test = forward(template, params, x_test)[..., 0]
            curves["test_acc_curve"].append(((z_test > 0).float() == y_test).float().mean(1))
            curves["reliance"].append(reliance(template, params, x_test))
            z_train = forward(template, params, x_train)
            curves["train_loss_curve"].append(torch.vmap(lossf)(z_train, y_train))
        if t in k_steps:
            sub = {k: v[in_grid] for k, v in params.items()}
            z = forward(template, sub, grid_in)[..., 0]
            grids.append((to_probability(z, loss) * 255).round().to(torch.uint8))

    params = train_seeds(template, params, batches, lossf, steps=s.steps, lr=s.lr, on_step=record,
                                   progress=progress, desc=f"{activation}/{loss}")
    with torch.no_grad():
        z_test = forward(template, params, x_test)[..., 0]
        z_train = forward(template, params, x_train)[..., 0]
    test_acc = ((z_test > 0).float() == y_test).float().mean(1)
    train_acc = ((z_train > 0).float() == y_train).float().mean(1)

    def shaped(t: torch.Tensor, *tail) -> np.ndarray:
        return t.detach().cpu().numpy().reshape(nf, nr, ns, *tail)

    res = s.grid_resolution
    grid_arr = torch.stack(grids, dim=1).cpu().numpy()  # [M_g, K, res*res]
    arrays = {
        "test_acc": shaped(test_acc), "train_acc": shaped(train_acc),
        "final_reliance": shaped(curves["reliance"][-1]),
        "curve_steps": np.array(c_steps), "snapshot_steps": np.array(k_steps),
        **{k: shaped(torch.stack(v, dim=1), len(c_steps)) for k, v in curves.items()},
        "grids": grid_arr.reshape(nf, nr, g_seeds, len(k_steps), res, res),
        "train_x": x_train.cpu().numpy().reshape(nf, nr, ns, s.n_train, 2)[:, :, 0].astype(np.float16),
        "train_y": y_train.cpu().numpy().reshape(nf, nr, ns, s.n_train)[:, :, 0].astype(np.uint8),
    }
    rows = []
    for i, f in enumerate(s.formulations):
        for j, r in enumerate(s.reveals):
            acc, rel = arrays["test_acc"][i, j], arrays["final_reliance"][i, j]
            rows.append({"formulation": f, "reveal": r, "test_acc_mean": float(acc.mean()),
                         "test_acc_std": float(acc.std()),
                         "share_generalizing": float((acc >= GENERALIZES).mean()),
                         "train_acc_mean": float(arrays["train_acc"][i, j].mean()),
                         "reliance_median": float(np.median(rel))})
    return {"rows": rows}, arrays


class ToySweep:
    """All groups of one run of the toy, with look-ups by setting."""

    def __init__(self, s: ToySettings, groups: dict[tuple[str, str], results.Result], profile: str):
        self.settings, self.groups, self.profile = s, groups, profile

    @property
    def provenance(self) -> str:
        """Profile, device and seeds, for figure captions."""
        return next(iter(self.groups.values())).provenance

    def arrays(self, activation: str, loss: str, formulation: str, reveal: float) -> dict:
        """The arrays of one setting, with the formulation and reveal axes removed."""
        res = self.groups[(activation, loss)].arrays
        i, j = self.settings.formulations.index(formulation), self.settings.reveals.index(reveal)
        per_setting = ("test_acc", "train_acc", "final_reliance", "reliance", "test_acc_curve",
                       "train_loss_curve", "grids", "train_x", "train_y")
        return {k: (v[i, j] if k in per_setting else v) for k, v in res.items()}

    def table(self):
        """One row per setting: a ``pandas.DataFrame`` of the sweep's measurements."""
        import pandas as pd

        rows = []
        for (activation, loss), res in self.groups.items():
            for row in res.metrics["rows"]:
                rows.append({"formulation": row["formulation"], "activation": activation, "loss": loss,
                             "reveal": row["reveal"],
                             "I(Y1;Y2) bits": round(data.toy_mutual_information(row["reveal"]), 3),
                             **{k: v for k, v in row.items() if k not in ("formulation", "reveal")}})
        return pd.DataFrame(rows).sort_values(["formulation", "activation", "loss", "reveal"],
                                              ascending=[True, True, False, False], ignore_index=True)


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
                profile=profile, device=describe(device), code=CODE)
    return ToySweep(s, groups, profile)
