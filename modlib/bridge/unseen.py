"""Chapter 7's experiments 1 and 2 with masks that never see the held-out cell (issue 53; the page's
exercise ``ex-br-unseen`` made a stored experiment).

Experiment 1's masks train on unconfounded points of all four cells, the held-out cell (1, 1)
included, so its $Y_1$ subnetwork shows that a solution *exists*, and rule 2, which borrows that
mask, is a repair only given a mask that saw the held-out cell. Here, per stored network of
``toy-<f>`` (frozen; nothing but masks is trained):

- the **Y1 mask** trains on unconfounded points with ``Y2 = 0`` only (the band ``x2 < 0``), where
  X2 tells nothing about Y1 and no point lies in the held-out cell;
- the **"use X2" mask** trains for ``1 - Y2`` on unconfounded points of the three seen cells;
- both are read as experiments 1 and 2 read theirs: the Y1 subnetwork (``sub_unseen``), rule 2
  with these masks (the weights the "use X2" mask keeps and the Y1 mask does not, removed:
  ``ablated_unseen``), and its control, as many random weights per layer removed from outside that
  Y1 mask (``random_ablated_unseen``, :data:`DRAWS` draws averaged).

Stored as ``unseen-<f>`` beside the ``toy-<f>`` it reads. The masks' settings are the chapter's
(:class:`~modlib.bridge.experiment.BridgeSettings`): steps, penalty, learning rate, batch, samples,
``n_mask`` training points and ``n_eval`` fresh points to score each mask's fit on its own task.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import results
from modlib.bridge import experiment as br
from modlib.runtime import describe

RESULT = "unseen"  # stored as unseen-<formulation>
KEY = 80_000  # the masks' seeds: KEY + 2 * seed (Y1) and + 1 ("use X2"); the random draws' KEY + 10 * seed + 2 + d
DRAWS = br.DRAWS  # random removals per network for rule 2's control, as experiment 2's (scores averaged)
ARMS = ("sub_unseen", "ablated_unseen", "random_ablated_unseen")
MASKS = ("y1_unseen", "x2_unseen")


def mask_data(s, b: br.BridgeSettings, formulation: str, seed: int) -> dict:
    """The two masks' data for network ``seed``: unconfounded points (experiment 1's generator,
    :func:`~modlib.bridge.experiment.unconfounded`, drawn four times as many) split by cell.
    ``{"y1": (x, y1), "y1_fit": ..., "x2": (x, 1 - y2), "x2_fit": ...}``: ``x [n, 2]`` and targets
    ``[n]``, ``b.n_mask`` points to train on and ``b.n_eval`` fresh ones to score the fit on; the Y1
    mask's from the band ``Y2 = 0``, the "use X2" mask's from every cell but the held-out (1, 1)."""
    n = b.n_mask + b.n_eval
    x, y1, y2 = br.unconfounded(s, formulation, seed, 4 * n)
    band = y2 == 0
    seen = ~((y1 == 1) & (y2 == 1))
    xb, yb = x[band], y1[band]
    xs, ys = x[seen], 1 - y2[seen]
    if len(xb) < n or len(xs) < n:
        raise RuntimeError(f"seed {seed}: {len(xb)} band points and {len(xs)} seen-cell points drawn; "
                           f"each mask needs {n} (n_mask + n_eval)")
    return {"y1": (xb[:b.n_mask], yb[:b.n_mask]), "y1_fit": (xb[b.n_mask:n], yb[b.n_mask:n]),
            "x2": (xs[:b.n_mask], ys[:b.n_mask]), "x2_fit": (xs[b.n_mask:n], ys[b.n_mask:n])}


def measure(s, b: br.BridgeSettings, formulation: str, seed: int, net: torch.nn.Module, sets: dict,
            y1: dict | None = None, x2: dict | None = None) -> dict:
    """Both masks of network ``seed`` (trained here, or ``y1`` and ``x2`` given: the mutations
    pass random ones) and every arm of :data:`ARMS` scored on ``sets`` (its ``held_out`` and
    ``train`` points); with the masks' kept shares and fits. ``net`` is left unchanged."""
    data = mask_data(s, b, formulation, seed)
    args = (b.mask_steps, b.alpha, b.mask_lr, b.mask_batch, b.samples)
    y1 = br.train_mask(net, *data["y1"], *args, seed=KEY + 2 * seed) if y1 is None else y1
    x2 = br.train_mask(net, *data["x2"], *args, seed=KEY + 2 * seed + 1) if x2 is None else x2
    excl = {k: x2[k] & ~y1[k] for k in x2}
    draws = [br.scored(net, br.outside(excl, y1, KEY + 10 * seed + 2 + d), "complement", sets)
             for d in range(DRAWS)]
    return {"scores": {"sub_unseen": br.scored(net, y1, "hard", sets),
                       "ablated_unseen": br.scored(net, excl, "complement", sets),
                       "random_ablated_unseen": {k: float(np.mean([r[k] for r in draws])) for k in draws[0]}},
            "kept": {"y1_unseen": br.kept(y1)[0], "x2_unseen": br.kept(x2)[0], "excl_unseen": br.kept(excl)[0]},
            "fit": {"y1_unseen": br.scored(net, y1, "hard", {"held_out": data["y1_fit"]})["held_out"],
                    "x2_unseen": br.scored(net, x2, "hard", {"held_out": data["x2_fit"]})["held_out"]},
            "masks": {"y1_unseen": br.flat(y1), "x2_unseen": br.flat(x2)}}


def compute(s, b: br.BridgeSettings, arrays: dict, formulation: str) -> tuple[dict, dict]:
    """Every network of one stored ``toy-<formulation>`` result (``arrays``) measured
    (:func:`measure`); ``(metrics, arrays)``. Arrays (S seeds, W masked weights):
    ``<arm>_<set>`` ``[S]`` for the arms of :data:`ARMS` and the sets ``held_out``, ``train``,
    ``reliance``; ``kept_<m>`` ``[S]`` for ``y1_unseen``, ``x2_unseen`` and ``excl_unseen`` (the
    share rule 2 removes); ``fit_<m>`` ``[S]`` (each mask's accuracy on fresh points of its own
    task); ``mask_<m>`` ``[S, W]`` bool."""
    rows = [measure(s, b, formulation, seed, net, sets)
            for seed, net, sets, _, _ in br.surgery_inputs(s, arrays, formulation, b.first_seed)]
    return summarize(formulation, rows)


def summarize(formulation: str, rows: list[dict]) -> tuple[dict, dict]:
    """The per-network rows of :func:`measure` as :func:`compute`'s ``(metrics, arrays)``."""
    out = {f"{arm}_{k}": np.array([r["scores"][arm][k] for r in rows], dtype=np.float32)
           for arm in ARMS for k in ("held_out", "train", "reliance")}
    for m in (*MASKS, "excl_unseen"):
        out[f"kept_{m}"] = np.array([r["kept"][m] for r in rows], dtype=np.float32)
    for m in MASKS:
        out[f"fit_{m}"] = np.array([r["fit"][m] for r in rows], dtype=np.float32)
        out[f"mask_{m}"] = np.stack([r["masks"][m] for r in rows]).astype(bool)
    metrics = {"formulation": formulation, "seeds": len(rows),
               **{f"{k}_mean": float(v.mean()) for k, v in out.items() if v.ndim == 1}}
    return metrics, out


def fetch(profile: str, formulation: str, device: torch.device,
          b: br.BridgeSettings | None = None) -> results.Result:
    """Load (or compute from the stored ``toy-<formulation>`` and store) the result
    ``unseen-<formulation>``: nothing but the masks is trained, on the CPU (tiny networks)."""
    return br.fetch_from_toy(RESULT, compute, {"key": KEY, "draws": DRAWS}, profile, formulation, device, b)


def fetch_from_blind(name: str, compute, extra: dict, profile: str, formulation: str, device: torch.device,
                     b: br.BridgeSettings | None = None) -> results.Result:
    """Load (or compute from the stored ``toy-<formulation>`` and ``unseen-<formulation>`` and store) the
    result ``<name>-<formulation>``: a control of the blind masks (:mod:`modlib.bridge.unseen_controls`,
    :mod:`modlib.bridge.unseen_random`), ``compute(s, b, toy_arrays, blind_arrays, formulation) ->
    (metrics, arrays)``, its config the toy's with ``extra``; on the CPU (tiny networks)."""
    b = b or br.settings(profile)
    s = br.toy_settings(profile, b)
    toy_result, blind = br.fetch(profile, formulation, device, b), fetch(profile, formulation, device, b)
    return results.fetch(br.CHAPTER, f"{name}-{formulation}{br.suffix(b)}", {**br.toy_config(s, b, formulation), **extra},
                         lambda: compute(s, b, toy_result.arrays, blind.arrays, formulation), profile=profile,
                         device=describe(device), code=compute, depends=[toy_result, blind])


def run(profile: str, device: torch.device, b: br.BridgeSettings | None = None) -> dict[str, results.Result]:
    """``{formulation: Result}`` of :func:`fetch` for every formulation of the chapter."""
    b = b or br.settings(profile)
    return {f: fetch(profile, f, device, b) for f in b.formulations}


def rescored(s, b: br.BridgeSettings, toy_arrays: dict, arrays: dict, formulation: str) -> dict:
    """``arrays`` (an ``unseen-<f>`` result's) with every score, kept share and fit computed again
    from the masks it stores (``mask_<m>``; nothing is trained) on the networks of ``toy_arrays``
    (its ``toy-<f>``): the stored numbers where the masks are the stored ones, a test checks; the
    mutations replace the masks first (:mod:`modlib.bridge.mutations`)."""
    rows = []
    for seed, net, sets, _, _ in br.surgery_inputs(s, toy_arrays, formulation, b.first_seed):
        y1, x2 = (br.stored_mask(net, arrays, m, seed - b.first_seed) for m in MASKS)
        rows.append(measure(s, b, formulation, seed, net, sets, y1=y1, x2=x2))
    return summarize(formulation, rows)[1]
