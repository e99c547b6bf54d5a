"""Chapter 6's stored full results analysed with the framing wrong (:mod:`modlib.mutations`): every
evaluation of a learned mask replaced by that of the random mask of the same per-layer counts stored
beside it, before the page's findings (:func:`~modlib.pretraining_consistency.findings.pretraining`)
read them."""

from __future__ import annotations

import copy

import torch

from modlib import results
from modlib.pretraining_consistency import experiment, findings, lam_matched, own_runs, shared_start
from modlib.structural_compositionality.mutations import random_as_found

MUTATIONS = {
    "random mask as dense": (
        "in every stored evaluation of a mask (each base model's chosen masks, every configuration of its "
        "search's grid, the pretrained masks at comparable density, every mask of the search for the common "
        "share, with a pretraining run per base model and from a shared random start too), the subnetwork's accuracies (`hard`) "
        "replaced by the random subnetwork's of the same size per layer (`random`) and the ablated "
        "model's (`complement`) by the model with as many weights per layer removed at random "
        "(`random_complement`), as chapter 5 does; which masks are chosen (gate, convergence, kept share, "
        "the search's quality) is left as the search made it"),
}
CANNOT: dict[str, dict[str, str]] = {"random mask as dense": {}}


def random_mask_as_dense(runs):
    """A copy of ``runs`` (:class:`~modlib.pretraining_consistency.experiment.PretrainingRuns`) with
    every evaluation of a learned mask (``{mode: [target, other]}``) replaced by its random mask's."""
    runs = copy.deepcopy(runs)
    for r in runs.rows.values():
        for f in (r.metrics.get("subroutines") or {}).values():
            for run in f["runs"]:
                random_as_found(run)
            for c in f.get("grid") or ():
                random_as_found(c["test"])
    for r in runs.matched.values():
        for point in r.metrics["points"]:
            random_as_found(point)
    return runs


def lam_random_as_dense(lam: dict) -> dict:
    """A copy of the stored :mod:`~modlib.pretraining_consistency.lam_matched` results ``lam`` (by
    name) with every probe's evaluation replaced by its random mask's, as :func:`random_mask_as_dense`."""
    lam = copy.deepcopy(lam)
    for r in lam.values():
        for f in (r.metrics.get("subroutines") or {}).values():
            for probe in f["probes"]:
                random_as_found(probe["test"])
    return lam


def stored():
    """The stored full results (:func:`~modlib.pretraining_consistency.experiment.run`, nothing
    computed), or None where any is missing or stale."""
    try:
        with results.store_only():
            return experiment.run("full", torch.device("cpu"))
    except results.StaleResultError:
        return None


def decide(mutation: str | None):
    """Chapter 6's claims decided on the stored full results with ``mutation`` applied (None: as
    stored), as the page decides them (:func:`~modlib.pretraining_consistency.findings.pretraining`);
    None where the results are not stored."""
    if mutation not in (None, *MUTATIONS):
        raise ValueError(f"mutation={mutation!r}; chapter 6 runs: {', '.join(MUTATIONS)}")
    runs = stored()
    if runs is None:
        return None
    lam, own, shared = lam_matched.stored("full"), own_runs.stored("full"), shared_start.stored("full")
    if mutation:
        runs = random_mask_as_dense(runs)
        lam, own, shared = (lam_random_as_dense(x) for x in (lam, own, shared))
    findings.pretraining(runs, lam, (own, own_runs.stored_runs("full")), shared)
    return runs
