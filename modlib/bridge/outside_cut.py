"""Chapter 7: rule 2's removal outside the cut, alone (issue 53; notebooks/bridge.ipynb, section
"Controls of the cut").

Rule 2 together with the cut (:mod:`modlib.bridge.cut_controls`, ``surgery-cut-mnist``) scores as the
cut alone: a median 94 % of rule 2's dense-layer removal lies in the cut's columns, and beyond them
rule 2 removes a median 817 weights. Whether those few weights matter without the cut was left open,
and so was where the two masks themselves keep their dense weights. Per fresh CNN
(:mod:`modlib.bridge.surgery_fresh`), trained again with its Y1 and "use X2" masks as
:func:`modlib.bridge.cut_controls.measure` trains them, the arms of :data:`ARMS`:

- ``excl_outside``: rule 2's removal (the "use X2" mask's weights outside the Y1 mask) without the
  weights in the cut's columns;
- ``random_outside``: as many weights per tensor as ``excl_outside``, drawn at random among those the
  Y1 mask does not keep and the cut does not take (:data:`DRAWS` draws, their scores averaged);
- ``excl_inside``: rule 2's removal inside the cut's columns only, beside ``cut_dense``, the cut;

and, per mask of :data:`IN_CUT`, the share of its kept dense-layer weights that lie in the cut's
columns (which hold :func:`modlib.bridge.cut_controls.cut_share` of that layer). One result per fresh
CNN, ``surgery-outside-mnist-seed<k>`` (about eight minutes of one core at ``full``).
"""

from __future__ import annotations

import numpy as np
import torch

from modlib import results
from modlib.bridge import cut_controls, digit_cut, digit_surgery, digits, surgery_fresh
from modlib.bridge.experiment import kept, outside, train_mask
from modlib.resists_at_scale import controls, networks

RESULT = "surgery-outside-mnist"  # stored as surgery-outside-mnist-seed<k>, one per fresh CNN
PROFILES = surgery_fresh.PROFILES
ARMS = ("full", "sub", "ablated_excl", "cut_dense", "excl_outside", "random_outside", "excl_inside")  # sub: the Y1 fit
MASKS = ("y1", "x2", "excl", "excl_outside")  # kept shares stored
IN_CUT = ("y1", "x2", "excl")  # the masks whose dense-layer weights are placed against the cut's columns
DRAWS = 3  # random removals outside the Y1 mask and the cut per CNN, as rule 2's own control draws
PART = 3  # the draws' seeds: digit_surgery.KEY + 100 * seed + 10 * PART + draw (parts 0-2 are digit_surgery's)


def measure(d: digits.DigitSettings, seed: int, net: torch.nn.Module, pools: dict, point: tuple[float, float]
            ) -> dict:
    """CNN ``seed``'s two masks (as :func:`modlib.bridge.cut_controls.measure` trains them) and every
    arm of :data:`ARMS` scored on experiment 1's sets: ``{"scores": {arm: {set: acc}}, "kept": {mask:
    (pooled, [L])}, "x2_fit": acc, "in_cut": {mask: share}}``. ``net`` (frozen) is left unchanged."""
    x, t1, _ = (t.to(next(net.parameters()).device) for t in digit_surgery.mask_pairs(d, pools, seed))
    y1 = train_mask(net, x, t1, d.mask_steps, d.alpha, d.mask_lr, d.mask_batch, d.samples,
                    seed=3 * seed, loss_fn=networks.categorical_hinge)  # experiment 1's, as digit_surgery trains it
    x2 = surgery_fresh.x2_mask(d, net, pools, seed, *surgery_fresh.setting(d, point))
    cut = digit_cut.dense_cut(net)
    excl = {k: x2[k] & ~y1[k] for k in x2}  # rule 2's removal
    found = {"y1": y1, "x2": x2, "excl": excl, "excl_outside": {k: excl[k] & ~cut[k] for k in excl}}
    sets = digits.eval_sets(d, pools, seed)
    taken = {k: y1[k] | cut[k] for k in y1}  # where a random removal outside both may not draw
    draws = [digits.scored(net, outside(found["excl_outside"], taken, digit_surgery.KEY + 100 * seed + 10 * PART + k),
                           "complement", sets) for k in range(DRAWS)]
    scores = {"full": digits.scored(net, None, "off", sets), "sub": digits.scored(net, y1, "hard", sets),
              "ablated_excl": digits.scored(net, excl, "complement", sets),
              "cut_dense": digits.scored(net, cut, "complement", sets),
              "excl_outside": digits.scored(net, found["excl_outside"], "complement", sets),
              "random_outside": {k: float(np.mean([r[k] for r in draws])) for k in sets},
              "excl_inside": digits.scored(net, {k: excl[k] & cut[k] for k in excl}, "complement", sets)}
    fit = digits.scored(net, x2, "hard", {"fit": digit_surgery.fit_pairs(d, pools, seed)})["fit"]
    return {"scores": scores, "kept": {m: kept(found[m]) for m in MASKS}, "x2_fit": fit,
            "in_cut": {m: cut_controls.in_columns(found[m][digit_cut.DENSE], cut[digit_cut.DENSE]) for m in IN_CUT}}


def compute(s: networks.ResistSettings, d: digits.DigitSettings, seed: int, point: tuple[float, float],
            device: torch.device) -> tuple[dict, dict]:
    """Fresh CNN ``seed`` trained and measured (:func:`measure`). Arrays, one row each so that the
    CNNs' results stack (:func:`modlib.bridge.digit_surgery.stacked`): ``<arm>_<set> [1]`` for every
    arm of :data:`ARMS` and set of :data:`modlib.bridge.digits.SETS`; ``kept_<m> [1]`` and
    ``kept_<m>_layers [1, L]`` for every mask of :data:`MASKS`; ``x2_fit [1]``; ``<m>_in_cut [1]`` for
    every mask of :data:`IN_CUT`; chapter 3's ``ch3_final_test``, ``ch3_final_train`` ``[1]``."""
    pools, source = controls.pools()
    net, _, numbers = digits.train_network(s, seed, pools, device)
    row = measure(d, seed, net, pools, point)
    arrays = {f"{arm}_{k}": np.array([row["scores"][arm][k]], dtype=np.float32) for arm in ARMS for k in digits.SETS}
    for m in MASKS:
        arrays[f"kept_{m}"] = np.array([row["kept"][m][0]], dtype=np.float32)
        arrays[f"kept_{m}_layers"] = np.array([row["kept"][m][1]], dtype=np.float32)
    arrays["x2_fit"] = np.array([row["x2_fit"]], dtype=np.float32)
    arrays.update({f"{m}_in_cut": np.array([row["in_cut"][m]], dtype=np.float32) for m in IN_CUT})
    for k in ("final_test", "final_train"):
        arrays[f"ch3_{k}"] = np.array([float(numbers[k])], dtype=np.float32)
    return {"result": RESULT, "seed": seed, "data": source, "x2_fit": row["x2_fit"], "in_cut": row["in_cut"]}, arrays


def fetch(profile: str, seed: int, device: torch.device) -> results.Result:
    """Load (or compute and store) ``surgery-outside-mnist-seed<seed>`` at ``profile``: the "use X2"
    mask at the setting the stored recipe results pick (:func:`modlib.bridge.surgery_fresh.chosen`)."""
    return surgery_fresh.fetch_on_fresh(RESULT, compute, "rule 2 outside the cut", lambda steps, alpha: {
        "key": digit_surgery.KEY, "draws": DRAWS, "part": PART, "x2_steps": steps, "x2_alpha": alpha,
        "columns": digit_cut.right_columns()}, profile, seed, device)


def names(profile: str) -> list[str]:
    """The results at ``profile``: one per fresh CNN (none outside :data:`PROFILES`)."""
    return surgery_fresh.names_on_fresh(RESULT, profile)


def run(profile: str, device: torch.device) -> list[results.Result]:
    """Every fresh CNN's :func:`fetch` at ``profile``, in seed order; none outside :data:`PROFILES`."""
    return surgery_fresh.run_on_fresh(fetch, profile, device)


__all__ = ["RESULT", "PROFILES", "ARMS", "MASKS", "IN_CUT", "DRAWS", "PART", "measure", "compute", "fetch", "names",
           "run"]
