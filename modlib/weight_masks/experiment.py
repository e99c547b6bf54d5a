"""Chapter 4, "Are neural nets modular?" (notebooks/weight_masks.ipynb; Csordás et al. 2021):
binary weight masks on frozen networks.

Three experiments, each stored with :func:`modlib.results.fetch`, on the authors' protocol
(RobertCsordas/modules) unless a docstring says otherwise:

- addition/multiplication: an FNN learns "a + b" and "a * b" (mod 100); masks are trained for +
  only, for * only and for both; each mask and its complement (the ablation) is scored on both ops,
  beside a control: a random mask with the same number of weights kept in each layer;
- double addition: an FNN learns two additions, run as the authors run it, once per pair with the
  other pair's input digits set to zero (:class:`Pairwise`); masks for the whole task, pair 1 and
  pair 2, and a second pair-1 mask from another seed, whose overlap with the first says how much
  two masks for *the same* sub-task overlap at this scale (the reference for "reuse");
- class removal: a small CNN on MNIST; a mask is trained on all classes, then for each class c a
  mask on the other nine classes only, with the output layer's mask copied from the all-classes
  mask and kept fixed (so that c cannot be removed by cutting its output unit); applying it shows
  what c loses, against the network under the all-classes mask.

Two sweeps repeat the first experiment's + and × masks for seed 0 at other regularisation strengths
and network shapes, one stored result per point. ``python -m modlib.weight_masks`` computes them
all without the notebook (see :func:`main`); :func:`estimate` times a profile before it runs. This
module holds the settings per profile, the runs and what is stored; how networks and masks are
trained and scored, and the three experiments, are in :mod:`modlib.weight_masks.protocol`.

The added experiments of issue 32 (what the verdicts depend on: the width and alpha curves, the
authors' mask schedule, held-out problems, the forced-reuse control, class removal layer by layer;
:mod:`modlib.weight_masks.causes`) have their own settings per profile (:data:`CAUSES`; none at
``default`` and ``paper``), results (:func:`added_jobs`, :func:`run_added`; ``python -m
modlib.weight_masks --profile full --added``) and readers (:func:`collect`, :func:`curves`).
"""

from __future__ import annotations

import argparse
import time
from typing import NamedTuple

import torch
import torch.nn.functional as F

import numpy as np

from modlib import profiles, results, training
from modlib.data import digits
from modlib.models import mlp
from modlib.profiles import check_choice, settings_for
from modlib.runtime import describe, pick_device
from modlib.weight_masks import causes
from modlib.weight_masks.causes import OP_NAMES, CauseSettings
from modlib.weight_masks.protocol import (CLIP, MaskSettings, Pairwise, task_batches, main_point_is_addmul, addmul,
                                          class_removal, cnn, digit_loss, double, sweep_point, train_mask)

CHAPTER = "weight_masks"


SETTINGS = {
    "smoke": MaskSettings(hidden=(32,) * 4, base_steps=60, double_steps=60, mask_steps=20, eval_n=500,
                          sweep_alphas=(1e-3,), sweep_mask_steps=10, cnn_steps=20, cnn_mask_steps=5),
    # A 256-wide network trained for 4k steps needs a larger learning rate than the paper's 1e-3
    # for + and * (the double-addition network learns well at 1e-3 and stalls above it), and masks
    # trained for 400 steps instead of 20k need a stronger regulariser and a larger learning rate.
    # (default is a reader's first run, at most 3 minutes of CPU, benchmarks/default_cpu.csv: 2,500
    # evaluation problems, the double addition for 2,500 steps, the sweep's masks 100 steps, the CNN's 11
    # class masks 50 steps each; the eight FNN masks' steps are most of the time, about 20 ms each)
    "default": MaskSettings(lr=3e-3, base_steps=4000, double_steps=2500, eval_n=2500, mask_steps=400, mask_lr=2e-2,
                            alpha=2e-3, alpha_double=8e-3, sweep_alphas=(1e-4, 1e-2), sweep_mask_steps=100,
                            cnn_mask_steps=50, cnn_alpha=1e-2, cnn_mask_lr=1e-1),
    # The scale the book shows, computed on 2 CPU cores (the chapter's appendix lists the settings
    # tried): in that one-seed search, removing the + module left more of x (raw accuracy) in the
    # 1024-wide network than in the 256- and 512-wide ones, so the network is 1024 wide but has 2
    # hidden layers instead of the paper's 4. (The width curve of the appendix, over seeds, finds
    # that against a random removal as dense a wider network's removal does not spare more: its masks
    # are sparser, and so is their random twin.) Masks train for 2k steps instead of 20k, with a 5x
    # larger mask learning rate to reach the same sparsity. The CNN's class masks use the authors'
    # alpha (3e-4) and 10x their mask learning rate for 10x fewer steps.
    "full": MaskSettings(seeds=5, hidden=(1024, 1024), lr=1e-3, base_steps=8000, double_steps=8000,
                         mask_steps=2000, mask_lr=5e-2, alpha=5e-4, alpha_double=2e-3, sweep_alphas=(2e-4, 1e-3),
                         sweep_shapes=((400, 400, 200),), sweep_mask_steps=2000,
                         cnn_steps=3000, cnn_mask_steps=2000, cnn_alpha=3e-4, cnn_mask_lr=1e-2),
    # the paper's: the 2000x4 FNN, 20k steps per network and per mask, 10 seeds, its sweeps (for a GPU);
    # the class-removal masks as in the authors' CIFAR-10 runs (alpha 3e-4, mask lr 1e-3, 20k steps)
    "paper": MaskSettings(seeds=10, hidden=(2000,) * 4, lr=1e-3, base_steps=20_000, double_steps=20_000,
                          mask_steps=20_000, sweep_alphas=(1e-5, 3e-5, 3e-4, 1e-3),
                          sweep_shapes=((400, 400, 200), (800,) * 4, (4000,) * 4), sweep_mask_steps=20_000,
                          cnn_steps=3000, cnn_mask_steps=20_000, cnn_alpha=3e-4, cnn_mask_lr=1e-3),
}


def settings(profile: str | None = None) -> MaskSettings:
    return settings_for(SETTINGS, profile)


# What the added experiments run (issue 32: what the verdicts depend on), each starting from the
# profile's SETTINGS above; ``default`` and ``paper`` run none of them (the page shows the stored
# full results where they exist).
CAUSES = {
    "smoke": CauseSettings(seeds=1, widths=(8, 16, 32), depth=4, other_depth=(8, 8), split_from=16,
                           alphas=(1e-3,), authors_seeds=1, authors_steps=10, heldout_seeds=1, copy_seeds=1,
                           reuse_hidden=(8, 8, 8), reuse_seeds=1, cnn_seeds=1),
    "default": CauseSettings(),
    # at the full profile's schedule (alpha 5e-4, mask lr 5e-2, 2k steps): the width curve 256 ->
    # 2048 at depth 2 and 512x4 beside 512x2, the alpha curve, 3 seeds each (the 1024x2 points and
    # the main alpha are addmul-seed0..2); three networks at the authors' schedule (alpha 1e-4, mask
    # lr 1e-2, 20k steps), one result per mask (seed 0's took 288 s on an H200; on this CPU 20k mask
    # steps take about 27 min of one core, seeds 1 and 2 were run there); the double addition's whole-task mask at the
    # authors' 4e-4 and the forced-reuse control on the main network and on a 512x4 one; 3 CNNs.
    "full": CauseSettings(seeds=3, widths=(256, 512, 1024, 2048), depth=2, other_depth=(512,) * 4,
                          split_from=2048, alphas=(1e-4, 2e-4, 1e-3, 2e-3), authors_seeds=3, authors_alpha=1e-4,
                          authors_mask_lr=1e-2, authors_steps=20_000, heldout_seeds=3, heldout_share=0.1,
                          copy_seeds=3, whole_alpha=4e-4, reuse_hidden=(512,) * 4, reuse_seeds=3, cnn_seeds=3),
    "paper": CauseSettings(),
}


def causes_settings(profile: str | None = None) -> CauseSettings:
    return settings_for(CAUSES, profile)


def shape_name(hidden) -> str:
    """``(400, 400, 200)`` -> ``"400-400-200"``; ``(2000,) * 4`` -> ``"2000x4"``."""
    hidden = tuple(hidden)
    return f"{hidden[0]}x{len(hidden)}" if len(set(hidden)) == 1 else "-".join(map(str, hidden))


# --- the chapter's runs ---------------------------------------------------------------------------


# The settings each experiment depends on: a stored result stays valid while these are unchanged.
_NETWORK = ("hidden", "batch", "samples", "mask_lr", "eval_n")
USES = {
    "addmul": _NETWORK + ("lr", "base_steps", "alpha", "mask_steps"),
    "double": _NETWORK + ("double_lr", "double_steps", "alpha_double", "mask_steps"),
    "alpha": _NETWORK + ("lr", "base_steps", "alpha", "sweep_mask_steps"),
    "shape": _NETWORK + ("lr", "base_steps", "alpha", "sweep_mask_steps"),
    "cnn": ("batch", "samples", "lr", "cnn_steps", "cnn_mask_steps", "cnn_alpha", "cnn_mask_lr"),
}
_POINT, _DOUBLE = USES["addmul"], USES["double"]
USES.update({"authors": _POINT, "width": _POINT, "alphacurve": _POINT, "heldout": _POINT, "copyweight": _DOUBLE,
             "reuse": _DOUBLE, "cnnlayers": USES["cnn"] + ("eval_n",)})
EXPERIMENTS = {"addmul": addmul, "double": double, "alpha": sweep_point, "shape": sweep_point, "cnn": class_removal,
               "authors": causes.op_point, "width": causes.op_point, "alphacurve": causes.op_point,
               "heldout": causes.heldout, "copyweight": causes.reuse_control, "reuse": causes.reuse_control,
               "cnnlayers": causes.class_layers}
ADDED = ("authors", "width", "alphacurve", "heldout", "copyweight", "reuse", "cnnlayers")  # issue 32's


class Point(NamedTuple):
    """An added experiment's settings (:data:`ADDED`): the profile's settings it starts from, as
    changed for this result, and the keywords its function takes (``ops``, ``share``, ...)."""

    base: MaskSettings
    extra: tuple = ()  # ((keyword, value), ...), values as JSON keeps them (lists, not tuples)


def jobs(s: MaskSettings, c: CauseSettings | None = None) -> list[tuple]:
    """The chapter's stored results at settings ``s``: ``(experiment, result name, seed, settings)``,
    seed by seed (an interrupted run leaves whole seeds), the alpha sweep right after
    ``addmul-seed0`` (whose network it reuses), the CNN and the shape sweep last. Sweep points at
    the main setting are left out when :func:`sweep` takes them from ``addmul-seed0``."""
    same = main_point_is_addmul(s)
    alphas = [a for a in sorted({*s.sweep_alphas, s.alpha}) if not (same and a == s.alpha)] if s.sweep_alphas else []
    shapes = [h for h in s.sweep_shapes if not (same and tuple(h) == tuple(s.hidden))]
    out = [(e, f"{e}-seed{k}", k, s) for k in range(s.seeds) for e in ("addmul", "double")]
    out[1:1] = [("alpha", f"alpha{a:g}-seed0", 0, s.with_(alpha=a)) for a in alphas]
    out += [("cnn", "cnn-seed0", 0, s)]
    out += [("shape", f"shape{shape_name(h)}-seed0", 0, s.with_(hidden=h)) for h in shapes]
    return out + (added_jobs(s, c) if c is not None else [])


def added_jobs(s: MaskSettings, c: CauseSettings) -> list[tuple[str, str, int, Point]]:
    """The added experiments' results (:data:`ADDED`) at settings ``s`` and ``c``, the longest
    first (so that two workers finish together): the authors' schedule (one result per mask),
    the widest networks of the width curve (one per mask from ``c.split_from``), the CNNs, the
    reuse controls, the alpha curve, the other widths and the held-out problems. A point at the
    main network and schedule is ``addmul-seed<k>`` itself (the same computation) and is left out."""
    out = []
    each = lambda op: (("ops", [op]),)  # noqa: E731
    authors = s.with_(alpha=c.authors_alpha, mask_lr=c.authors_mask_lr, mask_steps=c.authors_steps)
    for k in range(c.authors_seeds):
        out += [("authors", f"authors-{OP_NAMES[op]}-seed{k}", k, Point(authors, each(op))) for op in digits.OPS]
    shapes = [(w,) * c.depth for w in c.widths] + ([tuple(c.other_depth)] if c.other_depth else [])
    main = lambda k: k < s.seeds  # noqa: E731  (addmul-seed<k> is stored)
    wide, narrow = [], []
    for h in sorted(dict.fromkeys(shapes), key=lambda h: -causes.layer_sizes(h).sum()):
        for k in range(c.seeds):
            if h == tuple(s.hidden) and main(k):
                continue
            if h[0] >= c.split_from:
                wide += [("width", f"width{shape_name(h)}-{OP_NAMES[op]}-seed{k}", k,
                          Point(s.with_(hidden=h), each(op))) for op in digits.OPS]
            else:
                narrow.append(("width", f"width{shape_name(h)}-seed{k}", k, Point(s.with_(hidden=h))))
    cnns = [("cnnlayers", f"cnnlayers-seed{k}", k, Point(s)) for k in range(c.cnn_seeds)]
    reuse = [("reuse", f"reuse{shape_name(c.reuse_hidden)}-seed{k}", k,
              Point(s.with_(hidden=c.reuse_hidden), (("whole_alpha", c.whole_alpha), ("original", True))))
             for k in range(c.reuse_seeds)]
    # the copied network's own pair masks too, so that the forced overlap, the pairs' own and the
    # same-pair ceiling are all read on one network
    reuse += [("copyweight", f"copyweight-seed{k}", k,
               Point(s, (("whole_alpha", c.whole_alpha), ("original", True)))) for k in range(c.copy_seeds)]
    alphas = [("alphacurve", f"alphacurve{a:g}-seed{k}", k, Point(s.with_(alpha=a)))
              for a in c.alphas for k in range(c.seeds) if not (a == s.alpha and main(k))]
    held = [("heldout", f"heldout-seed{k}", k, Point(s, (("share", c.heldout_share),))) for k in range(c.heldout_seeds)]
    return out + wide + cnns + reuse + alphas + narrow + held


def all_jobs(profile: str) -> list[tuple]:
    """Every result of ``profile``: :func:`jobs` with the added experiments."""
    return jobs(settings(profile), causes_settings(profile))


def names(profile: str, added: bool = True) -> list[str]:
    """The names of the results a complete run at ``profile`` stores (without the added
    experiments' with ``added=False``: the page's own, which decide whether it is drawn at full)."""
    return [name for _, name, _, _ in (all_jobs(profile) if added else jobs(settings(profile)))]


def _config(job) -> dict:
    """A result's key: the settings its experiment uses, the experiment, the seed and, for the CNN,
    which digits it learns from (:func:`modlib.data.digits.mnist_source`)."""
    experiment, _, seed, s = job
    added = dict(s.extra) if isinstance(s, Point) else {}
    s = s.base if isinstance(s, Point) else s
    extra = {"data": digits.mnist_source()} if experiment in ("cnn", "cnnlayers") else {}
    config = {k: getattr(s, k) for k in USES[experiment]}
    if "hidden" in config:
        config["hidden"] = list(config["hidden"])
    return {**config, **added, "experiment": experiment, "seed": seed, **extra}


def fetch_job(job, profile: str, device) -> results.Result:
    experiment, name, seed, s = job
    kw = dict(s.extra) if isinstance(s, Point) else {}
    s = s.base if isinstance(s, Point) else s
    return results.fetch(CHAPTER, name, _config(job), lambda: EXPERIMENTS[experiment](s, seed, device, **kw),
                         profile=profile, device=describe(torch.device(device)),
                         code=EXPERIMENTS[experiment], sources=_sources(),
                         remake=f"python -m modlib.weight_masks --profile {profile} --only {name}")


def _sources() -> dict:
    """The CNN's data source, as its config names it, and the sources available here: a stored CNN
    result made on any of them is read as it was made (:func:`modlib.results.asked`)."""
    return {"data": digits.available_sources()}


def stored(profile: str, name: str) -> results.Result | None:
    """The result ``name`` of ``profile`` if it is stored and made with the profile's present
    settings by the present code, else ``None``; never computes (a page at one profile can show
    another's result)."""
    todo = {job[1]: job for job in all_jobs(profile)}
    check_choice("name", name, todo)
    return results.load(CHAPTER, name, _config(todo[name]), profile=profile,
                        code=EXPERIMENTS[todo[name][0]], sources=_sources())


def run(profile: str, device, *, s: MaskSettings | None = None) -> dict[str, list[results.Result]]:
    """Load (or compute and store) every experiment of the chapter at ``profile``; returns
    ``{"addmul": [per seed], "double": [per seed], "alpha": [per alpha], "shape": [per shape],
    "cnn": [one]}`` (read the sweeps with :func:`sweep`). Each result is stored on its own, so an
    interrupted run loses at most the one in progress. The added experiments are
    :func:`run_added`'s."""
    out = {name: [] for name in EXPERIMENTS if name not in ADDED}
    for job in jobs(s or settings(profile)):
        out[job[0]].append(fetch_job(job, profile, device))
    return out


def run_added(profile: str, device, *, s: MaskSettings | None = None,
              c: CauseSettings | None = None) -> dict[str, list[results.Result]]:
    """Load (or compute and store) the added experiments (:data:`ADDED`) at ``profile``:
    ``{experiment: [its results]}``; read the curves with :func:`curves`. None run at ``default``
    and ``paper`` (the page shows the stored full ones, :func:`collect`)."""
    out = {name: [] for name in ADDED}
    for job in added_jobs(s or settings(profile), c or causes_settings(profile)):
        out[job[0]].append(fetch_job(job, profile, device))
    return out


def collect(profile: str, res: dict | None = None) -> dict[str, results.Result]:
    """Results of ``profile`` by name: those of ``res`` (:func:`run`'s or :func:`run_added`'s, or
    several merged) where given, else every result of the profile that is stored and current for
    its settings (:func:`stored`; missing ones left out; nothing is computed)."""
    if res is not None:
        return {r.name: r for rs in res.values() for r in rs}
    found = {name: stored(profile, name) for name in names(profile)}
    return {name: r for name, r in found.items() if r is not None}


def curves(profile: str, found: dict[str, results.Result], s: MaskSettings | None = None,
           c: CauseSettings | None = None) -> dict:
    """The added experiments of ``profile`` from its results ``found`` (:func:`collect`), per seed,
    leaving out a seed while one of its results is missing: ``"width"`` ({shape: [points]}),
    ``"alpha"`` ({alpha: [points]}), ``"authors"`` and ``"book"`` ([points]: the networks at the
    authors' schedule and the networks of the same seeds at the profile's, ``addmul-seed<k>``), and
    ``"devices"`` ({"authors" / "book": the devices that made them, in words}), ``"alpha_devices"``
    ({α: the same for the α curve's networks}), ``"authors_alpha"``, each point read
    with :func:`~modlib.weight_masks.causes.point` plus its ``seed`` (the main network and alpha
    come from ``addmul``); ``"heldout"``, ``"reuse"`` and ``"cnnlayers"`` ([arrays], each with ``sizes [L]``,
    its masked layers' weights (:func:`~modlib.weight_masks.causes.mask_sizes`); the CNNs' with their
    ``layers``); ``"copyweight"`` ([arrays]: the copied network's, and the ``iou``, ``iou_same`` and
    ``iou_random`` of the pair masks of the network it was copied from, in the same result)."""
    s, c = s or settings(profile), c or causes_settings(profile)
    groups: dict = {}
    for experiment, name, seed, p in added_jobs(s, c):
        key = {"width": lambda: tuple(p.base.hidden), "alphacurve": lambda: p.base.alpha,
               "authors": lambda: "authors"}.get(experiment)
        if key is not None:
            groups.setdefault((experiment, key(), seed), []).append(name)
    main = [k for k in range(c.seeds) if k < s.seeds]
    shapes = [(w,) * c.depth for w in c.widths] + ([tuple(c.other_depth)] if c.other_depth else [])
    if tuple(s.hidden) in shapes:
        for k in main:
            groups.setdefault(("width", tuple(s.hidden), k), []).append(f"addmul-seed{k}")
    if c.alphas:  # the main alpha is a point of the curve
        for k in main:
            groups.setdefault(("alphacurve", s.alpha, k), []).append(f"addmul-seed{k}")
    for k in range(c.authors_seeds):
        groups.setdefault(("book", "book", k), []).append(f"addmul-seed{k}")
    out = {"width": {}, "alpha": {}, "authors": [], "book": [], "devices": {}, "alpha_devices": {},
           "authors_alpha": c.authors_alpha}
    for (experiment, key, seed), parts in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]), kv[0][2])):
        if not all(n in found for n in parts):
            continue
        if experiment == "book" and not all(n in found for n in groups.get(("authors", "authors", seed), [None])):
            continue  # the page's schedule is read only beside the authors' on the same network
        pt = {**causes.point([found[n] for n in parts]), "seed": np.float64(seed)}
        if experiment == "alphacurve":  # who made each α's networks: one seed on two thread counts differs
            out["alpha_devices"].setdefault(key, set()).update(found[n].meta["device"] for n in parts)
        if experiment in ("authors", "book"):  # two schedules on the networks of one seed: made on which device
            made = out["devices"].setdefault(experiment, set())
            made.update(found[n].meta["device"] for n in parts)
        if experiment == "width":
            out["width"].setdefault(key, []).append(pt)
        elif experiment == "alphacurve":
            out["alpha"].setdefault(key, []).append(pt)
        else:
            out[experiment].append(pt)
    out["width"] = dict(sorted(out["width"].items(), key=lambda kv: (len(kv[0]), kv[0])))
    out["alpha"] = dict(sorted(out["alpha"].items()))
    out["devices"] = {k: results.device_text(v) for k, v in out["devices"].items()}
    out["alpha_devices"] = {k: results.device_text(v) for k, v in sorted(out["alpha_devices"].items())}
    for experiment in ("heldout", "reuse", "copyweight", "cnnlayers"):
        out[experiment] = []
    for experiment, name, seed, _ in added_jobs(s, c):
        if experiment not in out or experiment in ("width", "alpha", "authors") or name not in found:
            continue
        out[experiment].append(added_point(experiment, found[name]))
    return out


def added_point(experiment: str, result: results.Result) -> dict:
    """An added experiment's stored ``result`` as :func:`curves` lists it: its arrays with the masked
    layers' ``sizes`` (and, for the class-layer runs, the ``layers``' names)."""
    arrays = dict(result.arrays)
    task = {"heldout": "addmul", "cnnlayers": "cnn"}.get(experiment, "double")
    arrays["sizes"] = causes.mask_sizes(task, result.config.get("hidden", ()))
    if experiment == "cnnlayers":
        arrays["layers"] = result.metrics["layers"]
    return arrays


# --- what a profile costs -------------------------------------------------------------------------


def _seconds_per_step(fn, steps: int) -> float:
    fn(1)  # warm-up
    start = time.perf_counter()
    fn(steps)
    return (time.perf_counter() - start) / steps


def estimate(s: MaskSettings, device, steps: int = 5, c: CauseSettings | None = None) -> tuple[float, str]:
    """The time every result of ``s`` (and, given ``c``, of the added experiments) takes on
    ``device``, from ``steps`` timed training steps of each network shape, its masks and the CNN
    (random data, nothing stored; the evaluations are left out): ``(seconds, table)``. The alpha
    sweep reuses seed 0's network; everything else trains its own."""
    per = {}
    for shape in dict.fromkeys([tuple(s.hidden), *map(tuple, s.sweep_shapes)]):
        model = mlp(42, shape, 20).to(device)
        stream = task_batches("addmul", s.batch, 0, device)
        net = _seconds_per_step(lambda n: training.adam(lambda x, y: digit_loss(model(x), y), model.parameters(),
                                                        stream, steps=n, lr=1e-3, clip=CLIP, desc="timing"), steps)
        mask = _seconds_per_step(lambda n: train_mask(model, stream, digit_loss, n, 1e-4, s, seed=0, desc="timing"),
                                 steps)
        per[shape] = net, mask
    model = cnn().to(device)
    images = iter(lambda: (torch.randn(s.batch, 1, 28, 28, device=device), torch.randint(10, (s.batch,), device=device)),
                  None)
    cnn_net = _seconds_per_step(lambda n: training.adam(lambda x, y: F.cross_entropy(model(x), y),
                                                        model.parameters(), images, steps=n, lr=1e-3), steps)
    cnn_mask = _seconds_per_step(lambda n: train_mask(model, images, F.cross_entropy, n, 1e-4, s, seed=0,
                                                      desc="timing"), steps)
    net, mask = per[tuple(s.hidden)]
    rows = {  # result kind: (how many, seconds each); the double network runs twice per step (two pairs)
        "addmul (network, 3 masks)": (s.seeds, net * s.base_steps + 3 * mask * s.mask_steps),
        "double (network, 4 masks)": (s.seeds, 2 * net * s.double_steps + 5 * mask * s.mask_steps),
        "alpha point (2 masks)": (len([j for j in jobs(s) if j[0] == "alpha"]), 2 * mask * s.sweep_mask_steps),
        "cnn (network, 11 masks)": (1, cnn_net * s.cnn_steps + 11 * cnn_mask * s.cnn_mask_steps),
    }
    for _, name, _, js in jobs(s):
        if name.startswith("shape"):
            n, m = per[tuple(js.hidden)]
            rows[f"{name} (network, 2 masks)"] = (1, n * s.base_steps + 2 * m * s.sweep_mask_steps)
    if c is not None:
        rows.update(_added_rows(s, c, device, steps, per, cnn_net, cnn_mask))
    total = sum(k * t for k, t in rows.values())
    lines = [f"{k} x {name}: {k * t / 60:.1f} min" for name, (k, t) in rows.items() if k]
    return total, "\n".join(lines + [f"total: {total / 3600:.2f} h on {describe(torch.device(device))} "
                                     f"(from {steps} timed steps of each)"])


def _added_rows(s: MaskSettings, c: CauseSettings, device, steps: int, per: dict, cnn_net: float,
                cnn_mask: float) -> dict[str, tuple[int, float]]:
    """:func:`estimate`'s rows for the added experiments: ``{kind: (how many, seconds each)}``,
    timing each network shape not yet in ``per`` (addmul shapes; double shapes under ``("double",
    shape)``, a step of both pairs, each mask step timed as one of the whole-task mask's)."""
    def rates(task: str, shape: tuple) -> tuple[float, float]:
        key = shape if task == "addmul" else (task, shape)
        if key not in per:
            n_in, n_out = (80, 40) if task == "double" else (42, 20)
            model = mlp(n_in, shape, n_out).to(device)
            model = Pairwise(model) if task == "double" else model
            stream = task_batches(task, s.batch, 0, device)
            net = _seconds_per_step(lambda n: training.adam(lambda x, y: digit_loss(model(x), y), model.parameters(),
                                                            stream, steps=n, lr=1e-3, clip=CLIP, desc="timing"), steps)
            mask = _seconds_per_step(lambda n: train_mask(model, stream, digit_loss, n, 1e-4, s, seed=0,
                                                          desc="timing"), steps)
            per[key] = net, mask
        return per[key]

    rows: dict[str, tuple[int, float]] = {}
    for experiment, name, _, p in added_jobs(s, c):
        b, kw = p.base, dict(p.extra)
        if experiment == "cnnlayers":
            kind, t = f"{experiment} (CNN, 11 masks)", cnn_net * b.cnn_steps + 11 * cnn_mask * b.cnn_mask_steps
        elif experiment in ("copyweight", "reuse"):
            net, mask = rates("double", tuple(b.hidden))
            n = 6 if kw.get("original") else 3
            kind = f"{experiment} {shape_name(b.hidden)} (network, {n} masks)"
            t = net * b.double_steps + n * mask * b.mask_steps
        else:
            net, mask = rates("addmul", tuple(b.hidden))
            n = len(kw.get("ops", digits.OPS))
            kind = (f"{experiment} {shape_name(b.hidden)} (network, {n} mask{'s' if n > 1 else ''} x "
                    f"{b.mask_steps} steps)")
            t = net * b.base_steps + n * mask * b.mask_steps
        k, _ = rows.get(kind, (0, t))
        rows[kind] = (k + 1, t)
    return rows


def main(argv: list[str] | None = None) -> None:
    """``python -m modlib.weight_masks --profile full [--stop-after SECONDS] [--only NAME ...] [--estimate]``:
    compute and store the chapter's results without the notebook, printing each one's wall time.
    ``--stop-after`` starts no result after that many seconds, so that a sitting of limited length
    can make a profile over several commands (each resumes where the last stopped); ``--only``
    computes just the named results, ``--added`` just the added experiments' (:data:`ADDED`);
    ``--estimate`` prints :func:`estimate`'s table and stops (the ``paper`` profile always prints it
    first)."""
    parser = argparse.ArgumentParser(prog="python -m modlib.weight_masks", description=main.__doc__)
    parser.add_argument("--profile", default=None,
                        help=f"one of {', '.join(profiles.PROFILES)} (default: $MODLIB_PROFILE or default)")
    parser.add_argument("--stop-after", type=float, default=None, metavar="SECONDS")
    parser.add_argument("--only", nargs="+", default=None, metavar="NAME",
                        help="compute only these results (e.g. cnn-seed0 addmul-seed0)")
    parser.add_argument("--added", action="store_true", help="compute only the added experiments' results")
    parser.add_argument("--estimate", action="store_true", help="print the estimated cost and stop")
    args = parser.parse_args(argv)
    try:
        profile = profiles.resolve(args.profile)
    except ValueError as err:
        parser.error(str(err))
    if args.stop_after is not None and args.stop_after < 0:
        parser.error(f"--stop-after={args.stop_after} is not valid; it must be >= 0 seconds")
    todo = all_jobs(profile)
    if args.only:
        valid = [job[1] for job in todo]
        for name in args.only:
            if name not in valid:
                parser.error(f"--only {name!r} is not a result of profile {profile}; choose from {', '.join(valid)}")
        todo = [job for job in todo if job[1] in args.only]
    if args.added:
        todo = [job for job in todo if job[0] in ADDED]
    device = pick_device()
    if args.estimate or profile == "paper":
        print(f"estimated cost of the {profile} profile (all {len(all_jobs(profile))} results):\n"
              + estimate(settings(profile), device, c=causes_settings(profile))[1], flush=True)
        if args.estimate:
            return
    start = time.perf_counter()
    for k, job in enumerate(todo):
        if args.stop_after is not None and time.perf_counter() - start > args.stop_after:
            print(f"stopped after {time.perf_counter() - start:.0f} s: {len(todo) - k} of {len(todo)} results left")
            return
        began = time.perf_counter()
        r = fetch_job(job, profile, device)
        print(f"{r.name:<18} {time.perf_counter() - began:8.1f} s now; computed in {r.meta['wall_time_s']:.1f} s "
              f"on {r.meta['device']} ({r.meta['created']})", flush=True)
    asked = "asked for " if args.only else ""
    print(f"all {len(todo)} results {asked}of {CHAPTER} at profile {profile} are stored")
