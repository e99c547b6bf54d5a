"""Chapter 6: the pretrained arm with a pretraining run of its own per base model (issue 53; the
claims are registered before the results are computed, and the page decides them from the results
stored).

Every pretrained base model of the chapter starts from one pretraining run (``pretrain-language``,
``pretrain-vision``), so for the claim "pretraining makes subnetworks modular" its base models share
one draw of the thing the claim is about: five base models that differ only in their fine-tuning
seed say how one pretrained network behaves, not how pretraining does. Here the pretrained arm is
built again with a pretraining run per base model. For base model ``k`` of :data:`RUNS`:

1. the encoder is pretrained again exactly as the chapter pretrains it (same unlabelled corpus or
   panels, same steps, batch and learning rate), its weights drawn and its data ordered from seed
   ``k`` instead of 0 (:func:`pretrain`; ``own-run-pretrain-{kind}-{k}``);
2. base model ``k`` is fine-tuned from that encoder with data order ``k`` (:func:`study`; the vision
   model's MLP head drawn from seed ``k``, as the chapter draws it; the BERT has no head of its own),
   and per subroutine its mask is searched for the
   chapter's common share as :mod:`~modlib.pretraining_consistency.lam_matched` searches it (chapter
   5's :func:`~modlib.structural_compositionality.untrained_matched.match_lam`, the same target),
   with the search's configuration (lambda excepted) of the stored pretrained base model ``k``,
   starting at the penalty weight whose mask came nearest the share in its lam-matched search
   (:func:`start`: kept shares only, never an accuracy); ``own-run-{rule}-{k}``.

Base model 0 is the chapter's own: the stored pretraining run (seed 0) and
``lam-matched-{rule}-pretrained-0``. The metrics have the lam-matched results' shape, so the page
reads both arms with :func:`~modlib.pretraining_consistency.findings.lam_density` against the same
scratch base models.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import mask_density, results
from modlib.pretraining_consistency import experiment as pc
from modlib.pretraining_consistency import lam_matched, pretraining
from modlib.pretraining_consistency.findings import read_probe
from modlib.runtime import describe
from modlib.structural_compositionality import experiment as sc
from modlib.structural_compositionality import untrained_matched as um

PREFIX = "own-run-"


def runs(profile: str) -> range:
    """The pretraining runs added at ``profile``, one per pretrained base model but the first
    (``1 .. seeds - 1``); none where the chapter has no lam-matched results (:func:`~modlib.
    pretraining_consistency.lam_matched.names`: at default)."""
    if not lam_matched.names(profile):
        return range(0)
    return range(1, pc.settings(profile).seeds)


def kind(rule: str) -> str:
    """The pretraining ``rule``'s encoder comes from: "vision" (SimCLR) or "language" (MLM)."""
    return "vision" if rule in sc.VISION else "language"


def pretrain_name(kind_: str, k: int) -> str:
    """The stored pretraining run ``k`` of ``kind_``: ``own-run-pretrain-{kind}-{k}``."""
    return f"{PREFIX}pretrain-{kind_}-{k}"


def name(rule: str, k: int) -> str:
    """Base model ``k`` of ``rule`` from its own pretraining run: ``own-run-{rule}-{k}``."""
    return f"{PREFIX}{rule}-{k}"


def names(profile: str) -> list[tuple[str, int]]:
    """The (rule, run) pairs with a base model at ``profile``; no language rule where the chapter's
    pretrained BERT is the hub's (at paper), itself one pretraining run."""
    hub = pc.settings(profile).hub
    rules = dict.fromkeys(rule for rule, _, _ in lam_matched.names(profile) if rule in sc.VISION or not hub)
    return [(rule, k) for rule in rules for k in runs(profile)]


# ---------------------------------------------------------------- pretraining run k

def _pretrain_language(p: pc.PretrainingSettings, s: sc.StructureSettings, k: int) -> tuple[dict, dict]:
    sentences = pretraining.corpus(p.corpus, seed=0)  # the chapter's corpus: the run differs in seed only
    mlm, losses = pretraining.pretrain_mlm(s, sentences, steps=p.mlm_steps, batch=p.mlm_batch,
                                          lr=p.mlm_lr, seed=k)
    metrics = {"run": k, "losses": losses[::50], "final_loss": float(np.mean(losses[-100:])),
               "probe_untrained": pretraining.agreement_probe(pretraining.mlm_model(s, seed=k)),
               "probe": pretraining.agreement_probe(mlm)}
    return metrics, pc._state_arrays(mlm.bert)


def _pretrain_vision(p: pc.PretrainingSettings, s: sc.StructureSettings, k: int) -> tuple[dict, dict]:
    items = sc.problems("inside-contact", "task", -(-p.panels // 4), seed=100, size=s.size)["images"]
    panels = items.flatten(0, 1)[:p.panels]  # [panels, 3, size, size]: the chapter's unlabelled panels
    model = sc.make_model("inside-contact", s, seed=k)
    losses = pretraining.pretrain_simclr(model, panels, steps=p.simclr_steps, batch=p.simclr_batch,
                                         lr=p.simclr_lr, temperature=p.temperature, seed=k)
    metrics = {"run": k, "losses": losses[::25], "final_loss": float(np.mean(losses[-100:])),
               "chance_loss": float(np.log(2 * p.simclr_batch - 1)),
               "probe": pc.property_probe(model.resnet, s),
               "probe_untrained": pc.property_probe(sc.make_model("inside-contact", s, seed=k).resnet, s)}
    return metrics, pc._state_arrays(model.resnet)  # the projection head is dropped, as in SimCLR


def pretrain(kind_: str, k: int, profile: str, device: torch.device | None = None) -> results.Result:
    """Load (or compute and store) pretraining run ``k`` of ``kind_`` (``"language"``: MLM,
    ``"vision"``: SimCLR): the chapter's pretraining (:func:`~modlib.pretraining_consistency.
    experiment.pretrained`) with weights and data order drawn from seed ``k``. Metrics as the
    chapter's (losses, probe, the untrained probe of the same seed) with ``run``; arrays: the
    encoder's state dict."""
    if k not in runs(profile):
        raise ValueError(f"k={k}: pretraining runs at {profile} are {list(runs(profile))}")
    p, s = pc.settings(profile), sc.settings(profile)
    make = _pretrain_language if kind_ == "language" else _pretrain_vision
    config = {**pc._pretraining_config(kind_, p, s), "run": k}
    return results.fetch(pc.CHAPTER, pretrain_name(kind_, k), config, lambda: make(p, s, k), profile=profile,
                         device=describe(device or torch.device("cpu")), code=make)


# ---------------------------------------------------------------- base model k

def start(searched: dict, sub: str) -> float:
    """The multiple of lambda the search starts from: of the masks the lam-matched search trained
    for the chapter's pretrained base model of the same seed (``searched``: its metrics) and
    subroutine ``sub``, the one whose kept share lay nearest the common share (by ratio; masks
    that keep nothing left out; kept shares only, no gate); the first probe's where every one kept
    nothing."""
    f = searched["subroutines"][sub]
    q = read_probe(f["probes"], f["target_kept"], gated=False)
    return float((q or f["probes"][0])["lam"])


def study(rule: str, k: int, profile: str, device: torch.device, encoder: dict, searched: dict) -> tuple[dict, dict]:
    """Base model ``k`` of ``rule`` fine-tuned from pretraining run ``k`` (``encoder``: its state
    dict as arrays), and per subroutine the search for lambda at the common share with the
    configuration and start read from the lam-matched search of the chapter's pretrained base model
    ``k`` (``searched``: its metrics). ``(metrics, {})`` in the lam-matched results' shape:
    ``rule``, ``init`` ("pretrained"), ``seed`` and ``run`` (both ``k``), ``task``, the base
    training's ``losses`` per epoch, ``searched`` (the base gate), and per subroutine
    ``target_kept``, ``start``, ``chosen`` (the configuration, lambda excepted) and ``probes``,
    each with ``lam``, ``kept``, ``converged``, ``passed_gate``, ``test`` and ``layer_kept``."""
    s = sc.settings(profile)
    data = sc.problem_sets(rule, s)
    model = sc.make_model(rule, s, k)
    part = model.resnet if rule in sc.VISION else model.bert  # the vision model's MLP head stays random
    part.load_state_dict({key: torch.from_numpy(v) for key, v in encoder.items()})
    model = model.to(device)
    lr = s.vision_lr if rule in sc.VISION else s.language_lr
    losses = sc.train_base(model, data[("train", "task")], epochs=s.epochs, batch=s.batch, lr=lr, seed=k)
    task = sc.accuracy(model, data[("test", "task")])
    metrics = {"rule": rule, "init": "pretrained", "seed": k, "run": k, "task": task, "losses": losses,
               "searched": task >= s.base_gate, "subroutines": {}}
    if not metrics["searched"]:
        return metrics, {}
    val = {key: v for (split, key), v in data.items() if split == "val"}
    test = {key: v for (split, key), v in data.items() if split == "test"}
    _, _, schedule = sc.grid_settings(rule, s)
    for j, sub in enumerate(sc.RULES[rule]):
        f = searched["subroutines"][sub]
        config, target = f["chosen"], f["target_kept"]

        def probe(lam: float) -> dict:
            log = []
            ms = sc.train_mask(model, data[("train", f"sub-{j}")], **config, lam=lam, **schedule,
                               epochs=s.mask_epochs, batch=s.mask_batch, seed=0, log=log)
            trajectory = [e["kept"] for e in log]
            out = {"kept": trajectory[-1], "converged": mask_density.converged(trajectory),
                   "passed_gate": sc.evaluate(model, ms, val, j)["own"] >= sc.GATE,
                   "test": {m: list(v) if isinstance(v, tuple) else v
                            for m, v in sc.evaluate(model, ms, test, j).items()},
                   "layer_kept": log[-1]["layer_kept"]}
            ms.remove()
            return out

        first = start(searched, sub)
        _, probes = um.match_lam(probe, first, target)
        metrics["subroutines"][sub] = {"target_kept": target, "start": first, "chosen": config, "probes": probes}
    return metrics, {}


def fetch(rule: str, k: int, profile: str, device: torch.device) -> results.Result:
    """Load (or compute from pretraining run ``k`` and the chapter's lam-matched search of its
    pretrained base model ``k``, and store) ``own-run-{rule}-{k}``."""
    if (rule, k) not in names(profile):
        raise ValueError(f"(rule, k)=({rule!r}, {k}): base models from their own pretraining run at {profile} "
                         f"are {names(profile)}")
    run = pretrain(kind(rule), k, profile, device)
    searched = lam_matched.fetch(rule, "pretrained", k, profile, device)
    if not searched.metrics.get("searched"):
        raise ValueError(f"{searched.name} was not searched (its base model missed the gate): no search to "
                         "read the configuration from")
    p = pc.settings(profile)
    config = {**sc.result_config(sc.settings(profile), rule), "seed": k, "run": k, "init": "pretrained",
              "targets": searched.config["targets"], "step": um.STEP, "probes": um.PROBES, "close": um.CLOSE,
              "pretraining": {key: v for key, v in asdict(p).items() if key not in ("rules", "seeds")},
              "own_run": True}
    return results.fetch(pc.CHAPTER, name(rule, k), config,
                         lambda: study(rule, k, profile, device, run.arrays, searched.metrics),
                         profile=profile, device=describe(device), code=study, depends=[run, searched])


def stored(profile: str, device: torch.device = torch.device("cpu")) -> dict[str, results.Result]:
    """The base models stored now at ``profile`` (``{name: Result}``), read without computing any."""
    return sc.read_stored({name(*t): lambda t=t: fetch(*t, profile, device) for t in names(profile)})


def stored_runs(profile: str, device: torch.device = torch.device("cpu")) -> dict[str, results.Result]:
    """The pretraining runs stored now at ``profile`` (``{name: Result}``), read without computing any."""
    kinds = dict.fromkeys(kind(rule) for rule, _ in names(profile))
    return sc.read_stored({pretrain_name(kd, k): lambda kd=kd, k=k: pretrain(kd, k, profile, device)
                           for kd in kinds for k in runs(profile)})


def arm(lam: dict, own: dict) -> dict:
    """The lam-matched results ``lam`` (by name) with their pretrained base models 1.. replaced by
    the base models ``own`` (by name) from their own pretraining runs: the two arms the claims
    ``{rule}/{sub}/own_*`` compare (scratch as at the common share; pretrained base model 0 the
    chapter's own)."""
    kept = {n: r for n, r in lam.items() if r.metrics["init"] == "scratch" or r.metrics["seed"] == 0}
    return {**kept, **own}


__all__ = ["PREFIX", "runs", "kind", "pretrain_name", "name", "names", "pretrain", "start", "study", "fetch",
           "stored", "stored_runs", "arm"]
