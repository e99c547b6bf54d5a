"""Chapter 1's mechanism experiment with the first layer's norm matched (notebooks/redundant_input_toy.ipynb,
"Inherited or built?"; issue 51). The zero-x2 start of :mod:`.mechanism` sets the first layer's
weights from x2 to zero, which also shrinks the first layer's initial weight norm (by about a factor
of 1/sqrt(2)); a smaller start could by itself change where training ends. The ``zero-x2-norm`` arm
starts from the same zero-x2 weights with the remaining first-layer weights (those from x1) scaled
up so that the first layer's weight norm (Frobenius; the biases unchanged) equals the ordinary
start's, network by network. It trains on the mechanism experiment's data (the sweep's members'
points, :func:`.members.member_data`) for as long, recorded the same way, so that it is paired by seed
with the stored ``mechanism`` result's ``ordinary`` and ``zero-x2`` arms.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import results
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy import mechanism
from modlib.redundant_input_toy.baselines import json_ready
from modlib.redundant_input_toy.members import initial_network, member_data
from modlib.runtime import describe

ARMS = ("zero-x2-norm",)
RESULT = "mechanism-norm"


def zero_x2_norm(net: torch.nn.Sequential) -> torch.nn.Sequential:
    """``net`` with the first layer's weights from x2 set to zero and its weights from x1 scaled so
    that the first layer's weight norm is what it was: z does not depend on x2 at the start, and
    the first layer starts as large as the ordinary start's."""
    with torch.no_grad():
        w = net[0].weight
        before = w.norm()
        w[:, 1] = 0.0
        w[:, 0] *= before / w[:, 0].norm().clamp_min(1e-12)
    return net


def _config(s: toy.ToySettings, m: mechanism.MechanismSettings) -> dict:
    cfg = asdict(m)
    cfg.update(n_train=s.n_train, n_test=s.n_test, hidden=list(s.hidden), lr=s.lr, batch=s.batch,
               formulations=list(s.formulations), sweep_conditions=[list(c) for c in s.conditions],
               conditions=[["binary", max(m.reveals)]], arms=list(ARMS), activation="relu", loss="mse")
    return json_ready(cfg)


def compute(s: toy.ToySettings, m: mechanism.MechanismSettings, device: torch.device) -> tuple[dict, dict]:
    """The norm-matched zero-x2 arm for every ``(formulation, seed)`` in the paper's setting; returns
    ``(metrics, arrays)``: the arrays of :func:`modlib.redundant_input_toy.mechanism.compute` with
    the condition and arm axes of length 1 (``[F, 1, 1, S(, T)]``), and ``init_norm [F, S, 2]``: the
    first layer's initial weight norm of the ordinary start and of this arm (equal)."""
    cond = ("binary", max(m.reveals))  # the paper's setting
    members = [(f, seed) for f in s.formulations for seed in range(m.seeds)]
    data = [member_data(s, f, cond, seed) for f, seed in members]
    models, norms = [], []
    for _, seed in members:
        ordinary = initial_network(s, seed)[0].weight.norm().item()
        net = zero_x2_norm(initial_network(s, seed))
        norms.append((ordinary, net[0].weight.norm().item()))
        models.append(net)
    at, done = mechanism.record_updates(s.n_train, s.batch, m.epochs, m.trace_epochs, m.curve_points)
    rec = mechanism.train_recorded(s, models, data, m.epochs, at, device)
    shape = (len(s.formulations), 1, 1, m.seeds)
    arrays = {k: v.reshape(*shape, *v.shape[1:]) for k, v in rec.items()}
    for k in ("grad_x1", "grad_x2", "weight_x2", "test_acc_curve"):
        arrays[k] = arrays[k].astype(np.float16)
    arrays["updates"] = np.array(at)
    arrays["updates_per_epoch"] = np.array(done[1])
    arrays["init_norm"] = np.array(norms).reshape(len(s.formulations), m.seeds, 2)
    rows = [{"formulation": f, "design": cond[0], "reveal": cond[1], "arm": ARMS[0],
             "share_generalizing": float((arrays["test_acc"][i, 0, 0] >= toy.GENERALIZES).mean()),
             "train_acc_mean": float(arrays["train_acc"][i, 0, 0].mean()),
             "reliance_median": float(np.median(arrays["final_reliance"][i, 0, 0]))}
            for i, f in enumerate(s.formulations)]
    return {"rows": rows}, arrays


def run(profile: str, device: torch.device) -> results.Result:
    """Load (or compute and store) the norm-matched arm at ``profile``."""
    s, m = toy.settings(profile), mechanism.settings(profile)
    return results.fetch(toy.CHAPTER, RESULT, _config(s, m), lambda: compute(s, m, device),
                         profile=profile, device=describe(device), code=compute)
