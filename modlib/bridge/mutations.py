"""Chapter 7's stored full results analysed with the framing wrong (:mod:`modlib.mutations`): the
arrays the page's deciding functions read (:func:`~modlib.bridge.findings.claims`,
:func:`~modlib.bridge.findings.structure_claims`, :func:`~modlib.bridge.findings.digit_claims`,
:func:`~modlib.bridge.findings.all_sprite_claims`) changed as a plausible bug would change them, then
decided by those functions.

The toy's results store every network and mask, so there a random mask is scored again from the
stored networks (a few seconds); chapter 3's CNNs and chapter 2's decoders are not stored, so there
the random-mask numbers the results already hold stand in for the learned masks' numbers.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import torch

from modlib import bridge as br
from modlib import masks, results
from modlib.bridge import (cut_controls, digit_cut, digit_surgery, digits, findings, matched, outside_cut, sprites, surgery_fresh,
                           surgery_ranked, surgery_sized, surgery_target, unseen, unseen_controls,
                           unseen_random)
from modlib.bridge.experiment import initial_network, network, scored, stored_mask, unconfounded
from modlib.redundant_input_toy.members import member_data

FULL = Path(__file__).resolve().parents[2] / "notebooks" / "results" / "full" / br.CHAPTER
KEY = 50_000  # the random masks' seeds: KEY + 3 * seed + the mask's place (the stored controls use seed)
UNSEEN_KEY = 60_000  # the same for the masks blind to the held-out cell (modlib.bridge.unseen)
MATCHED_KEY = 65_000  # and for the untrained weights' masks at matched density (modlib.bridge.matched)
CONTROLS_KEY = 67_000  # and for the blind mask's in the untrained weights (modlib.bridge.unseen_controls)

MUTATIONS = {
    "swap target and other": "chapter 2's decoders: the sprite each slot's removal is read on exchanged "
                             "(`damage[:, j, k]` with `damage[:, j, 1 - k]`, for the masks' removals and "
                             "the random ones), so that a slot's own sprite is read as the other's; the "
                             "slot masks' overlap (`separate`, `predicts`, `vs-reference`) is symmetric "
                             "in the two slots and has no target to exchange; the toy's and the CNNs' "
                             "claims have none either (decided as stored)",
    "random mask as dense": "the toy (both formulations, the chapter's networks and the fresh ones): each stored mask (Y1, Y1 of the untrained "
                            "weights, 'use X2', the two masks blind to the held-out cell, unseen-<f>, the untrained weights' masks at matched density, matched-<f>, and the blind Y1 mask's in the untrained weights, unseen-controls-<f>) replaced per seed by a random mask of the same per-layer "
                            "counts (`masks.random_like`, a draw of its own per mask), and every arm "
                            "that reads a mask scored again from the stored networks (the controls "
                            "drawn from it as the experiment draws them, the 'use X2' mask's fit, "
                            "experiment 2's second removal, experiment 3's overlap; the stored control "
                            "of rule 2 with random masks, rule2-random-<f>, is random already and "
                            "stays, so rule 2 with its mask meets itself made random; its blind twin, unseen-random-<f>, is "
                            "drawn again outside the random blind Y1 mask, as it was drawn outside the found one); chapter 3's CNNs: "
                            "the Y1 subnetwork's scores (`sub_*`) replaced by the stored random "
                            "subnetwork's of the same counts per tensor (`random_sub_*`), and in the "
                            "surgery the removals of the 'use X2' mask's weights by the stored ones of "
                            "random masks of its counts per tensor (rule 1's `ablated_*` by "
                            "`random_ablated_*`, rule 2's `ablated_excl_*` by `random_x2_excl_*`, rule 2 with the "
                            "dense cut, `excl_cut_*`, by the same with random masks, `random_x2_cut_*`, and rule 2's removal outside "
                            "the cut, `excl_outside_*`, by as many random weights outside the Y1 mask and the cut, "
                            "`random_outside_*`, and rule 2 against size-matched masks for other targets by "
                            "the same with random masks, `random_x2_excl_*` of surgery-sized-mnist and of "
                            "surgery-ranked-mnist); chapter 2's "
                            "decoders: each slot mask replaced by a random one of the same per-layer "
                            "counts (a draw of its own per slot), the slot subnetworks' R² (`slot_in`) "
                            "by the stored random subnetworks' (`random_in`), and the removal of the "
                            "weights only one slot's mask keeps (`damage`) by the stored random "
                            "removal of as many weights per layer (`damage_random`)",
}
CANNOT = {"random mask as dense": {
    "built-mnist": "the stored results keep neither the CNNs nor their masks (1.15 million weights), only "
                   "what was measured on them, and they score no random mask on the initial, untrained "
                   "weights: the arm 'Y1 subnetwork of the initial weights' cannot be made random",
}}


def random_mask(mask: np.ndarray, layers: np.ndarray, seed: int) -> np.ndarray:
    """A random mask ``[W]`` bool with as many kept weights in each tensor as ``mask [W]`` (cut into
    tensors of ``layers [L]`` weights, in order): :func:`modlib.masks.random_like` drawn with ``seed``."""
    cuts = np.cumsum(layers)[:-1]
    parts = {str(i): torch.as_tensor(p) for i, p in enumerate(np.split(np.asarray(mask, dtype=bool), cuts))}
    return torch.cat(list(masks.random_like(parts, seed).values())).numpy()


# ---------------------------------------------------------------- the toy


def toy_random(arrays: dict, first: int = 0, names=br.experiment.MASKS, layers: np.ndarray | None = None,
               key: int = KEY) -> dict:
    """``arrays`` (a toy result, its seeds counted from ``first``) with every stored mask
    ``mask_<m> [S, W]`` of ``names`` replaced by :func:`random_mask` of it, seed
    ``key + 3 * seed + i`` for the ``i``-th of ``names`` (default the toy's masks,
    :data:`~modlib.bridge.experiment.MASKS`; an ``unseen-<f>`` or ``matched-<f>`` result's pass
    theirs, ``key`` :data:`UNSEEN_KEY` or :data:`MATCHED_KEY` and their toy result's ``mask_layers``
    as ``layers``). The scores are not changed here: :func:`toy_rescored`,
    :func:`modlib.bridge.unseen.rescored` and :func:`modlib.bridge.matched.rescored`."""
    out = dict(arrays)
    layers = arrays["mask_layers"] if layers is None else layers
    for i, m in enumerate(names):
        out[f"mask_{m}"] = np.stack([random_mask(v, layers, key + 3 * (first + row) + i)
                                     for row, v in enumerate(arrays[f"mask_{m}"])])
    return out


def toy_rescored(s, b, arrays: dict, formulation: str) -> dict:
    """``arrays`` with every arm that reads a mask (``sub``, ``random_sub``, ``untrained_sub``,
    ``ablated``, ``random_ablated``: ``<arm>_<set> [S]`` for each set of
    :data:`~modlib.bridge.experiment.SETS`) and the "use X2" mask's fit ``x2_fit [S]`` scored again
    from the stored networks and the masks ``arrays`` holds, as :func:`modlib.bridge.experiment.measure`
    scores them (``s``, ``b``: chapter 1's and the bridge's settings of the stored results)."""
    rows = []
    for row in range(arrays["full_held_out"].size):
        seed = b.first_seed + row
        net = network(s, arrays, row, b.first_seed)
        untrained = initial_network(s, seed)
        x, y, x_test, y_test = member_data(s, formulation, br.CONDITION, seed)
        xm, y1, y2 = (t[b.n_mask:] for t in unconfounded(s, formulation, seed, b.n_mask + b.n_eval))
        sets = {"held_out": (x_test, y_test), "train": (x, y), "unconfounded": (xm, y1)}
        y1_mask, u_mask, x2_mask = (stored_mask(net, arrays, m, row) for m in br.experiment.MASKS)
        rows.append({"sub": scored(net, y1_mask, "hard", sets),
                     "random_sub": scored(net, y1_mask, "random", sets, seed=seed),
                     "untrained_sub": scored(untrained, u_mask, "hard", sets),
                     "ablated": scored(net, x2_mask, "complement", sets),
                     "random_ablated": scored(net, masks.random_like(x2_mask, seed), "complement", sets),
                     "x2_fit": scored(net, x2_mask, "hard", {"held_out": (xm, 1 - y2)})["held_out"]})
    out = dict(arrays)
    for arm in ("sub", "random_sub", "untrained_sub", "ablated", "random_ablated"):
        for k in br.SETS:
            out[f"{arm}_{k}"] = np.array([r[arm][k] for r in rows], dtype=np.float32)
    out["x2_fit"] = np.array([r["x2_fit"] for r in rows], dtype=np.float32)
    return out


# ---------------------------------------------------------------- chapter 3's CNNs and chapter 2's decoders


def digits_random(arrays: dict) -> dict:
    """``arrays`` (``mnist-a``) with the Y1 subnetwork's scores ``sub_<set> [S]`` replaced by the
    stored random subnetwork's (``random_sub_<set>``, a random mask of the Y1 mask's counts per
    tensor). Its own random control, drawn as the experiment draws it, is that very mask again, so
    ``random_sub_*`` stay."""
    return {**arrays, **{f"sub_{k}": arrays[f"random_sub_{k}"] for k in digits.SETS}}


def surgery_random(arrays: dict) -> dict:
    """``arrays`` (the ``surgery-mnist-seed<k>`` results, stacked) with each removal of the "use X2"
    mask's weights replaced by the stored one of a random mask of its counts per tensor: rule 1's
    scores (``ablated_<set>``) by its random control's (``random_ablated_<set>``), rule 2's
    (``ablated_excl_<set>``) by rule 2 with random masks in the "use X2" mask's place
    (``random_x2_excl_<set>``). Those controls are random already and stay. The "use X2" mask's fit
    and rule 2's kept share stay the real mask's (the random masks' were not scored), so the fit
    gate reads the real mask: the mutation moves the scores, not the gate."""
    out = dict(arrays)
    for k in digits.SETS:
        out[f"ablated_{k}"] = arrays[f"random_ablated_{k}"]
        out[f"ablated_excl_{k}"] = arrays[f"random_x2_excl_{k}"]
    return out


def sprites_random(arrays: dict) -> dict:
    """``arrays`` (a ``sprites-<model>`` result) with each slot mask ``mask [S, 2, W]`` replaced by
    :func:`random_mask` of it (seed ``KEY + 3 * seed + k`` for slot k), the slot subnetworks'
    R² ``slot_in [S, 2]`` by the stored random subnetworks' ``random_in``, and the removals'
    damage ``damage [S, 2, 2]`` by the stored random removals' ``damage_random``. The masks the
    overlap reads are drawn apart per slot, not as the stored random subnetworks were (one seed for
    both slots, the same permutation per tensor: nested masks, which would overlap by construction)."""
    out = {**arrays, "slot_in": arrays["random_in"], "damage": arrays["damage_random"]}
    out["mask"] = np.stack([[random_mask(m, arrays["mask_layers"], KEY + 3 * seed + k) for k, m in enumerate(pair)]
                            for seed, pair in enumerate(arrays["mask"])])
    return out


def sprites_swapped(arrays: dict) -> dict:
    """``arrays`` (a ``sprites-<model>`` result) with the sprite each removal's damage is read on
    exchanged: ``damage[:, j, k]`` and ``damage_random[:, j, k]`` (``[S, 2, 2]``) with their
    ``[:, j, 1 - k]``."""
    return {**arrays, "damage": arrays["damage"][:, :, ::-1], "damage_random": arrays["damage_random"][:, :, ::-1]}


# ---------------------------------------------------------------- deciding


def stored() -> dict[str, dict] | None:
    """The stored full results' arrays by name (``toy-a``, ``toy-b``, ``rule2-random-a``,
    ``rule2-random-b``, the same four ``...-fresh``, ``unseen-<f>``, ``matched-<f>``, ``unseen-controls-<f>``,
    ``unseen-random-<f>``,
    ``mnist-a``, ``sprites-monolithic``,
    ``sprites-compositional``, ``surgery-mnist-seed<k>``, ``surgery-mnist-fresh-seed<k>``, ``cut-mnist``, ``cut-mnist-random``,
    ``surgery-target-mnist-seed<k>``, ``cut-mnist-left``, ``cut-mnist-shifted``, ``surgery-cut-mnist-seed<k>``,
    ``surgery-outside-mnist-seed<k>``, ``surgery-sized-mnist-seed<k>``, ``surgery-ranked-mnist-seed<k>``), or None
    where any is missing."""
    names = [n for b in toy_settings() for n in br.result_names(b)
             + [f"{br.RANDOM_X2}-{f}{br.suffix(b)}" for f in b.formulations]]
    names += [f"{part.RESULT}-{f}" for part in (unseen, matched, unseen_controls, unseen_random)
              for f in br.settings("full").formulations]
    names += [digits.RESULT] + sprites.result_names(sprites.settings("full")) + digit_surgery.names("full")
    names += surgery_fresh.fresh_names("full") + [digit_cut.RESULT, digit_cut.RANDOM] + surgery_target.names("full")
    names += [cut_controls.LEFT, cut_controls.SHIFTED] + cut_controls.combined_names("full") + outside_cut.names("full")
    names += surgery_sized.names("full") + surgery_ranked.names("full")
    if not all((FULL / f"{n}.json").exists() for n in names):
        return None
    return {n: results.read(FULL / f"{n}.json").arrays for n in names}


def toy_settings() -> tuple[br.BridgeSettings, br.BridgeSettings]:
    """The toy's settings at full: the chapter's own networks, and the fresh ones of the claims'
    confirmatory copies (:func:`modlib.bridge.experiment.fresh`)."""
    b = br.settings("full")
    return b, br.fresh(b)


@contextlib.contextmanager
def one_thread():
    """Within it torch computes on one thread (the toy's networks are tiny: a second thread only
    waits on the first, ten times slower where the cores are busy)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


SPRITES = {"random mask as dense": sprites_random, "swap target and other": sprites_swapped}


def decide(mutation: str | None):
    """Chapter 7's claims decided on the stored full results with ``mutation`` applied (None: as
    stored), by the page's own functions, inside :func:`modlib.claims.apart`; the arrays decided
    (by result name), or None where the results are not stored."""
    if mutation is not None and mutation not in MUTATIONS:
        raise ValueError(f"mutation={mutation!r}; chapter 7 runs: {', '.join(MUTATIONS)}")
    arrays = stored()
    if arrays is None:
        return None
    s = br.toy_settings("full", br.settings("full"))
    models = sprites.settings("full").models
    with one_thread():
        if mutation == "random mask as dense":
            arrays[digits.RESULT] = digits_random(arrays[digits.RESULT])
        if mutation in SPRITES:
            for m in models:
                arrays[sprites.PREFIX + m] = SPRITES[mutation](arrays[sprites.PREFIX + m])
        for b in toy_settings():
            for f in b.formulations:
                toy, control = f"toy-{f}{br.suffix(b)}", f"{br.RANDOM_X2}-{f}{br.suffix(b)}"
                if mutation == "random mask as dense":
                    arrays[toy] = toy_rescored(s, b, toy_random(arrays[toy], b.first_seed), f)
                arrays[toy] = br.with_random_exclusive(br.with_exclusive(s, arrays[toy], f, b.first_seed),
                                                       arrays[control])
                findings.claims(arrays[toy], f, bool(b.first_seed))
                findings.structure_claims(arrays[toy], f, bool(b.first_seed))
                if not b.first_seed:  # the masks blind to the held-out cell, on the chapter's own networks
                    blind = arrays[f"{unseen.RESULT}-{f}"]
                    if mutation == "random mask as dense":
                        blind = unseen.rescored(s, b, arrays[toy], toy_random(
                            blind, names=unseen.MASKS, layers=arrays[toy]["mask_layers"], key=UNSEEN_KEY), f)
                    spare = arrays[f"{unseen_random.RESULT}-{f}"]  # rule 2 with random masks in the blind one's place
                    if mutation == "random mask as dense":  # ... drawn again outside the random blind Y1 mask
                        spare = unseen_random.compute(s, b, arrays[toy], blind, f)[1]
                    findings.unseen_claims(br.merged(br.merged(arrays[toy], blind), spare), f)
                    dense = arrays[f"{matched.RESULT}-{f}"]  # "built" at matched density
                    if mutation == "random mask as dense":
                        dense = matched.rescored(s, b, arrays[toy], toy_random(
                            dense, names=(matched.RESULT,), layers=arrays[toy]["mask_layers"], key=MATCHED_KEY), f)
                    findings.matched_claims(br.merged(arrays[toy], dense), f)
                    ctl = arrays[f"{unseen_controls.RESULT}-{f}"]  # the blind Y1 mask's controls
                    if mutation == "random mask as dense":  # its random draws now from the random blind mask
                        ctl = unseen_controls.rescored(s, b, arrays[toy], blind, toy_random(
                            ctl, names=("untrained_unseen",), layers=arrays[toy]["mask_layers"], key=CONTROLS_KEY), f)
                    findings.unseen_controls_claims(br.merged(br.merged(arrays[toy], blind), ctl), f)
    findings.digit_claims(arrays[digits.RESULT])
    for names, fresh in ((digit_surgery.names("full"), False), (surgery_fresh.fresh_names("full"), True)):  # the CNNs' surgery
        surgery = digit_surgery.stacked([arrays[n] for n in names])
        surgery = surgery_random(surgery) if mutation == "random mask as dense" else surgery
        findings.surgery_claims(surgery, fresh)
    cut, control = arrays[digit_cut.RESULT], arrays[digit_cut.RANDOM]  # the cut without a mask and its control
    if mutation == "random mask as dense":  # the right-only cut replaced by its random twin
        cut = {**cut, **{f"cut_dense_{k}": control[f"cut_random_{k}"] for k in digits.SETS}}
    findings.cut_claims(cut, surgery, control)  # beside the fresh CNNs' rule 2
    target = digit_surgery.stacked([arrays[n] for n in surgery_target.names("full")])  # rule 2 with other masks
    if mutation == "random mask as dense":  # rule 2's own "use X2" mask replaced, as in the fresh surgery above
        target = {**target, **{f"ablated_excl_{k}": surgery[f"ablated_excl_{k}"] for k in digits.SETS}}
    findings.target_claims(target, surgery)
    for part, how in ((surgery_sized, "sized"), (surgery_ranked, "ranked")):  # ... that fit, as many weights
        matched_arrays = digit_surgery.stacked([arrays[n] for n in part.names("full")])
        if mutation == "random mask as dense":  # rule 2's "use X2" mask replaced by random masks of its counts
            matched_arrays = {**matched_arrays,
                              **{f"ablated_excl_{k}": matched_arrays[f"random_x2_excl_{k}"] for k in digits.SETS}}
        findings.size_matched_claims(matched_arrays, how)
    findings.left_claims(arrays[cut_controls.LEFT], arrays[digit_cut.RESULT])  # the cut's mirror image
    findings.shifted_claims(arrays[cut_controls.SHIFTED])  # ... and its block moved one column
    combined = digit_surgery.stacked([arrays[n] for n in cut_controls.combined_names("full")])  # rule 2 with the cut
    if mutation == "random mask as dense":  # its "use X2" mask replaced, as in the fresh surgery above
        combined = {**combined, **{f"excl_cut_{k}": combined[f"random_x2_cut_{k}"] for k in digits.SETS},
                    **{f"ablated_excl_{k}": surgery[f"ablated_excl_{k}"] for k in digits.SETS}}
    findings.combined_claims(combined, surgery, arrays[digit_cut.RESULT])
    beyond = digit_surgery.stacked([arrays[n] for n in outside_cut.names("full")])  # rule 2 outside the cut, alone
    if mutation == "random mask as dense":  # its removal replaced by the random removals of its counts
        beyond = {**beyond, **{f"excl_outside_{k}": beyond[f"random_outside_{k}"] for k in digits.SETS}}
    findings.outside_claims(beyond)
    findings.all_sprite_claims({m: arrays[sprites.PREFIX + m] for m in models})
    return arrays
