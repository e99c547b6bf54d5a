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


def span(values, same: str, apart: str) -> str:
    """The range of ``values`` in words for a sentence, to two decimals: ``"1.00 <same>"`` when
    they all agree (e.g. ``same="at every α"``), else ``"0.95 to 1.00 <apart>"`` (e.g.
    ``apart="across the α values"``), never "1.00 to 1.00"."""
    values = np.asarray(values, dtype=float)
    low, high = f"{values.min():.2f}", f"{values.max():.2f}"
    return f"{low} {same}" if low == high else f"{low} to {high} {apart}"


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



# --- what the verdicts depend on (issue 32: the added experiments of modlib.weight_masks.causes) ------


def stack(points: list[dict]) -> dict[str, np.ndarray]:
    """Points of one curve (one per seed, :func:`modlib.weight_masks.causes.point`) stacked over
    seeds: each array gains a leading ``[seeds]`` axis."""
    return {k: np.stack([np.asarray(p[k], dtype=float) for p in points]) for k in points[0]}


def _rel(tables: np.ndarray, controls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    full = np.maximum(tables[:, 0][:, None, :], 1e-9)
    return tables / full, controls / full


def sparing(tables: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """Per seed ``[seeds]``, on the worse of the + and × masks: what the other operation keeps once
    the mask is removed minus what it keeps once as many random weights are removed, as shares of
    the full network's accuracy (the measure of the "spares the other operation" claim of
    :func:`specialization`, without its allowance): about 0 where the removal spares the other
    operation as a random one does, below 0 where it costs it more."""
    rel, crel = _rel(tables, controls)
    return np.min([rel[:, 2 + 2 * k, 1 - k] - crel[:, 1 + 2 * k, 1 - k] for k in range(2)], axis=0)


def own_loss(tables: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """Per seed, on the worse mask: what the random removal keeps of the own operation minus what
    the mask's removal keeps (the measure of "removing a mask loses its own operation")."""
    rel, crel = _rel(tables, controls)
    return np.min([crel[:, 1 + 2 * k, k] - rel[:, 2 + 2 * k, k] for k in range(2)], axis=0)


def _alone(tables: np.ndarray) -> np.ndarray:
    """Per seed, the worse mask alone on its own operation, as a share of the full network."""
    rel = tables / np.maximum(tables[:, 0][:, None, :], 1e-9)
    return np.min([rel[:, 1 + 2 * k, k] for k in range(2)], axis=0)


def _usable(p: dict) -> bool:
    """A point's masks can be read: every network trained (:data:`TRAINED` on both operations), no
    mask keeps nothing or everything, each mask alone keeps at least half of its own operation and
    its removal loses its own operation more than a random removal does."""
    return bool((p["table"][:, 0] >= TRAINED).all() and not degenerate(p["kept"]) and (_alone(p["table"]) >= 0.5).all()
                and (own_loss(p["table"], p["control"]) > 0).all())


def _shape(h) -> str:
    h = tuple(int(v) for v in h)
    return f"{h[0]}×{len(h)}" if len(set(h)) == 1 else "-".join(map(str, h))


def _point_line(label: str, p: dict) -> str:
    t, c = p["table"], p["control"]
    return (f"{label}: without the + mask × keeps {_ms(t[:, 2, 1])} (random removal {_ms(c[:, 1, 1])}), without the "
            f"× mask + keeps {_ms(t[:, 4, 0])} (random {_ms(c[:, 3, 0])}); sparing {_ms(sparing(t, c))}; "
            f"kept share + {_ms(kept_share(p['kept'])[:, 0])}, × {_ms(kept_share(p['kept'])[:, 1])}; "
            f"shared weights {_ms(p['shared'].mean(1))}")


def width_curve(points: dict, depth: int = 2) -> list[stats.Claim]:
    """The width curve at one mask schedule: ``points`` shape -> :func:`stack`'d arrays over seeds
    (each seed an independent network). Three claims, each by the rule over networks (Welch's t
    interval: the two arms are different networks): the paper's (Csordás et al. 2021, appendix:
    the share of weights the + and × masks share falls as the network grows), from the narrowest
    network of ``depth`` hidden layers that trained (:data:`TRAINED` on both operations, every seed;
    the text names those that did not) to the widest; the page's hypothesis that the wider network's
    removal spares the other operation more (:func:`sparing`); and the same for the other depth
    against ``depth`` layers at its width. Each needs every network trained and masks that can be
    read (:func:`_usable`); the paper gives no sizes, so :data:`~modlib.stats.CLEAR` stands in."""
    main = {h: p for h, p in points.items() if len(h) == depth}
    other = {h: p for h, p in points.items() if len(h) != depth}
    lines = [_point_line(f"{_shape(h)}", p) for h, p in points.items()]
    text = ("**The width curve** (one mask schedule; per network the worse of the two masks; mean ± sd over "
            "networks). " + "; ".join(lines) + ". ")
    out = []
    untrained = {h: p for h, p in points.items() if not (p["table"][:, 0] >= TRAINED).all()}
    if untrained:
        text += (f"Networks below {TRAINED} on an operation, left out of the comparisons: " + ", ".join(
            f"{_shape(h)} (+ {_ms(p['table'][:, 0, 0])}, × {_ms(p['table'][:, 0, 1])})" for h, p in untrained.items())
            + ". ")
    if len(main) >= 2:
        # the narrowest network that trained against the widest (which must have trained too)
        low = min([h for h in main if h not in untrained] or main)
        high = max(main)
        narrow, wide = main[low], main[high]
        ok = _usable(narrow) and _usable(wide)
        trained = low != high and high not in untrained and low not in untrained
        e = stats.unpaired(narrow["shared"].mean(1), wide["shared"].mean(1), unit="network")
        v = e.verdict(paper=CLEAR, source="the stated margin of", trained=trained, controls=ok)
        out.append(stats.claim("a wider network shares fewer weights between + and ×", v, text + (
            f"Shared weights (the share of each mask's weights the other keeps too, over all layers), "
            f"{_shape(low)} minus {_shape(high)}: {e.text()} (the paper: sharing falls with size; "
            f"its 2000×4 network is the closest to {_shape(high)}).")))
        e = stats.unpaired(sparing(wide["table"], wide["control"]), sparing(narrow["table"], narrow["control"]),
                           unit="network")
        v = e.verdict(paper=CLEAR, source="the stated margin of", trained=trained, controls=ok)
        out.append(stats.claim("a wider network's removal spares the other operation more", v, (
            f"Sparing (:func:`sparing`: the other operation after the mask's removal minus after a random removal "
            f"as dense), {_shape(high)} minus {_shape(low)}: {e.text()}.")))
    for h, deep in other.items():
        shallow = main.get((h[0],) * depth)
        if shallow is None:
            continue
        trained = bool((deep["table"][:, 0] >= TRAINED).all() and (shallow["table"][:, 0] >= TRAINED).all())
        e = stats.unpaired(sparing(deep["table"], deep["control"]), sparing(shallow["table"], shallow["control"]),
                           unit="network")
        v = e.verdict(paper=CLEAR, source="the stated margin of", trained=trained,
                      controls=_usable(deep) and _usable(shallow))
        out.append(stats.claim(f"{len(h)} hidden layers spare the other operation more than {depth}", v, (
            f"At width {h[0]}, sparing with {len(h)} hidden layers minus with {depth}: {e.text()}.")))
    return out


def alpha_curve(points: dict) -> list[stats.Claim]:
    """The α curve on one network per seed: ``points`` α -> :func:`stack`'d arrays over seeds (the
    same networks at every α). The page's explanation that the mask schedule moves the verdict:
    the strongest α's removal spares the other operation more than the weakest's (:func:`sparing`),
    paired over networks (t interval), needing every network trained and both ends' masks
    readable (:func:`_usable`: a mask too sparse to do its own operation spares everything by
    keeping nothing); the text lists each α's numbers and kept shares."""
    alphas = sorted(points)
    usable = [a for a in alphas if _usable(points[a])]
    low, high = (usable[0], usable[-1]) if len(usable) >= 2 else (alphas[0], alphas[-1])
    lo, hi = points[low], points[high]
    lines = [_point_line(f"α = {a:g}", points[a]) + f"; alone, the worse mask keeps {_ms(_alone(points[a]['table']))} "
             f"of its own operation" for a in alphas]
    e = stats.paired(sparing(hi["table"], hi["control"]), sparing(lo["table"], lo["control"]), unit="network")
    trained = bool((lo["table"][:, 0] >= TRAINED).all())
    v = e.verdict(paper=CLEAR, source="the stated margin of", trained=trained, controls=_usable(lo) and _usable(hi))
    return [stats.claim("a stronger regulariser spares the other operation more", v, (
        "**The α curve** (the same networks at every α; the worse mask per network; mean ± sd over networks). "
        + "; ".join(lines) + f". Masks that can be read (trained, neither empty nor full, doing their own "
        f"operation alone and losing it when removed) at α = {', '.join(f'{a:g}' for a in usable) or 'none'}. "
        f"Sparing at α = {high:g} minus at α = {low:g} (the strongest and the weakest α whose masks can be "
        f"read): {e.text()}."))]


def authors_schedule(authors: dict, book: dict, chance: float) -> list[stats.Claim]:
    """The network(s) at the authors' mask schedule (α 1e-4, mask lr 1e-2, 20,000 steps) beside the
    same networks at the page's schedule: :func:`stack`'d ``authors`` and ``book``. The paper's
    claim that removing a mask spares the other operation (:func:`specialization`'s), at the
    authors' schedule; with one network the rule cannot decide it."""
    found = {f.name: f for f in specialization(authors["table"], authors["control"], chance, authors["kept"])}
    f = found["removing a mask spares the other operation"]
    t, b = authors["table"], book["table"]
    text = (f"**At the authors' mask schedule** ({len(t)} network{'s' if len(t) > 1 else ''}): without the + mask × "
            f"keeps {_ms(t[:, 2, 1])} and + {_ms(t[:, 2, 0])}; without the × mask + keeps {_ms(t[:, 4, 0])} and "
            f"× {_ms(t[:, 4, 1])}; alone, the + mask adds at {_ms(t[:, 1, 0])} and the × mask multiplies at "
            f"{_ms(t[:, 3, 1])}; kept share + {_ms(kept_share(authors['kept'])[:, 0])}, × "
            f"{_ms(kept_share(authors['kept'])[:, 1])}. The same network at the page's schedule: without + × keeps "
            f"{_ms(b[:, 2, 1])}, without × + keeps {_ms(b[:, 4, 0])} (kept share + "
            f"{_ms(kept_share(book['kept'])[:, 0])}, × {_ms(kept_share(book['kept'])[:, 1])}). Sparing "
            f"{_ms(sparing(t, authors['control']))} at the authors' schedule, {_ms(sparing(b, book['control']))} at "
            "the page's. ")
    return [stats.claim("at the authors' schedule, removing a mask spares the other operation", f.verdict, text + (
        f"Measured per network on the worse mask: the other operation after the mask's removal minus after a "
        f"random removal as dense, plus the allowance of {SPARES:g} (as in the page's claim)."))]


def heldout(tables: np.ndarray, controls: np.ndarray, held_tables: np.ndarray, held_controls: np.ndarray,
            kept: np.ndarray, chance: float) -> list[stats.Claim]:
    """The networks trained without a held-out share of the problems: a check that they answer the
    held-out problems (:data:`TRAINED` on both operations), then :func:`specialization`'s claims
    decided on the held-out problems (``held_tables [seeds, 5, 2]``, ``held_controls [seeds, 4,
    2]``), each named "... (held-out problems)"; beside them the same network's numbers on the
    problems it trained on (``tables``, ``controls``)."""
    full, held = tables[:, 0], held_tables[:, 0]
    answers = bool((held >= TRAINED).all())
    text = (f"**Held-out problems.** Trained on all but a held-out share of the problems, the networks answer the "
            f"problems they trained on at + {_ms(full[:, 0])}, × {_ms(full[:, 1])}, and the held-out ones at + "
            f"{_ms(held[:, 0])}, × {_ms(held[:, 1])} (chance {chance:g}). On the problems trained on, without the + "
            f"mask × keeps {_ms(tables[:, 2, 1])} and without the × mask + keeps {_ms(tables[:, 4, 0])}; on the "
            f"held-out ones {_ms(held_tables[:, 2, 1])} and {_ms(held_tables[:, 4, 0])}."
            + ("" if answers else " A network that does not answer the held-out problems has memorised the table "
               "of those it saw: its masks' numbers on held-out problems say nothing about modules."))
    out = [stats.Claim("the networks answer held-out problems", answers, text)]
    for f in specialization(held_tables, held_controls, chance, kept):
        out.append(stats.claim(f"{f.name} (held-out problems)", f.verdict, f.text.rsplit(" **", 1)[0]))
    return out


def reuse_control(copy_iou: np.ndarray, iou: np.ndarray, iou_same: np.ndarray, copy_iou_random: np.ndarray,
                  copy_tables: np.ndarray, whole: np.ndarray, label: str = "") -> list[stats.Claim]:
    """The positive control for reuse, per network (seed): ``copy_iou [seeds, L]``, the IoU of the
    pair-1 and pair-2 masks of the network whose pair 1 was made to run on pair 2's weights
    (:func:`modlib.weight_masks.causes.copy_pairs`: reuse forced), beside ``iou`` (the network
    itself), ``iou_same`` (two pair-1 masks of it) and ``copy_iou_random`` (random masks as dense),
    all read on the hidden layers (:func:`hidden_layers`). The overlap measure finds reuse where it
    is forced: the forced network's pair masks overlap more than the network's own, paired over
    networks, needing the copied network trained (``copy_tables [seeds, 5, 2]``: the network, then
    the pair-1 and pair-2 masks alone and removed) and its pair masks doing their pair alone. And a
    check on ``whole [seeds, 3, 2]`` (the network, the whole-task mask at the authors' α alone and
    removed): the whole-task mask does both pairs."""
    forced, own, same, rand = (hidden_layers(a) for a in (copy_iou, iou, iou_same, copy_iou_random))
    trained = bool((copy_tables[:, 0] >= TRAINED).all())
    alone = np.stack([copy_tables[:, 1, 0], copy_tables[:, 3, 1]]) / np.maximum(copy_tables[:, 0].T, 1e-9)
    e = stats.paired(forced, own, unit="network")
    v = e.verdict(paper=CLEAR, source="the stated margin of", trained=trained, controls=bool((alone >= 0.5).all()))
    at = f" ({label})" if label else ""
    text = (f"**A positive control for reuse{at}.** Pair 1 made to run on pair 2's weights (the authors' "
            f"copied-weights network: one set of hidden weights computes both sums) gives pair masks that overlap at "
            f"IoU {_ms(forced)} in the hidden layers; the network's own pair masks at {_ms(own)}, two masks of pair 1 "
            f"at {_ms(same)}, random masks as dense at {_ms(rand)}. The copied network adds at {_ms(copy_tables[:, 0, 0])} "
            f"/ {_ms(copy_tables[:, 0, 1])} (pair 1 / pair 2); alone its pair masks keep {_ms(alone[0])} and "
            f"{_ms(alone[1])} of their pair. Forced minus own IoU: {e.text(percent=False)}.")
    rel = whole / np.maximum(whole[:, :1], 1e-9)
    does = bool((rel[:, 1] >= 0.5).all() and (whole[:, 0] >= TRAINED).all())
    check = (f"**The whole-task mask at the authors' α{at}** adds at {_ms(whole[:, 1, 0])} / {_ms(whole[:, 1, 1])} "
             f"(pair 1 / pair 2; the network {_ms(whole[:, 0, 0])} / {_ms(whole[:, 0, 1])}); removed, it leaves "
             f"{_ms(whole[:, 2, 0])} / {_ms(whole[:, 2, 1])}.")
    return [stats.claim(f"the overlap finds reuse where it is forced{at}", v, text),
            stats.Claim(f"the whole-task mask at the authors' α does both pairs{at}", does, check)]


PLACE = 0.5  # a class's removal is placed in a layer when that layer's swap alone makes this share of its drop


def removal_places(reference: np.ndarray, own: np.ndarray, swap_in: np.ndarray) -> np.ndarray:
    """Per network and class ``[nets, 10]``, the layer (index) whose class mask alone, the
    all-classes mask elsewhere, makes at least :data:`PLACE` of the class's drop under its whole
    mask and the largest such drop; -1 where no layer does (or the class did not drop). From the
    per-class accuracy under the all-classes mask ``reference [nets, 10]``, under the class's
    mask ``own [nets, 10]`` and ``swap_in [nets, 10, L, 2]`` (:func:`~modlib.weight_masks.causes.class_layers`)."""
    drop = reference - own  # [nets, 10]
    layer_drop = reference[..., None] - swap_in[..., 0]  # [nets, 10, L]
    best = layer_drop.argmax(-1)
    placed = (np.take_along_axis(layer_drop, best[..., None], -1)[..., 0] >= PLACE * drop) & (drop > 0.05)
    return np.where(placed, best, -1)


def class_layers(accs: list[dict], swap_in: np.ndarray, dropped: np.ndarray, layers: list[str]) -> list[stats.Claim]:
    """Class removal over several CNNs (one per seed): ``accs`` per network
    (:func:`~modlib.weight_masks.removal_accuracy` with the random control), ``swap_in [nets, 10, L,
    2]`` and ``dropped [nets, 10, L]`` (:func:`~modlib.weight_masks.causes.class_layers`). The two
    class-removal claims of :func:`class_removal`, now over networks (per network the mean over its
    ten classes; paired t interval over networks), and a check of where the removal happens: the
    layer whose class mask alone makes most of a class's drop (:func:`removal_places`), which the
    page asks of the 64-unit dense layer just before the kept output layer."""
    get = lambda k: np.stack([a[k] for a in accs])  # noqa: E731
    own, others, reference = get("own"), get("others"), get("reference")  # [nets, 10]
    ref_others = np.stack([others_reference(r) for r in reference])
    drop_own, drop_others = (reference - own).mean(1), (ref_others - others).mean(1)
    trained = bool((reference.mean(1) >= CNN_TRAINED).all())
    control_ok = bool((others - get("random_others")).mean() > 0)
    n = len(accs)
    e = stats.paired(drop_own, drop_others, unit="network")
    v1 = e.verdict(paper=HURTS_MORE, source="the stated margin of", trained=trained, controls=control_ok)
    lost = ((reference - own) / np.maximum(reference, 1e-9)).mean(1)
    e2 = stats.paired(lost, 0.5 + 0 * lost, unit="network")
    v2 = e2.verdict(paper=COLLAPSE, source="the stated margin of", trained=trained, controls=control_ok)
    places = removal_places(reference, own, swap_in)
    names = [f"layer {i + 1}" for i in range(len(layers))]
    share = [(places == i).mean() for i in range(len(layers))]
    dense = len(layers) - 2  # the 64-unit layer before the output layer
    holds = bool(share[dense] > 0.5)
    where = ", ".join(f"{names[i]} {share[i]:.0%}" for i in range(len(layers)) if share[i] > 0)
    text = (f"Over {n} CNN{'s' if n > 1 else ''} (mean over each network's ten classes): removing a class's mask drops "
            f"it by {_ms(drop_own)} and the other classes by {_ms(drop_others)}; a class loses {_ms(lost)} of its "
            f"accuracy. ")
    place = (f"**Where a class is removed.** Putting a class's mask in one layer alone (the all-classes mask "
             f"elsewhere) makes at least {PLACE:.0%} of the class's drop in: {where or 'no layer'} of the "
             f"{places.size} removals ({(places < 0).mean():.0%} in no single layer). Share of the all-classes "
             f"mask's weights a class mask drops, per layer: "
             + ", ".join(f"{names[i]} {_ms(dropped[..., i])}" for i in range(len(layers)))
             + f" (the output layer's mask is the all-classes mask's, fixed). Layer {dense + 1} is the 64-unit "
             "dense layer just before the output layer.")
    return [
        stats.claim("removing a class's mask hurts that class more than the others, over networks", v1,
                    text + f"Own drop minus the others', per network: {e.text()}."),
        stats.claim("the removed class collapses, over networks", v2,
                    f"Share of its accuracy a class loses, minus one half, per network: {e2.text()}."),
        stats.Claim("classes are removed mostly in the dense layer before the output", holds, place),
    ]


def added(cv: dict, depth: int, main: str, deep: str) -> dict:
    """The added experiments' numbers from :func:`modlib.weight_masks.curves`' ``cv``, stacked over
    seeds (:func:`stack`), for :func:`added_claims`: ``width`` and ``alpha`` ({value: point}),
    ``authors`` and ``book`` (points), ``heldout``, ``copy`` and ``reuse`` (arrays), ``cnn``
    (``accs``, ``swap_in``, ``dropped``, ``layers``), each left out while not stored; ``depth`` (the
    width curve's), and ``main`` and ``deep``, the shapes of the main and the deeper
    double-addition network as the page writes them."""
    from modlib.weight_masks.protocol import removal_accuracy

    d = {"depth": depth, "main": main, "deep": deep,
         "width": {h: stack(p) for h, p in cv["width"].items()}, "alpha": {a: stack(p) for a, p in cv["alpha"].items()}}
    for key, name in (("authors", "authors"), ("book", "book"), ("heldout", "heldout"), ("copy", "copyweight"),
                      ("reuse", "reuse")):
        if cv[name]:
            d[key] = stack(cv[name])
    if cv["cnnlayers"]:
        runs = cv["cnnlayers"]
        d["cnn"] = {"accs": [removal_accuracy(a["confusion"], a["confusion_random"]) for a in runs],
                    "swap_in": np.stack([a["swap_in"] for a in runs]), "dropped": np.stack([a["dropped"] for a in runs]),
                    "layers": list(runs[0]["layers"])}
    return d


def added_claims(d: dict, chance: float = 0.01) -> list[stats.Claim]:
    """Every statement of the added experiments (:func:`added`'s ``d``), as the page prints them."""
    out = []
    if len(d["width"]) >= 2:
        out += width_curve(d["width"], d["depth"])
    if len(d["alpha"]) >= 2:
        out += alpha_curve(d["alpha"])
    if "authors" in d and "book" in d:
        out += authors_schedule(d["authors"], d["book"], chance)
    if "heldout" in d:
        h = d["heldout"]
        out += heldout(h["table"], h["control"], h["held_table"], h["held_control"], h["kept"], chance)
    if "copy" in d:
        c = d["copy"]
        out += reuse_control(c["copy_iou"], c["iou"], c["iou_same"], c["copy_iou_random"], c["copy_table"],
                             c["whole"], d["main"])
    if "reuse" in d:
        r = d["reuse"]
        found = reuse(r["iou"], r["iou_same"], r["iou_random"], r["table"], r["kept"])
        out += [stats.claim(f"{f.name} ({d['deep']})", f.verdict, f.text.rsplit(" **", 1)[0]) for f in found]
        out += reuse_control(r["copy_iou"], r["iou"], r["iou_same"], r["copy_iou_random"], r["copy_table"],
                             r["whole"], d["deep"])
    if "cnn" in d:
        c = d["cnn"]
        out += class_layers(c["accs"], c["swap_in"], c["dropped"], c["layers"])
    return out
