"""Chapter 5: the tests again on base models trained after their claims were registered (issue 53,
"enough units to decide").

With three base models a rule (two or three after the gates) most of the page's intervals cannot
close. The planning rule of the page's table (``sc-units-needed``, :func:`modlib.stats.units_to_decide`)
asks how many base models a claim would need if the estimate and the spread measured now were the
truth: the count at which the expected interval just clears its bound, about an even chance of a
decision, not a sure one. Read over the five base models of each rule trained this way before
(chapter 5's 0-2 and chapter 6's scratch arm's 3 and 4, :func:`planned_on`), for the five tests
copied here it asks for at most eight in Inside-Contact (contact test 2); for agreement from two to
fourteen, so six there, at least the five a rule the issue asks for, not enough for its subject's
test 2. This module trains that many more (:data:`SEEDS`), with seeds no chapter has used for these
models, exactly as chapter 5 trains and searches its own
(:func:`~modlib.structural_compositionality.experiment.run_one`), on the same problems: only the
initial weights and the order of the data are new. Their claims, ``<rule>-<sub>-<test>-fresh``,
were registered before any of them was computed and read only these base models, a rule's all at
once: a confirmatory copy of the page's tests, decided as the page's are
(:func:`modlib.structural_compositionality.findings.fresh_claims`).

One result per base model, ``fresh-{rule}-{seed}``: the cost of one of chapter 5's base models
(about 25-45 minutes of one core at ``full`` for the ResNet, 15-50 for BERT).
"""

from __future__ import annotations

import torch

from modlib import results
from modlib.runtime import describe
from modlib.structural_compositionality import experiment as ex

PREFIX = "fresh-"
SEEDS = {"smoke": {"inside-contact": (1,), "sv-plural": (1,)},  # one each, after smoke's own base model 0
         "full": {"inside-contact": tuple(range(5, 13)), "sv-plural": tuple(range(5, 11))}}
RULES_FRESH = tuple(SEEDS["full"])  # the rules whose open claims the fresh base models are for


def seeds(profile: str, rule: str) -> tuple[int, ...]:
    """The fresh base models' seeds of ``rule`` at ``profile`` (none outside :data:`SEEDS`)."""
    return SEEDS.get(profile, {}).get(rule, ())


def counts(profile: str) -> dict[str, int]:
    """How many fresh base models each rule of :data:`RULES_FRESH` has at ``profile``: what its
    claims read at once (:func:`modlib.structural_compositionality.findings.fresh_claims`)."""
    return {rule: len(seeds(profile, rule)) for rule in RULES_FRESH}


def names(profile: str) -> list[tuple[str, int]]:
    """The (rule, seed) pairs of the fresh base models at ``profile``."""
    s = ex.settings(profile)
    return [(rule, seed) for rule in RULES_FRESH if rule in s.rules for seed in seeds(profile, rule)]


def fetch(rule: str, seed: int, profile: str, device: torch.device, show: bool = False) -> results.Result:
    """Load (or compute and store) ``fresh-{rule}-{seed}``: base model ``seed`` trained and searched
    as chapter 5's ``{rule}-{seed}`` would be. A seed that is not a fresh one at ``profile`` is
    refused, naming the valid choices."""
    if seed not in seeds(profile, rule):
        raise ValueError(f"seed={seed!r} is no fresh base model of rule={rule!r} at profile={profile!r}; choose "
                         f"from {', '.join(map(str, seeds(profile, rule))) or 'none (not run at this profile)'}")
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


def planned_on(profile: str, device: torch.device = torch.device("cpu")) -> ex.StructureRuns:
    """The base models the fresh ones' count was planned on, stored now at ``profile`` and read without
    computing any: chapter 5's own (``{rule}-{seed}``) and chapter 6's scratch arm's beyond them
    (``{rule}-scratch-{seed}``, computed by the same function with the same settings), by name."""
    from modlib.pretraining_consistency import experiment as pc

    s = ex.settings(profile)
    own = {f"{rule}-{i}": lambda n=f"{rule}-{i}": ex.run(profile, device, s=s, names=[n]).rows[n]
           for rule in RULES_FRESH if rule in s.rules for i in range(s.base_models)}
    scratch = {n: lambda n=n: pc.run(profile, device, names=[n]).rows[n]
               for n in sorted(pc.result_names(pc.settings(profile)))
               if n.rsplit("-", 2)[0] in RULES_FRESH and n.rsplit("-", 2)[1] == "scratch"
               and int(n.rsplit("-", 1)[1]) >= s.base_models}
    return ex.StructureRuns(s, ex.read_stored({**own, **scratch}), profile)


__all__ = ["PREFIX", "RULES_FRESH", "SEEDS", "seeds", "counts", "names", "fetch", "stored", "run", "planned_on"]
