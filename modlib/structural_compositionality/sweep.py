"""The paper's two tests read against density (chapter 5, "How sparse must a subnetwork be?";
notebooks/structural_compositionality.ipynb; issue 31).

What the first test (the subnetwork alone on the *other* subroutine should fail) shows depends on
density: where a random subnetwork of the mask's size does the other subroutine, a found one that
fails it is specific; where a random one of that size fails it too, a pass says little. This module
trains one subroutine's mask over a range of penalty weights lambda, in one base model per rule, and
records at each the share of masked weights the mask keeps beside the two tests and the two random
controls, so that the page can show both against density.

Each sweep is one stored result ``sweep-{rule}``: base model 0 of the rule, trained exactly as chapter
5's ``{rule}-0`` (same settings and seed), then, for each multiple of lambda and each subroutine,
one mask with the first configuration of the chapter's grid (init, learning rate, layer set, lambda's
schedule) and mask seed 0, tested on the test sets with :func:`modlib.structural_compositionality.
experiment.evaluate`. Multiple 1 is the paper's lambda, scaled to this model; the chapter's own
search picks among two larger multiples.
"""

from __future__ import annotations

import torch

from modlib import mask_density, profiles, results
from modlib.profiles import check_choices, check_range, settings_for
from modlib.runtime import describe
from modlib.structural_compositionality import experiment as ex
from modlib.structural_compositionality.tasks import RULES, VISION


@profiles.settings
class SweepSettings:
    """Which rules are swept, and over which multiples of the paper's (scaled) lambda, per modality."""

    rules: tuple[str, ...] = ("inside-contact", "sv-plural")
    vision_lams: tuple[float, ...] = (1.0, 3.0, 10.0, 30.0, 100.0)
    language_lams: tuple[float, ...] = (1.0, 10.0, 100.0, 300.0, 1000.0)

    def __post_init__(self):
        check_choices("rules", self.rules, RULES)
        for name in ("vision_lams", "language_lams"):
            if not getattr(self, name):
                raise ValueError(f"{name}=() is empty; give at least one multiple of lambda, e.g. (1.0,)")
            for lam in getattr(self, name):
                check_range(name, lam, 0.0, 1e6, open_low=True)


SETTINGS = {"smoke": SweepSettings(rules=("sv-plural",), language_lams=(1.0, 30.0)),
            "default": SweepSettings(rules=("sv-plural",), language_lams=(1.0, 300.0)),
            "full": SweepSettings(),
            "paper": SweepSettings()}


def settings(profile: str | None = None) -> SweepSettings:
    return settings_for(SETTINGS, profile)


def lams(rule: str, w: SweepSettings) -> tuple[float, ...]:
    """The multiples of lambda swept for ``rule``'s modality."""
    return w.vision_lams if rule in VISION else w.language_lams


def sweep_one(rule: str, s: ex.StructureSettings, w: SweepSettings, device: torch.device,
              show: bool = False) -> tuple[dict, dict]:
    """One stored sweep of chapter 5: :func:`sweep_model` in base model 0 of ``rule``, trained from
    random weights."""
    return sweep_model(ex.make_model(rule, s, 0).to(device), rule, s, w, show)


def sweep_model(model: torch.nn.Module, rule: str, s: ex.StructureSettings, w: SweepSettings,
                show: bool = False, seed: int = 0) -> tuple[dict, dict]:
    """Train ``model`` (on its device) on ``rule``'s task as chapter 5 trains base model ``seed``
    (its data order), then sweep lambda in it (chapter 6 passes a model that starts from pretrained
    weights): ``(metrics, {})`` with ``metrics["points"]``, one per (multiple of lambda,
    subroutine): ``lam``, ``subroutine``, ``kept`` (share of masked weights kept), ``kept_trajectory``
    (per epoch), ``converged``, and the test accuracies ``(target, other)`` of ``hard`` (the
    subnetwork alone), ``complement`` (ablated), ``random`` (a random subnetwork of the same size per
    layer) and ``random_complement`` (that random set removed), plus ``own`` (the subnetwork on its
    mask-training distribution)."""
    data = ex.problem_sets(rule, s)
    lr = s.vision_lr if rule in VISION else s.language_lr
    ex.train_base(model, data[("train", "task")], epochs=s.epochs, batch=s.batch, lr=lr, seed=seed, show=show)
    test = {k: v for (split, k), v in data.items() if split == "test"}
    stages, _, schedule = ex.grid_settings(rule, s)
    base = {kind: ex.accuracy(model, test[kind]) for kind in test}
    points = []
    for lam in lams(rule, w):
        for k, name in enumerate(RULES[rule]):
            log = []
            ms = ex.train_mask(model, data[("train", f"sub-{k}")], init=s.inits[0], lr=s.mask_lrs[0],
                               stages=stages[0], lam=lam, **schedule, epochs=s.mask_epochs,
                               batch=s.mask_batch, seed=0, log=log, show=show)
            acc = ex.evaluate(model, ms, test, k)
            ms.remove()
            trajectory = [e["kept"] for e in log]
            points.append({"lam": lam, "subroutine": name, "kept": trajectory[-1],
                           "kept_trajectory": trajectory, "converged": mask_density.converged(trajectory),
                           **{m: list(v) if isinstance(v, tuple) else v for m, v in acc.items()}})
    config = {"init": s.inits[0], "lr": s.mask_lrs[0], "stages": stages[0], **schedule}
    return {"rule": rule, "base": base, "configuration": config, "points": points}, {}


def result_names(w: SweepSettings) -> list[str]:
    return [f"sweep-{rule}" for rule in w.rules]


def fetch(rule: str, profile: str, device: torch.device, show: bool = False) -> results.Result:
    """Load (or compute and store) the sweep of ``rule`` at ``profile``."""
    s, w = ex.settings(profile), settings(profile)
    config = {"structure": ex.result_config(s, rule), "lams": list(lams(rule, w))}
    return results.fetch(ex.CHAPTER, f"sweep-{rule}", config, lambda: sweep_one(rule, s, w, device, show),
                         profile=profile, device=describe(device), code=sweep_one)


def run(profile: str, device: torch.device, show: bool = False) -> dict[str, results.Result]:
    """Every sweep of ``profile``, by rule."""
    return {rule: fetch(rule, profile, device, show) for rule in settings(profile).rules}


__all__ = ["SweepSettings", "SETTINGS", "settings", "lams", "sweep_one", "sweep_model", "result_names",
           "fetch", "run"]
