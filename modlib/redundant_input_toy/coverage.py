"""Chapter 1's coverage controls (notebooks/redundant_input_toy.ipynb, "Coverage or correlation?";
issue 51): the ternary controls of :mod:`.experiment` show ``Y1 = 1`` at *two* bands of ``X2``
(the paper's setting at one), so they take the correlation away and widen the coverage at once.
These controls keep the paper's coverage and move one thing at a time.

Every design here shows ``Y1 = 1`` at a single band of ``X2`` only (``Y2 = 1``, the middle band) and
``Y1 = 0`` at all three bands, with the two outer bands equally common, so the mean of ``Y2`` is 1
given either class: ``X2`` is *uncorrelated* with ``Y1`` (Cov 0; the paper's setting: -1/9). The
held-out cell is ``(1, 2)``, the band above the one ``Y1 = 1`` is seen at: a corner with positive
points below it and negative points to its left, as the paper's ``(1, 1)`` is (``(1, 0)``, the band
below, is unseen too, and by the symmetry of the design is the same test). ``Y1 = 1`` is a third of
the training points, as in the paper's setting.

- ``single``: weights 2, 4, 2 on ``(0,0)``, ``(0,1)``, ``(0,2)`` and 4 on ``(1,1)``. Half of the
  points in the band of ``Y1 = 1`` are ``Y1 = 0``, and the other bands hold only ``Y1 = 0``: band by
  band the classes are as in the paper's setting, so ``I(Y1; Y2)`` is the paper's, 0.252 bits.
  Coverage and information matched, the correlation taken away.
- ``single-low``, ``single-high``: the same coverage and no correlation, with ``Y1 = 0`` moved into
  (1, 6, 1) or out of (3, 2, 3) the band of ``Y1 = 1``: ``I(Y1; Y2)`` 0.109 and 0.459 bits. The
  information moved at fixed coverage (what also moves: how common the outer bands, the test cell's
  included, are among the negatives).

No single-band design can make ``X2`` carry *no* information about ``Y1``: independence would need
``P(Y2 | Y1 = 0) = P(Y2 | Y1 = 1)``, which puts every ``Y1 = 0`` point in the band of ``Y1 = 1``
too, and leaves no other band. What a design can take away at the paper's coverage is the
correlation (the linear part), which is what these do.

Every member trains the sweep's ReLU network (squared loss, the paper's setting) from the sweep's
initial weights of its seed (:func:`.members.initial_network`), so each is paired by seed with the
sweep's networks; its training and test points are its own draws.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import profiles, results
from modlib.data import toy as toy_data
from modlib.profiles import check_choice, check_choices, check_int, settings_for
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy.baselines import json_ready
from modlib.redundant_input_toy.mechanism import record_updates, train_recorded
from modlib.redundant_input_toy.members import initial_network
from modlib.runtime import describe

# training weight of each cell (Y1, Y2), and the held-out test cell
COVERAGE = {
    "single": ({(0, 0): 2, (0, 1): 4, (0, 2): 2, (1, 1): 4}, (1, 2)),
    "single-low": ({(0, 0): 1, (0, 1): 6, (0, 2): 1, (1, 1): 4}, (1, 2)),
    "single-high": ({(0, 0): 3, (0, 1): 2, (0, 2): 3, (1, 1): 4}, (1, 2)),
}
RESULT = "coverage"


@profiles.settings
class CoverageSettings:
    """The controls' own settings; network, learning rate, batches and sizes are the sweep's."""

    seeds: int
    epochs: int
    curve_points: int = 30
    designs: tuple[str, ...] = tuple(COVERAGE)

    def __post_init__(self):
        for name in ("seeds", "epochs", "curve_points"):
            check_int(name, getattr(self, name), 1)
        check_choices("designs", self.designs, tuple(COVERAGE))


SETTINGS = {
    "smoke": CoverageSettings(seeds=2, epochs=8, curve_points=4),
    "default": CoverageSettings(seeds=10, epochs=toy.PAPER_EPOCHS),
    "full": CoverageSettings(seeds=100, epochs=4 * toy.PAPER_EPOCHS),
    "paper": CoverageSettings(seeds=100, epochs=4 * toy.PAPER_EPOCHS),
}


def settings(profile: str | None = None) -> CoverageSettings:
    return settings_for(SETTINGS, profile)


def coverage_toy(formulation: str, n: int, design: str = "single", *, split: str = "train",
                 generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` points of a coverage control: ``x [n, 2]``, ``y1 [n]``; the inputs are made exactly as
    :func:`modlib.redundant_input_toy.ternary_toy` makes them (the band of ``Y2 = 2`` is the band of
    ``Y2 = 1`` moved up by ``BAND_GAP``), the cells drawn with ``COVERAGE[design]``'s weights
    (``split="train"``) or all in its held-out cell (``"test"``)."""
    check_choice("formulation", formulation, toy_data.FORMULATIONS)
    check_choice("design", design, tuple(COVERAGE))
    check_choice("split", split, ("train", "test"))
    check_int("n", n, 1)
    weights, held_out = COVERAGE[design]
    if split == "train":
        table = torch.tensor(list(weights))
        w = torch.tensor(list(weights.values()), dtype=torch.float)
        cells = table[torch.multinomial(w, n, replacement=True, generator=generator)]
    else:
        cells = torch.tensor([held_out] * n)
    make = toy_data.inputs_a if formulation == "a" else toy_data.inputs_b
    x = make(n, cells.clamp(max=1), generator)
    x[:, 1] += toy.BAND_GAP[formulation] * (cells[:, 1] == 2)
    return x, cells[:, 0].to(torch.float32)


def table(design: str) -> np.ndarray:
    """The training distribution of the cells ``p [2, 3]`` (rows Y1, columns Y2)."""
    p = np.zeros((2, 3))
    for (y1, y2), w in COVERAGE[design][0].items():
        p[y1, y2] = w
    return p / p.sum()


def mutual_information(design: str) -> float:
    """I(Y1; Y2) in bits in a design's training distribution."""
    p = table(design)
    outer = p.sum(1, keepdims=True) * p.sum(0, keepdims=True)
    seen = p > 0
    return float((p[seen] * np.log2(p[seen] / outer[seen])).sum())


def covariance(design: str) -> float:
    """Cov(Y1, Y2) in a design's training distribution (the paper's setting: -1/9)."""
    p = table(design)
    y1, y2 = np.arange(2)[:, None], np.arange(3)[None, :]
    return float((p * y1 * y2).sum() - (p * y1).sum() * (p * y2).sum())


def _config(s: toy.ToySettings, c: CoverageSettings) -> dict:
    cfg = asdict(c)
    cfg.update(n_train=s.n_train, n_test=s.n_test, hidden=list(s.hidden), lr=s.lr, batch=s.batch,
               formulations=list(s.formulations), band_gap=toy.BAND_GAP,
               weights={d: {f"{k[0]},{k[1]}": w for k, w in COVERAGE[d][0].items()} for d in c.designs},
               held_out={d: list(COVERAGE[d][1]) for d in c.designs}, activation="relu", loss="mse")
    return json_ready(cfg)


def compute(s: toy.ToySettings, c: CoverageSettings, device: torch.device) -> tuple[dict, dict]:
    """Every ``(formulation, design, seed)``; returns ``(metrics, arrays)``.

    Arrays (F formulations, D designs, S seeds, T recorded updates): ``test_acc``, ``train_acc``,
    ``final_reliance`` ``[F, D, S]``; ``grad_x1``, ``grad_x2``, ``weight_x2``, ``test_acc_curve``
    ``[F, D, S, T]`` (float16) at ``updates [T]``; ``train_x [F, D, n, 2]``, ``train_y [F, D, n]``
    (seed 0's, for plots)."""
    members = [(f, d, seed) for f in s.formulations for d in c.designs for seed in range(c.seeds)]
    data = []
    for f, d, seed in members:
        # each member's points from its own generator, keyed apart from the sweep's and scale's keys
        key = 10_000 * seed + 100 * s.formulations.index(f) + 50 + list(COVERAGE).index(d)
        g = torch.Generator().manual_seed(key)
        x, y = coverage_toy(f, s.n_train, d, generator=g)
        x_test, y_test = coverage_toy(f, s.n_test, d, split="test", generator=g)
        data.append((x, y, x_test, y_test))
    models = [initial_network(s, seed) for _, _, seed in members]
    at, done = record_updates(s.n_train, s.batch, c.epochs, 0, c.curve_points)
    rec = train_recorded(s, models, data, c.epochs, at, device)
    dims = (len(s.formulations), len(c.designs), c.seeds)
    arrays = {k: v.reshape(*dims, *v.shape[1:]) for k, v in rec.items()}
    for k in ("grad_x1", "grad_x2", "weight_x2", "test_acc_curve"):
        arrays[k] = arrays[k].astype(np.float16)
    arrays["updates"] = np.array(at)
    arrays["updates_per_epoch"] = np.array(done[1])
    first = [i for i, (_, _, seed) in enumerate(members) if seed == 0]
    arrays["train_x"] = np.stack([data[i][0].numpy() for i in first]).reshape(*dims[:2], s.n_train, 2)
    arrays["train_y"] = np.stack([data[i][1].numpy() for i in first]).reshape(*dims[:2], s.n_train
                                                                              ).astype(np.uint8)
    rows = [{"formulation": f, "design": d, "bits": mutual_information(d), "cov": covariance(d),
             "share_generalizing": float((arrays["test_acc"][i, j] >= toy.GENERALIZES).mean()),
             "train_acc_mean": float(arrays["train_acc"][i, j].mean()),
             "reliance_median": float(np.median(arrays["final_reliance"][i, j]))}
            for i, f in enumerate(s.formulations) for j, d in enumerate(c.designs)]
    return {"rows": rows}, arrays


def run(profile: str, device: torch.device) -> results.Result:
    """Load (or compute and store) the coverage controls at ``profile``."""
    s, c = toy.settings(profile), settings(profile)
    return results.fetch(toy.CHAPTER, RESULT, _config(s, c), lambda: compute(s, c, device),
                         profile=profile, device=describe(device), code=compute)
