"""Chapter 1's baselines without gradient descent (notebooks/redundant_input_toy.ipynb, "Without
gradient descent"): minimisers that take no gradient step, fitted in closed form (or by a quadratic
program) to the very training points of the sweep's networks, and measured as the chapter measures
the networks: held-out-cell accuracy and the reliance R on x2 over the same held-out points.

- ``least-squares``: the linear model z = a x1 + b x2 + c with the least squared error to the
  targets t = 2 Y1 - 1 (what gradient descent on the squared error of z itself, (z - t)^2, converges
  to for a linear model; *not* where it goes on the page's loss ½(tanh z - t)^2, whose tail drives a
  linear fit towards the max-margin direction: :mod:`.trajectory` records that drift);
- ``max-margin``: the linear classifier with the largest margin (a hard-margin SVM, what gradient
  descent on the logistic loss tends to in direction, for separable data);
- ``rf-min-norm``: a wide random-features model, the ReLU features of the Playground's first-layer
  initialisation (the network's own 8 first-layer units among them), with the read-out of least norm
  that interpolates the targets;
- ``rf-max-margin``: the same features, the read-out of largest margin;
- ``linearised``: the network itself, linearised at its initial weights, with the weight change of
  least norm that fits the targets best (where gradient descent on the linearised network converges
  with the squared loss on z: the "lazy" limit of training).

Everything is float64 and deterministic; one stored result (``baselines``) holds every member.
"""

from __future__ import annotations

import copy
from dataclasses import asdict

import numpy as np
import torch
from torch.func import functional_call, jacrev, jvp

from modlib import profiles, results
from modlib.profiles import check_choices, check_int, check_range, settings_for
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy.members import (check_conditions, conditions, gradients_of,
                                               initial_network, member_data)
from modlib.runtime import describe
from modlib.training import bar

BASELINES = ("least-squares", "max-margin", "rf-min-norm", "rf-max-margin", "linearised")
LINEAR = ("least-squares", "max-margin")  # their coefficients (a, b, c) are stored too


@profiles.settings
class BaselineSettings:
    """The baselines' own settings; the data, seeds and network come from the sweep's settings."""

    seeds: int
    width: int = 2048  # random features: many more than the 187 training points
    rcond: float = 1e-10  # singular values below this share of the largest count as zero
    reveals: tuple[float, ...] = (1.0, 0.0)
    controls: tuple[str, ...] = ("middle", "even")
    baselines: tuple[str, ...] = BASELINES
    grid_seeds: int = 3
    grid_resolution: int = 41

    def __post_init__(self):
        for name in ("seeds", "width", "grid_seeds", "grid_resolution"):
            check_int(name, getattr(self, name), 1)
        check_range("rcond", self.rcond, 0.0, 1.0, open_low=True)
        check_choices("baselines", self.baselines, BASELINES)
        check_conditions(self.reveals, self.controls)

    @property
    def conditions(self) -> list[tuple[str, float]]:
        return conditions(self.reveals, self.controls)


SETTINGS = {
    "smoke": BaselineSettings(seeds=2, width=256, controls=("middle",), grid_seeds=1,
                              grid_resolution=15),
    "default": BaselineSettings(seeds=10, width=1024),
    "full": BaselineSettings(seeds=100),
    "paper": BaselineSettings(seeds=100),
}


def settings(profile: str | None = None) -> BaselineSettings:
    return settings_for(SETTINGS, profile)


def least_squares(x, t):
    """z = a x1 + b x2 + c with the least squared error to ``t``."""
    design = torch.cat([x, torch.ones_like(x[:, :1])], dim=1)
    w = torch.linalg.pinv(design) @ t  # [3]: a, b, c
    return (lambda q: q @ w[:2] + w[2]), w


def max_margin(features, t):
    """The read-out ``v`` and bias of largest margin on ``features [n, k]``."""
    phi, t = features.numpy(), t.numpy()
    if phi.shape[1] < len(phi):  # few features: the primal
        v, bias = hard_margin_primal(phi, t)
    else:  # many: the dual, on the kernel matrix
        alpha, bias = hard_margin_dual(phi @ phi.T, t)
        v = phi.T @ (alpha * t)
    return torch.from_numpy(v), bias


def hard_margin_primal(phi: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, float]:
    """The hard-margin SVM on ``phi [n, k]`` and labels ``t [n]`` (+-1): ``v [k]`` and ``c`` of least
    norm ``|v|`` with ``t_i (v . phi_i + c) >= 1`` for every i. scipy's SLSQP, from zero."""
    from scipy.optimize import minimize

    k, signed = phi.shape[1], t[:, None] * np.c_[phi, np.ones(len(t))]
    res = minimize(lambda w: (0.5 * w[:k] @ w[:k], np.r_[w[:k], 0.0]), np.zeros(k + 1), jac=True,
                   method="SLSQP", options={"maxiter": 2000, "ftol": 1e-12},
                   constraints=[{"type": "ineq", "fun": lambda w: signed @ w - 1, "jac": lambda w: signed}])
    return res.x[:k], float(res.x[k])


def hard_margin_dual(k: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, float]:
    """The hard-margin SVM's dual on the kernel matrix ``k [n, n]`` and labels ``t [n]`` (+-1):
    ``alpha [n] >= 0`` maximising ``sum(alpha) - alpha Q alpha / 2`` (``Q = k t t^T``) with
    ``alpha . t = 0``, and the bias from the support vectors. scipy's SLSQP, from zero."""
    from scipy.optimize import minimize

    q = k * np.outer(t, t)
    res = minimize(lambda a: (0.5 * a @ q @ a - a.sum(), q @ a - 1.0), np.zeros(len(t)),
                   jac=True, method="SLSQP", bounds=[(0.0, None)] * len(t),
                   constraints=[{"type": "eq", "fun": lambda a: a @ t, "jac": lambda a: t}],
                   options={"maxiter": 2000, "ftol": 1e-12})
    alpha = np.clip(res.x, 0.0, None)
    support = alpha > 1e-6 * alpha.max()
    bias = float(np.mean(t[support] - k[support] @ (alpha * t)))
    return alpha, bias


def random_features(net, width: int, seed: int):
    """``width`` ReLU features drawn as the Playground draws the first layer
    (weights U(-0.5, 0.5), bias 0.1), the network's own first layer first."""
    g = torch.Generator().manual_seed(1_000_000 + seed)
    w = torch.empty(width, 2, dtype=torch.float64)
    w.uniform_(-0.5, 0.5, generator=g)
    b = torch.full((width,), 0.1, dtype=torch.float64)
    first = net[0]
    w[:first.out_features] = first.weight.detach()
    b[:first.out_features] = first.bias.detach()
    return lambda q: torch.relu(q @ w.T + b)


def min_norm(features, t, rcond: float):
    """The read-out (and constant) of least norm that fits ``t`` best."""
    ones = torch.ones_like(features[:, :1])
    return torch.linalg.pinv(torch.cat([features, ones], 1),
                             rtol=rcond) @ t


def linearised(net, x, t, rcond: float):
    """``net`` linearised at its weights p0: z(q) = f(q; p0) + J(q) d, with
    the d of least norm that fits ``t`` best (lazy training's limit)."""
    net = copy.deepcopy(net).double()
    p0 = {k: v.detach() for k, v in net.named_parameters()}

    def f(p, q):
        return functional_call(net, p, (q,))[:, 0]

    jac = jacrev(f)(p0, x)  # {name: [n, *shape]}
    j = torch.cat([jac[k].reshape(len(x), -1) for k in p0], dim=1)
    d = torch.linalg.pinv(j, rtol=rcond) @ (t - f(p0, x))
    sizes = [v.numel() for v in p0.values()]
    step = {k: c.reshape(v.shape)
            for (k, v), c in zip(p0.items(), d.split(sizes))}
    return lambda q: sum(jvp(lambda p: f(p, q), (p0,), (step,)))


def fit(name: str, net, x, t, width: int, rcond: float, seed: int):
    """Baseline ``name`` fitted to ``x [n, 2]``, ``t [n]`` (float64): a function from points
    ``[N, 2]`` to logits ``[N]``, and the linear baselines' ``(a, b, c)`` (else NaNs)."""
    coef = torch.full((3,), float("nan"), dtype=torch.float64)
    if name == "least-squares":
        z, coef = least_squares(x, t)
    elif name == "max-margin":
        v, bias = max_margin(x, t)
        coef = torch.cat([v, torch.tensor([bias], dtype=torch.float64)])
        z = lambda q: q @ v + bias  # noqa: E731
    elif name == "linearised":
        z = linearised(net, x, t, rcond)
    else:
        phi = random_features(net, width, seed)
        if name == "rf-min-norm":
            a = min_norm(phi(x), t, rcond)
            z = lambda q: phi(q) @ a[:-1] + a[-1]  # noqa: E731
        else:
            v, bias = max_margin(phi(x), t)
            z = lambda q: phi(q) @ v + bias  # noqa: E731
    return z, coef


def _config(s: toy.ToySettings, b: BaselineSettings) -> dict:
    cfg = asdict(b)
    cfg.update(n_train=s.n_train, n_test=s.n_test, hidden=list(s.hidden),
               formulations=list(s.formulations), sweep_conditions=[list(c) for c in s.conditions],
               activation="relu")
    return json_ready(cfg)


def json_ready(cfg: dict) -> dict:
    """Tuples as lists, as a config reads back from JSON."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()}


def compute(s: toy.ToySettings, b: BaselineSettings, progress: bool = False) -> tuple[dict, dict]:
    """Every baseline on every member ``(formulation, condition, seed)`` of the sweep's ReLU
    network; returns ``(metrics, arrays)``.

    Arrays (F formulations, C conditions, B baselines, S seeds, G grid seeds): ``test_acc``,
    ``train_acc``, ``reliance``, ``grad_x1``, ``grad_x2`` ``[F, C, B, S]`` (gradients: mean absolute
    over the held-out points); ``coef [F, C, 2, S, 3]`` (a, b, c of the two linear baselines);
    ``grids [F, C, B, G, res, res]`` (uint8, (tanh z + 1) / 2 x 255, row = x2) over ``windows [F, C, 4]``.
    """
    conds, nb = b.conditions, len(b.baselines)
    nf, nc, g_seeds, res = len(s.formulations), len(conds), min(b.grid_seeds, b.seeds), b.grid_resolution
    shape = (nf, nc, nb, b.seeds)
    out = {k: np.zeros(shape, np.float32) for k in ("test_acc", "train_acc", "reliance", "grad_x1", "grad_x2")}
    out["coef"] = np.zeros((nf, nc, len(LINEAR), b.seeds, 3))
    out["grids"] = np.zeros((nf, nc, nb, g_seeds, res, res), np.uint8)
    out["windows"] = np.array([[toy.window(f, d) for d, _ in conds] for f in s.formulations])
    jobs = [(i, f, j, cond, seed) for i, f in enumerate(s.formulations) for j, cond in enumerate(conds)
            for seed in range(b.seeds)]
    for i, f, j, cond, seed in bar(jobs, "baselines", show=progress):
        x, y, x_test, y_test = (v.double() for v in member_data(s, f, cond, seed))
        net = initial_network(s, seed)
        grid = toy.window_grid(res, out["windows"][i, j]).double()
        for k, name in enumerate(b.baselines):
            z, coef = fit(name, net, x, 2 * y - 1, b.width, b.rcond, seed)
            with torch.no_grad():
                out["test_acc"][i, j, k, seed] = ((z(x_test) > 0).double() == y_test).double().mean()
                out["train_acc"][i, j, k, seed] = ((z(x) > 0).double() == y).double().mean()
            g1, g2 = gradients_of(z, x_test)
            out["grad_x1"][i, j, k, seed], out["grad_x2"][i, j, k, seed] = g1, g2
            out["reliance"][i, j, k, seed] = g2 / g1.clamp_min(1e-12)
            if name in LINEAR:
                out["coef"][i, j, LINEAR.index(name), seed] = coef.numpy()
            if seed < g_seeds:
                with torch.no_grad():
                    p = (torch.tanh(z(grid)) + 1) / 2
                out["grids"][i, j, k, seed] = (p * 255).round().reshape(res, res).numpy()
    rows = [{"formulation": f, "design": d, "reveal": r, "baseline": name,
             "test_acc_median": float(np.median(out["test_acc"][i, j, k])),
             "share_generalizing": float((out["test_acc"][i, j, k] >= toy.GENERALIZES).mean()),
             "train_acc_mean": float(out["train_acc"][i, j, k].mean()),
             "reliance_median": float(np.median(out["reliance"][i, j, k]))}
            for i, f in enumerate(s.formulations) for j, (d, r) in enumerate(conds)
            for k, name in enumerate(b.baselines)]
    return {"rows": rows}, out


def run(profile: str, device: torch.device, *, progress: bool = False) -> results.Result:
    """Load (or compute and store) the baselines at ``profile`` (computed on the CPU, in float64)."""
    s, b = toy.settings(profile), settings(profile)
    return results.fetch(toy.CHAPTER, "baselines", _config(s, b), lambda: compute(s, b, progress),
                         profile=profile, device=describe(torch.device("cpu")), code=compute)
