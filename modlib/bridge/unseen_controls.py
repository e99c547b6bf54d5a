"""Chapter 7's controls for the Y1 subnetwork of a mask that never saw the held-out cell (issue 53):
experiment 1's two controls, a random subnetwork and the untrained weights, for the masks of
:mod:`modlib.bridge.unseen`.

``inside-unseen`` compares the blind Y1 subnetwork with the full network only. Experiment 1 asks two
more questions of its Y1 subnetwork, and here they are asked of the blind one; per stored network of
``toy-<f>`` (frozen) and its blind Y1 mask stored in ``unseen-<f>``:

- **not any subnetwork**: a random subnetwork with as many weights per layer as the blind mask
  keeps (:func:`modlib.masks.random_like`; :data:`DRAWS` draws, scores averaged),
  ``random_sub_unseen``;
- **built by training**: the same blind mask trained on the network's initial, untrained weights
  (on the blind mask's data, the band ``Y2 = 0``), at every penalty of
  :data:`modlib.bridge.matched.ALPHAS`, the one whose kept share is nearest the trained blind mask's
  read (:func:`modlib.bridge.matched.nearest`), ``untrained_sub_unseen``: "built" at matched density,
  as :mod:`modlib.bridge.matched` asks it of experiment 1's masks.

Stored as ``unseen-controls-<f>``, reading ``toy-<f>`` and ``unseen-<f>``; nothing but the untrained
weights' masks is trained.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import masks, results
from modlib.bridge import experiment as br
from modlib.bridge import matched, unseen
from modlib.redundant_input_toy.members import initial_network

RESULT = "unseen-controls"  # stored as unseen-controls-<formulation>
KEY = 85_000  # the random subnetworks' seeds: KEY + DRAWS * seed + draw
UNTRAINED_KEY = 86_000  # the untrained weights' masks' seeds: UNTRAINED_KEY + seed (every penalty)
DRAWS = br.DRAWS  # random subnetworks per network (scores averaged), as the chapter's removal controls
SETS = ("held_out", "train", "reliance")


def measure(s, b: br.BridgeSettings, formulation: str, seed: int, net: torch.nn.Module, blind: dict,
            sets: dict, chosen: dict | None = None) -> dict:
    """Network ``seed`` (``net``, frozen) and its blind Y1 mask ``blind``: the random subnetworks as
    large per layer, and the blind mask trained on the untrained weights at every penalty of
    :data:`~modlib.bridge.matched.ALPHAS`, the nearest in kept share chosen; both scored on ``sets``
    (its ``held_out`` and ``train`` points), the chosen mask's fit on fresh points of the band.
    ``chosen``: score that untrained-weights mask instead, nothing trained (the mutations pass a
    random one)."""
    untrained = initial_network(s, seed)
    data = unseen.mask_data(s, b, formulation, seed)
    out = {}
    if chosen is None:
        found = [br.train_mask(untrained, *data["y1"], b.mask_steps, alpha, b.mask_lr, b.mask_batch, b.samples,
                               seed=UNTRAINED_KEY + seed) for alpha in matched.ALPHAS]
        kept = np.array([br.kept(m)[0] for m in found])
        index = matched.nearest(kept, br.kept(blind)[0])
        chosen = found[index]
        out = {"kept_alphas": kept, "alpha_index": index}
    draws = [br.scored(net, masks.random_like(blind, KEY + DRAWS * seed + d), "hard", sets) for d in range(DRAWS)]
    return {**out, "random": {k: float(np.mean([r[k] for r in draws])) for k in SETS},
            "untrained": br.scored(untrained, chosen, "hard", sets), "kept": br.kept(chosen)[0],
            "fit": br.scored(untrained, chosen, "hard", {"held_out": data["y1_fit"]})["held_out"],
            "mask": br.flat(chosen)}


def _inputs(s, b: br.BridgeSettings, toy_arrays: dict, blind_arrays: dict, formulation: str):
    """Per network: ``(seed, net, blind Y1 mask, sets)``."""
    for seed, net, sets, _, _ in br.surgery_inputs(s, toy_arrays, formulation, b.first_seed):
        yield seed, net, br.stored_mask(net, blind_arrays, "y1_unseen", seed - b.first_seed), sets


def compute(s, b: br.BridgeSettings, toy_arrays: dict, blind_arrays: dict, formulation: str) -> tuple[dict, dict]:
    """Every network of one stored ``toy-<formulation>`` result with its blind Y1 mask from
    ``unseen-<formulation>`` (``blind_arrays``) measured (:func:`measure`); ``(metrics, arrays)``.
    Arrays (S seeds, A penalties, W masked weights): ``random_sub_unseen_<set>`` and
    ``untrained_sub_unseen_<set>`` ``[S]`` (``held_out``, ``train``, ``reliance``),
    ``kept_alphas_unseen [S, A]`` and ``alpha_index_unseen [S]`` (the penalty chosen),
    ``kept_untrained_unseen [S]``, ``fit_untrained_unseen [S]`` and ``mask_untrained_unseen [S, W]``
    bool."""
    rows = [measure(s, b, formulation, seed, net, blind, sets)
            for seed, net, blind, sets in _inputs(s, b, toy_arrays, blind_arrays, formulation)]
    arrays = {"kept_alphas_unseen": np.stack([r["kept_alphas"] for r in rows]).astype(np.float32),
              "alpha_index_unseen": np.array([r["alpha_index"] for r in rows])}
    arrays.update(scores(rows))
    metrics = {"formulation": formulation, "seeds": len(rows), "alphas": list(matched.ALPHAS),
               "chosen": np.bincount(arrays["alpha_index_unseen"], minlength=len(matched.ALPHAS)).tolist(),
               **{f"{k}_mean": float(v.mean()) for k, v in arrays.items()
                  if v.ndim == 1 and k != "alpha_index_unseen"}}
    return metrics, arrays


def scores(rows: list[dict]) -> dict:
    """The arrays of :func:`compute` that :func:`measure`'s rows score (all but the penalty search)."""
    out = {f"{arm}_sub_unseen_{k}": np.array([r[arm][k] for r in rows], dtype=np.float32)
           for arm in ("random", "untrained") for k in SETS}
    out["kept_untrained_unseen"] = np.array([r["kept"] for r in rows], dtype=np.float32)
    out["fit_untrained_unseen"] = np.array([r["fit"] for r in rows], dtype=np.float32)
    out["mask_untrained_unseen"] = np.stack([r["mask"] for r in rows]).astype(bool)
    return out


def rescored(s, b: br.BridgeSettings, toy_arrays: dict, blind_arrays: dict, arrays: dict, formulation: str) -> dict:
    """``arrays`` (an ``unseen-controls-<f>`` result's) with every score, kept share and fit computed
    again from the masks stored (the blind masks of ``blind_arrays``, the untrained weights' chosen
    ones of ``arrays``; nothing trained): the stored numbers where the masks are the stored ones; the
    mutations replace them first (:mod:`modlib.bridge.mutations`)."""
    rows = []
    for seed, net, blind, sets in _inputs(s, b, toy_arrays, blind_arrays, formulation):
        chosen = br.stored_mask(initial_network(s, seed), arrays, "untrained_unseen", seed - b.first_seed)
        rows.append(measure(s, b, formulation, seed, net, blind, sets, chosen=chosen))
    return {**arrays, **scores(rows)}


def fetch(profile: str, formulation: str, device: torch.device,
          b: br.BridgeSettings | None = None) -> results.Result:
    """Load (or compute from the stored ``toy-<formulation>`` and ``unseen-<formulation>`` and store)
    the result ``unseen-controls-<formulation>``; on the CPU (tiny networks)."""
    extra = {"alphas": list(matched.ALPHAS), "key": KEY, "untrained_key": UNTRAINED_KEY, "draws": DRAWS}
    return unseen.fetch_from_blind(RESULT, compute, extra, profile, formulation, device, b)


def run(profile: str, device: torch.device, b: br.BridgeSettings | None = None) -> dict[str, results.Result]:
    """``{formulation: Result}`` of :func:`fetch` for every formulation of the chapter."""
    b = b or br.settings(profile)
    return {f: fetch(profile, f, device, b) for f in b.formulations}
