"""Chapter 1's linear baseline trained by gradient descent (notebooks/redundant_input_toy.ipynb,
"Without gradient descent"; issue 51). Least squares is *not* where gradient descent goes on the
page's loss ½(tanh z − t)²: on separable data that loss keeps falling as |z| grows, so plain full-batch
gradient descent on a linear model z = a x1 + b x2 + c drifts, ever more slowly, towards the
direction of the maximum-margin line (which, in the raw inputs, ignores x2). This result records
that drift: the linear model of every sweep member's training points (paper's setting, both
formulations), started at zero and trained full batch on the page's loss, with its coefficients
``(a, b, c)`` at log-spaced steps, beside the least-squares and maximum-margin fits that the stored
``baselines`` result holds for the same points.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import profiles, results
from modlib.profiles import check_int, check_range, settings_for
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy.baselines import json_ready
from modlib.redundant_input_toy.members import member_data
from modlib.runtime import describe

RESULT = "gd-trajectory"


@profiles.settings
class TrajectorySettings:
    seeds: int
    steps: int
    lr: float = 0.1
    points: int = 40  # log-spaced records

    def __post_init__(self):
        for name in ("seeds", "steps", "points"):
            check_int(name, getattr(self, name), 1)
        check_range("lr", self.lr, 0.0, 10.0, open_low=True)


SETTINGS = {
    "smoke": TrajectorySettings(seeds=2, steps=200, points=6),
    "default": TrajectorySettings(seeds=10, steps=10_000),
    "full": TrajectorySettings(seeds=100, steps=200_000),
    "paper": TrajectorySettings(seeds=100, steps=200_000),
}


def settings(profile: str | None = None) -> TrajectorySettings:
    return settings_for(SETTINGS, profile)


def record_steps(steps: int, points: int) -> list[int]:
    """0 and about ``points`` log-spaced steps up to ``steps`` (both ends included)."""
    grid = np.unique(np.round(np.geomspace(1, steps, points)).astype(int))
    return sorted({0, *map(int, grid), steps})


def descend(x: torch.Tensor, t: torch.Tensor, steps: int, lr: float, at: list[int]) -> np.ndarray:
    """Full-batch gradient descent on ``mean ½(tanh z − t)²`` for linear models
    ``z = x @ w[:2] + w[2]``, one per member (``x [M, n, 2]``, ``t [M, n]`` ±1, float64), from
    ``w = 0``; returns ``w [M, len(at), 3]`` after each step count in ``at``."""
    design = torch.cat([x, torch.ones_like(x[..., :1])], dim=-1)  # [M, n, 3]
    w = torch.zeros(x.shape[0], 3, dtype=x.dtype)
    wanted, out = set(at), []
    for step in range(steps + 1):
        if step in wanted:
            out.append(w.clone())
        if step == steps:
            break
        th = torch.tanh(torch.einsum("mnk,mk->mn", design, w))
        err = (th - t) * (1 - th ** 2)  # d loss / d z, per point
        w -= lr * torch.einsum("mn,mnk->mk", err, design) / x.shape[1]
    return torch.stack(out, dim=1).numpy()


def _config(s: toy.ToySettings, c: TrajectorySettings) -> dict:
    cfg = asdict(c)
    cfg.update(n_train=s.n_train, formulations=list(s.formulations), condition=["binary", max(s.reveals)],
               loss="mse (tanh)", model="linear")
    return json_ready(cfg)


def compute(s: toy.ToySettings, c: TrajectorySettings) -> tuple[dict, dict]:
    """Arrays: ``coef [F, S, K, 3]`` (a, b, c after each of ``steps [K]``), ``train_acc [F, S]`` at the
    end; metrics: per formulation the median b/a at a few step counts."""
    cond = ("binary", max(s.reveals))
    xs, ts = [], []
    for f in s.formulations:
        for seed in range(c.seeds):
            x, y, _, _ = member_data(s, f, cond, seed)
            xs.append(x.double()), ts.append(2 * y.double() - 1)
    x, t = torch.stack(xs), torch.stack(ts)
    at = record_steps(c.steps, c.points)
    coef = descend(x, t, c.steps, c.lr, at).reshape(len(s.formulations), c.seeds, len(at), 3)
    w = torch.from_numpy(coef[:, :, -1].reshape(-1, 3))
    z = torch.einsum("mnk,mk->mn", torch.cat([x, torch.ones_like(x[..., :1])], -1), w)
    train_acc = ((z > 0).double() * 2 - 1 == t).double().mean(1).numpy().reshape(len(s.formulations), c.seeds)
    ratio = np.divide(coef[..., 1], coef[..., 0], out=np.full(coef.shape[:-1], np.nan), where=coef[..., 0] != 0)  # a = 0 at the start
    rows = [{"formulation": f, "step": int(k), "b_over_a_median": float(np.median(ratio[i, :, j]))}
            for i, f in enumerate(s.formulations) for j, k in enumerate(at) if j in (len(at) // 2, len(at) - 1)]
    return {"rows": rows}, {"coef": coef, "steps": np.array(at), "train_acc": train_acc}


def run(profile: str, device: torch.device | None = None) -> results.Result:
    """Load (or compute and store) the trajectory at ``profile`` (on the CPU: float64, tiny)."""
    s, c = toy.settings(profile), settings(profile)
    return results.fetch(toy.CHAPTER, RESULT, _config(s, c), lambda: compute(s, c), profile=profile,
                         device=describe(torch.device("cpu")), code=compute)
