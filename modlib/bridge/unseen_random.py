"""Chapter 7's rule 2 with masks that never saw the held-out cell, without its "use X2" mask (issue 53):
the random-masks control of :mod:`modlib.bridge.unseen`, as ``rule2-random-<f>``
(:func:`modlib.bridge.experiment.random_exclusive`) is experiment 2's.

Per stored network of ``toy-<f>`` (frozen) and its two blind masks stored in ``unseen-<f>``: the
blind "use X2" mask replaced by :data:`DRAWS` random masks with its counts per layer
(:func:`modlib.masks.random_like`), and each one's weights that the blind Y1 mask does not keep
removed, as rule 2 removes the blind "use X2" mask's. Nothing is trained. Asks whether the repair
with blind masks needs the blind "use X2" mask's choice of weights, or only as many weights per
layer outside the blind Y1 mask.

Stored as ``unseen-random-<f>``, reading ``toy-<f>`` and ``unseen-<f>``.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import masks, results
from modlib.bridge import experiment as br
from modlib.bridge import unseen

RESULT = "unseen-random"  # stored as unseen-random-<formulation>
KEY = 88_000  # the random masks' seeds: KEY + DRAWS * seed + draw
DRAWS = br.RANDOM_X2_DRAWS  # random "use X2" masks per network (scores averaged), as rule2-random-<f>'s
SETS = ("held_out", "train", "reliance")


def measure(net: torch.nn.Module, seed: int, y1: dict, x2: dict, sets: dict) -> dict:
    """Network ``seed`` (``net``, frozen) with its blind masks ``y1`` and ``x2``: per draw, a random
    mask of ``x2``'s counts per layer, its weights outside ``y1`` removed and the network scored on
    ``sets``. ``{"scores": [DRAWS dicts of set -> score], "kept": [DRAWS] shares removed}``."""
    scores, kept = [], []
    for d in range(DRAWS):
        r = masks.random_like(x2, KEY + DRAWS * seed + d)
        removed = {k: r[k] & ~y1[k] for k in r}
        kept.append(br.kept(removed)[0])
        scores.append(br.scored(net, removed, "complement", sets))
    return {"scores": scores, "kept": kept}


def _inputs(s, b: br.BridgeSettings, toy_arrays: dict, blind_arrays: dict, formulation: str):
    """Per network: ``(seed, net, blind Y1 mask, blind "use X2" mask, sets)``."""
    for seed, net, sets, _, _ in br.surgery_inputs(s, toy_arrays, formulation, b.first_seed):
        y1, x2 = (br.stored_mask(net, blind_arrays, m, seed - b.first_seed) for m in unseen.MASKS)
        yield seed, net, y1, x2, sets


def compute(s, b: br.BridgeSettings, toy_arrays: dict, blind_arrays: dict, formulation: str) -> tuple[dict, dict]:
    """Every network of one stored ``toy-<formulation>`` result with its blind masks from
    ``unseen-<formulation>`` (``blind_arrays``) measured (:func:`measure`); ``(metrics, arrays)``.
    Arrays (S seeds, D draws): ``random_x2_unseen_<set>`` ``[S]`` (the draws' mean per set:
    ``held_out``, ``train``, ``reliance``), the draws themselves ``random_x2_unseen_<set>_draws``
    ``[S, D]``, ``kept_random_x2_unseen`` ``[S]`` (the share removed, the draws' mean) and
    ``kept_random_x2_unseen_draws`` ``[S, D]``."""
    rows = [measure(net, seed, y1, x2, sets)
            for seed, net, y1, x2, sets in _inputs(s, b, toy_arrays, blind_arrays, formulation)]
    arrays = {}
    for k in SETS:
        per = np.array([[r[k] for r in row["scores"]] for row in rows], dtype=np.float32)
        arrays[f"random_x2_unseen_{k}_draws"] = per
        arrays[f"random_x2_unseen_{k}"] = per.mean(axis=1).astype(np.float32)
    kept = np.array([row["kept"] for row in rows], dtype=np.float32)
    arrays["kept_random_x2_unseen_draws"] = kept
    arrays["kept_random_x2_unseen"] = kept.mean(axis=1).astype(np.float32)
    metrics = {"formulation": formulation, "seeds": len(rows), "draws": DRAWS,
               **{f"{k}_mean": float(v.mean()) for k, v in arrays.items() if v.ndim == 1}}
    return metrics, arrays


def fetch(profile: str, formulation: str, device: torch.device,
          b: br.BridgeSettings | None = None) -> results.Result:
    """Load (or compute from the stored ``toy-<formulation>`` and ``unseen-<formulation>`` and store)
    the result ``unseen-random-<formulation>``; on the CPU (tiny networks)."""
    return unseen.fetch_from_blind(RESULT, compute, {"key": KEY, "draws": DRAWS}, profile, formulation, device, b)


def run(profile: str, device: torch.device, b: br.BridgeSettings | None = None) -> dict[str, results.Result]:
    """``{formulation: Result}`` of :func:`fetch` for every formulation of the chapter."""
    b = b or br.settings(profile)
    return {f: fetch(profile, f, device, b) for f in b.formulations}
