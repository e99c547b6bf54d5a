"""Chapter 6: a third arm, a shared random start, as a stored control (issue 53; the claims are
registered before the results are computed, and the page decides them from the results stored).

Every pretrained BERT of the chapter starts from one set of weights (the pretraining run; the BERT
has no head of its own) and differs from the others only in its data order; every scratch BERT
differs in all its weights. Effects that vary less across pretrained base models, or a larger
effect, could come from sharing a start, whatever that start learnt. This arm shares a start that
learnt nothing: base model ``k`` is chapter 5's model for the rule with its encoder replaced by the
*random* encoder of seed 0 (as the pretrained arm replaces it by the pretrained one; for the BERT,
the whole model), fine-tuned with data order ``k``, and its masks are searched for the chapter's
common share as
:mod:`~modlib.pretraining_consistency.lam_matched` searches them, with the configuration (lambda
excepted) of the scratch base model ``k`` and starting at the penalty weight whose mask came nearest
the share in its lam-matched search (:func:`~modlib.pretraining_consistency.own_runs.start`: kept
shares only). Base model 0 is the scratch base model 0 itself (the encoder of seed 0 is its own):
``lam-matched-{rule}-scratch-0``. The BERT only (:data:`RULES`): the rule whose pretrained arm the
chapter finds modular at the common share. One result per base model, ``shared-start-{rule}-{k}``.
"""

from __future__ import annotations

import copy

import torch

from modlib import results
from modlib.pretraining_consistency import experiment as pc
from modlib.pretraining_consistency import lam_matched, own_runs
from modlib.runtime import describe
from modlib.structural_compositionality import experiment as sc
from modlib.structural_compositionality import untrained_matched as um

PREFIX = "shared-start-"
RULES = ("sv-plural",)
INIT = "shared"  # the arm's name in the common share's table (lam_density's ``init``)


def name(rule: str, k: int) -> str:
    """Base model ``k`` of ``rule`` from the shared random start: ``shared-start-{rule}-{k}``."""
    return f"{PREFIX}{rule}-{k}"


def names(profile: str) -> list[tuple[str, int]]:
    """The (rule, base model) pairs at ``profile``: base models 1 .. seeds - 1 of :data:`RULES`
    where the chapter searches for the common share (none at default)."""
    rules = dict.fromkeys(rule for rule, _, _ in lam_matched.names(profile) if rule in RULES)
    return [(rule, k) for rule in rules for k in range(1, pc.settings(profile).seeds)]


def encoder(rule: str, profile: str) -> dict:
    """The shared start: the encoder of chapter 5's model for ``rule`` drawn from seed 0, as arrays."""
    model = sc.make_model(rule, sc.settings(profile), 0)
    part = model.resnet if rule in sc.VISION else model.bert
    return {key: t.detach().cpu().numpy() for key, t in part.state_dict().items()}


def study(rule: str, k: int, profile: str, device: torch.device, searched: dict) -> tuple[dict, dict]:
    """Base model ``k`` of ``rule`` from the shared random start (:func:`encoder`) and its search
    for the common share, as :func:`~modlib.pretraining_consistency.own_runs.study` runs it with the
    lam-matched search of scratch base model ``k`` (``searched``: its metrics); the metrics in the
    lam-matched results' shape, ``init`` :data:`INIT`."""
    metrics, arrays = own_runs.study(rule, k, profile, device, encoder(rule, profile), searched)
    metrics.pop("run")
    return {**metrics, "init": INIT}, arrays


def fetch(rule: str, k: int, profile: str, device: torch.device) -> results.Result:
    """Load (or compute from the lam-matched search of scratch base model ``k``, and store)
    ``shared-start-{rule}-{k}``."""
    if (rule, k) not in names(profile):
        raise ValueError(f"(rule, k)=({rule!r}, {k}): shared-start base models at {profile} are {names(profile)}")
    searched = lam_matched.fetch(rule, "scratch", k, profile, device)
    if not searched.metrics.get("searched"):
        raise ValueError(f"{searched.name} was not searched (its base model missed the gate): no search to "
                         "read the configuration from")
    config = {**sc.result_config(sc.settings(profile), rule), "seed": k, "init": INIT, "shared_seed": 0,
              "targets": searched.config["targets"], "step": um.STEP, "probes": um.PROBES, "close": um.CLOSE}
    return results.fetch(pc.CHAPTER, name(rule, k), config,
                         lambda: study(rule, k, profile, device, searched.metrics),
                         profile=profile, device=describe(device), code=study, depends=[searched])


def stored(profile: str, device: torch.device = torch.device("cpu")) -> dict[str, results.Result]:
    """The base models stored now at ``profile`` (``{name: Result}``), read without computing any."""
    return sc.read_stored({name(*t): lambda t=t: fetch(*t, profile, device) for t in names(profile)})


def arm(lam: dict, shared: dict) -> dict:
    """The two arms the claims ``{rule}/{sub}/shared_*`` compare, from the lam-matched results
    ``lam`` (by name) and the stored shared-start base models ``shared`` (by name): the pretrained
    arm as at the common share (one pretraining run), and the shared-start arm, its base model 0
    the lam-matched scratch base model 0 (its encoder is the shared start) relabelled :data:`INIT`."""
    out = {}
    for n, r in lam.items():
        m = r.metrics
        if m["rule"] in RULES and m["init"] == "pretrained":
            out[n] = r
        elif m["rule"] in RULES and m["init"] == "scratch" and m["seed"] == 0:
            out[n] = copy.copy(r)
            out[n].metrics = {**m, "init": INIT}
    return {**out, **shared}


__all__ = ["PREFIX", "RULES", "INIT", "name", "names", "encoder", "study", "fetch", "stored", "arm"]
