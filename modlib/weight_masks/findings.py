"""What chapter 4's stored results show (notebooks/weight_masks.ipynb, weight masks): the page's
statements about specialization (:func:`specialization`), reuse (:func:`reuse`) and class removal
(:func:`class_removal`), computed in one place so that the page's prose and the claims tests
(``tests/test_claims.py``) say the same thing at every profile.
"""

from __future__ import annotations

import numpy as np

from modlib.stats import Finding, _ms, _seeds


FAR_ABOVE_CHANCE = 10  # "well above chance": at least this many times the accuracy of guessing


def specialization(tables: np.ndarray, controls: np.ndarray, chance: float) -> list[Finding]:
    """Chapter 4's add/multiply table: ``tables [seeds, 5, 2]`` (rows ``modularity.ROWS``: full model,
    + mask, + mask removed, × mask, × mask removed; columns +, ×) and ``controls [seeds, 4, 2]``
    (``modularity.CONTROL_ROWS``: random masks as dense, alone and removed). Four findings, each
    asked of every seed: each mask alone does its own operation (at least 80% of the full network)
    and not the other (at most half); removing a mask loses its own operation (at most
    :data:`FAR_ABOVE_CHANCE` times chance); the removal is selective (the other operation keeps at
    least twice ``sqrt(chance)``, the accuracy of a network that gets one of the two digits right
    and guesses the other: 0.2 for two-digit answers; the text sets it beside removing random
    weights as many); and the paper's claim proper, that the removal spares the other operation (at
    least 80% of the full network's accuracy)."""
    full = tables[:, 0]  # [seeds, 2]
    ops, out = ("+", "×"), []
    alone = [(tables[:, 1 + 2 * k, k], tables[:, 1 + 2 * k, 1 - k]) for k in range(2)]  # own, other
    removed = [(tables[:, 2 + 2 * k, k], tables[:, 2 + 2 * k, 1 - k]) for k in range(2)]
    random_removed = [controls[:, 1 + 2 * k] for k in range(2)]  # [seeds, 2]: + and × after random removal

    def verdict(each, what="mask"):
        return (f"holds for both {what}s in {_seeds(len(tables))}" if all(each) else
                f"holds for the {ops[each.index(True)]} {what} only" if any(each) else "is not reproduced at this scale")

    each = [bool((own >= 0.8 * full[:, k]).all() and (other <= 0.5 * full[:, 1 - k]).all())
            for k, (own, other) in enumerate(alone)]
    out.append(Finding("each mask alone does its own operation only", all(each), (
        f"**Each mask alone.** The + mask adds at {_ms(alone[0][0])} and multiplies at {_ms(alone[0][1])}; the × "
        f"mask multiplies at {_ms(alone[1][0])} and adds at {_ms(alone[1][1])} (full network: + {_ms(full[:, 0])}, "
        f"× {_ms(full[:, 1])}). Requiring a mask alone to reach at least 80% of the full network on its own "
        f"operation and at most half of it on the other, this half of specialization {verdict(each)}.")))
    each = [bool((own <= FAR_ABOVE_CHANCE * chance).all()) for own, _ in removed]
    out.append(Finding("removing a mask loses its own operation", all(each), (
        f"**Removing a mask, its own operation.** Without the + mask the network adds at {_ms(removed[0][0])}; "
        f"without the × mask it multiplies at {_ms(removed[1][0])} (chance: {chance:g}). Losing the operation "
        f"(at most {FAR_ABOVE_CHANCE}× chance) {verdict(each, 'removed mask')}.")))
    half_answer = float(np.sqrt(chance))  # one digit of two right, the other guessed
    each = [bool((other >= 2 * half_answer).all()) for _, other in removed]
    out.append(Finding("removing a mask is selective", all(each), (
        f"**Removing a mask, the other operation.** Without the + mask the network multiplies at "
        f"{_ms(removed[0][1])}; without the × mask it adds at {_ms(removed[1][1])}. Removing random weights, as "
        f"many in each layer, leaves + {_ms(random_removed[0][:, 0])} / × {_ms(random_removed[0][:, 1])} (the "
        f"+ mask's count) and + {_ms(random_removed[1][:, 0])} / × {_ms(random_removed[1][:, 1])} (the × mask's). "
        f"A network that gets one of the two digits right and guesses the other scores {half_answer:g} (the "
        f"ones digit of a sum or a product depends on the ones digits alone, so it is the easy half); asking "
        f"the other operation to keep at least twice that, a removal is selective: that "
        f"{verdict(each, 'removed mask')}. Where the other operation falls further than under the random "
        f"removal, the removed module's weights also serve it, which the next finding weighs.")))
    each = [bool((other >= 0.8 * full[:, 1 - k]).all()) for k, (_, other) in enumerate(removed)]
    out.append(Finding("removing a mask spares the other operation", all(each), (
        f"**The paper's claim.** Removing the + mask should leave multiplication working, near the full "
        f"network's accuracy (and mirrored for ×). Asking for at least 80% of the full network, it "
        f"{verdict(each, 'removed mask')}" + ("." if all(each) else
        ": here the two operations share more weights than in the paper's 2000×4 network, and removing one "
        "operation's module costs the other part of its accuracy."))))
    return out


def hidden_layers(iou: np.ndarray) -> np.ndarray:
    """Per seed, the mean over the hidden layers (all but the first and the last) of a per-layer
    overlap ``iou [seeds, L]``: in the double addition the first and last layers serve one pair by
    construction, so reuse is read on the others."""
    return iou[:, 1:-1].mean(1)


def others_reference(reference: np.ndarray) -> np.ndarray:
    """For each class ``c``, the mean accuracy of the other nine under the all-classes mask, from the
    per-class ``reference [10]``."""
    return (reference.sum() - reference) / (len(reference) - 1)


def reuse(iou: np.ndarray, iou_same: np.ndarray, iou_random: np.ndarray,
          tables: np.ndarray | None = None) -> list[Finding]:
    """Chapter 4's double addition: per-layer IoU ``[seeds, L]`` of the pair-1 and pair-2 masks
    (``iou``), of two pair-1 masks from different seeds (``iou_same``) and of random masks as dense
    (``iou_random``), read on the hidden layers (all but the first and the last). Reuse would put
    the two pairs' overlap near that of two masks of one pair; the finding asks that it be lower in
    every seed, by more than twice the spread of the difference over seeds. Given the ablation
    ``tables [seeds, 7, 2]`` (rows ``modularity.PAIR_ROWS``), it also asks that each pair's mask
    alone do its pair (at least half the full network's accuracy): the overlap of masks that fail
    their own task says nothing about reuse."""
    pairs, same, rand = (hidden_layers(a) for a in (iou, iou_same, iou_random))  # [seeds]
    gap = same - pairs
    below = bool((gap > 0).all() and gap.mean() > 2 * gap.std())
    text = (f"In the hidden layers the pair-1 and pair-2 masks overlap at IoU {_ms(pairs)}; two masks trained "
            f"for pair 1 from different seeds overlap at {_ms(same)}, and random masks as dense at {_ms(rand)}. ")
    if tables is not None:
        alone = np.stack([tables[:, 3, 0] / tables[:, 0, 0], tables[:, 5, 1] / tables[:, 0, 1]])  # [2, seeds]
        if (alone < 0.5).any():
            return [Finding("two pairs' masks overlap less than two masks of one pair", False, text + (
                f"But the pair masks do not do their own pair: alone they keep {_ms(alone[0])} (pair 1) and "
                f"{_ms(alone[1])} (pair 2) of the full network's accuracy. The overlap of masks that fail "
                f"their own task cannot be read as reuse or its absence at this profile."))]
    return [Finding("two pairs' masks overlap less than two masks of one pair", below, text + (
        "The two pairs' masks overlap clearly less than two masks of one pair: the network does not reuse "
        "one adder for both pairs, as the paper found." if below else
        "The two pairs' masks do not overlap clearly less than two masks of one pair: the paper's finding "
        "of no reuse is not reproduced at this scale."))]


def class_removal(own: np.ndarray, others: np.ndarray, reference: np.ndarray,
                  reference_others: np.ndarray | None = None, random_own: np.ndarray | None = None,
                  random_others: np.ndarray | None = None) -> list[Finding]:
    """Chapter 4's class removal, per removed class ``[10]``: accuracy on it (``own``) and on the
    others (``others``) with its mask applied; the same under the all-classes mask (``reference``:
    per class; ``reference_others``: mean over the other nine, computed from ``reference`` when not
    given). Two findings: the removal is
    selective (the removed class loses more than twice what the others lose, and at least 0.05,
    for every class), and the removed class collapses (falls below half its reference accuracy).
    Given the random control (``random_own``, ``random_others``: the same under random masks as
    dense), the text says whether the learned masks differ from it; selectivity then also asks that
    the random masks spare the other classes, or the removal cannot be told from damage."""
    if reference_others is None:
        reference_others = others_reference(reference)
    drop_own, drop_others = reference - own, reference_others - others
    far = drop_own > 2 * drop_others + 0.05
    collapsed = np.flatnonzero(own < 0.5 * reference)
    control, damaged = "", False
    if random_own is not None and random_others is not None:
        damaged = bool((random_others < 0.5 * reference_others).any())
        control = (f" A random mask as dense as each class mask leaves the other classes at {_ms(random_others)} "
                   f"and the removed class anywhere from {random_own.min():.2f} to {random_own.max():.2f}" + (
                       ": random masks this sparse damage the whole network, and which classes survive is "
                       "chance, so the class masks' selectivity is what sets them apart from damage."
                       if damaged else "."))
    return [
        Finding("removing a class's mask hurts that class more than the others", bool(far.all()), (
            f"Removing class c's weights drops its accuracy by {_ms(drop_own)} (over the ten classes; from "
            f"{drop_own.min():.2f} to {drop_own.max():.2f}) and the other classes' by {_ms(drop_others)}. The "
            f"removed class loses more than twice what the others lose, and at least 0.05, for "
            f"{'all 10' if far.all() else f'{int(far.sum())} of the 10'} classes" + ("." if far.all() else f"; not for {np.flatnonzero(~far).tolist()}.") + control)),
        Finding("the removed class collapses", len(collapsed) == 10, (
            f"The paper reports that a class's accuracy drops significantly when its weights are removed. Here "
            f"{len(collapsed)} of the 10 classes "
            + ("falls" if len(collapsed) == 1 else "fall")
            + " below half their accuracy under the all-classes mask"
            + (f" (class{'es' if len(collapsed) > 1 else ''} {', '.join(map(str, collapsed.tolist()))})"
               if len(collapsed) else "")
            + ("." if len(collapsed) == 10 else
               ": the removal is selective but mostly partial, a weaker effect than the paper's, not reproduced "
               "in full at this scale."))),
    ]
