"""Chapter 1's mechanism experiment (notebooks/redundant_input_toy.ipynb, "Inherited or built?"):
is the reliance on x2 that trained networks keep inherited from their random initial weights, or
built by the gradient?

Every sweep network (ReLU, squared loss) is trained twice on its own training points: from its
ordinary initial weights (``ordinary``: the sweep's network again) and from the same weights with
the first layer's weights from x2 set to zero (``zero-x2``), so that z does not depend on x2 at the
start and any dependence on x2 later was put there by the gradient. E|dz/dx1| and E|dz/dx2| over
the held-out points, the norm of the x2 weights and the held-out accuracy are recorded after every
update through the first epochs, then at log-spaced epochs to the end.
:func:`train_recorded` is the loop, shared with :mod:`.scale`.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import profiles, results
from modlib.profiles import check_int, settings_for
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy.baselines import json_ready
from modlib.redundant_input_toy.members import (check_conditions, conditions, initial_network,
                                               input_gradients, member_data)
from modlib.runtime import describe
from modlib.training import forward, stack, train_seeds

ARMS = ("ordinary", "zero-x2")


@profiles.settings
class MechanismSettings:
    """The experiment's own settings; the data, network, learning rate and batches are the sweep's."""

    seeds: int
    epochs: int
    trace_epochs: int = 8  # every update is recorded through these first epochs
    curve_points: int = 30
    reveals: tuple[float, ...] = (1.0, 0.0)
    controls: tuple[str, ...] = ("middle", "even")

    def __post_init__(self):
        for name in ("seeds", "epochs", "curve_points"):
            check_int(name, getattr(self, name), 1)
        check_int("trace_epochs", self.trace_epochs, 0)
        if self.trace_epochs > self.epochs:
            raise ValueError(f"trace_epochs={self.trace_epochs} is more than epochs={self.epochs}")
        check_conditions(self.reveals, self.controls)

    @property
    def conditions(self) -> list[tuple[str, float]]:
        return conditions(self.reveals, self.controls)


SETTINGS = {
    "smoke": MechanismSettings(seeds=2, epochs=8, trace_epochs=2, curve_points=4,
                               controls=("middle",)),
    "default": MechanismSettings(seeds=10, epochs=256),
    "full": MechanismSettings(seeds=100, epochs=4 * toy.PAPER_EPOCHS),
    "paper": MechanismSettings(seeds=100, epochs=4 * toy.PAPER_EPOCHS),
}


def settings(profile: str | None = None) -> MechanismSettings:
    return settings_for(SETTINGS, profile)


def zero_x2(net: torch.nn.Sequential) -> torch.nn.Sequential:
    """``net`` with the first layer's weights from x2 set to zero:
    at the start, z does not depend on x2 at all."""
    with torch.no_grad():
        net[0].weight[:, 1] = 0.0
    return net


def record_updates(n_train: int, batch: int, epochs: int, trace_epochs: int,
                   curve_points: int) -> tuple[list[int], list[int]]:
    """The updates after which a run is recorded: every one through ``trace_epochs`` epochs, then
    the ends of :func:`modlib.redundant_input_toy.curve_epochs`' epochs; and how many updates
    ``done[e]`` an epoch ``e`` ends at."""
    done = toy.playground_batches(n_train, batch, epochs)[1]
    later = {done[e] for e in toy.curve_epochs(epochs, curve_points)}
    return sorted(set(range(done[trace_epochs] + 1)) | later), done


def train_recorded(s: toy.ToySettings, models: list, data: list[tuple], epochs: int,
                   at: list[int], device: torch.device, loss: str = "mse") -> dict:
    """Train ``models`` (one per member, each on its ``data`` ``(x, y, x_test, y_test)``) with
    the sweep's SGD on the Playground's clock for ``epochs``, recording after the updates ``at``.

    Returns arrays ``[M, T]`` (T = ``len(at)``): ``grad_x1``, ``grad_x2`` (E|dz/dx| over the held-out
    points), ``weight_x2`` (norm of the first layer's weights from x2), ``test_acc_curve``; and
    ``[M]``: ``test_acc``, ``train_acc``, ``final_reliance``."""
    x, y, x_test, y_test = (torch.stack([d[k] for d in data]).to(device) for k in range(4))
    template, params = stack([m.to(device) for m in models])
    updates = [torch.tensor(u, device=device)
               for u in toy.playground_batches(s.n_train, s.batch, epochs)[0]]
    wanted, rec = set(at), {k: [] for k in ("grad_x1", "grad_x2", "weight_x2", "test_acc_curve")}

    def record(t, p):
        if t in wanted:
            g = input_gradients(template, p, x_test)  # [M, 2]
            rec["grad_x1"].append(g[:, 0]), rec["grad_x2"].append(g[:, 1])
            rec["weight_x2"].append(p["0.weight"][:, :, 1].norm(dim=1))
            z = forward(template, p, x_test)[..., 0]
            rec["test_acc_curve"].append(((z > 0).float() == y_test).float().mean(1))

    params = train_seeds(template, params, lambda t: (x[:, updates[t]], y[:, updates[t]]),
                         toy.loss_fn(loss), steps=len(updates), lr=s.lr, on_step=record,
                         progress=False)
    with torch.no_grad():
        z_test = forward(template, params, x_test)[..., 0]
        z_train = forward(template, params, x)[..., 0]
    out = {k: torch.stack(v, dim=1).cpu().numpy() for k, v in rec.items()}
    out["test_acc"] = ((z_test > 0).float() == y_test).float().mean(1).cpu().numpy()
    out["train_acc"] = ((z_train > 0).float() == y).float().mean(1).cpu().numpy()
    out["final_reliance"] = out["grad_x2"][:, -1] / np.maximum(out["grad_x1"][:, -1], 1e-12)
    return out


def _config(s: toy.ToySettings, m: MechanismSettings) -> dict:
    cfg = asdict(m)
    cfg.update(n_train=s.n_train, n_test=s.n_test, hidden=list(s.hidden), lr=s.lr, batch=s.batch,
               formulations=list(s.formulations), sweep_conditions=[list(c) for c in s.conditions],
               activation="relu", loss="mse")
    return json_ready(cfg)


def compute(s: toy.ToySettings, m: MechanismSettings, device: torch.device) -> tuple[dict, dict]:
    """Both arms for every ``(formulation, condition, seed)``; returns ``(metrics, arrays)``.

    Arrays (F formulations, C conditions, A arms, S seeds, T recorded updates): ``grad_x1``,
    ``grad_x2``, ``weight_x2``, ``test_acc_curve`` ``[F, C, A, S, T]`` (float16);
    ``test_acc``, ``train_acc``, ``final_reliance`` ``[F, C, A, S]``; ``updates [T]`` (after
    how many updates each record was taken) and ``updates_per_epoch`` (a scalar array)."""
    conds = m.conditions
    members = [(f, cond, arm, seed) for f in s.formulations for cond in conds for arm in ARMS
               for seed in range(m.seeds)]
    data = {(f, cond, seed): member_data(s, f, cond, seed)
            for f in s.formulations for cond in conds for seed in range(m.seeds)}
    models = []
    for f, cond, arm, seed in members:
        net = initial_network(s, seed)
        models.append(zero_x2(net) if arm == "zero-x2" else net)
    at, done = record_updates(s.n_train, s.batch, m.epochs, m.trace_epochs, m.curve_points)
    rec = train_recorded(s, models, [data[(f, c, seed)] for f, c, _, seed in members], m.epochs,
                         at, device)
    shape = (len(s.formulations), len(conds), len(ARMS), m.seeds)
    arrays = {k: v.reshape(*shape, *v.shape[1:]) for k, v in rec.items()}
    for k in ("grad_x1", "grad_x2", "weight_x2", "test_acc_curve"):
        arrays[k] = arrays[k].astype(np.float16)
    arrays["updates"] = np.array(at)
    arrays["updates_per_epoch"] = np.array(done[1])
    rows = [{"formulation": f, "design": d, "reveal": r, "arm": arm,
             "share_generalizing": float((arrays["test_acc"][i, j, a] >= toy.GENERALIZES).mean()),
             "train_acc_mean": float(arrays["train_acc"][i, j, a].mean()),
             "reliance_median": float(np.median(arrays["final_reliance"][i, j, a]))}
            for i, f in enumerate(s.formulations) for j, (d, r) in enumerate(conds)
            for a, arm in enumerate(ARMS)]
    return {"rows": rows}, arrays


def run(profile: str, device: torch.device) -> results.Result:
    """Load (or compute and store) the mechanism experiment at ``profile``."""
    s, m = toy.settings(profile), settings(profile)
    return results.fetch(toy.CHAPTER, "mechanism", _config(s, m), lambda: compute(s, m, device),
                         profile=profile, device=describe(device), code=compute)
