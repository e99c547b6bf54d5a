"""Chapter 7, the bridge: experiment 2's surgery on chapter 3's MNIST CNNs (issue 53; notebooks/bridge.ipynb,
section "Surgery on chapter 3's CNNs").

In the toy, rule 2's first-layer part equals cutting the x2 input, a repair that needs no mask. A CNN
reads both digits with the same convolution filters, so no weight carries the right-hand digit alone
until the dense layer (whose right-half columns do: that mask-free cut is not run here); whether a
mask-guided removal repairs it is the question. Per CNN
(chapter 3's setting-A CNN of that seed, trained again by :func:`modlib.bridge.digits.train_network`
exactly as experiment 1 trains it, frozen):

- the **Y1 mask** is trained as experiment 1 trains it (:mod:`modlib.bridge.digits`: the same
  pairs, penalty, steps and seed): in one process the same CNN and mask as ``mnist-a``'s, bit for
  bit (a test checks at smoke); at ``full``, where ``mnist-a`` was computed on another day with
  another torch, the CNNs' accuracies within 0.02 of its stored ones and the masks' kept shares
  within 2% (another test);
- the **"use X2" mask** trains on the same setting-B pairs for their *right* digit's label Y2 (the
  answer the shortcut gives: in setting A's training pairs Y1 is Y2 or Y2 - 1), at experiment 1's
  settings with a seed of its own; its fit is its accuracy at naming the right digit of fresh
  setting-B pairs;
- the arms, each scored on experiment 1's sets (:func:`modlib.bridge.digits.eval_sets`): ``full``;
  ``sub`` (the Y1 subnetwork, as experiment 1); ``ablated`` (rule 1: the "use X2" mask's weights
  removed); ``random_ablated`` (rule 1's control: as many random weights per tensor removed, one
  draw); ``ablated_excl`` (rule 2: the weights the "use X2" mask keeps and the Y1 mask does not,
  removed); ``random_ablated_excl`` (rule 2's control: as many random weights per tensor removed
  from outside the Y1 mask, :data:`DRAWS` draws averaged); ``random_x2_excl`` (rule 2 without its
  mask: the "use X2" mask replaced by random masks of its counts per tensor, their weights outside
  the Y1 mask removed, :data:`X2_DRAWS` draws averaged).

One stored result per CNN, ``surgery-mnist-seed<k>`` (a CNN's training and two masks of 500 steps
take about ten minutes of one core at ``full``); the masks are not stored (1.15 million weights).
Computed at ``smoke``, ``full`` and ``paper``, not at ``default`` (a reader's first run).
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import masks, results
from modlib.bridge import digits
from modlib.bridge.experiment import CHAPTER, kept, outside, train_mask
from modlib.data import digits as digit_data
from modlib.resists_at_scale import controls, networks
from modlib.runtime import describe

RESULT = "surgery-mnist"  # stored as surgery-mnist-seed<k>, one per CNN
PROFILES = ("smoke", "full", "paper")  # where it is computed: not at default (a reader's first run)
KEY = 50_000  # the "use X2" mask's seed: KEY + seed; the random draws': KEY + 100 * seed + 10 * part + draw
DRAWS = 3  # random removals outside the Y1 mask per CNN (rule 2's control), as the toy's experiment 2
X2_DRAWS = 5  # random "use X2" masks per CNN (rule 2 without its mask)
ARMS = ("full", "sub", "ablated", "random_ablated", "ablated_excl", "random_ablated_excl", "random_x2_excl")
MASKS = ("y1", "x2", "excl")  # kept shares stored: the two masks, and rule 2's removal


def mask_pairs(d: digits.DigitSettings, pools: dict, seed: int
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The masks' setting-B pairs of CNN ``seed``, drawn exactly as
    :func:`modlib.bridge.digits.mask_data` draws them (its generator, its order), with their right
    labels: ``x [n, 1, 28, 56]``, ``y1 [n]``, ``y2 [n]`` (``n = d.n_mask``)."""
    g = torch.Generator().manual_seed(digits.MASK_KEY + seed)
    return pools["train"].sample(d.n_mask, digits.MASK_SETTING, "train", g)


def fit_pairs(d: digits.DigitSettings, pools: dict, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``d.n_eval`` fresh setting-B pairs of MNIST's training digits and their right labels
    ``(x [n, 1, 28, 56], y2 [n])``: what the "use X2" mask's fit is scored on."""
    g = torch.Generator().manual_seed(KEY + 1_000 + seed)
    x, _, y2 = pools["train"].sample(d.n_eval, digits.MASK_SETTING, "train", g)
    return x, y2


def _mean(scores: list[dict]) -> dict:
    return {k: float(np.mean([s[k] for s in scores])) for k in scores[0]}


def measure(d: digits.DigitSettings, seed: int, net: torch.nn.Module, pools: dict,
            y1: dict | None = None, x2: dict | None = None) -> dict:
    """Both masks of CNN ``seed`` (trained here, or ``y1`` and ``x2`` given: the mutations pass
    others) and every arm of :data:`ARMS` scored on experiment 1's sets; with the masks' kept shares
    and the "use X2" mask's fit. ``net`` (frozen) is left unchanged."""
    device = next(net.parameters()).device
    x, t1, t2 = (t.to(device) for t in mask_pairs(d, pools, seed))
    args = (d.mask_steps, d.alpha, d.mask_lr, d.mask_batch, d.samples)
    hinge = networks.categorical_hinge
    y1 = train_mask(net, x, t1, *args, seed=3 * seed, loss_fn=hinge) if y1 is None else y1  # experiment 1's
    x2 = train_mask(net, x, t2, *args, seed=KEY + seed, loss_fn=hinge) if x2 is None else x2
    excl = {k: x2[k] & ~y1[k] for k in x2}
    sets = digits.eval_sets(d, pools, seed)
    draws = [digits.scored(net, outside(excl, y1, KEY + 100 * seed + draw), "complement", sets)
             for draw in range(DRAWS)]
    random_x2 = []
    for draw in range(X2_DRAWS):
        r = masks.random_like(x2, KEY + 100 * seed + 10 + draw)
        random_x2.append(digits.scored(net, {k: r[k] & ~y1[k] for k in r}, "complement", sets))
    scores = {"full": digits.scored(net, None, "off", sets),
              "sub": digits.scored(net, y1, "hard", sets),
              "ablated": digits.scored(net, x2, "complement", sets),
              "random_ablated": digits.scored(net, masks.random_like(x2, KEY + 100 * seed + 20), "complement", sets),
              "ablated_excl": digits.scored(net, excl, "complement", sets),
              "random_ablated_excl": _mean(draws),
              "random_x2_excl": _mean(random_x2)}
    fit = digits.scored(net, x2, "hard", {"fit": fit_pairs(d, pools, seed)})["fit"]
    return {"scores": scores, "kept": {m: kept(v) for m, v in (("y1", y1), ("x2", x2), ("excl", excl))},
            "x2_fit": fit}


def compute(s: networks.ResistSettings, d: digits.DigitSettings, seed: int, device: torch.device
            ) -> tuple[dict, dict]:
    """CNN ``seed`` trained (chapter 3's setting A) and measured; ``(metrics, arrays)``. Arrays
    (L = 5 masked weight tensors, :data:`modlib.bridge.digits.LAYERS`): ``<arm>_<set>`` ``[1]`` for
    every arm of :data:`ARMS` and set of :data:`modlib.bridge.digits.SETS`; ``kept_<m>`` ``[1]`` and
    ``kept_<m>_layers`` ``[1, L]`` for the masks of :data:`MASKS`; ``x2_fit`` ``[1]``; chapter 3's
    own numbers ``ch3_final_test``, ``ch3_final_train`` ``[1]``. One row, so that the CNNs' results
    stack into experiment 1's layout (:func:`stacked`)."""
    pools, source = controls.pools()
    net, _, numbers = digits.train_network(s, seed, pools, device)
    arrays = arrays_of(measure(d, seed, net, pools), numbers)
    metrics = {"result": RESULT, "seed": seed, "data": source,
               **{f"{k}": float(v[0]) for k, v in arrays.items() if v.ndim == 1}}
    return metrics, arrays


def arrays_of(row: dict, numbers: dict) -> dict:
    """One CNN's :func:`measure` ``row`` and chapter 3's ``numbers`` for it (``final_test``,
    ``final_train``) as the stored arrays :func:`compute` describes, one row each."""
    arrays = {f"{arm}_{k}": np.array([row["scores"][arm][k]], dtype=np.float32)
              for arm in ARMS for k in digits.SETS}
    for m in MASKS:
        arrays[f"kept_{m}"] = np.array([row["kept"][m][0]], dtype=np.float32)
        arrays[f"kept_{m}_layers"] = np.array([row["kept"][m][1]], dtype=np.float32)
    arrays["x2_fit"] = np.array([row["x2_fit"]], dtype=np.float32)
    for k in ("final_test", "final_train"):
        arrays[f"ch3_{k}"] = np.array([float(numbers[k])], dtype=np.float32)
    return arrays


def names(profile: str) -> list[str]:
    """The stored results at ``profile``: one per CNN of experiment 1 (none at ``default``)."""
    if profile not in PROFILES:
        return []
    return [f"{RESULT}-seed{k}" for k in range(digits.settings(profile).seeds)]


def fetch(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``surgery-mnist-seed<seed>`` at ``profile``."""
    d = digits.settings(profile)
    s = digits.chapter3_settings(profile, d)
    if not 0 <= seed < d.seeds:
        raise ValueError(f"seed={seed}: experiment 1 at profile {profile!r} has CNNs 0 to {d.seeds - 1}")
    cfg = {**digits.config(s, d), "seed": seed, "key": KEY, "draws": DRAWS, "x2_draws": X2_DRAWS}
    return results.fetch(CHAPTER, f"{RESULT}-seed{seed}", cfg, lambda: compute(s, d, seed, device),
                         profile=profile, device=describe(device), code=compute,
                         sources={"mnist": digit_data.available_sources()})


def stacked(per_cnn: list[dict]) -> dict:
    """The CNNs' stored arrays ``per_cnn`` (one result's each, in seed order) as one set of arrays,
    experiment 1's layout (``[S]`` per arm and set, ``[S, L]`` per mask's layers): what
    :func:`modlib.bridge.findings.surgery_claims` reads."""
    return {k: np.concatenate([a[k] for a in per_cnn]) for k in per_cnn[0]}


def run(profile: str, device: torch.device) -> list[results.Result]:
    """Every CNN's result at ``profile`` (:func:`fetch`), in seed order; none at ``default``."""
    return [fetch(profile, int(n.rsplit("seed", 1)[1]), device) for n in names(profile)]
