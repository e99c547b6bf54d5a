"""Chapter 5: does removing a subnetwork leave the subroutine because another route computes it?
(issue 53: "sufficient but not necessary"; the claims are registered before the results are
computed, and the page decides them from the results stored).

The paper's second test removes a subnetwork and asks that its subroutine suffer. Where it does
not, the subnetwork may be sufficient without being necessary: the rest of the network may hold a
second route to the same subroutine. The theory page's exercise (``ex-st-sufficient``) names the
test, a search in what is left: remove the subnetwork, search again for the same subroutine, and
remove what the second search finds too.

For each stored base model of :data:`RULES_SECOND` this module retrains the base model (chapter 5's
``{rule}-{seed}``: same settings and seed; its task accuracy is kept beside the stored one) and, per
subroutine, with the configuration the stored search chose and mask seed 0:

1. the first mask, as the stored search's (its kept share beside the stored one);
2. the model with the first subnetwork's weights set to 0 (the ablation), in which
3. a second mask is trained for the same subroutine, the same way;

and evaluates the second mask in the ablated model as every mask is evaluated
(:func:`~modlib.structural_compositionality.experiment.evaluate`): alone (``hard``: the second
subnetwork), removed too (``complement``: both subnetworks removed), a random subnetwork of its
per-layer counts (``random``) and as many random weights removed besides the first subnetwork
(``random_complement``). One result per base model, ``second-{rule}-{seed}``: the cost of the stored
result's base model and four masks.
"""

from __future__ import annotations

import torch

from modlib import mask_density, results
from modlib.runtime import describe
from modlib.structural_compositionality import experiment as ex
from modlib.structural_compositionality.tasks import RULES, VISION

PREFIX = "second-"
RULES_SECOND = ("inside-contact",)  # the rule the search in what is left is run for


def _listed(acc: dict) -> dict:
    return {m: list(v) if isinstance(v, tuple) else v for m, v in acc.items()}


def study(rule: str, seed: int, s: ex.StructureSettings, device: torch.device, stored: dict) -> tuple[dict, dict]:
    """Base model ``seed`` of ``rule`` trained again, and per subroutine the first mask, the model
    without it, and a second mask found there (the stored search's configuration, mask seed 0;
    ``stored``: the stored result's metrics). ``(metrics, {})``: ``task`` and ``stored_task``, and per
    subroutine ``chosen``, ``first_passed_gate`` (the stored selection gate), ``first`` (the first
    mask's accuracies as :func:`~modlib.structural_compositionality.experiment.evaluate` gives them,
    its ``kept`` share and the stored mask's ``stored_kept``) and ``second`` (the second mask's, in
    the model without the first, with ``kept`` and ``passed_gate``: its own subroutine at 0.9 on
    validation)."""
    data = ex.problem_sets(rule, s)
    model = ex.make_model(rule, s, seed).to(device)
    lr = s.vision_lr if rule in VISION else s.language_lr
    ex.train_base(model, data[("train", "task")], epochs=s.epochs, batch=s.batch, lr=lr, seed=seed)
    val = {k: v for (split, k), v in data.items() if split == "val"}
    test = {k: v for (split, k), v in data.items() if split == "test"}
    _, _, schedule = ex.grid_settings(rule, s)
    metrics = {"rule": rule, "seed": seed, "task": ex.accuracy(model, data[("test", "task")]),
               "stored_task": stored["base"]["task"]}
    for k, name in enumerate(RULES[rule]):
        found = stored["subroutines"][name]
        config = {key: found["chosen"][key] for key in ex.CONFIGURATION}

        def fit():
            return ex.train_mask(model, data[("train", f"sub-{k}")], **config, **schedule, epochs=s.mask_epochs,
                                 batch=s.mask_batch, seed=0)

        first = fit()
        row = {"chosen": config, "first_passed_gate": bool(found["passed_gate"])}
        row["first"] = {**_listed(ex.evaluate(model, first, test, k)), "kept": mask_density.kept_share(first)[0],
                        "stored_kept": found["runs"][0]["kept"]}
        removed = first.hard_masks()
        first.remove()
        weights = dict(model.named_parameters())
        before = {n: weights[n].detach().clone() for n in removed}
        with torch.no_grad():  # the first subnetwork's weights set to 0: the ablated model
            for n, kept in removed.items():
                weights[n][kept.to(weights[n].device)] = 0.0
        second = fit()
        row["second"] = {**_listed(ex.evaluate(model, second, test, k)), "kept": mask_density.kept_share(second)[0],
                         "passed_gate": ex.evaluate(model, second, val, k)["own"] >= ex.GATE}
        second.remove()
        with torch.no_grad():  # the base model back, for the next subroutine
            for n, w in before.items():
                weights[n].copy_(w)
        metrics[name] = row
    return metrics, {}


def names(s: ex.StructureSettings) -> list[tuple[str, int]]:
    """The (rule, base model) pairs of ``s`` with a second search."""
    return [(rule, seed) for rule in RULES_SECOND if rule in s.rules for seed in range(s.base_models)]


def fetch(rule: str, seed: int, profile: str, device: torch.device,
          s: ex.StructureSettings | None = None) -> results.Result:
    """Load (or compute from the stored ``{rule}-{seed}`` and store) ``second-{rule}-{seed}``."""
    s = s or ex.settings(profile)
    source = ex.searched(profile, device, s, rule, seed, "no subnetwork to remove")
    config = {**ex.result_config(s, rule), **ex.identity(f"{rule}-{seed}"),
              "second": "the first mask (mask seed 0) removed, a second trained the same way"}
    return results.fetch(ex.CHAPTER, f"{PREFIX}{rule}-{seed}", config,
                         lambda: study(rule, seed, s, device, source.metrics), profile=profile,
                         device=describe(device), code=study, depends=[source])


def stored(profile: str, device: torch.device = torch.device("cpu")) -> dict[str, results.Result]:
    """The second-search results stored now at ``profile`` (``{name: Result}``), read without
    computing any."""
    return ex.read_stored({f"{PREFIX}{rule}-{seed}": lambda r=rule, i=seed: fetch(r, i, profile, device)
                           for rule, seed in names(ex.settings(profile))})


__all__ = ["PREFIX", "RULES_SECOND", "study", "names", "fetch", "stored"]
