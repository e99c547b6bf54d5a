"""Chapter 7: the cut that needs no mask, on chapter 3's CNNs (issue 53; notebooks/bridge.ipynb,
section "Surgery on chapter 3's CNNs").

In the toy, rule 2's first-layer part is the same cut as zeroing the weights from the input x2, a
repair that needs no mask. A CNN reads both digits with the same convolution filters, so no
convolution weight reads the right-hand digit alone; but it has no global pooling, so the dense
layer's weights that read the feature columns whose receptive field lies wholly in the right half do
(:func:`right_columns`). Two cuts, each on every CNN of the surgery (experiment 1's, seeds 0-4, and
the fresh ones of :mod:`modlib.bridge.surgery_fresh`, seeds 5-9), each CNN trained again as
:func:`modlib.bridge.digits.train_network` trains it (the same CNN as the surgery's: its full scores
are stored beside, to be checked equal):

- ``cut_dense``: the dense layer's weights from the right-only feature columns zeroed;
- ``cut_input``: the right half of every image blanked (set to the background, 0): the right digit
  removed from the input itself, the toy's input cut in image form.

Each arm is scored on experiment 1's sets (:func:`modlib.bridge.digits.eval_sets`). One result,
``cut-mnist``: a CNN trains in under a minute of one core.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import results
from modlib.bridge import digits, surgery_fresh
from modlib.bridge.experiment import CHAPTER
from modlib.data import digits as digit_data
from modlib.resists_at_scale import controls, networks
from modlib.runtime import describe

RESULT = "cut-mnist"
PROFILES = ("smoke", "full")
ARMS = ("full", "cut_dense", "cut_input")
DENSE = "6.weight"  # the dense layer [64, 64 * 11 * 25] reading the last convolution's feature map
HALF = 28  # the right-hand digit's first input column (pairs are 28 x 56)


def right_columns(width: int = 56, half: int = HALF) -> list[int]:
    """The last convolution's feature-map columns whose receptive field lies wholly in the right
    half of a ``28 x width`` pair: with a 3-wide convolution, a 2-wide max pool and a 3-wide
    convolution (:func:`modlib.resists_at_scale.networks.digit_cnn`), column ``q`` of the
    ``(width - 6) // 2`` reads input columns ``2q`` to ``2q + 7``; those with ``2q >= half``."""
    return [q for q in range((width - 2) // 2 - 2) if 2 * q >= half]


def dense_cut(net: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A removal mask over :data:`modlib.bridge.digits.LAYERS` (True: removed) that removes the dense
    layer's weights from the right-only feature columns (:func:`right_columns`) of every channel."""
    params = dict(net.named_parameters())
    out = {name: torch.zeros_like(params[name], dtype=torch.bool) for name in digits.LAYERS}
    channels, height, width = 64, 11, 25  # the last convolution's feature map, flattened channel-major
    column = torch.zeros(channels, height, width, dtype=torch.bool)
    column[:, :, right_columns()] = True
    out[DENSE][:] = column.flatten()
    return out


def blank_right(sets: dict) -> dict:
    """``sets`` (name -> ``(x [n, 1, 28, 56], y)``) with every pair's right half set to 0."""
    out = {}
    for name, (x, y) in sets.items():
        x = x.clone()
        x[..., HALF:] = 0
        out[name] = (x, y)
    return out


def measure(d: digits.DigitSettings, seed: int, net: torch.nn.Module, pools: dict) -> dict:
    """Every arm of :data:`ARMS` of CNN ``seed`` scored on experiment 1's sets: ``{arm: {set: acc}}``."""
    sets = digits.eval_sets(d, pools, seed)
    return {"full": digits.scored(net, None, "off", sets),
            "cut_dense": digits.scored(net, dense_cut(net), "complement", sets),
            "cut_input": digits.scored(net, None, "off", blank_right(sets))}


def seeds(profile: str) -> list[int]:
    """The CNNs cut: experiment 1's (0 to ``seeds - 1``), then the fresh ones."""
    return list(range(digits.settings(profile).seeds)) + list(surgery_fresh.fresh_seeds(profile))


def compute(s: networks.ResistSettings, d: digits.DigitSettings, cnns: list[int], device: torch.device
            ) -> tuple[dict, dict]:
    """Each CNN of ``cnns`` trained and cut; arrays ``seed [C]`` and ``<arm>_<set> [C]`` for every arm
    of :data:`ARMS` and set of :data:`modlib.bridge.digits.SETS`, with chapter 3's ``ch3_final_train``
    and ``ch3_final_test`` ``[C]``."""
    pools, source = controls.pools()
    rows = []
    for seed in cnns:
        net, _, numbers = digits.train_network(s, seed, pools, device)
        rows.append((measure(d, seed, net, pools), numbers))
    arrays = {"seed": np.array(cnns)}
    for arm in ARMS:
        for k in digits.SETS:
            arrays[f"{arm}_{k}"] = np.array([row[arm][k] for row, _ in rows], dtype=np.float32)
    for k in ("final_test", "final_train"):
        arrays[f"ch3_{k}"] = np.array([float(n[k]) for _, n in rows], dtype=np.float32)
    return {"result": RESULT, "data": source, "columns": right_columns()}, arrays


def fetch(profile: str, device: torch.device) -> results.Result:
    """Load (or compute and store) ``cut-mnist`` at ``profile``."""
    return fetch_over_cnns(profile, RESULT, compute, {"columns": right_columns(), "half": HALF}, device)


def fetch_over_cnns(profile: str, name: str, code, extra: dict, device: torch.device) -> results.Result:
    """Load (or compute with ``code(s, d, cnns, device)`` and store) the result ``name`` over the CNNs
    of :func:`seeds`, its config experiment 1's with the CNNs and ``extra``: every result that cuts
    all the CNNs (here, and :mod:`modlib.bridge.cut_controls`)."""
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r} computes no cut; choose from {', '.join(PROFILES)}")
    d = digits.settings(profile)
    s = digits.chapter3_settings(profile, d)
    cnns = seeds(profile)
    cfg = {**digits.config(s, d), "cnns": cnns, **extra}
    return results.fetch(CHAPTER, name, cfg, lambda: code(s, d, cnns, device), profile=profile,
                         device=describe(device), code=code, sources={"mnist": digit_data.available_sources()})


def stored(profile: str) -> results.Result | None:
    """``cut-mnist`` stored now at ``profile`` (None where it is not; nothing computed)."""
    if profile not in PROFILES:
        return None
    with results.store_only():
        try:
            return fetch(profile, torch.device("cpu"))
        except results.StaleResultError:
            return None


# ---------------------------------------------------------------- the cut's control: as many random dense weights

RANDOM = "cut-mnist-random"  # the control's result: as many of the dense layer's weights removed at random
DRAWS = 3  # random cuts per CNN, their scores averaged
KEY = 70_000  # their seeds: KEY + 10 * CNN seed + draw


def random_dense_cut(net: torch.nn.Module, seed: int) -> dict[str, torch.Tensor]:
    """A removal mask over :data:`modlib.bridge.digits.LAYERS` (True: removed) that removes as many of
    the dense layer's weights as :func:`dense_cut` does, at places drawn uniformly with ``seed``."""
    out = dense_cut(net)
    n, size = int(out[DENSE].sum()), out[DENSE].numel()
    g = torch.Generator().manual_seed(seed)
    flat = torch.zeros(size, dtype=torch.bool)
    flat[torch.randperm(size, generator=g)[:n]] = True
    out[DENSE] = flat.reshape(out[DENSE].shape)
    return out


def compute_random(s: networks.ResistSettings, d: digits.DigitSettings, cnns: list[int], device: torch.device
                   ) -> tuple[dict, dict]:
    """Each CNN of ``cnns`` trained again (as :func:`compute`) and scored with :data:`DRAWS` random
    dense cuts as large as the dense cut (their mean); arrays ``seed [C]``, ``full_<set> [C]`` (the same
    CNNs' full scores, to be checked against ``cut-mnist``'s) and ``cut_random_<set> [C]``."""
    pools, source = controls.pools()
    rows = []
    for seed in cnns:
        net, _, _ = digits.train_network(s, seed, pools, device)
        sets = digits.eval_sets(d, pools, seed)
        draws = [digits.scored(net, random_dense_cut(net, KEY + 10 * seed + k), "complement", sets)
                 for k in range(DRAWS)]
        rows.append((digits.scored(net, None, "off", sets),
                     {name: float(np.mean([x[name] for x in draws])) for name in sets}))
    arrays = {"seed": np.array(cnns)}
    for k in digits.SETS:
        arrays[f"full_{k}"] = np.array([full[k] for full, _ in rows], dtype=np.float32)
        arrays[f"cut_random_{k}"] = np.array([cut[k] for _, cut in rows], dtype=np.float32)
    return {"result": RANDOM, "data": source, "draws": DRAWS}, arrays


def fetch_random(profile: str, device: torch.device) -> results.Result:
    """Load (or compute and store) ``cut-mnist-random`` at ``profile``."""
    return fetch_over_cnns(profile, RANDOM, compute_random, {"draws": DRAWS, "key": KEY}, device)
