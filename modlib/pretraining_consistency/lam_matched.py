"""Chapter 6: both arms at one density, by a search for lambda (issue 53; the claims are registered
before the results are computed, and the page decides them from the results stored).

The chapter's comparison "at comparable density" (:func:`~modlib.pretraining_consistency.findings.
matched_density`) picks, per base model, the stored mask nearest a common kept share among the few
penalty weights the search tried (two multiples of lambda, a third for the pretrained BERTs), and
calls two arms comparable when their medians lie within a factor of 2. That factor can move an
effect by its whole size (chapter 5's sweep). Here every base model of both arms is given a mask at
the common share itself: the multiple of lambda is searched per base model and subroutine, as
chapter 5 searches it for its untrained control (:func:`~modlib.structural_compositionality.
untrained_matched.match_lam`: factors of 3 until bracketed, then bisection, at most
:data:`~modlib.structural_compositionality.untrained_matched.PROBES` masks, stopping within
:data:`~modlib.structural_compositionality.untrained_matched.CLOSE` of the target).

For each base model of :data:`RULES_LAM` (both arms, every seed) this module

1. trains the base model again as the chapter's stored result trained it (scratch: chapter 5's
   weights from ``seed``; pretrained: the pretrained encoder), keeping its task accuracy beside the
   stored one;
2. per subroutine, reads the common share (:func:`targets`: the median over the scratch arm's base
   models of each one's mean kept share as the search chose its masks, the common share of the
   comparison at comparable density) and starts the search at the stored penalty weight whose mask
   (seed 0) kept the share nearest it (:func:`start`);
3. trains each probe's mask (mask seed 0, the search's configuration otherwise) and evaluates it as
   the chapter evaluates every mask (:func:`~modlib.structural_compositionality.experiment.evaluate`:
   on the test sets, and its own subroutine on validation for the 0.9 gate).

Every choice reads kept shares only, never an accuracy. The page (:func:`~modlib.pretraining_
consistency.findings.lam_density`) takes for each base model the probe nearest the common share
among those that passed the gate and converged. One result per base model,
``lam-matched-{rule}-{init}-{seed}``.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import mask_density, results
from modlib.pretraining_consistency import experiment as pc
from modlib.runtime import describe
from modlib.structural_compositionality import experiment as sc
from modlib.structural_compositionality import untrained_matched as um

PREFIX = "lam-matched-"
RULES_LAM = ("sv-plural", "inside-contact")  # the rules whose base models get masks at the common share
MATCHED = 1.5  # the check the claims read: each arm's median kept share within this factor of the common share


def name(rule: str, init: str, seed: int) -> str:
    """The stored result's name: ``lam-matched-{rule}-{init}-{seed}``."""
    return f"{PREFIX}{rule}-{init}-{seed}"


def names(profile: str) -> list[tuple[str, str, int]]:
    """The (rule, init, seed) triples with a result at ``profile``: every base model of the chapter's
    rules in :data:`RULES_LAM`; none where the chapter trains with its own lighter settings
    (:func:`~modlib.pretraining_consistency.experiment.own_structure`: at default)."""
    p = pc.settings(profile)
    if pc.own_structure(profile):
        return []
    return [(rule, init, i) for rule in RULES_LAM if rule in p.rules for init in pc.INITS for i in range(p.seeds)]


def targets(rows: dict, rule: str) -> dict[str, float]:
    """The common kept share per subroutine of ``rule`` (``{subroutine: share}``): over the scratch
    arm's stored base models (``rows``: the chapter's results by name, :func:`~modlib.
    pretraining_consistency.experiment.run`), the median of each one's mean kept share over the mask
    seeds of the configuration its search chose, as the comparison at comparable density sets it."""
    scratch = [r.metrics for n, r in rows.items() if n.startswith(f"{rule}-scratch-")]
    subs = sc.RULES[rule]
    return {sub: float(np.median([np.mean([run["kept"] for run in m["subroutines"][sub]["runs"]])
                                  for m in scratch if m.get("subroutines")])) for sub in subs}


def start(metrics: dict, extra: dict | None, sub: str, target: float) -> float:
    """The multiple of lambda the search starts from: among the masks stored for base model
    ``metrics`` and subroutine ``sub`` (its search's grid, mask seed 0, and ``extra``: the chapter's
    masks at :data:`~modlib.pretraining_consistency.experiment.MATCH_LAMS`, where stored), the one whose
    kept share lies nearest ``target`` (by ratio; masks that keep nothing are left out)."""
    tried = [(g["lam"], g["kept"]) for g in metrics["subroutines"][sub]["grid"]]
    if extra is not None:
        tried += [(q["lam"], q["kept"]) for q in extra["points"] if q["subroutine"] == sub]
    tried = [(lam, kept) for lam, kept in tried if kept > 0]
    if not tried:
        return float(metrics["subroutines"][sub]["chosen"]["lam"])
    return float(min(tried, key=lambda t: um.ratio(t[1], target))[0])


def study(rule: str, init: str, seed: int, profile: str, device: torch.device, stored: dict,
          extra: dict | None, common: dict[str, float]) -> tuple[dict, dict]:
    """Base model ``seed`` of ``rule`` and ``init`` trained again (``stored``: its stored result's
    metrics; ``extra``: its masks at MATCH_LAMS, or None), and per subroutine the search for lambda
    at the common share ``common[sub]``. ``(metrics, {})``: ``rule``, ``init``, ``seed``, ``task``
    and ``stored_task``, the base training's ``losses`` per epoch and whether they ``repeat`` the stored
    ones exactly, ``searched`` (the base gate), and per subroutine ``target_kept``, ``start``,
    the search's configuration ``chosen`` (lambda excepted) and its ``probes``, each with ``lam``,
    ``kept``, ``converged``, ``passed_gate`` (its own subroutine at 0.9 on validation) and ``test``
    (:func:`~modlib.structural_compositionality.experiment.evaluate` on the test sets)."""
    s = sc.settings(profile)
    data = sc.problem_sets(rule, s)
    model = (pc.pretrained_model(rule, seed, profile, device) if init == "pretrained"
             else sc.make_model(rule, s, seed)).to(device)
    lr = s.vision_lr if rule in sc.VISION else s.language_lr
    losses = sc.train_base(model, data[("train", "task")], epochs=s.epochs, batch=s.batch, lr=lr, seed=seed)
    task = sc.accuracy(model, data[("test", "task")])
    metrics = {"rule": rule, "init": init, "seed": seed, "task": task, "stored_task": stored["base"]["task"],
               "losses": losses, "repeats": losses == stored["losses"], "searched": task >= s.base_gate,
               "subroutines": {}}
    if not metrics["searched"]:
        return metrics, {}
    val = {k: v for (split, k), v in data.items() if split == "val"}
    test = {k: v for (split, k), v in data.items() if split == "test"}
    _, _, schedule = sc.grid_settings(rule, s)
    for k, sub in enumerate(sc.RULES[rule]):
        config = {key: stored["subroutines"][sub]["chosen"][key] for key in sc.CONFIGURATION if key != "lam"}

        def probe(lam: float) -> dict:
            log = []
            ms = sc.train_mask(model, data[("train", f"sub-{k}")], **config, lam=lam, **schedule,
                               epochs=s.mask_epochs, batch=s.mask_batch, seed=0, log=log)
            trajectory = [e["kept"] for e in log]
            out = {"kept": trajectory[-1], "converged": mask_density.converged(trajectory),
                   "passed_gate": sc.evaluate(model, ms, val, k)["own"] >= sc.GATE,
                   "test": {m: list(v) if isinstance(v, tuple) else v for m, v in sc.evaluate(model, ms, test, k).items()},
                   "layer_kept": log[-1]["layer_kept"]}
            ms.remove()
            return out

        first = start(stored, extra, sub, common[sub])
        _, probes = um.match_lam(probe, first, common[sub])
        metrics["subroutines"][sub] = {"target_kept": common[sub], "start": first, "chosen": config, "probes": probes}
    return metrics, {}


def fetch(rule: str, init: str, seed: int, profile: str, device: torch.device) -> results.Result:
    """Load (or compute from the chapter's stored results and store) ``lam-matched-{rule}-{init}-{seed}``."""
    runs = pc.run(profile, device, names=[n for n in pc.result_names(pc.settings(profile)) if n.startswith(f"{rule}-")])
    own = runs.rows[f"{rule}-{init}-{seed}"]
    if not own.metrics.get("searched"):
        raise ValueError(f"{rule}-{init}-{seed} was not searched (its base model missed the gate): no search to start from")
    extra = (pc.matched(rule, seed, profile, device) if init == "pretrained" and
             f"matched-{rule}-pretrained-{seed}" in pc.matched_names(profile) else None)
    common = targets(runs.rows, rule)
    config = {**sc.result_config(sc.settings(profile), rule), "seed": seed, "init": init,
              "targets": common, "step": um.STEP, "probes": um.PROBES, "close": um.CLOSE, "lam_matched": True}
    depends = list(runs.rows.values())  # the rule's base models: this one's search and the common share
    if init == "pretrained":  # the encoder it starts from, and its masks at MATCH_LAMS
        p = pc.settings(profile)
        config["pretraining"] = {k: v for k, v in asdict(p).items() if k not in ("rules", "seeds")}
        depends += [runs.pretraining["vision" if rule in sc.VISION else "language"]] + ([extra] if extra else [])
    return results.fetch(pc.CHAPTER, name(rule, init, seed), config,
                         lambda: study(rule, init, seed, profile, device, own.metrics,
                                       extra.metrics if extra is not None else None, common),
                         profile=profile, device=describe(device), code=study, depends=depends)


def stored(profile: str, device: torch.device = torch.device("cpu")) -> dict[str, results.Result]:
    """The results stored now at ``profile`` (``{name: Result}``), read without computing any."""
    return sc.read_stored({name(*t): lambda t=t: fetch(*t, profile, device) for t in names(profile)})


__all__ = ["PREFIX", "RULES_LAM", "MATCHED", "name", "names", "targets", "start", "study", "fetch", "stored"]
