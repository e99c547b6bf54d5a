"""What chapter 4's stored results show (notebooks/weight_masks.ipynb, weight masks): the page's
statements about specialization (:func:`specialization`), reuse (:func:`reuse`) and class removal
(:func:`class_removal`), computed in one place so that the page's prose and the claims tests
(``tests/test_claims.py``) say the same thing at every profile.
"""

from __future__ import annotations

import numpy as np

from modlib import stats
from modlib.stats import CLEAR, _ms


FAR_ABOVE_CHANCE = 10  # "well above chance": at least this many times the accuracy of guessing


TRAINED = 0.95  # a base network compared has trained: at least this on each of its tasks
SPARES = 0.2  # "spares the other operation": it loses at most this share more than under random removal
# class removal (the paper: a class's accuracy "drops significantly"; it gives no size, so these stand in)
CNN_TRAINED = 0.5  # the CNN trained: its mean per-class accuracy under the all-classes mask reaches this
HURTS_MORE = 0.5  # the stated margin: the removed class loses this much more accuracy than the others
COLLAPSE = 0.3  # the stated margin: a removed class loses this much more than half of its accuracy


def kept_share(kept: np.ndarray) -> np.ndarray:
    """Per seed and mask, the mean over layers of the share of weights kept: ``kept [seeds, masks,
    layers]`` gives ``[seeds, masks]``."""
    return np.asarray(kept, dtype=float).mean(-1)


def degenerate(kept: np.ndarray | None) -> bool:
    """Whether a mask keeps nothing in some layer (the network it leaves is cut) or keeps every
    weight in every layer: ``kept [..., layers]``; ``None`` (not stored) counts as not degenerate."""
    if kept is None:
        return False
    kept = np.asarray(kept, dtype=float)
    return bool((kept.min(-1) <= 0).any() or (kept.min(-1) >= 0.999).any())


def _density(kept, labels) -> str:
    if kept is None:
        return ""
    share = kept_share(kept)
    return " Kept share (mean over layers): " + ", ".join(
        f"{label} mask {_ms(share[:, k])}" for k, label in enumerate(labels)) + "."


def specialization(tables: np.ndarray, controls: np.ndarray, chance: float,
                   kept: np.ndarray | None = None) -> list[stats.Claim]:
    """Chapter 4's add/multiply table: ``tables [seeds, 5, 2]`` (rows ``modularity.ROWS``: full model,
    + mask, + mask removed, × mask, × mask removed; columns +, ×), ``controls [seeds, 4, 2]``
    (``modularity.CONTROL_ROWS``: random masks as dense, alone and removed) and the masks' kept
    shares ``kept [seeds, 3, layers]`` (+, ×, both). Four claims, each decided by the book's rule
    (:func:`modlib.stats.verdict`) over seeds (independent base networks), on the worse of the two
    masks per seed (accuracies as shares of the full network's): each mask alone does its own
    operation and not the other; removing a mask loses its own operation more than removing as many
    random weights; the removal is selective (the other operation keeps more than the own); and the
    paper's claim proper, that the removal spares the other operation (it loses at most
    :data:`SPARES` more than under the random removal, which must itself spare it). Every claim
    needs both base operations trained (:data:`TRAINED`) and masks that are not degenerate."""
    full = tables[:, 0]  # [seeds, 2]
    ops, out = ("+", "×"), []
    rel = tables / np.maximum(full[:, None, :], 1e-9)  # [seeds, 5, 2]: shares of the full network
    crel = controls / np.maximum(full[:, None, :], 1e-9)
    alone = [(tables[:, 1 + 2 * k, k], tables[:, 1 + 2 * k, 1 - k]) for k in range(2)]  # own, other
    removed = [(tables[:, 2 + 2 * k, k], tables[:, 2 + 2 * k, 1 - k]) for k in range(2)]
    random_removed = [controls[:, 1 + 2 * k] for k in range(2)]  # [seeds, 2]: + and × after random removal
    trained = bool((full >= TRAINED).all())
    masks_ok = not degenerate(None if kept is None else np.asarray(kept)[:, :2])
    density = _density(None if kept is None else np.asarray(kept)[:, :2], ops)
    base = "" if trained else f" (a base network is below {TRAINED} on an operation: it did not train)"
    zero = np.zeros(len(tables))

    def per_mask(values):
        return np.min(np.stack(values), axis=0)  # [seeds]: the worse of the two masks

    # 1. alone: own minus other, as shares of the full network
    d = per_mask([rel[:, 1 + 2 * k, k] - rel[:, 1 + 2 * k, 1 - k] for k in range(2)])
    random_alone_fails = bool(all((crel[:, 2 * k, k] < 0.5).all() for k in range(2)))
    v = stats.paired(d, zero).verdict(paper=1.0, trained=trained, controls=masks_ok and random_alone_fails)
    out.append(stats.claim("each mask alone does its own operation only", v, (
        f"**Each mask alone.** The + mask adds at {_ms(alone[0][0])} and multiplies at {_ms(alone[0][1])}; the × "
        f"mask multiplies at {_ms(alone[1][0])} and adds at {_ms(alone[1][1])} (full network: + {_ms(full[:, 0])}, "
        f"× {_ms(full[:, 1])}){base}; random masks as dense, alone, get + {_ms(controls[:, 0, 0])} and "
        f"× {_ms(controls[:, 2, 1])}.{density} Measured per seed on the worse mask: its own operation minus the "
        f"other, as shares of the full network (the paper: about 1).")))
    # 2. removal loses its own operation, against removing as many random weights
    d = per_mask([crel[:, 1 + 2 * k, k] - rel[:, 2 + 2 * k, k] for k in range(2)])
    v = stats.paired(d, zero).verdict(paper=1.0, trained=trained, controls=masks_ok)
    out.append(stats.claim("removing a mask loses its own operation", v, (
        f"**Removing a mask, its own operation.** Without the + mask the network adds at {_ms(removed[0][0])}; "
        f"without the × mask it multiplies at {_ms(removed[1][0])} (chance: {chance:g}; removing as many random "
        f"weights: + {_ms(random_removed[0][:, 0])}, × {_ms(random_removed[1][:, 1])}). Measured per seed on the "
        f"worse mask: what the random removal keeps of the own operation minus what the mask's removal keeps.")))
    # 3. selective: the other operation keeps more than the own
    each = [stats.paired(rel[:, 2 + 2 * k, 1 - k], rel[:, 2 + 2 * k, k]).verdict(paper=1.0, trained=trained,
                                 controls=masks_ok) for k in range(2)]
    d = per_mask([rel[:, 2 + 2 * k, 1 - k] - rel[:, 2 + 2 * k, k] for k in range(2)])
    v = stats.paired(d, zero).verdict(paper=1.0, trained=trained, controls=masks_ok)
    half_answer = float(np.sqrt(chance))  # one digit of two right, the other guessed
    out.append(stats.claim("removing a mask is selective", v, (
        f"**Removing a mask, the other operation.** Without the + mask the network multiplies at "
        f"{_ms(removed[0][1])}; without the × mask it adds at {_ms(removed[1][1])}. Removing random weights, as "
        f"many in each layer, leaves + {_ms(random_removed[0][:, 0])} / × {_ms(random_removed[0][:, 1])} (the "
        f"+ mask's count) and + {_ms(random_removed[1][:, 0])} / × {_ms(random_removed[1][:, 1])} (the × mask's). "
        f"A network that gets one of the two digits right and guesses the other scores {half_answer:g} (the "
        f"ones digit of a sum or a product depends on the ones digits alone, so it is the easy half). Other "
        f"operation minus own, as shares of the full network: + mask removed, {each[0].outcome} ({each[0].why}); "
        f"× mask removed, {each[1].outcome} ({each[1].why}). Both masks together (the worse per seed):")))
    # 4. the paper's claim: the other operation is spared about as well as by a random removal
    d = per_mask([rel[:, 2 + 2 * k, 1 - k] - crel[:, 1 + 2 * k, 1 - k] for k in range(2)]) + SPARES
    random_spares = bool(all((crel[:, 1 + 2 * k, 1 - k] >= 0.5).all() for k in range(2)))
    v = stats.paired(d, zero).verdict(paper=SPARES, source="the stated margin of", trained=trained, controls=masks_ok and random_spares)
    out.append(stats.claim("removing a mask spares the other operation", v, (
        f"**The paper's claim.** Removing the + mask should leave multiplication working, near the full "
        f"network's accuracy (and mirrored for ×). Measured per seed on the worse mask: what the other "
        f"operation keeps after the mask's removal minus what it keeps after removing as many random weights "
        f"(which {'spares' if random_spares else 'does not spare'} it), plus the allowance of {SPARES:g}: "
        f"above 0 the removal spares the other operation as the paper found."
        + ("" if v.outcome != stats.NOT_REPRODUCED else
           " Here the two operations share more weights than in the paper's 2000×4 network, and removing one "
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
          tables: np.ndarray | None = None, kept: np.ndarray | None = None) -> list[stats.Claim]:
    """Chapter 4's double addition: per-layer IoU ``[seeds, L]`` of the pair-1 and pair-2 masks
    (``iou``), of two pair-1 masks from different seeds (``iou_same``) and of random masks as dense
    (``iou_random``), read on the hidden layers (all but the first and the last: there the two
    pairs' inputs and outputs are disjoint by construction). No reuse, as the paper found: the two
    pairs' overlap is below that of two masks of one pair, decided by the rule over seeds (paired t
    interval of the difference). Given the ablation ``tables [seeds, 7, 2]`` (rows
    ``modularity.PAIR_ROWS``), it needs the base network trained (:data:`TRAINED` on both pairs)
    and each pair's mask alone doing its pair (at least half the full network's accuracy): the
    overlap of masks that fail their own task says nothing about reuse. Given ``kept [seeds, 4,
    layers]`` (both pairs, pair 1, pair 2, pair 1 again), masks that keep nothing or everything, and
    a same-pair reference at IoU 1 (two "different" masks that are one), leave it undecided."""
    pairs, same, rand = (hidden_layers(a) for a in (iou, iou_same, iou_random))  # [seeds]
    trained, alone_ok = True, True
    text = (f"In the hidden layers the pair-1 and pair-2 masks overlap at IoU {_ms(pairs)}; two masks trained "
            f"for pair 1 from different seeds overlap at {_ms(same)}, and random masks as dense at {_ms(rand)}. ")
    if tables is not None:
        trained = bool((tables[:, 0] >= TRAINED).all())
        alone = np.stack([tables[:, 3, 0] / tables[:, 0, 0], tables[:, 5, 1] / tables[:, 0, 1]])  # [2, seeds]
        alone_ok = bool((alone >= 0.5).all())
        text += (f"Alone, the pair masks keep {_ms(alone[0])} (pair 1) and {_ms(alone[1])} (pair 2) of the full "
                 f"network's accuracy" + ("." if alone_ok else ": masks that fail their own task cannot show "
                                          "reuse or its absence.") + ("" if trained else " A base network did not "
                                                                      "learn both additions."))
    if kept is not None:
        text += _density(np.asarray(kept)[:, 1:3], ("pair-1", "pair-2"))
    reference_ok = bool((same < 0.99).all())
    if not reference_ok:
        text += " The same-pair reference is at IoU 1: the two pair-1 masks are one mask, not a reference."
    v = stats.paired(same, pairs).verdict(paper=CLEAR, source="the stated margin of", trained=trained and alone_ok,
                             controls=reference_ok and not degenerate(kept))
    return [stats.claim("two pairs' masks overlap less than two masks of one pair", v, text + (
        " Same-pair minus two-pair IoU per seed (the paper: the two pairs' masks share little):"))]


def class_removal(own: np.ndarray, others: np.ndarray, reference: np.ndarray,
                  reference_others: np.ndarray | None = None, random_own: np.ndarray | None = None,
                  random_others: np.ndarray | None = None, networks: int = 1) -> list[stats.Claim]:
    """Chapter 4's class removal, per removed class ``[10]``: accuracy on it (``own``) and on the
    others (``others``) with its mask applied; the same under the all-classes mask (``reference``:
    per class; ``reference_others``: mean over the other nine, computed from ``reference`` when not
    given). Two claims: the removal is selective (the removed class loses more than the others), and
    the removed class collapses (its accuracy falls by more than half). The ten classes are
    measurements within one network (``networks``): the rule counts independent networks, so with
    one the verdict is "cannot be decided here" and the interval over classes (paired t; the exact
    sign test beside it) describes this network only. Given the random control (``random_own``,
    ``random_others``: the same under random masks as dense), the text says whether the learned masks
    differ from it; a random control that spares the other classes as well as the learned removal
    (a control equal to its treatment) leaves the claim undecided too."""
    if reference_others is None:
        reference_others = others_reference(reference)
    drop_own, drop_others = reference - own, reference_others - others
    far = drop_own > 2 * drop_others + 0.05
    collapsed = np.flatnonzero(own < 0.5 * reference)
    control, damaged, control_ok = "", False, True
    trained = bool(np.mean(reference) >= CNN_TRAINED)
    if random_own is not None and random_others is not None:
        damaged = bool((random_others < 0.5 * reference_others).any())
        control_ok = bool(np.mean(others - random_others) > 0)  # the learned removal spares the others better than random
        control = (f" A random mask as dense as each class mask leaves the other classes at {_ms(random_others)} "
                   f"and the removed class anywhere from {random_own.min():.2f} to {random_own.max():.2f}" + (
                       ": random masks this sparse damage the whole network, and which classes survive is "
                       "chance, so the class masks' selectivity is what sets them apart from damage."
                       if damaged else "."))
    def within(d):
        return f" Over the 10 classes of this network (exact sign test p = {stats.sign_test(d):.3f}):"

    def decide(a, b, paper):
        # the ten classes are measurements of one network: the rule counts ``networks``
        effect = stats.paired(a, b, unit="class")
        v = stats.verdict(effect.low, effect.high, units=networks, paper=paper, trained=trained,
                          controls=control_ok, measurable=effect.measurable, source="the stated margin of",
                          what=effect.interval,
                          over=f"the 10 classes of {networks} network{'s' if networks > 1 else ''}")
        if not trained:
            return stats.Verdict(v.outcome, v.why.replace("an arm did not train", (
                f"the CNN did not train: mean accuracy under the all-classes mask below {CNN_TRAINED}"), 1))
        return v

    return [
        stats.claim("removing a class's mask hurts that class more than the others", decide(drop_own, drop_others, HURTS_MORE), (
            f"Removing class c's weights drops its accuracy by {_ms(drop_own)} (over the ten classes; from "
            f"{drop_own.min():.2f} to {drop_own.max():.2f}) and the other classes' by {_ms(drop_others)}. The "
            f"removed class loses more than twice what the others lose, and at least 0.05, for "
            f"{'all 10' if far.all() else f'{int(far.sum())} of the 10'} classes" + ("." if far.all() else f"; not for {np.flatnonzero(~far).tolist()}.") + control + f" The stated margin (the paper gives no size): the removed class loses {HURTS_MORE} more "
            f"than the others; the CNN counts as trained at {CNN_TRAINED} mean accuracy under the all-classes mask."
            + within(drop_own - drop_others))),
        stats.claim("the removed class collapses", decide(drop_own / np.maximum(reference, 1e-9), 0.5 + 0 * own, COLLAPSE), (
            f"The paper reports that a class's accuracy drops significantly when its weights are removed. Here "
            f"{len(collapsed)} of the 10 classes "
            + ("falls" if len(collapsed) == 1 else "fall")
            + " below half their accuracy under the all-classes mask"
            + (f" (class{'es' if len(collapsed) > 1 else ''} {', '.join(map(str, collapsed.tolist()))})"
               if len(collapsed) else "")
            + (". " if len(collapsed) == 10 else ": the removal is selective but mostly partial. ")
            + f"Share of its accuracy a class loses, minus one half (the stated margin, {COLLAPSE}: a class "
            f"losing about {0.5 + COLLAPSE:.0%} of its accuracy)." + within(drop_own / np.maximum(reference, 1e-9) - 0.5))),
    ]

