"""Chapter 7: rule 2 of the CNN surgery with masks for other targets in the "use X2" mask's place
(issue 53; notebooks/bridge.ipynb, section "Surgery on chapter 3's CNNs").

On the fresh CNNs (:mod:`modlib.bridge.surgery_fresh`) rule 2 repairs: removing the weights the
"use X2" mask keeps and the Y1 mask does not raises the worse of held-out and training accuracy, and
random masks of the "use X2" mask's counts per tensor in its place do not. That leaves open whether
any *trained* mask would do: its weights outside the Y1 mask may be weights that do work of any kind
(a trained mask keeps the weights that matter), not weights that carry the shortcut. So rule 2 is run
again on the same CNNs with the "use X2" mask replaced by masks trained, exactly as it is (its pairs,
steps, penalty and loss, a seed of their own), for other targets (:data:`TARGETS`):

- ``left5``: the left digit's label plus 5, modulo 10: a digit-naming task of the same kind as the
  "use X2" mask's (naming a digit under labels the network never output for it) that reads only the
  left-hand digit, unrelated to X2;
- ``right5``: the right digit's label plus 5, modulo 10: it reads X2 as the "use X2" mask does, but
  under labels that are not the shortcut's (the shortcut answers Y2 or Y2 - 1).

Per fresh CNN (trained again as :func:`modlib.bridge.digits.train_network` trains it: the surgery's
own CNN, whose full and rule-2 scores are stored beside to be checked equal), the Y1 mask and the
"use X2" mask as :func:`modlib.bridge.surgery_fresh.compute_fresh` trains them, each target's mask;
every arm scored on experiment 1's sets. One stored result per CNN, ``surgery-target-mnist-seed<k>``
(about six minutes of one core at ``full``). Computed at ``smoke`` (the tests) and ``full``.
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import results
from modlib.bridge import digit_surgery, digits, surgery_fresh
from modlib.bridge.experiment import kept, train_mask
from modlib.resists_at_scale import controls, networks

RESULT = "surgery-target-mnist"  # stored as surgery-target-mnist-seed<k>, one per fresh CNN
PROFILES = surgery_fresh.PROFILES
TARGETS = {"left5": (0, 5), "right5": (1, 5)}  # name -> (digit read: 0 left, 1 right; label shift mod 10)
NAMES = {"left5": "left digit plus 5", "right5": "right digit plus 5"}  # each target in words
KEY = 80_000  # the target masks' seeds: KEY + 10 * CNN seed + the target's index in TARGETS
ARMS = ("full", "sub", "ablated_excl", *(f"{t}_excl" for t in TARGETS))  # sub: the Y1 subnetwork (its fit)
MASKS = ("y1", "x2", "excl", *TARGETS, *(f"{t}_excl" for t in TARGETS))  # kept shares stored


def labels(y1: torch.Tensor, y2: torch.Tensor, target: str) -> torch.Tensor:
    """``[n]``: the labels of ``target`` (:data:`TARGETS`) for pairs of left labels ``y1 [n]`` and
    right labels ``y2 [n]``."""
    side, shift = TARGETS[target]
    return ((y1, y2)[side] + shift) % 10


def measure(d: digits.DigitSettings, seed: int, net: torch.nn.Module, pools: dict, point: tuple[float, float]
            ) -> dict:
    """CNN ``seed``'s Y1 mask, "use X2" mask (at the :data:`~modlib.bridge.surgery_fresh.GRID` point
    ``point``) and one mask per target of :data:`TARGETS` (at the same setting), and every arm of
    :data:`ARMS` scored on experiment 1's sets: ``{"scores": {arm: {set: acc}}, "kept": {mask:
    (pooled, [L])}, "fits": {mask: acc}}``; a fit is the accuracy at the mask's own task on fresh
    setting-B pairs. ``net`` (frozen) is left unchanged."""
    x, t1, t2 = (t.to(next(net.parameters()).device) for t in digit_surgery.mask_pairs(d, pools, seed))
    steps, alpha = surgery_fresh.setting(d, point)
    hinge = networks.categorical_hinge
    y1 = train_mask(net, x, t1, d.mask_steps, d.alpha, d.mask_lr, d.mask_batch, d.samples,
                    seed=3 * seed, loss_fn=hinge)  # experiment 1's, as digit_surgery.measure trains it
    found = {"y1": y1, "x2": surgery_fresh.x2_mask(d, net, pools, seed, steps, alpha)}
    for i, t in enumerate(TARGETS):
        found[t] = train_mask(net, x, labels(t1, t2, t), steps, alpha, d.mask_lr, d.mask_batch, d.samples,
                              seed=KEY + 10 * seed + i, loss_fn=hinge)
    for m in ("x2", *TARGETS):  # rule 2: the mask's weights the Y1 mask does not keep
        found["excl" if m == "x2" else f"{m}_excl"] = {k: found[m][k] & ~y1[k] for k in found[m]}
    sets = digits.eval_sets(d, pools, seed)
    scores = {"full": digits.scored(net, None, "off", sets), "sub": digits.scored(net, y1, "hard", sets),
              "ablated_excl": digits.scored(net, found["excl"], "complement", sets)}
    scores.update({f"{t}_excl": digits.scored(net, found[f"{t}_excl"], "complement", sets) for t in TARGETS})
    g = torch.Generator().manual_seed(digit_surgery.KEY + 1_000 + seed)  # digit_surgery.fit_pairs' pairs
    fx, f1, f2 = pools["train"].sample(d.n_eval, digits.MASK_SETTING, "train", g)
    fresh = {"x2": f2, **{t: labels(f1, f2, t) for t in TARGETS}}
    fits = {m: digits.scored(net, found[m], "hard", {"fit": (fx, y)})["fit"] for m, y in fresh.items()}
    return {"scores": scores, "kept": {m: kept(found[m]) for m in MASKS}, "fits": fits}


def compute(s: networks.ResistSettings, d: digits.DigitSettings, seed: int, point: tuple[float, float],
            device: torch.device) -> tuple[dict, dict]:
    """Fresh CNN ``seed`` trained and measured (:func:`measure`). Arrays, one row each so that the
    CNNs' results stack (:func:`modlib.bridge.digit_surgery.stacked`): ``<arm>_<set> [1]`` for every
    arm of :data:`ARMS` and set of :data:`modlib.bridge.digits.SETS`; ``kept_<m> [1]`` and
    ``kept_<m>_layers [1, L]`` for every mask of :data:`MASKS`; ``<m>_fit [1]`` for the "use X2" mask
    and each target's; chapter 3's ``ch3_final_test``, ``ch3_final_train`` ``[1]``."""
    pools, source = controls.pools()
    net, _, numbers = digits.train_network(s, seed, pools, device)
    row = measure(d, seed, net, pools, point)
    arrays = {f"{arm}_{k}": np.array([row["scores"][arm][k]], dtype=np.float32) for arm in ARMS for k in digits.SETS}
    for m in MASKS:
        arrays[f"kept_{m}"] = np.array([row["kept"][m][0]], dtype=np.float32)
        arrays[f"kept_{m}_layers"] = np.array([row["kept"][m][1]], dtype=np.float32)
    arrays.update({f"{m}_fit": np.array([v], dtype=np.float32) for m, v in row["fits"].items()})
    for k in ("final_test", "final_train"):
        arrays[f"ch3_{k}"] = np.array([float(numbers[k])], dtype=np.float32)
    return {"result": RESULT, "seed": seed, "data": source, "fits": row["fits"]}, arrays


def fetch(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``surgery-target-mnist-seed<seed>`` at ``profile``: the masks at the
    setting the stored recipe results pick (:func:`modlib.bridge.surgery_fresh.chosen`)."""
    return surgery_fresh.fetch_on_fresh(RESULT, compute, "target control", lambda steps, alpha: {
        "key": KEY, "targets": {t: list(v) for t, v in TARGETS.items()}, "mask_steps": steps,
        "mask_alpha": alpha}, profile, seed, device)


def names(profile: str) -> list[str]:
    """The stored results at ``profile``: one per fresh CNN (none outside :data:`PROFILES`)."""
    return surgery_fresh.names_on_fresh(RESULT, profile)


def run(profile: str, device: torch.device) -> list[results.Result]:
    """Every fresh CNN's result at ``profile`` (:func:`fetch`), in seed order; none outside :data:`PROFILES`."""
    return surgery_fresh.run_on_fresh(fetch, profile, device)
