"""Chapter 7's "built" at matched density (issue 53): the Y1 subnetwork of the trained weights against
the one a mask finds in the same network's initial, untrained weights, with the two masks as dense.

Experiment 1 trains both masks with one penalty (``BridgeSettings.alpha``); the untrained weights'
mask then keeps about twice as many weights as the trained ones', so the claim "built" cannot be
decided (the chapter's density rule). Here, per stored network of ``toy-<f>``, the untrained
weights' mask is trained again at the larger penalties of :data:`ALPHAS` (the smallest is
experiment 1's own: its stored mask is read, not retrained), on experiment 1's data and seed, and
the one whose kept share is nearest the trained Y1 mask's, by their ratio (:func:`nearest`), is
read: its subnetwork's scores (``untrained_matched_<set>``), its kept share and its fit on fresh
unconfounded points. Nothing else is trained.

Stored as ``matched-<f>`` beside the ``toy-<f>`` it reads.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import results
from modlib.bridge import experiment as br
from modlib.redundant_input_toy.members import initial_network

RESULT = "matched"  # stored as matched-<formulation>
ALPHAS = (0.01, 0.02, 0.04, 0.08, 0.16)  # the untrained weights' mask's penalties; the first is experiment 1's
SETS = ("held_out", "train", "reliance")


def nearest(kept: np.ndarray, target: float) -> int:
    """The index of the kept share in ``kept`` ``[A]`` nearest ``target`` by ratio
    (``|log k - log target|``); the first (the smaller penalty) on a tie."""
    gap = np.abs(np.log(np.maximum(kept, 1e-12)) - np.log(max(target, 1e-12)))
    return int(np.argmin(gap))


def measure(s, b: br.BridgeSettings, formulation: str, seed: int, row: int, toy_arrays: dict, sets: dict,
            chosen: dict | None = None) -> dict:
    """Network ``seed`` (row ``row`` of ``toy_arrays``): its untrained weights' Y1 mask at every
    penalty of :data:`ALPHAS`, the one nearest the trained Y1 mask's kept share chosen, and that
    subnetwork scored on ``sets`` (``held_out`` and ``train``) and on fresh unconfounded points.
    ``chosen``: score that mask instead, nothing trained (the mutations pass a random one)."""
    untrained = initial_network(s, seed)
    x, y1, _ = br.unconfounded(s, formulation, seed, b.n_mask + b.n_eval)
    fit = (x[b.n_mask:], y1[b.n_mask:])
    out = {}
    if chosen is None:  # experiment 1's mask (alpha 0.01), then the larger penalties
        found = [br.stored_mask(untrained, toy_arrays, "untrained", row)]
        found += [br.train_mask(untrained, x[:b.n_mask], y1[:b.n_mask], b.mask_steps, alpha, b.mask_lr,
                                b.mask_batch, b.samples, seed=3 * seed + 1) for alpha in ALPHAS[1:]]
        kept = np.array([br.kept(m)[0] for m in found])
        index = nearest(kept, float(toy_arrays["kept_y1"][row]))
        chosen = found[index]
        out = {"kept_alphas": kept, "alpha_index": index}
    return {**out, "scores": br.scored(untrained, chosen, "hard", sets), "kept": br.kept(chosen)[0],
            "fit": br.scored(untrained, chosen, "hard", {"held_out": fit})["held_out"], "mask": br.flat(chosen)}


def compute(s, b: br.BridgeSettings, toy_arrays: dict, formulation: str) -> tuple[dict, dict]:
    """Every network of one stored ``toy-<formulation>`` result measured (:func:`measure`);
    ``(metrics, arrays)``. Arrays (S seeds, A penalties, W masked weights): ``kept_alphas [S, A]``
    (the untrained weights' mask's kept share at each penalty), ``alpha_index [S]`` (the one
    chosen), ``untrained_matched_<set> [S]`` (``held_out``, ``train``, ``reliance``),
    ``kept_matched [S]``, ``fit_matched [S]`` and ``mask_matched [S, W]`` bool."""
    rows = [measure(s, b, formulation, seed, seed - b.first_seed, toy_arrays, sets)
            for seed, _, sets, _, _ in br.surgery_inputs(s, toy_arrays, formulation, b.first_seed)]
    arrays = {"kept_alphas": np.stack([r["kept_alphas"] for r in rows]).astype(np.float32),
              "alpha_index": np.array([r["alpha_index"] for r in rows])}
    arrays.update(scores(rows))
    metrics = {"formulation": formulation, "seeds": len(rows), "alphas": list(ALPHAS),
               "chosen": np.bincount(arrays["alpha_index"], minlength=len(ALPHAS)).tolist(),
               **{f"{k}_mean": float(v.mean()) for k, v in arrays.items() if v.ndim == 1 and k != "alpha_index"}}
    return metrics, arrays


def scores(rows: list[dict]) -> dict:
    """The chosen masks' arrays of :func:`compute` from :func:`measure`'s rows."""
    out = {f"untrained_matched_{k}": np.array([r["scores"][k] for r in rows], dtype=np.float32) for k in SETS}
    out["kept_matched"] = np.array([r["kept"] for r in rows], dtype=np.float32)
    out["fit_matched"] = np.array([r["fit"] for r in rows], dtype=np.float32)
    out["mask_matched"] = np.stack([r["mask"] for r in rows]).astype(bool)
    return out


def rescored(s, b: br.BridgeSettings, toy_arrays: dict, arrays: dict, formulation: str) -> dict:
    """``arrays`` (a ``matched-<f>`` result's) with the chosen masks' scores, kept shares and fits
    computed again from the masks it stores (nothing trained): the stored numbers where the masks
    are the stored ones; the mutations replace the masks first (:mod:`modlib.bridge.mutations`)."""
    rows = []
    for seed, _, sets, _, _ in br.surgery_inputs(s, toy_arrays, formulation, b.first_seed):
        row = seed - b.first_seed
        chosen = br.stored_mask(initial_network(s, seed), arrays, RESULT, row)
        rows.append(measure(s, b, formulation, seed, row, toy_arrays, sets, chosen=chosen))
    return {**arrays, **scores(rows)}


def fetch(profile: str, formulation: str, device: torch.device,
          b: br.BridgeSettings | None = None) -> results.Result:
    """Load (or compute from the stored ``toy-<formulation>`` and store) the result
    ``matched-<formulation>``: nothing but the untrained weights' masks is trained, on the CPU."""
    return br.fetch_from_toy(RESULT, compute, {"alphas": list(ALPHAS)}, profile, formulation, device, b)


def run(profile: str, device: torch.device, b: br.BridgeSettings | None = None) -> dict[str, results.Result]:
    """``{formulation: Result}`` of :func:`fetch` for every formulation of the chapter."""
    b = b or br.settings(profile)
    return {f: fetch(profile, f, device, b) for f in b.formulations}
