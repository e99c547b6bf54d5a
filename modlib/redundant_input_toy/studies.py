"""Chapter 1's three later studies, side by side with the sweep's networks they are compared with
(notebooks/redundant_input_toy.ipynb, "Without gradient descent", "Inherited or built?", "The scale
of (a) and (b)"): :func:`run` loads (or computes and stores) them, :class:`ToyStudies` looks up one
arm's arrays, seeds first, for the findings, the figures and the claims tests.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import results
from modlib.redundant_input_toy import baselines, coverage, mechanism, mechanism_norm, scale, scale_lr
from modlib.redundant_input_toy.experiment import ToySweep

GRADIENT_DESCENT = "gradient descent"  # the sweep's trained network, an arm of the baselines study
STUDIES = ("baselines", "mechanism", "scale")
ISSUE51 = (coverage.RESULT, mechanism_norm.RESULT, scale_lr.RESULT)  # the controls of issue 51


class ToyStudies:
    """The stored ``baselines``, ``mechanism`` and ``scale`` results and the ``sweep`` (ReLU, squared
    loss) they are compared with. :meth:`arrays` returns one arm's arrays with the seeds first."""

    def __init__(self, sweep: ToySweep, stored: dict[str, results.Result], profile: str):
        self.sweep, self.stored, self.profile = sweep, stored, profile
        self.settings = {"baselines": baselines.settings(profile), "mechanism": mechanism.settings(profile),
                         "scale": scale.settings(profile)}

    @property
    def provenance(self) -> str:
        return self.stored["mechanism"].provenance

    def arms(self, study: str) -> tuple[str, ...]:
        if study == "baselines":
            return (GRADIENT_DESCENT, *self.settings["baselines"].baselines)
        return mechanism.ARMS if study == "mechanism" else tuple(scale.SCALES)

    def conditions(self, study: str) -> list[tuple[str, float]]:
        return self.settings[study].conditions if study != "scale" else [("binary", 1.0)]

    def axis(self, study: str) -> dict:
        """What is not per seed: ``updates [T]`` and ``updates_per_epoch`` (mechanism, scale), seed
        0's training points ``train_x``, ``train_y`` (scale), the plotting ``windows [F, C, 4]`` and
        the linear baselines' ``coef [F, C, 2, S, 3]`` (baselines)."""
        a = self.stored[study].arrays
        keys = {"baselines": ("windows", "coef"), "mechanism": ("updates", "updates_per_epoch"),
                "scale": ("updates", "updates_per_epoch", "train_x", "train_y")}[study]
        return {k: a[k] for k in keys}

    def arrays(self, study: str, arm: str, formulation: str = "b", design: str = "binary",
               reveal: float = 1.0) -> dict:
        """One arm's arrays, seeds first. ``baselines``: ``test_acc``, ``train_acc``, ``reliance``
        ``[S]`` (and ``grids [G, res, res]``), the arm :data:`GRADIENT_DESCENT` being the sweep's
        network on the same seeds; ``mechanism``: those and the curves ``[S, T]``; ``scale``: the same
        as ``mechanism``, ``formulation`` naming the shape (``"b"``: a margin) and ``arm`` the scale."""
        if arm not in self.arms(study):
            raise ValueError(f"no arm {arm!r} in the study {study!r}; choose from {self.arms(study)}")
        if study == "scale":
            a = self.stored["scale"].arrays
            i, j = scale.SHAPES.index(formulation), list(scale.SCALES).index(arm)
            out = {k: v[i, j] for k, v in a.items() if k in _PER_ARM}
            out["reliance"] = out.pop("final_reliance")
            return out
        if (design, reveal) not in self.conditions(study):
            raise ValueError(f"no training set ({design!r}, {reveal}) in {study!r}; choose from "
                             f"{self.conditions(study)}")
        seeds = self.settings[study].seeds
        if arm == GRADIENT_DESCENT:
            a = self.sweep.arrays("relu", "mse", formulation, reveal, design)
            return {"test_acc": a["test_acc"][:seeds], "train_acc": a["train_acc"][:seeds],
                    "reliance": a["final_reliance"][:seeds], "grids": a["grids"][:, -1]}
        i = self.sweep.settings.formulations.index(formulation)
        j = self.conditions(study).index((design, reveal))
        k = self.arms(study).index(arm) - (study == "baselines")
        a = self.stored[study].arrays
        out = {key: v[i, j, k] for key, v in a.items() if key in _PER_ARM}
        if "final_reliance" in out:
            out["reliance"] = out.pop("final_reliance")
        return out


# the arrays with a formulation (or shape), condition (or scale) and arm axis before the seeds
_PER_ARM = {"test_acc", "train_acc", "reliance", "final_reliance", "grad_x1", "grad_x2", "weight_x2",
            "test_acc_curve", "grids"}


def run(profile: str, device: torch.device, sweep: ToySweep) -> ToyStudies:
    """Load (or compute and store) the three studies and issue 51's controls at ``profile``, beside
    ``sweep``."""
    stored = {"baselines": baselines.run(profile, device), "mechanism": mechanism.run(profile, device),
              "scale": scale.run(profile, device), coverage.RESULT: coverage.run(profile, device),
              mechanism_norm.RESULT: mechanism_norm.run(profile, device),
              scale_lr.RESULT: scale_lr.run(profile, device)}
    return ToyStudies(sweep, stored, profile)


def _arm(a: dict, *index) -> dict:
    """One arm's per-seed arrays (``test_acc``, ``train_acc``, ``reliance`` ``[S]``, the curves
    ``[S, T]``) from a stored study's arrays, indexed by ``index`` before the seeds."""
    out = {k: v[index] for k, v in a.items() if k in _PER_ARM}
    out["reliance"] = out.pop("final_reliance")
    return out


def coverage_arm(st: ToyStudies, design: str, formulation: str) -> dict:
    """One design of the coverage controls (:mod:`.coverage`), seeds first."""
    i = st.sweep.settings.formulations.index(formulation)
    return _arm(st.stored[coverage.RESULT].arrays, i, coverage.settings(st.profile).designs.index(design))


def norm_arm(st: ToyStudies, formulation: str) -> dict:
    """The zero-x2 start with the first layer's norm matched (:mod:`.mechanism_norm`), paper's setting."""
    return _arm(st.stored[mechanism_norm.RESULT].arrays, st.sweep.settings.formulations.index(formulation), 0, 0)


def scale_lr_arm(st: ToyStudies, arm: str, shape: str) -> dict:
    """One arm of the learning-rate-matched scale control (:mod:`.scale_lr`): ``arm`` one of
    :data:`.scale_lr.ARMS`, ``shape`` ``"a"`` (no margin) or ``"b"`` (a margin)."""
    return _arm(st.stored[scale_lr.RESULT].arrays, scale.SHAPES.index(shape), list(scale_lr.ARMS).index(arm))


def reliance_curve(a: dict) -> np.ndarray:
    """R after each recorded update, ``[S, T]``, from one arm's ``grad_x1`` and ``grad_x2``."""
    return a["grad_x2"].astype(float) / np.maximum(a["grad_x1"].astype(float), 1e-12)
