"""Chapter 1's control for the two formulations (notebooks/redundant_input_toy.ipynb, "The scale of
(a) and (b)"): formulation (b) is formulation (a) made five times larger, with a margin between the
classes. With the same uniform draws ``u`` and cells, every input is ``sign * (scale * u + push)``:

- (a): scale 1, no margin (``push = 0``): the paper's X = Y - U[0, 1] in distribution;
- (b): scale 5, margin (``push = MARGIN * scale = 0.3``): the Playground's version exactly;
- (a) x5: scale 5, no margin; (b) /5: scale 1, margin (push 0.06).

So (a) against (a) x5 and (b) /5 against (b) change the scale alone, (a) against (b) /5 and (a) x5
against (b) the margin alone. Every arm trains the sweep's ReLU network (squared loss, the paper's
setting) from the same initial weights per seed, on the same draws.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import profiles, results
from modlib.data import toy as toy_data
from modlib.profiles import check_int, settings_for
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy.baselines import json_ready
from modlib.redundant_input_toy.mechanism import record_updates, train_recorded
from modlib.redundant_input_toy.members import initial_network
from modlib.runtime import describe

SCALES = {"x1": 1.0, "x5": 5.0}  # the input scale: (a)'s and (b)'s
SHAPES = ("a", "b")  # "a": no margin between the classes, "b": a margin
MARGIN = toy_data.PUSH / 5.0  # (b)'s push as a share of its scale: 0.06


@profiles.settings
class ScaleSettings:
    """The control's own settings; network, learning rate, batches and sizes are the sweep's."""

    seeds: int
    epochs: int
    curve_points: int = 30

    def __post_init__(self):
        for name in ("seeds", "epochs", "curve_points"):
            check_int(name, getattr(self, name), 1)


SETTINGS = {
    "smoke": ScaleSettings(seeds=2, epochs=8, curve_points=4),
    "default": ScaleSettings(seeds=10, epochs=256),
    "full": ScaleSettings(seeds=100, epochs=4 * toy.PAPER_EPOCHS),
    "paper": ScaleSettings(seeds=100, epochs=4 * toy.PAPER_EPOCHS),
}


def settings(profile: str | None = None) -> ScaleSettings:
    return settings_for(SETTINGS, profile)


def scaled_toy(cells: torch.Tensor, u: torch.Tensor, shape: str,
               scale: float) -> torch.Tensor:
    """Inputs ``sign * (scale * u + push)`` for the cells (Y1, Y2) ``[n, 2]``
    and uniform draws ``u [n, 2]``; the sign is + where the label is 1."""
    push = MARGIN * scale if shape == "b" else 0.0
    magnitude = scale * u + push
    return torch.where(cells.bool(), magnitude, -magnitude)


def draws(n: int, split: str, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """The cells ``[n, 2]`` (drawn as :func:`modlib.data.toy.redundant_toy` draws them, paper's
    setting) and the uniform draws ``u [n, 2]`` that every arm shares."""
    table = torch.tensor([[0, 0], [0, 1], [1, 0], [1, 1]])
    if split == "train":
        cells = table[torch.multinomial(torch.tensor([1.0, 1.0, 1.0, 0.0]), n, replacement=True,
                                        generator=g)]
    else:
        cells = table[[3] * n]
    return cells, torch.rand(n, 2, generator=g)


def _config(s: toy.ToySettings, c: ScaleSettings) -> dict:
    cfg = asdict(c)
    cfg.update(n_train=s.n_train, n_test=s.n_test, hidden=list(s.hidden), lr=s.lr, batch=s.batch,
               scales=SCALES, margin=MARGIN, activation="relu", loss="mse")
    return json_ready(cfg)


def compute(s: toy.ToySettings, c: ScaleSettings, device: torch.device) -> tuple[dict, dict]:
    """Every arm (shape: margin or not; scale) for every seed; returns ``(metrics, arrays)``.

    Arrays (2 shapes, 2 scales, S seeds, T recorded updates): ``test_acc``, ``train_acc``,
    ``final_reliance`` ``[2, 2, S]``; ``grad_x1``, ``grad_x2``, ``weight_x2``, ``test_acc_curve``
    ``[2, 2, S, T]`` (float16) at ``updates [T]``; ``train_x [2, 2, n, 2]`` (seed 0's, for plots)."""
    members = [(shape, scale, seed) for shape in SHAPES for scale in SCALES for seed in range(c.seeds)]
    drawn = {}
    for seed in range(c.seeds):
        g = torch.Generator().manual_seed(10_000 * seed + 900)
        drawn[seed] = (*draws(s.n_train, "train", g), *draws(s.n_test, "test", g))
    data = []
    for shape, scale, seed in members:
        cells, u, cells_test, u_test = drawn[seed]
        data.append((scaled_toy(cells, u, shape, SCALES[scale]), cells[:, 0].float(),
                     scaled_toy(cells_test, u_test, shape, SCALES[scale]), cells_test[:, 0].float()))
    models = [initial_network(s, seed) for _, _, seed in members]
    at, done = record_updates(s.n_train, s.batch, c.epochs, 0, c.curve_points)
    rec = train_recorded(s, models, data, c.epochs, at, device)
    dims = (len(SHAPES), len(SCALES), c.seeds)
    arrays = {k: v.reshape(*dims, *v.shape[1:]) for k, v in rec.items()}
    for k in ("grad_x1", "grad_x2", "weight_x2", "test_acc_curve"):
        arrays[k] = arrays[k].astype(np.float16)
    arrays["updates"] = np.array(at)
    arrays["updates_per_epoch"] = np.array(done[1])
    arrays["train_x"] = np.stack([d[0].numpy() for d, (_, _, seed) in zip(data, members)
                                  if seed == 0]).reshape(len(SHAPES), len(SCALES), s.n_train, 2)
    arrays["train_y"] = drawn[0][0][:, 0].numpy().astype(np.uint8)
    rows = [{"shape": shape, "scale": scale,
             "share_generalizing": float((arrays["test_acc"][i, j] >= toy.GENERALIZES).mean()),
             "train_acc_mean": float(arrays["train_acc"][i, j].mean()),
             "reliance_median": float(np.median(arrays["final_reliance"][i, j]))}
            for i, shape in enumerate(SHAPES) for j, scale in enumerate(SCALES)]
    return {"rows": rows}, arrays


def run(profile: str, device: torch.device) -> results.Result:
    """Load (or compute and store) the scale-and-margin control at ``profile``."""
    s, c = toy.settings(profile), settings(profile)
    return results.fetch(toy.CHAPTER, "scale", _config(s, c), lambda: compute(s, c, device),
                         profile=profile, device=describe(device), code=compute)
