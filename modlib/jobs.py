"""Every stored result as a job, run in parallel: as local processes or on a SLURM cluster (submitit).

    python -m modlib.batch --profile paper --executor slurm --partition gpu --gpus 1 --time 720 --mem 32
    python -m modlib.batch --profile full --executor local --workers 2 [NOTEBOOK ...]

A job is one result of the store (:mod:`modlib.results`), named ``<chapter>/<result>`` (e.g.
``weight_masks/addmul-seed3``; a chapter is its notebook's stem). It computes that result through the
chapter's own code, the very call its notebook makes, and writes only through the store, atomically:
a job that dies leaves nothing that loads, and the next call simply runs it again. Whether a result
is stored is asked of the same code with computing switched off (:func:`modlib.results.store_only`),
so "stored" means "the notebook loads it now without computing"; once every job of a chapter is
stored, ``python -m modlib.batch --profile PROFILE NOTEBOOK`` draws the page from the store.

Chapter 6 fine-tunes from its two pretraining results, so its other jobs wait for them (``needs``), as
chapter 5's untrained controls wait for their trained twins (they train the masks the twin's search chose):
the local executor runs them in that order, and the SLURM executor submits a waiting job on the first
call after what it needs is stored. Chapter 6's scratch base models are chapter 5's, so they are
chapter 5's jobs (run once, whichever chapter asks).

Logs: ``<out>/<profile>/jobs/logs/<job>.log`` (local) and submitit's ``<out>/<profile>/jobs/slurm/``
(SLURM); ``<out>/<profile>/jobs/submitted.json`` records the SLURM job of every result submitted, so
that the next call reports it as running or failed instead of submitting it twice (only the SLURM
executor reads it).

Before any job starts, the results folders they write must be writable and, for local jobs, the
device (``$MODLIB_DEVICE``) available here: otherwise the call fails at once, naming them, instead of
every job failing with the reason in its log.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import queue
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Callable

import torch

from modlib import profiles, results
from modlib.batch import check_writable
from modlib.bridge import cut_controls as br_cut_controls
from modlib.bridge import digit_cut as br_cut
from modlib.bridge import digit_surgery as br_surgery
from modlib.bridge import outside_cut as br_outside_cut
from modlib.bridge import surgery_fresh as br_surgery_fresh
from modlib.bridge import surgery_ranked as br_surgery_ranked
from modlib.bridge import surgery_sized as br_surgery_sized
from modlib.bridge import surgery_target as br_surgery_target
from modlib.bridge import digits as br_digits
from modlib.bridge import experiment as br
from modlib.bridge import matched as br_matched
from modlib.bridge import sprites as br_sprites
from modlib.bridge import unseen as br_unseen
from modlib.bridge import unseen_controls as br_unseen_controls
from modlib.bridge import unseen_random as br_unseen_random
from modlib.compositional_sprites import experiment as cs
from modlib.data import digits
from modlib.pretraining_consistency import experiment as pc
from modlib.pretraining_consistency import lam_matched as pc_lam
from modlib.pretraining_consistency import own_runs as pc_own
from modlib.pretraining_consistency import shared_start as pc_shared
from modlib.redundant_input_toy import baselines as toy_baselines
from modlib.redundant_input_toy import coverage as toy_coverage
from modlib.redundant_input_toy import experiment as toy
from modlib.redundant_input_toy import mechanism as toy_mechanism
from modlib.redundant_input_toy import mechanism_norm as toy_mechanism_norm
from modlib.redundant_input_toy import scale as toy_scale
from modlib.redundant_input_toy import scale_lr as toy_scale_lr
from modlib.redundant_input_toy import trajectory as toy_trajectory
from modlib.resists_at_scale import controls as rs_controls
from modlib.resists_at_scale import experiment as rs
from modlib.runtime import ENV_VAR as ENV_DEVICE
from modlib.runtime import describe, pick_device
from modlib.structural_compositionality import draws as sc_draws
from modlib.structural_compositionality import second_search as sc_second
from modlib.structural_compositionality import fresh_models as sc_fresh
from modlib.structural_compositionality import untrained_matched as sc_matched
from modlib.structural_compositionality import experiment as sc
from modlib.structural_compositionality import sweep as sc_sweep
from modlib.weight_masks import experiment as md

EXECUTORS = ("local", "slurm")
Compute = Callable[[torch.device], object]  # computes (or loads) one result on a device
# SLURM states in which a job has ended for good: without its result stored, it is submitted again.
# Any other state (PENDING, RUNNING, PREEMPTED, UNKNOWN while sacct catches up, ...) counts as running.
SLURM_ENDED = ("FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "COMPLETED")


# ---------------------------------------------------------------- each chapter's jobs
# {job name: (the jobs it needs, how to compute it)}, in the order the chapter's notebook fetches them.

def _toy(profile: str) -> dict[str, tuple[tuple[str, ...], Compute]]:
    s = toy.settings(profile)
    out = {f"{toy.CHAPTER}/sweep-{a}-{l}": ((), lambda d, a=a, l=l: toy.run(
               profile, d, s=s.with_(activations=(a,), losses=(l,)), progress=False))
           for a in s.activations for l in s.losses}
    for name, study in (("baselines", toy_baselines), ("mechanism", toy_mechanism), ("scale", toy_scale),
                        (toy_coverage.RESULT, toy_coverage), (toy_mechanism_norm.RESULT, toy_mechanism_norm),
                        (toy_scale_lr.RESULT, toy_scale_lr), (toy_trajectory.RESULT, toy_trajectory)):
        # the last four: issue 51's controls and the linear model's gradient-descent trajectory
        out[f"{toy.CHAPTER}/{name}"] = ((), lambda d, study=study: study.run(profile, d))
    return out


def _sprites(profile: str) -> dict[str, tuple[tuple[str, ...], Compute]]:
    from modlib.compositional_sprites import causes as cs_causes  # the recomputed rows (issue 32)
    from modlib.compositional_sprites import conditioning as cs_conditioning
    from modlib.compositional_sprites import constant_image as cs_constant
    from modlib.compositional_sprites import longer as cs_longer

    out = {f"{cs.CHAPTER}/{row}": ((), lambda d, r=row: cs.run(profile, d, rows=(r,)))
           for row in cs.settings(profile).rows}
    c = cs_causes.causes_settings(profile)  # the rows recomputed, and (issue 52) composition x sharing
    out.update({f"{cs.CHAPTER}/{cs_causes.PREFIX}{row}": ((), lambda d, r=row: cs_causes.fetch(profile, r, d))
                for row in (*c.rows, *c.decoupled)})
    out.update({f"{cs.CHAPTER}/{cs_causes.PREFIX}{row}{cs_causes.MORE_SUFFIX}": (
                    (), lambda d, r=row: cs_causes.fetch_more(profile, r, d))  # issue 52: more seeds
                for row in cs_causes.MORE if c.more_seeds})
    if profile == "full":  # issue 52: the two late-fitting seeds trained twice as long
        out.update({f"{cs.CHAPTER}/{cs_longer.name(row)}": ((), lambda d, r=row: cs_longer.fetch(profile, r, d))
                    for row in cs_longer.LATE})
        # issue 52: the soft-occlusion row's slot functions after the best constant image
        out[f"{cs.CHAPTER}/{cs_constant.RESULT}"] = ((), lambda d: cs_constant.fetch(profile, d))
    # issue 52: how well each support conditions the lower slot's Jacobians (no model; seconds)
    out[f"{cs.CHAPTER}/{cs_conditioning.RESULT}"] = ((), lambda d: cs_conditioning.fetch(profile, d))
    return out


def _resists(profile: str) -> dict[str, tuple[tuple[str, ...], Compute]]:
    s = rs.settings(profile)

    def one(name: str, device: torch.device):  # the fetch of rs.run, for one name
        return results.fetch(rs.CHAPTER, name, rs.result_config(s, name), lambda: rs.run_one(s, name, device),
                             profile=profile, device=describe(device), code=rs.run_one,
                             sources={"data": digits.available_sources()})

    out = {f"{rs.CHAPTER}/{n}": ((), partial(one, n)) for n in rs.RESULTS if n.split("-")[0] in s.experiments}
    c = rs_controls.settings(profile)  # the control results, fetched as rs.run fetches them
    out.update({f"{rs.CHAPTER}/{n}": ((), lambda d, n=n: rs_controls.fetch(c, n, profile, d))
                for n in rs_controls.result_names(c) if n.split("-")[0] in s.experiments})
    return out


def _masks(profile: str) -> dict[str, tuple[tuple[str, ...], Compute]]:
    from modlib.weight_masks import alpha_matched as md_alpha
    from modlib.weight_masks import cnn_alpha as md_cnn_alpha
    from modlib.weight_masks import reuse_alpha as md_reuse
    from modlib.weight_masks import width_matched as md_width

    out = {f"{md.CHAPTER}/{job[1]}": ((), lambda d, j=job: md.fetch_job(j, profile, d))
           for job in md.all_jobs(profile)}
    if profile == "full":  # issue 52: the CNNs' class masks at a stronger regulariser
        out.update({f"{md.CHAPTER}/{md_cnn_alpha.name(k)}": ((), lambda d, k=k: md_cnn_alpha.fetch(profile, k, d))
                    for k in md_cnn_alpha.seeds(profile)})
    for h in md_width.narrows(profile):  # issue 52: the narrow ends of the width curve at the wide end's density
        for k in md_width.seeds(profile):
            for op in ("+", "×"):
                out[f"{md.CHAPTER}/{md_width.name(h, op, k)}"] = (
                    (f"{md.CHAPTER}/{md_width.wide_name(profile, k)}",),
                    lambda d, h=h, o=op, k=k: md_width.fetch(profile, h, o, k, d))
    for k in md_alpha.seeds(profile):  # issue 52: the α curve's ends at matched density
        out[f"{md.CHAPTER}/{md_alpha.name(k)}"] = ((), lambda d, k=k: md_alpha.fetch(profile, k, d))
    if profile in md_reuse.PROFILES:  # issue 52: reuse at depth 4, α chosen on a network held aside
        tuning = tuple(f"{md.CHAPTER}/{md_reuse.tune_name(profile, a)}" for a in md_reuse.TUNE_ALPHAS[profile])
        out.update({t: ((), lambda d, a=a: md_reuse.fetch_tune(profile, a, d))
                    for t, a in zip(tuning, md_reuse.TUNE_ALPHAS[profile])})
        out.update({f"{md.CHAPTER}/{md_reuse.name(profile, k)}": (tuning, lambda d, k=k: md_reuse.fetch(profile, k, d))
                    for k in md_reuse.seeds(profile)})
    return out


def _structure(profile: str) -> dict[str, tuple[tuple[str, ...], Compute]]:
    out = {}
    for n in sc.result_names(sc.settings(profile)):
        rule, seed, trained = sc.parse_name(n)  # an untrained control reads its trained twin's choice
        needs = () if trained else (f"{sc.CHAPTER}/{rule}-{seed}",)
        out[f"{sc.CHAPTER}/{n}"] = (needs, lambda d, n=n: sc.run(profile, d, names=[n]))
    for rule in sc_sweep.settings(profile).rules:  # the tests read against density
        out[f"{sc.CHAPTER}/sweep-{rule}"] = ((), lambda d, r=rule: sc_sweep.fetch(r, profile, d))
    for rule, seed in sc_draws.names(sc.settings(profile)):  # test 1's halves against 20 random subnetworks
        if profile == "full" and f"{sc_draws.PREFIX}{rule}-{seed}" in sc_draws.REFUSED:
            continue  # refused by its check at full: run again, it would be refused again
        out[f"{sc.CHAPTER}/{sc_draws.PREFIX}{rule}-{seed}"] = (
            (f"{sc.CHAPTER}/{rule}-{seed}",), lambda d, r=rule, i=seed: sc_draws.fetch(r, i, profile, d))
    for wide in (False, True):  # the untrained control at matched density (and its wider search)
        for rule, seed in sc_matched.names(sc.settings(profile), wide):
            out[f"{sc.CHAPTER}/{sc_matched.name(rule, seed, wide)}"] = (
                (f"{sc.CHAPTER}/{rule}-{seed}",),
                lambda d, r=rule, i=seed, w=wide: sc_matched.fetch(r, i, profile, d, wide=w))
    for rule, seed in sc_fresh.names(profile):  # base models trained after their claims were registered
        out[f"{sc.CHAPTER}/{sc_fresh.PREFIX}{rule}-{seed}"] = (
            (), lambda d, r=rule, i=seed: sc_fresh.fetch(r, i, profile, d))
    for rule, seed in sc_second.names(sc.settings(profile)):  # a second search in what removal leaves
        out[f"{sc.CHAPTER}/{sc_second.PREFIX}{rule}-{seed}"] = (
            (f"{sc.CHAPTER}/{rule}-{seed}",), lambda d, r=rule, i=seed: sc_second.fetch(r, i, profile, d))
    return out


def _pretraining(profile: str) -> dict[str, tuple[tuple[str, ...], Compute]]:
    p, s = pc.settings(profile), pc.structure(profile)
    pre = {kind: f"{pc.CHAPTER}/pretrain-{kind}" for kind in ("language", "vision")}
    out = {key: ((), lambda d, k=kind: pc.pretrained(k, profile, d)) for kind, key in pre.items()}
    for name in pc.result_names(p):
        rule, init, seed = name.rsplit("-", 2)
        # chapter 5's base model, read from its store (where this chapter's profile trains with chapter 5's settings)
        if init == "scratch" and int(seed) < s.base_models and not pc.own_structure(profile):
            out[f"{sc.CHAPTER}/{rule}-{seed}"] = ((), lambda d, n=f"{rule}-{seed}": sc.run(profile, d, names=[n]))
            continue
        needs = (pre["language"],) + ((pre["vision"],) if rule in sc.VISION else ())  # pc.run loads them
        out[f"{pc.CHAPTER}/{name}"] = (needs, lambda d, n=name: pc.run(profile, d, names=[n]))
    for name, (rule, seed) in pc.matched_names(profile).items():  # pretrained masks at the scratch density
        out[f"{pc.CHAPTER}/{name}"] = ((pre["vision" if rule in sc.VISION else "language"],),
                                       lambda d, r=rule, i=seed: pc.matched(r, i, profile, d))
    for rule, init, seed in pc_lam.names(profile):  # both arms at the common share, by a search for lambda
        base = [key for key in out if key.rsplit("/", 1)[1] in {f"{rule}-{j}" for j in range(s.base_models)}
                | {n for n in pc.result_names(p) if n.rsplit("-", 2)[0] == rule}]
        extra = [f"{pc.CHAPTER}/{n}" for n, (r, i) in pc.matched_names(profile).items()
                 if init == "pretrained" and (r, i) == (rule, seed)]
        out[f"{pc.CHAPTER}/{pc_lam.name(rule, init, seed)}"] = (
            tuple(base + extra + [pre["language"]] + ([pre["vision"]] if rule in sc.VISION else [])),  # as pc.run
            lambda d, r=rule, n=init, i=seed: pc_lam.fetch(r, n, i, profile, d))
    for rule, k in pc_own.names(profile):  # the pretrained arm with a pretraining run per base model
        run = f"{pc.CHAPTER}/{pc_own.pretrain_name(pc_own.kind(rule), k)}"
        out[run] = ((), lambda d, kd=pc_own.kind(rule), i=k: pc_own.pretrain(kd, i, profile, d))
        out[f"{pc.CHAPTER}/{pc_own.name(rule, k)}"] = (
            (run, f"{pc.CHAPTER}/{pc_lam.name(rule, 'pretrained', k)}"),
            lambda d, r=rule, i=k: pc_own.fetch(r, i, profile, d))
    for rule, k in pc_shared.names(profile):  # a third arm: a shared random start
        out[f"{pc.CHAPTER}/{pc_shared.name(rule, k)}"] = (
            (f"{pc.CHAPTER}/{pc_lam.name(rule, 'scratch', k)}",),
            lambda d, r=rule, i=k: pc_shared.fetch(r, i, profile, d))
    for name in pc.sweep_names(profile):  # the pretrained arm against density
        rule = name.split("-", 1)[1].rsplit("-", 1)[0]
        out[f"{pc.CHAPTER}/{name}"] = ((pre["vision" if rule in sc.VISION else "language"],),
                                       lambda d, r=rule: pc.sweep(r, profile, d))
    return out


def _bridge(profile: str) -> dict[str, tuple[tuple[str, ...], Compute]]:
    out = {f"{br.CHAPTER}/toy-{f}": ((), lambda d, f=f: br.fetch(profile, f, d))
           for f in br.settings(profile).formulations}
    out.update({f"{br.CHAPTER}/{br.RANDOM_X2}-{f}": ((f"{br.CHAPTER}/toy-{f}",),  # rule 2 without its mask
                                                     lambda d, f=f: br.fetch_random_exclusive(profile, f, d))
                for f in br.settings(profile).formulations})
    for part in (br_unseen, br_matched):  # masks blind to the held-out cell; "built" at matched density
        out.update({f"{br.CHAPTER}/{part.RESULT}-{f}": ((f"{br.CHAPTER}/toy-{f}",),
                                                        lambda d, f=f, part=part: part.fetch(profile, f, d))
                    for f in br.settings(profile).formulations})
    for part in (br_unseen_controls, br_unseen_random):  # the blind Y1 mask's controls; rule 2's random masks
        out.update({f"{br.CHAPTER}/{part.RESULT}-{f}": (
                        (f"{br.CHAPTER}/toy-{f}", f"{br.CHAPTER}/{br_unseen.RESULT}-{f}"),
                        lambda d, f=f, part=part: part.fetch(profile, f, d))
                    for f in br.settings(profile).formulations})
    if profile in br.FRESH_PROFILES:  # the confirmatory copies of the toy's claims, on the next seeds
        b = br.fresh(br.settings(profile))
        for f in b.formulations:
            toy_job = f"{br.CHAPTER}/toy-{f}{br.FRESH}"
            out[toy_job] = ((), lambda d, f=f: br.fetch(profile, f, d, b))
            out[f"{br.CHAPTER}/{br.RANDOM_X2}-{f}{br.FRESH}"] = (
                (toy_job,), lambda d, f=f: br.fetch_random_exclusive(profile, f, d, b))
    out[f"{br.CHAPTER}/{br_digits.RESULT}"] = ((), lambda d: br_digits.fetch(profile, d))
    out.update({f"{br.CHAPTER}/{name}": ((), lambda d, k=k: br_surgery.fetch(profile, k, d))  # surgery on the CNNs
                for k, name in enumerate(br_surgery.names(profile))})
    if profile == "full":  # issue 53: the surgery again on fresh CNNs, the "use X2" mask's recipe chosen first
        recipes = tuple(f"{br.CHAPTER}/{br_surgery_fresh.RECIPE}-seed{k}" for k in br_surgery_fresh.recipe_seeds(profile))
        out.update({job: ((), lambda d, k=k: br_surgery_fresh.fetch_recipe(profile, k, d))
                    for k, job in zip(br_surgery_fresh.recipe_seeds(profile), recipes)})
        out.update({f"{br.CHAPTER}/{br_surgery_fresh.FRESH}-seed{k}": (
                        recipes, lambda d, k=k: br_surgery_fresh.fetch_fresh(profile, k, d))
                    for k in br_surgery_fresh.fresh_seeds(profile)})
        out.update({f"{br.CHAPTER}/{name}": (  # rule 2 with masks for other targets in the "use X2" mask's place
                        recipes, lambda d, k=k: br_surgery_target.fetch(profile, k, d))
                    for k, name in zip(br_surgery_fresh.fresh_seeds(profile), br_surgery_target.names(profile))})
        targets = tuple(f"{br.CHAPTER}/{name}" for name in br_surgery_sized.recipe_names(profile))
        out.update({job: ((), lambda d, k=k: br_surgery_sized.fetch_recipe(profile, k, d))  # ... that fit, first
                    for k, job in zip(br_surgery_fresh.recipe_seeds(profile), targets)})
        out.update({f"{br.CHAPTER}/{name}": (  # ... then on the fresh CNNs, removals matched in size
                        recipes + targets, lambda d, k=k: br_surgery_sized.fetch(profile, k, d))
                    for k, name in zip(br_surgery_fresh.fresh_seeds(profile), br_surgery_sized.names(profile))})
        rights = tuple(f"{br.CHAPTER}/{name}" for name in br_surgery_ranked.recipe_names(profile))
        out.update({job: ((), lambda d, k=k: br_surgery_ranked.fetch_recipe(profile, k, d))  # ... by rank: its recipe
                    for k, job in zip(br_surgery_fresh.recipe_seeds(profile), rights)})
        out.update({f"{br.CHAPTER}/{name}": (  # ... then on the fresh CNNs
                        recipes + targets + rights, lambda d, k=k: br_surgery_ranked.fetch(profile, k, d))
                    for k, name in zip(br_surgery_fresh.fresh_seeds(profile), br_surgery_ranked.names(profile))})
        out[f"{br.CHAPTER}/{br_cut.RESULT}"] = ((), lambda d: br_cut.fetch(profile, d))  # the cut without a mask
        out[f"{br.CHAPTER}/{br_cut.RANDOM}"] = ((), lambda d: br_cut.fetch_random(profile, d))  # ... its control
        out[f"{br.CHAPTER}/{br_cut_controls.LEFT}"] = ((), lambda d: br_cut_controls.fetch_left(profile, d))  # its mirror
        out[f"{br.CHAPTER}/{br_cut_controls.SHIFTED}"] = ((), lambda d: br_cut_controls.fetch_shifted(profile, d))
        for names, fetch in ((br_cut_controls.combined_names, br_cut_controls.fetch_combined),  # rule 2 with the cut
                             (br_outside_cut.names, br_outside_cut.fetch)):  # ... and outside it, alone
            out.update({f"{br.CHAPTER}/{name}": (recipes, lambda d, k=k, f=fetch: f(profile, k, d))
                        for k, name in zip(br_surgery_fresh.fresh_seeds(profile), names(profile))})
    out.update({f"{br.CHAPTER}/{br_sprites.PREFIX}{m}": ((), lambda d, m=m: br_sprites.fetch(profile, m, d))
                for m in br_sprites.settings(profile).models})
    return out


# The jobs that train tiny networks (chapter 1's toy, and chapter 7's retraining of it): they run on the
# CPU even where CUDA exists (modlib.runtime.WORK), as their notebooks do.
TINY = (f"{toy.CHAPTER}/", f"{br.CHAPTER}/toy-", f"{br.CHAPTER}/{br.RANDOM_X2}-", f"{br.CHAPTER}/{br_unseen.RESULT}-",
        f"{br.CHAPTER}/{br_matched.RESULT}-")


def work(job: str) -> str:
    """The kind of computation of ``job`` (:data:`modlib.runtime.WORK`), which picks its device."""
    return "tiny" if job.startswith(TINY) else "large"


CHAPTERS = {toy.CHAPTER: _toy, cs.CHAPTER: _sprites, rs.CHAPTER: _resists, md.CHAPTER: _masks,
            sc.CHAPTER: _structure, pc.CHAPTER: _pretraining, br.CHAPTER: _bridge}


def jobs(chapters: list[str], profile: str) -> dict[str, tuple[tuple[str, ...], Compute]]:
    """Every job of ``chapters`` at ``profile``, chapter by chapter: ``{job: (needs, compute)}``."""
    profile = profiles.resolve(profile)
    out = {}
    for chapter in chapters:
        profiles.check_choice("chapter", chapter, tuple(CHAPTERS))
        out.update(CHAPTERS[chapter](profile))
    return out


def is_stored(compute: Compute) -> bool:
    """Whether the chapter's code loads this result now (stored, readable, same config and code)."""
    with results.store_only(), contextlib.redirect_stdout(io.StringIO()):
        try:
            compute(torch.device("cpu"))
        except results.StaleResultError:
            return False
    return True


@contextlib.contextmanager
def store_at(root: Path | str):
    """Within it, the chapters' code reads and writes the results store at ``root``."""
    before = os.environ.get(results.ROOT_ENV)
    os.environ[results.ROOT_ENV] = str(root)
    try:
        yield
    finally:
        if before is None:
            del os.environ[results.ROOT_ENV]
        else:
            os.environ[results.ROOT_ENV] = before


def compute(job: str, profile: str, root: str) -> str:
    """Compute (or load) one job's result into the store at ``root``: what a worker runs."""
    table = jobs([job.split("/")[0]], profile)
    profiles.check_choice("job", job, tuple(table))
    device = pick_device(quiet=True, work=work(job))
    print(f"job {job}: profile {profile}, {describe(device)}, store {root}", flush=True)
    start = time.perf_counter()
    with store_at(root):
        table[job][1](device)
    print(f"job {job}: stored after {time.perf_counter() - start:.1f} s", flush=True)
    return job


# ---------------------------------------------------------------- executors

def worker_env(slot: int, threads: int, gpus: int) -> dict[str, str]:
    """The environment of local worker ``slot``: ``threads`` CPU threads and, on a machine with
    ``gpus`` visible GPUs, one of them (slot modulo gpus), so that N workers spread over the GPUs."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    if gpus:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", ",".join(map(str, range(gpus)))).split(",")
        env["CUDA_VISIBLE_DEVICES"] = visible[slot % len(visible)]
    return env


def _run_local(todo: list[str], profile: str, root: Path, logs: Path, workers: int, threads: int) -> dict[str, str]:
    """Run each job in its own process, ``workers`` at a time; ``{job: "" or its log when it failed}``."""
    slots, gpus = queue.SimpleQueue(), torch.cuda.device_count()
    for slot in range(workers):
        slots.put(slot)

    def one(job: str) -> tuple[str, str]:
        log, slot = logs / f"{job}.log", slots.get()
        log.parent.mkdir(parents=True, exist_ok=True)
        try:
            with log.open("w") as f:
                rc = subprocess.run([sys.executable, "-m", "modlib.jobs", "--profile", profile, "--root", str(root),
                                     job], stdout=f, stderr=subprocess.STDOUT,
                                    env=worker_env(slot, threads, gpus)).returncode
        finally:
            slots.put(slot)
        print(f"{job}: {'done' if rc == 0 else f'failed (exit {rc}; log {log})'}", flush=True)
        return job, "" if rc == 0 else str(log)

    with ThreadPoolExecutor(workers) as pool:
        return dict(pool.map(one, todo))


def slurm_executor(folder: Path, options: dict):
    """A submitit SLURM executor writing its scripts and logs to ``folder``; ``options`` are submitit's
    SLURM parameters (``partition``, ``gpus_per_node``, ``time`` in minutes, ``mem`` such as ``"32GB"``,
    ``cpus_per_task``, ``account``, ``setup`` ...)."""
    import submitit

    if "time" not in options:
        raise ValueError("give the SLURM time limit per job, --time MINUTES (submitit's default is 5 minutes)")
    try:
        executor = submitit.SlurmExecutor(folder=folder)
        executor.update_parameters(**options)
    except ValueError as err:  # submitit lists the valid names
        raise ValueError(f"a SLURM option is not valid: {err}") from None
    except RuntimeError as err:  # no srun: not on a cluster
        raise ValueError(f"{err} (run --executor slurm on the cluster's login node)") from None
    return executor


def _slurm_states(ledger: dict, folder: Path) -> dict[str, str]:
    """``{job: its SLURM state}`` for the jobs of ``ledger``, from one ``sacct`` call."""
    import shutil

    import submitit

    if not ledger:
        return {}
    if shutil.which("sacct") is None:
        raise ValueError("sacct is not on the PATH: the state of the submitted jobs cannot be read "
                         "(run on the cluster's login node, or use --executor local)")
    handles = {job: submitit.SlurmJob(folder=folder, job_id=r["job_id"]) for job, r in ledger.items()}
    next(iter(handles.values())).watcher.update()
    return {job: h.watcher.get_state(h.job_id, mode="cache") for job, h in handles.items()}


def read_ledger(path: Path) -> dict[str, dict]:
    """The SLURM jobs submitted so far, ``{job: {"job_id": ..., "log": ...}}`` from ``path`` (``{}`` when it
    does not exist); a ``ValueError`` naming the file and its fix when it is not such a record."""
    if not path.exists():
        return {}
    fix = (f"delete it (rm {path}) and run again: every stored result is kept, but a job it records that is "
           f"still queued or running is then submitted a second time (check squeue first)")
    try:
        ledger = json.loads(path.read_text())
    except ValueError as err:  # also a UnicodeDecodeError
        raise ValueError(f"{path} (the SLURM jobs submitted so far) is not valid JSON ({err}); {fix}") from None
    if not isinstance(ledger, dict) or not all(
            isinstance(job, str) and isinstance(r, dict) and isinstance(r.get("job_id"), (str, int))
            and isinstance(r.get("log"), str) for job, r in ledger.items()):
        raise ValueError(f'{path} (the SLURM jobs submitted so far) is not a record of submitted jobs (a JSON '
                         f'object {{"<chapter>/<result>": {{"job_id": ..., "log": ...}}, ...}}); {fix}')
    return ledger


def run(chapters: list[str], profile: str, *, executor: str = "local", workers: int = 1,
        threads: int | None = None, out: Path = Path("_build/batch"), root: Path | None = None,
        slurm: dict | None = None, dry_run: bool = False, only: list[str] | None = None) -> dict[str, dict]:
    """Run (``local``) or submit (``slurm``) every job of ``chapters`` at ``profile`` whose result is
    not stored (of those named in ``only``, when given, with the jobs they need); ``dry_run`` only
    reports. Returns ``{job: {"status": ..., "log": ...}}``, status one of
    ``stored`` (``made`` when this call computed it), ``running``, ``submitted``, ``failed``, ``left``."""
    profiles.check_choice("executor", executor, EXECUTORS)
    profiles.check_int("workers", workers, 1)
    if threads is not None:
        profiles.check_int("threads", threads, 1)
    profile = profiles.resolve(profile)
    if executor == "local" and not dry_run:  # every worker would pick the same device, and fail on it
        try:
            pick_device(quiet=True)
        except ValueError as err:
            raise ValueError(f"{err}; every local job would fail on it: set ${ENV_DEVICE} to one of those, "
                             f"or unset it") from None
    root = Path(root).resolve() if root else results.default_root()
    folder = Path(out).resolve() / profile / "jobs"
    table = jobs(chapters, profile)
    if only is not None:
        table = {job: table[job] for job in _with_needs(table, only)}
    with store_at(root):
        report = {job: {"status": "stored" if is_stored(c) else "left", "log": ""} for job, (_, c) in table.items()}
    ledger_path = folder / "submitted.json"
    ledger = read_ledger(ledger_path) if executor == "slurm" else {}  # local jobs do not need it
    ledger = {job: r for job, r in ledger.items() if report.get(job, {}).get("status") != "stored"}
    asked = {job: r for job, r in ledger.items() if job in report} if executor == "slurm" else {}
    for job, state in _slurm_states(asked, folder / "slurm").items():  # submitted earlier, not stored
        ended = state.split()[0] in SLURM_ENDED
        note = " (ended, but its result is not stored: did the code or config change?)" if state == "COMPLETED" else ""
        report[job] = {"status": "failed" if ended else "running", "log": f"{ledger[job]['log']} (SLURM: {state}{note})"}

    def ready() -> list[str]:
        return [job for job, (needs, _) in table.items() if report[job]["status"] in ("left", "failed")
                and not report[job].get("tried") and all(report[n]["status"] in ("stored", "made") for n in needs)]

    if dry_run:
        return report
    missing = [job for job, r in report.items() if r["status"] in ("left", "failed")]
    for chapter in dict.fromkeys(job.split("/")[0] for job in missing):  # before any job starts: where they write
        check_writable(root / profile / chapter)
    if executor == "slurm":
        ex = slurm_executor(folder / "slurm", slurm or {})
        if not (slurm or {}).get("gpus_per_node"):
            print("no --gpus: the SLURM jobs run on their nodes' CPUs", flush=True)
        for job in ready():
            try:
                submitted = ex.submit(compute, job, profile, str(root))
            except RuntimeError as err:  # sbatch refused it (partition, account, limits): stop here
                report[job] = {"status": "failed", "log": f"sbatch refused it: {str(err).strip().splitlines()[-1]}"}
                break
            ledger[job] = {"job_id": submitted.job_id,
                           "log": f"{submitted.paths.stdout} (and {submitted.paths.stderr.name})"}
            before = report[job]["log"]  # the failed try's, when it is submitted again
            report[job] = {"status": "submitted", "log": ledger[job]["log"], "failed before": before}
            results.atomic_write_bytes(ledger_path, (json.dumps(ledger, indent=1) + "\n").encode())
        return report
    threads = threads or max(1, (os.cpu_count() or 1) // workers)
    print(f"{workers} local workers, {threads} CPU thread(s) each", flush=True)
    while todo := ready():  # stage by stage: a job whose needs were just made runs next
        for job, log in _run_local(todo, profile, root, folder / "logs", workers, threads).items():
            with store_at(root):
                made = not log and is_stored(table[job][1])
            report[job] = {"status": "made" if made else "failed", "tried": True,
                           "log": "" if made else log or "the job ended without storing its result"}
    return report


def _with_needs(table: dict[str, tuple[tuple[str, ...], Compute]], only: list[str]) -> list[str]:
    """The jobs named in ``only`` and, recursively, the jobs they need, in ``table``'s order."""
    keep: set[str] = set()
    todo = list(only)
    while todo:
        job = todo.pop()
        profiles.check_choice("job", job, tuple(table))
        if job not in keep:
            keep.add(job)
            todo.extend(table[job][0])
    return [job for job in table if job in keep]


def summary(report: dict[str, dict]) -> str:
    """A table of jobs per chapter and status, then the log of every failed job and what the rest wait for."""
    statuses = ("stored", "made", "running", "submitted", "failed", "left")
    counts = {}
    for job, r in report.items():
        counts.setdefault(job.split("/")[0], dict.fromkeys(statuses, 0))[r["status"]] += 1
    head = ("chapter", "jobs") + statuses
    body = [(ch, sum(c.values()), *c.values()) for ch, c in counts.items()]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    line = lambda cells: "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    lines = [line(head), line(["-" * w for w in widths]), *map(line, body)]
    lines += [f"failed: {job}: {r['log']}" for job, r in report.items() if r["status"] == "failed"]
    lines += [f"submitted again: {job}: it failed before: {r['failed before']}"
              for job, r in report.items() if r.get("failed before")]
    left = [job for job, r in report.items() if r["status"] == "left"]
    if left:
        lines.append(f"left: {len(left)} jobs not run yet (their needs are not stored, or a dry run); "
                     f"run the same command again to go on")
    return "\n".join(lines)


def slurm_options(args: argparse.Namespace) -> dict:
    """submitit's SLURM parameters from the command line (``--slurm-config`` TOML first, flags over it)."""
    import tomllib

    options = tomllib.loads(Path(args.slurm_config).read_text()) if args.slurm_config else {}
    flags = {"partition": args.partition, "gpus_per_node": args.gpus, "time": args.time,
             "mem": None if args.mem is None else f"{args.mem}GB", "cpus_per_task": args.cpus}
    return {**options, **{k: v for k, v in flags.items() if v is not None}}


def main(argv: list[str] | None = None) -> None:
    """``python -m modlib.jobs --profile PROFILE [--root DIR] JOB``: compute one job (what a worker runs)."""
    parser = argparse.ArgumentParser(prog="python -m modlib.jobs", description=main.__doc__)
    parser.add_argument("job", help="<chapter>/<result name>, e.g. weight_masks/addmul-seed0")
    parser.add_argument("--profile", default=None)
    parser.add_argument("--root", default=None, help="the results store (default: the checkout's)")
    args = parser.parse_args(argv)
    try:
        profile = profiles.resolve(args.profile)
        profiles.check_choice("chapter", args.job.split("/")[0], tuple(CHAPTERS))
        profiles.check_choice("job", args.job, tuple(jobs([args.job.split("/")[0]], profile)))
    except ValueError as err:
        parser.error(str(err))
    compute(args.job, profile, str(Path(args.root).resolve() if args.root else results.default_root()))


if __name__ == "__main__":
    main()
