"""How much of a network a mask keeps (its density), measured while the mask trains, whether it has
stopped falling, and the schedule of the penalty weight that sets it. Chapter 5's ``train_mask``
(notebooks/structural_compositionality.ipynb; chapter 6 runs the same search) records it per epoch
with :func:`kept_share`, and its search selects only configurations that :func:`converged`.

The kept share of a continuous-sparsification mask (:mod:`modlib.masks`, ``"sparsify"``) is the
share of masked weights whose score is above 0 (the hard mask). Its penalty ``lam *
sum(sigmoid(beta * s))`` is what makes it small: ``benchmarks/mask_density_search.py`` found that
``lam`` moves where it settles most (a slower schedule, beta growing over more epochs, can lower it
further), and that a ``lam`` large enough for a sparse mask prunes a small BERT to nothing when it
applies from the first step, before the task loss has found the subroutine. :func:`lam_multiplier` holds ``lam`` at its base value for
``delay`` epochs and then grows it linearly to ``mult`` times that over ``warmup`` epochs (not in
Lepori et al. 2023, whose ``lam`` is constant).
"""

from __future__ import annotations

import numpy as np

from modlib.masks import MaskSet

TOLERANCE = 0.001  # converged: the kept share fell by at most this over the last quarter of the epochs
# issue 53's relative rule, fixed before it was applied to any stored search: the kept share fell by at
# most this share of its last value over the last quarter (0.001 at a kept share of 2%, the papers' range)
RELATIVE_TOLERANCE = 0.05


def kept_share(ms: MaskSet) -> tuple[float, list[float]]:
    """The share of ``ms``'s masked weights its hard masks keep: in total (over every masked weight)
    and per masked weight tensor (in ``ms.names``' order, rounded to 5 decimals)."""
    hard = ms.hard_masks()
    kept = np.array([int(m.sum()) for m in hard.values()], dtype=float)
    sizes = np.array([m.numel() for m in hard.values()], dtype=float)
    return float(kept.sum() / sizes.sum()), (kept / sizes).round(5).tolist()


def lam_multiplier(epoch: int, mult: float, delay: int = 0, warmup: int = 0) -> float:
    """The multiple of the base ``lam`` in epoch ``epoch`` (from 0): ``mult`` throughout when
    ``delay`` and ``warmup`` are 0; otherwise 1 for the first ``delay`` epochs, then growing
    linearly to ``mult`` over ``warmup`` epochs (1 in the first of them), ``mult`` after."""
    if epoch < delay:
        return 1.0
    if warmup <= 0:
        return float(mult)
    return 1.0 + (mult - 1.0) * min(1.0, (epoch - delay) / warmup)


def last_quarter_drop(trajectory) -> float:
    """How much the kept share (one value per epoch) fell over the last quarter of the epochs: its
    value at the start of that quarter minus its last."""
    kept = np.asarray(trajectory, dtype=float)
    n = len(kept)
    return float(kept[max(0, n - 1 - n // 4)] - kept[-1])


def converged(trajectory, tolerance: float = TOLERANCE) -> bool:
    """Whether the kept share (one value per epoch) has stopped falling: it fell by at most
    ``tolerance`` over the last quarter of the epochs (:func:`last_quarter_drop`)."""
    return last_quarter_drop(trajectory) <= tolerance


def converged_relative(trajectory, tolerance: float = RELATIVE_TOLERANCE) -> bool:
    """Whether the kept share (one value per epoch) has stopped falling relative to its size: it fell
    by at most ``tolerance`` times its last value over the last quarter of the epochs. The same as
    :func:`converged` at a kept share of ``TOLERANCE / tolerance`` (2%); stricter for a denser mask,
    looser for a sparser one, whose absolute drop is small because little is left to drop."""
    kept = np.asarray(trajectory, dtype=float)
    return last_quarter_drop(kept) <= tolerance * kept[-1]


def relative_rule_changes(rows: dict) -> tuple[int, list[dict]]:
    """Where :func:`converged_relative` in place of :func:`converged` would change a search's choice
    (chapters 5 and 6 choose, among the configurations whose seed-0 mask converged, the one of highest
    quality; the first of equals). ``rows``: stored results by name, each ``metrics["subroutines"]``
    holding a search's ``grid`` (:func:`modlib.structural_compositionality.experiment` stores it).
    Returns the number of searches read and, for each changed one, ``{"name", "subroutine", "book",
    "relative"}``, the last two the grid entries (``lam``, ``kept``, ``test``) each rule picks."""
    searched, changed = 0, []
    for name, r in rows.items():
        for sub, f in (r.metrics.get("subroutines") or {}).items():
            grid = f.get("grid")
            if not grid:
                continue
            searched += 1
            picks = []
            for rule in (converged, converged_relative):
                pool = [c for c in grid if rule(c["kept_trajectory"])] or grid
                picks.append(max(pool, key=lambda c: c["quality"]))  # max keeps the first of equals
            if picks[0] is not picks[1]:
                changed.append({"name": name, "subroutine": sub, "book": picks[0], "relative": picks[1]})
    return searched, changed


def relative_rule_text(rows: dict) -> str:
    """:func:`relative_rule_changes` in words, for a page: how many searches the relative rule leaves
    as they are, and per changed one both choices with their seed-0 masks' test results after removal
    (target / other)."""
    searched, changed = relative_rule_changes(rows)
    if not searched:
        return "no search is stored at this profile"

    def pick(c: dict) -> str:
        target, other = c["test"]["complement"]
        return f"×{c['lam']:g}, {c['kept']:.2%} kept, removal leaving {target:.2f} / {other:.2f}"

    said = "; ".join(f"{c['name']}, {c['subroutine']}: {pick(c['relative'])} (target / other, its seed-0 mask, "
                     f"test set) instead of {pick(c['book'])}" for c in changed)
    return (f"a rule relative to the kept share (a fall of at most {RELATIVE_TOLERANCE:.0%} of the last kept share "
            f"over the last quarter, fixed before it was applied; checked after the results were seen) chooses as "
            f"the book's rule does in {searched - len(changed)} of {searched} searches"
            + (f"; where not, {said}" if changed else ""))
