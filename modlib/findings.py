"""What a chapter's stored results show: each statement the page prints about its results, with the
numbers behind it, computed in one place so that the page's prose and the claims tests
(``tests/test_claims.py``) say the same thing at every profile.

A statement is a :class:`Finding`: a short name, whether it holds, and a sentence written from the
numbers (mean ± std over seeds). Chapter 4 (weight masks, :mod:`modlib.modularity`) uses
:func:`specialization`, :func:`reuse` and :func:`class_removal`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FAR_ABOVE_CHANCE = 10  # "well above chance": at least this many times the accuracy of guessing


@dataclass(frozen=True)
class Finding:
    """One statement about the results: ``name``, whether it ``holds``, and ``text`` (Markdown)."""

    name: str
    holds: bool
    text: str


def _ms(values: np.ndarray) -> str:
    """``"0.93 ± 0.02"`` over seeds (just ``"0.93"`` for one seed)."""
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.2f}" + (f" ± {values.std():.2f}" if values.size > 1 else "")


def _seeds(n: int) -> str:
    return "the one seed" if n == 1 else f"all {n} seeds"


def specialization(tables: np.ndarray, controls: np.ndarray, chance: float) -> list[Finding]:
    """Chapter 4's add/multiply table: ``tables [seeds, 5, 2]`` (rows ``modularity.ROWS``: full model,
    + mask, + mask removed, × mask, × mask removed; columns +, ×) and ``controls [seeds, 4, 2]``
    (``modularity.CONTROL_ROWS``: random masks as dense, alone and removed). Three findings: each
    mask alone does its own operation and not the other; removing a mask loses its own operation;
    removing it keeps the other operation far above chance (:data:`FAR_ABOVE_CHANCE`) in every seed."""
    full = tables[:, 0]  # [seeds, 2]
    ops, out = ("+", "×"), []
    alone = [(tables[:, 1 + 2 * k, k], tables[:, 1 + 2 * k, 1 - k]) for k in range(2)]  # own, other
    removed = [(tables[:, 2 + 2 * k, k], tables[:, 2 + 2 * k, 1 - k]) for k in range(2)]
    random_removed = [controls[:, 1 + 2 * k] for k in range(2)]  # [seeds, 2]
    each = [bool((own >= 0.8 * full[:, k]).all() and (other <= 0.5 * full[:, 1 - k]).all())
            for k, (own, other) in enumerate(alone)]
    verdict = ("holds for both masks in " + _seeds(len(tables)) if all(each) else
               f"holds for the {ops[each.index(True)]} mask only" if any(each) else "does not hold")
    out.append(Finding("each mask alone does its own operation only", all(each), (
        f"Each mask alone: the + mask adds at {_ms(alone[0][0])} and multiplies at {_ms(alone[0][1])}; the × mask "
        f"multiplies at {_ms(alone[1][0])} and adds at {_ms(alone[1][1])} (full network: + {_ms(full[:, 0])}, "
        f"× {_ms(full[:, 1])}). Asking of a mask alone at least 80% of the full network on its own operation "
        f"and at most half on the other, this half of specialization {verdict}.")))
    ok = all((own <= FAR_ABOVE_CHANCE * chance).all() for own, _ in removed)
    out.append(Finding("removing a mask loses its own operation", ok, (
        f"Removing the + mask leaves + at {_ms(removed[0][0])}; removing the × mask leaves × at "
        f"{_ms(removed[1][0])} (chance: {chance:g}).")))
    keeps = [(other >= FAR_ABOVE_CHANCE * chance).all() for _, other in removed]
    verdict = ("holds for both operations" if all(keeps) else "holds only for removing the " +
               ("+" if keeps[0] else "×") + " mask" if any(keeps) else "is not reproduced at this scale")
    out.append(Finding("removing a mask keeps the other operation far above chance", all(keeps), (
        f"The test that makes it specialization, a removed module sparing the other operation: with the + mask "
        f"removed the network multiplies at {_ms(removed[0][1])}, with the × mask removed it adds at "
        f"{_ms(removed[1][1])}, against chance {chance:g} and the full network's + {_ms(full[:, 0])} / × "
        f"{_ms(full[:, 1])}; removing random weights, as many per layer, leaves + {_ms(random_removed[0][:, 0])} / "
        f"× {_ms(random_removed[0][:, 1])} (+ mask's count) and + {_ms(random_removed[1][:, 0])} / "
        f"× {_ms(random_removed[1][:, 1])} (× mask's). At {FAR_ABOVE_CHANCE}× chance or more in every seed "
        f"this half {verdict}.")))
    return out


def reuse(iou: np.ndarray, iou_same: np.ndarray, iou_random: np.ndarray) -> list[Finding]:
    """Chapter 4's double addition: per-layer IoU ``[seeds, L]`` of the pair-1 and pair-2 masks
    (``iou``), of two pair-1 masks from different seeds (``iou_same``) and of random masks as dense
    (``iou_random``), read on the hidden layers (all but the first and the last). Reuse would put
    the two pairs' overlap near that of two masks of one pair."""
    hidden = slice(1, -1)
    pairs, same, rand = (a[:, hidden].mean(1) for a in (iou, iou_same, iou_random))  # [seeds]
    below = (pairs < same).all()
    return [Finding("two pairs' masks overlap less than two masks of one pair", bool(below), (
        f"In the hidden layers the pair-1 and pair-2 masks overlap at IoU {_ms(pairs)}; two masks trained for "
        f"pair 1 from different seeds overlap at {_ms(same)}, and random masks as dense at {_ms(rand)}. "
        + ("The two pairs' masks overlap less than two masks of one pair in every seed: the network does not "
           "reuse one adder for both pairs, as the paper found." if below else
           "In some seeds the two pairs' masks overlap as much as two masks of one pair: the paper's "
           "finding of no reuse is not reproduced at this scale.")))]


def class_removal(own: np.ndarray, others: np.ndarray, reference: np.ndarray,
                  reference_others: np.ndarray) -> list[Finding]:
    """Chapter 4's class removal, per removed class ``[10]``: accuracy on it (``own``) and on the
    others (``others``) with its mask applied; the same under the all-classes mask (``reference``:
    per class; ``reference_others``: mean over the other nine)."""
    drop_own, drop_others = reference - own, reference_others - others
    far = drop_own > 2 * drop_others + 0.05
    return [Finding("removing a class's mask hurts that class far more than the others", bool(far.all()), (
        f"Removing class c's weights drops its accuracy by {_ms(drop_own)} (over the ten classes) and the other "
        f"classes' by {_ms(drop_others)}. The removed class loses far more than the others (more than twice, "
        f"and by 0.05 at least) for {int(far.sum())} of the 10 classes"
        + (": as the paper found." if far.all() else f"; not for {np.flatnonzero(~far).tolist()}.")))]
