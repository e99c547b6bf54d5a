"""Chapter 5: the tests again on base models trained after their claims were registered (issue 53,
"enough units to decide").

With three base models a rule (two or three after the gates) most of the page's intervals cannot
close. The page's planning table (``sc-units-needed``, :func:`modlib.claims.units_frame`) asks how
many base models each open claim would need if the estimate and the spread measured now were the
truth; for the five Inside-Contact tests copied here the most it asks for is six (test 2 of the
inside subnetwork, zeroed and re-initialised), and six is also at least the five a rule the issue
asks for agreement (whose planning numbers run from 5 to 19). This module trains six more a rule,
with seeds no chapter has used for these models (chapter 5 trained 0-2; chapter 6's scratch arm,
computed as chapter 5 computes a base model, 3 and 4), exactly as chapter 5 trains and searches
its own (:func:`~modlib.structural_compositionality.experiment.run_one`). Their claims,
``<rule>-<sub>-<test>-fresh``, were registered before any of them was computed and read only these
base models, a rule's all at once: a confirmatory copy of the page's tests, decided as the page's
are (:func:`modlib.structural_compositionality.findings.fresh_claims`).

One result per base model, ``fresh-{rule}-{seed}``: the cost of one of chapter 5's base models
(about 25-45 minutes of one core at ``full`` for the ResNet, 15-50 for BERT).
"""

from __future__ import annotations

import torch

from modlib import results
from modlib.runtime import describe
from modlib.structural_compositionality import experiment as ex

PREFIX = "fresh-"
RULES_FRESH = ("inside-contact", "sv-plural")  # the rules whose open claims the fresh base models are for
SEEDS = {"smoke": (1,), "full": tuple(range(5, 11))}  # by profile; smoke: one, after its own base model 0


def seeds(profile: str) -> tuple[int, ...]:
    """The fresh base models' seeds at ``profile`` (none outside :data:`SEEDS`)."""
    return SEEDS.get(profile, ())


def names(profile: str) -> list[tuple[str, int]]:
    """The (rule, seed) pairs of the fresh base models at ``profile``."""
    s = ex.settings(profile)
    return [(rule, seed) for rule in RULES_FRESH if rule in s.rules for seed in seeds(profile)]


def fetch(rule: str, seed: int, profile: str, device: torch.device, show: bool = False) -> results.Result:
    """Load (or compute and store) ``fresh-{rule}-{seed}``: base model ``seed`` trained and searched
    as chapter 5's ``{rule}-{seed}`` would be. A seed that is not a fresh one at ``profile`` is
    refused, naming the valid choices."""
    if seed not in seeds(profile):
        raise ValueError(f"seed={seed!r} is no fresh base model at profile={profile!r}; "
                         f"choose from {', '.join(map(str, seeds(profile))) or 'none (not run at this profile)'}")
    s = ex.settings(profile)
    config = {**ex.result_config(s, rule), **ex.identity(f"{rule}-{seed}"),
              "fresh": "trained after its claims were registered"}
    return results.fetch(ex.CHAPTER, f"{PREFIX}{rule}-{seed}", config,
                         lambda: ex.run_one(rule, seed, True, s, device, show), profile=profile,
                         device=describe(device), code=ex.run_one)


def stored(profile: str, device: torch.device = torch.device("cpu")) -> ex.StructureRuns:
    """The fresh base models stored now at ``profile``, read without computing any, as the runs
    :func:`modlib.structural_compositionality.findings.structure_table` reads (by result name)."""
    rows = ex.read_stored({f"{PREFIX}{rule}-{seed}": lambda r=rule, i=seed: fetch(r, i, profile, device)
                           for rule, seed in names(profile)})
    return ex.StructureRuns(ex.settings(profile), rows, profile)


def run(profile: str, device: torch.device, show: bool = False) -> ex.StructureRuns:
    """Every fresh base model at ``profile``, loaded or computed (:func:`fetch`), in seed order."""
    rows = {f"{PREFIX}{rule}-{seed}": fetch(rule, seed, profile, device, show) for rule, seed in names(profile)}
    return ex.StructureRuns(ex.settings(profile), rows, profile)


__all__ = ["PREFIX", "RULES_FRESH", "SEEDS", "seeds", "names", "fetch", "stored", "run"]
