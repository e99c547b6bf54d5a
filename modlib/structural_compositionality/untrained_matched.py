"""Chapter 5's untrained control at matched density (issue 53; its claims are registered before its
results were computed, and the page decides them from the results stored).

The paper's control trains masks in a network that was never trained, with its trained twin's chosen
configuration (:func:`~modlib.structural_compositionality.experiment.run`, ``{rule}-untrained-0``).
At the book's penalty weights that is no control: in an untrained network a penalty tuned for a
trained one prunes 3 of the 4 masks to nothing, and the fourth keeps about three times its twin's
share. This module trains the untrained network's masks at the density of its trained twin's instead:
for each subroutine it searches the multiple of lambda (everything else as the twin chose) until
the mask of seed 0 keeps about the twin's share of the masked weights, then trains the twin's mask
seeds at that lambda and evaluates them as the chapter evaluates every mask
(:func:`~modlib.structural_compositionality.experiment.evaluate`).

The search for lambda starts at the twin's and moves by a factor :data:`STEP` until the kept share
is bracketed, then halves the bracket (geometrically) for at most :data:`PROBES` masks in all; it
stops once a mask keeps within a factor :data:`CLOSE` of the target. It chooses, among masks that
keep anything, the lambda whose kept share lies nearest the target (in ratio). Nothing in it reads
an accuracy, so the density match cannot favour either test. The claims read a network as matched
where its masks' mean kept share lies within a factor :data:`MATCHED` of its twin's (a check).

One result per untrained network, ``matched-untrained-{rule}-{seed}``: the same network as the
chapter's ``{rule}-untrained-{seed}`` (the initial weights of its trained twin ``{rule}-{seed}``),
which it reads for the target densities.
"""

from __future__ import annotations

import math

import torch

from modlib import mask_density, results
from modlib.runtime import describe
from modlib.structural_compositionality import experiment as ex
from modlib.structural_compositionality.tasks import RULES

PREFIX = "matched-untrained-"
RULES_MATCHED = ("inside-contact", "sv-plural")  # the rules whose trained base models are searched at full
NETWORKS = 2  # untrained networks per rule (at most the profile's base models)
STEP = 3.0  # the factor lambda moves by until the target kept share is bracketed
PROBES = 5  # masks (mask seed 0) trained in the search for lambda, at most, per subroutine
CLOSE = 1.2  # the search stops at a mask within this factor of the target kept share
MATCHED = 1.5  # the check the claims read: the masks' mean kept share within this factor of the twin's
# the wider search, registered on 2026-12-05 after the first had tried 5 masks per subroutine in untrained
# BERT (lambda x300 down to x3.7) and every one kept nothing, before the wider search ran: up to 10 masks
# (down to x0.015), agreement only; stored apart (``matched-untrained-wide-...``), so both stand
PROBES_WIDE = 10
RULES_WIDE = ("sv-plural",)


def ratio(kept: float, target: float) -> float:
    """How far a kept share lies from the target, as a factor >= 1 (infinite for a mask that keeps
    nothing)."""
    if kept <= 0 or target <= 0:
        return math.inf
    return max(kept / target, target / kept)


def next_lam(lam: float, kept: float, target: float, low: float | None, high: float | None) -> tuple:
    """The next lambda to try after a mask at ``lam`` kept ``kept`` (target ``target``), and the
    bracket ``(low, high)``: the largest lambda seen keeping more than the target, the smallest keeping
    less (None until seen). A larger lambda keeps less."""
    if kept > target:
        low = lam if low is None else max(low, lam)
    else:
        high = lam if high is None else min(high, lam)
    if low is None:
        return high / STEP, low, high
    if high is None:
        return low * STEP, low, high
    return math.sqrt(low * high), low, high


def match_lam(fit, start: float, target: float, tries: int = PROBES) -> tuple[float, list[dict]]:
    """Search lambda for a kept share of ``target``, from ``start``, with at most ``tries`` masks:
    ``fit(lam)`` trains the mask of seed 0 and returns its record (``kept`` at least). Returns the
    chosen lambda and the probes, in order (each record with its ``lam``)."""
    probes, lam, low, high = [], start, None, None
    for _ in range(tries):
        probes.append({"lam": lam, **fit(lam)})
        if ratio(probes[-1]["kept"], target) <= CLOSE:
            break
        lam, low, high = next_lam(lam, probes[-1]["kept"], target, low, high)
    best = min(probes, key=lambda p: ratio(p["kept"], target))  # ties: the first
    return best["lam"], probes


def study(rule: str, seed: int, s: ex.StructureSettings, device: torch.device, twin: dict,
          tries: int = PROBES) -> tuple[dict, dict]:
    """The untrained network ``seed`` of ``rule`` (not trained), each subroutine's masks trained with
    its trained twin's configuration (``twin``: the twin's stored metrics) but lambda searched for the
    twin's mean kept share (:func:`match_lam`, at most ``tries`` masks), at the twin's mask seeds. ``(metrics, {})``: metrics as
    :func:`~modlib.structural_compositionality.experiment.run_one` gives them (``rule``, ``seed``,
    ``trained`` False, ``base``, ``searched``, ``subroutines`` with ``chosen``, ``passed_gate`` and
    ``runs``), each subroutine with its ``target_kept``, the search's ``probes`` (``lam``, ``kept``,
    ``converged``) and ``matched`` (:data:`MATCHED`)."""
    data = ex.problem_sets(rule, s)
    model = ex.make_model(rule, s, seed).to(device)
    val = {k: v for (split, k), v in data.items() if split == "val"}
    test = {k: v for (split, k), v in data.items() if split == "test"}
    _, _, schedule = ex.grid_settings(rule, s)
    base = {kind: ex.accuracy(model, test[kind]) for kind in test}
    out = {}
    for k, name in enumerate(RULES[rule]):
        found = twin["subroutines"][name]
        config = {key: found["chosen"][key] for key in ex.CONFIGURATION}
        target = sum(r["kept"] for r in found["runs"]) / len(found["runs"])

        def fit(lam: float, mseed: int = 0):
            log = []
            ms = ex.train_mask(model, data[("train", f"sub-{k}")], **{**config, "lam": lam}, **schedule,
                               epochs=s.mask_epochs, batch=s.mask_batch, seed=mseed, log=log)
            return ms, [e["kept"] for e in log], log

        def probe(lam: float) -> dict:
            ms, trajectory, _ = fit(lam)
            ms.remove()
            return {"kept": trajectory[-1], "converged": mask_density.converged(trajectory)}

        lam, probes = match_lam(probe, config["lam"], target, tries)
        runs = []
        for mseed in range(len(found["runs"])):
            ms, trajectory, log = fit(lam, mseed)
            acc = ex.evaluate(model, ms, test, k, seed=mseed)
            if mseed == 0:
                passed = ex.evaluate(model, ms, val, k)["own"] >= ex.GATE
            runs.append({"seed": mseed, **{m: list(v) if isinstance(v, tuple) else v for m, v in acc.items()},
                         "kept": trajectory[-1], "kept_trajectory": trajectory,
                         "converged": mask_density.converged(trajectory), "layer_kept": log[-1]["layer_kept"]})
            ms.remove()
        kept = sum(r["kept"] for r in runs) / len(runs)
        out[name] = {"chosen": {**config, "lam": lam}, "chosen_from": "matched density", "target_kept": target,
                     "probes": probes, "passed_gate": bool(passed), "runs": runs,
                     "matched": ratio(kept, target) <= MATCHED}
    return {"rule": rule, "seed": seed, "trained": False, "base": base, "searched": True, "subroutines": out}, {}


@torch.no_grad()
def score_spread(rule: str, s: ex.StructureSettings, seed: int = 0, problems: int = 64) -> float:
    """How far apart an untrained network's odd-one-out scores lie within a problem: the standard
    deviation of the four scores, averaged over ``problems`` problems of the first subroutine's
    mask-training set (in order), in network ``seed`` as :func:`~modlib.structural_compositionality.
    experiment.make_model` draws it. Where it is near 0 the task loss is flat (log 4 whatever the
    mask), so nothing but the penalty moves the mask scores. A diagnostic the page computes, not a
    stored result."""
    data = ex.problem_sets(rule, s)[("train", "sub-0")]
    model = ex.make_model(rule, s, seed).eval()
    batch = next(iter(ex.problem_batches(data, problems, None, model)))
    return float(ex.score(model, batch).std(dim=1).mean())  # [problems, 4] -> mean sd


def names(s: ex.StructureSettings, wide: bool = False) -> list[tuple[str, int]]:
    """The (rule, network) pairs of ``s`` with a matched untrained result (``wide``: of the wider
    search)."""
    return [(rule, seed) for rule in (RULES_WIDE if wide else RULES_MATCHED) if rule in s.rules
            for seed in range(min(NETWORKS, s.base_models))]


def name(rule: str, seed: int, wide: bool = False) -> str:
    """The stored result's name: ``matched-untrained-{rule}-{seed}``, ``matched-untrained-wide-...``."""
    return f"{PREFIX}{'wide-' if wide else ''}{rule}-{seed}"


def fetch(rule: str, seed: int, profile: str, device: torch.device,
          s: ex.StructureSettings | None = None, wide: bool = False) -> results.Result:
    """Load (or compute from the stored twin ``{rule}-{seed}`` and store) ``matched-untrained-{rule}-{seed}``
    (``wide``: the wider search's, :data:`PROBES_WIDE` masks, :func:`name`)."""
    s = s or ex.settings(profile)
    twin = ex.searched(profile, device, s, rule, seed, "no density to match")
    tries = PROBES_WIDE if wide else PROBES
    config = {**ex.result_config(s, rule), "seed": seed, "trained": False, "step": STEP, "probes": tries,
              "close": CLOSE, "matched": MATCHED}
    return results.fetch(ex.CHAPTER, name(rule, seed, wide), config,
                         lambda: study(rule, seed, s, device, twin.metrics, tries), profile=profile,
                         device=describe(device), code=study, depends=[twin])


def stored(profile: str, device: torch.device = torch.device("cpu"), wide: bool = False) -> dict[str, results.Result]:
    """The matched untrained results stored now at ``profile`` (``{name: Result}``; ``wide``: the wider
    search's), read without computing any."""
    return ex.read_stored({name(rule, seed, wide): lambda r=rule, i=seed: fetch(r, i, profile, device, wide=wide)
                           for rule, seed in names(ex.settings(profile), wide)})


__all__ = ["PREFIX", "RULES_MATCHED", "NETWORKS", "STEP", "PROBES", "CLOSE", "MATCHED", "PROBES_WIDE", "RULES_WIDE",
           "ratio", "next_lam", "match_lam", "study", "score_spread", "names", "name", "fetch", "stored"]
