"""Chapter 1's scale control again, with the learning rate matched to the input scale
(notebooks/redundant_input_toy.ipynb, "The scale of (a) and (b)"; issue 51). The scale control of
:mod:`.scale` trains all four training sets at the sweep's learning rate, 0.1; but five times larger
inputs make every first-layer update five times larger and move the first layer's pre-activations
25 times as far (the step on ``W x`` is ``lr * |x|^2`` times the back-propagated error), so "scale"
there is also "a larger step". Here the scale-1 sets train at 0.1 as before and the scale-5 sets at
``0.1 / 25`` (``lr/25``: the first layer's steps in its pre-activations matched to scale 1's) and at
``0.1 / 5`` (``lr/5``: a step matched to the size of the inputs rather than their square). The data
are the scale control's draws exactly (:func:`.scale.draws` with its keys), the initial weights the
sweep's per seed, so every arm is paired by seed with the others and with the stored ``scale``
result (whose arms at 0.1 this result's scale-1 arms repeat).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import results
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy import scale
from modlib.redundant_input_toy.baselines import json_ready
from modlib.redundant_input_toy.mechanism import record_updates, train_recorded
from modlib.redundant_input_toy.members import initial_network
from modlib.runtime import describe

# arm: (input scale, the learning rate as a divisor of the sweep's)
ARMS = {"x1": ("x1", 1.0), "x5 lr/5": ("x5", 5.0), "x5 lr/25": ("x5", 25.0)}
RESULT = "scale-lr"


def _config(s: toy.ToySettings, c: scale.ScaleSettings) -> dict:
    cfg = asdict(c)
    cfg.update(n_train=s.n_train, n_test=s.n_test, hidden=list(s.hidden), lr=s.lr, batch=s.batch,
               scales=scale.SCALES, margin=scale.MARGIN, arms={k: list(v) for k, v in ARMS.items()},
               activation="relu", loss="mse")
    return json_ready(cfg)


def compute(s: toy.ToySettings, c: scale.ScaleSettings, device: torch.device) -> tuple[dict, dict]:
    """Every (shape, arm, seed); returns ``(metrics, arrays)`` laid out as
    :func:`modlib.redundant_input_toy.scale.compute`'s with the arms of :data:`ARMS` in place of the
    scales: ``test_acc``, ``train_acc``, ``final_reliance`` ``[2, A, S]``; the curves ``[2, A, S, T]``;
    ``lr [A]``, the learning rate of each arm."""
    drawn = {}
    for seed in range(c.seeds):
        g = torch.Generator().manual_seed(10_000 * seed + 900)  # the scale control's keys
        drawn[seed] = (*scale.draws(s.n_train, "train", g), *scale.draws(s.n_test, "test", g))
    at, done = record_updates(s.n_train, s.batch, c.epochs, 0, c.curve_points)
    out = {}
    for arm, (sc, divisor) in ARMS.items():  # one batched run per learning rate
        members = [(shape, seed) for shape in scale.SHAPES for seed in range(c.seeds)]
        data = []
        for shape, seed in members:
            cells, u, cells_test, u_test = drawn[seed]
            data.append((scale.scaled_toy(cells, u, shape, scale.SCALES[sc]), cells[:, 0].float(),
                         scale.scaled_toy(cells_test, u_test, shape, scale.SCALES[sc]),
                         cells_test[:, 0].float()))
        models = [initial_network(s, seed) for _, seed in members]
        rec = train_recorded(s.with_(lr=s.lr / divisor), models, data, c.epochs, at, device)
        out[arm] = {k: v.reshape(len(scale.SHAPES), c.seeds, *v.shape[1:]) for k, v in rec.items()}
    arrays = {k: np.stack([out[a][k] for a in ARMS], axis=1) for k in out["x1"]}
    for k in ("grad_x1", "grad_x2", "weight_x2", "test_acc_curve"):
        arrays[k] = arrays[k].astype(np.float16)
    arrays["updates"] = np.array(at)
    arrays["updates_per_epoch"] = np.array(done[1])
    arrays["lr"] = np.array([s.lr / d for _, d in ARMS.values()])
    rows = [{"shape": shape, "arm": arm, "lr": s.lr / ARMS[arm][1],
             "share_generalizing": float((arrays["test_acc"][i, j] >= toy.GENERALIZES).mean()),
             "train_acc_mean": float(arrays["train_acc"][i, j].mean()),
             "reliance_median": float(np.median(arrays["final_reliance"][i, j]))}
            for i, shape in enumerate(scale.SHAPES) for j, arm in enumerate(ARMS)]
    return {"rows": rows}, arrays


def run(profile: str, device: torch.device) -> results.Result:
    """Load (or compute and store) the learning-rate-matched scale control at ``profile``."""
    s, c = toy.settings(profile), scale.settings(profile)
    return results.fetch(toy.CHAPTER, RESULT, _config(s, c), lambda: compute(s, c, device),
                         profile=profile, device=describe(device), code=compute)
