"""Chapter 5's stored full results analysed with the framing wrong (:mod:`modlib.mutations`):
the table of accuracies per mask (:func:`~modlib.structural_compositionality.findings.structure_table`)
with its columns exchanged as a plausible bug of the evaluation would exchange them."""

from __future__ import annotations

import copy
from pathlib import Path

from modlib import results
from modlib.structural_compositionality import (draws, experiment, findings, fresh_models, second_search,
                                                untrained_matched)

FULL = Path(__file__).resolve().parents[2] / "notebooks" / "results" / "full" / experiment.CHAPTER

MUTATIONS = {
    "swap target and other": "every `<arm>_target` column of the table exchanged with its `<arm>_other` "
                             "(and each searched configuration's target and other accuracy)",
    "random mask as dense": "the found subnetwork's columns (`sub_*`) replaced by those of the random "
                            "subnetwork of the same size per layer (`random_*`), and the ablated model's "
                            "(`abl_*`) by the model with as many weights per layer removed at random "
                            "(`rand_abl_*`), both evaluated for every stored mask (and each searched "
                            "configuration's ablation by its random removal)",
}
CANNOT = {"random mask as dense": {
    **{f"{rule}-{sub}-reinit{s}": "the stored results re-initialise the found subnetwork only, not a random one"
       for rule, subs in (("inside-contact", ("inside", "contact")), ("sv-plural", ("subject", "verb")))
       for sub in subs for s in ("", findings.WITHOUT, findings.FRESH)},
}}


def swap_target_and_other(table):
    """``table`` with every ``<arm>_target`` column exchanged with its ``<arm>_other``."""
    out = table.copy()
    for column in table.columns:
        if column.endswith("_target") and column[: -len("_target")] + "_other" in table.columns:
            other = column[: -len("_target")] + "_other"
            out[column], out[other] = table[other], table[column]
    return out


def random_mask_as_dense(table):
    """``table`` with each learned mask's accuracies replaced by a random mask's of the same per-layer
    counts: ``sub_*`` by ``random_*``, ``abl_*`` by ``rand_abl_*``."""
    out = table.copy()
    for found, random in (("sub", "random"), ("abl", "rand_abl")):
        for end in ("target", "other"):
            out[f"{found}_{end}"] = table[f"{random}_{end}"]
    return out


def _grid(runs, change):
    """A copy of ``runs`` with ``change`` applied to each searched configuration's test results
    (``{mode: [target, other]}``)."""
    runs = copy.deepcopy(runs)
    for r in runs.rows.values():
        for f in (r.metrics.get("subroutines") or {}).values():
            for c in f.get("grid") or ():
                change(c["test"])
    return runs


def _swap(test: dict) -> None:
    for mode, accuracies in test.items():
        if isinstance(accuracies, list):
            accuracies.reverse()


def random_as_found(test: dict) -> None:
    """One evaluation's found mask replaced by the random one of the same per-layer counts (in place):
    ``hard`` and ``complement`` take the scores of ``random`` and ``random_complement``."""
    test["hard"], test["complement"] = test["random"], test["random_complement"]


def stored():
    """The stored full results (:class:`~modlib.structural_compositionality.experiment.StructureRuns`),
    or None where any is missing."""
    s = experiment.settings("full")
    names = experiment.result_names(s)
    if not all((FULL / f"{n}.json").exists() for n in names):
        return None
    return experiment.StructureRuns(s, {n: results.read(FULL / f"{n}.json") for n in names}, "full")


def decide(mutation: str | None):
    """Chapter 5's claims decided on the stored full results with ``mutation`` applied (None: as
    stored), inside :func:`modlib.claims.apart`; None where the results are not stored."""
    runs = stored()
    if runs is None:
        return None
    table, bases, gate = findings.structure_table(runs), findings.base_models(runs), runs.settings.base_gate
    if mutation == "swap target and other":
        table, runs = swap_target_and_other(table), _grid(runs, _swap)
    elif mutation == "random mask as dense":
        table, runs = random_mask_as_dense(table), _grid(runs, random_as_found)
    elif mutation is not None:
        raise ValueError(f"mutation={mutation!r}; chapter 5 runs: {', '.join(MUTATIONS)}")
    findings.structural_from(table, bases, gate)
    findings.density_from(table)
    less, fewer = findings.without_tuned(table, bases)
    findings.structural_from(less, fewer, gate, findings.WITHOUT)
    findings.density_from(less, findings.WITHOUT)
    findings.without_convergence_rule(runs)
    findings.draws_claims(draws.stored("full"), swap=mutation == "swap target and other")
    change = {"swap target and other": swap_target_and_other, "random mask as dense": random_mask_as_dense}
    for wide in (False, True):
        findings.untrained_matched_claims(table, bases, gate, untrained_matched.stored("full", wide=wide),
                                          change.get(mutation), wide)
    findings.second_claims(second_search.stored("full"), gate, swap=mutation == "swap target and other",
                           random_as_found=mutation == "random mask as dense")
    findings.fresh_claims(fresh_models.stored("full"), fresh_models.counts("full"), change.get(mutation))
    return runs
