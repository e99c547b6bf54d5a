"""The statements of chapter 7's page (notebooks/bridge.ipynb, "Is the solution already inside?",
"Surgery", "Experiment 3: does structure predict behaviour?" and "Appendix: all results"),
decided from the stored numbers under the book's verdict rule (:mod:`modlib.stats`); the claims
tests use the same functions.

In experiments 1 and 2 every comparison is paired by seed (one network, its masks) over the *failing* networks, those whose
held-out accuracy is below chapter 1's ``GENERALIZES``; a seed is one unit. A network or subnetwork
is scored by the worse of its held-out accuracy and its accuracy on its own training points
(:func:`both`): a network that answers 1 everywhere is right on every held-out point and wrong on a
third of the training points, so held-out accuracy alone would call it repaired.

Experiment 3 (:func:`structure_claims`) is read over *every* network instead: a structural score
per seed (:func:`score`, the overlap of the Y1 and "use X2" masks above what their kept shares per
layer give by chance) against held-out accuracy, Spearman's rank correlation with its Fisher z
interval (:func:`modlib.stats.correlation`), and ``RHO`` as the margin.

None of these claims is a paper's: the papers leave the question open (Lepori et al.) or do not ask
it. Each is stated in the direction of the positive answer, and ``CLEAR`` (5 points) stands in for
the effect a paper would report. Each is a registered claim of ``modlib/bridge/claims.toml``
(decided by :func:`modlib.claims.decide`, named as there), which holds its margin, its bar for
"trained" and, for experiment 2's second rule, that it was designed after the first rule's results
were seen.

The toy's claims were written down after their results were seen; each has a confirmatory copy
(its id ending in :data:`FRESH`) that reads the same experiments on fresh networks
(:func:`modlib.bridge.experiment.fresh`), registered before those were computed: ``claims`` and
``structure_claims`` decide the copies with ``fresh=True``, and Holm's correction reads them as a
family of their own (:func:`holm_frame`'s ``family="fresh"``), as it reads the claims registered after
the correction over the chapter had been read (:data:`LATE`).
"""

from __future__ import annotations

import re

import numpy as np

from modlib import claims as registry
from modlib import stats
from modlib.bridge.digits import SETS as DIGIT_SETS
from modlib.bridge.experiment import FRESH
from modlib.redundant_input_toy.experiment import GENERALIZES

CHAPTER = "bridge"

FIT = 0.9  # a mask "computes its task": median accuracy on fresh points of that task at least this
TRAINED = stats.TRAINED  # the book's bar; the networks trained: median accuracy on their own training points at least this
KEPT = (0.01, 0.95)  # a mask that keeps less or more of the weights (median) is degenerate here
RHO = 0.3  # experiment 3: the smallest rank correlation the page calls a prediction (a "moderate" one)
EXPLORATORY = "exploratory: not registered, not tested"  # a correlation the appendix states beside the claims


def both(arrays: dict, arm: str) -> np.ndarray:
    """``[S]``: the worse of ``arm``'s held-out accuracy and its accuracy on the training points."""
    return np.minimum(arrays[f"{arm}_held_out"], arrays[f"{arm}_train"])


def failing(arrays: dict) -> np.ndarray:
    """``[S]`` bool: the networks that do not generalize (held-out accuracy below ``GENERALIZES``)."""
    return arrays["full_held_out"] < GENERALIZES


def _kept_ok(arrays: dict, mask: str) -> bool:
    k = float(np.median(arrays[f"kept_{mask}"]))
    return KEPT[0] <= k <= KEPT[1]


def _trained(arrays: dict) -> bool:
    return float(np.median(arrays["full_train"])) >= TRAINED


def _pct(v: float) -> str:
    return f"{v:.0%}"


def overlap(arrays: dict) -> tuple[np.ndarray, np.ndarray]:
    """Experiment 3's structural score per seed: ``(shared, chance)``, each ``[S]``. ``shared`` is
    the share of the Y1 mask's kept weights that the "use X2" mask keeps too, |Y1 & X2| / |Y1|;
    ``chance`` is what it would be if the "use X2" mask kept as many weights in each tensor at
    random places: sum over tensors of |Y1_l| * |X2_l| / n_l, over |Y1|. A Y1 mask that keeps no
    weight has no overlap (0 and 0)."""
    y1, x2 = arrays["mask_y1"].astype(bool), arrays["mask_x2"].astype(bool)
    sizes = np.asarray(arrays["mask_layers"], dtype=int)
    cuts = np.cumsum(sizes)[:-1]
    kept_y1 = np.stack([p.sum(1) for p in np.split(y1, cuts, axis=1)], axis=1)  # [S, L]
    kept_x2 = np.stack([p.sum(1) for p in np.split(x2, cuts, axis=1)], axis=1)
    total = np.maximum(y1.sum(1), 1)
    shared = (y1 & x2).sum(1) / total
    chance = (kept_y1 * kept_x2 / sizes).sum(1) / total
    return shared.astype(float), chance.astype(float)


def score(arrays: dict) -> np.ndarray:
    """``[S]``: the overlap of the Y1 and "use X2" masks above chance (:func:`overlap`)."""
    shared, chance = overlap(arrays)
    return shared - chance


def structure_claims(arrays: dict, formulation: str, fresh: bool = False) -> list[stats.Claim]:
    """Experiment 3's claim for one formulation: over every seed, the masks' overlap above chance
    (:func:`score`) predicts held-out accuracy, Spearman's rho at least :data:`RHO` in the
    registered direction (:func:`_direction`; never read off the data), its Fisher z interval
    excluding 0 (the rule of :func:`modlib.stats.verdict`). It needs both masks to compute their tasks with kept shares in ``KEPT``, the
    networks to have trained, and the score and held-out accuracy to vary over the seeds (they need
    not split into failing and generalizing networks: the accuracy of failing ones varies too).
    ``fresh``: the arrays are the fresh networks', decided for the claim's confirmatory copy."""
    f = failing(arrays)
    held = arrays["full_held_out"]
    e = stats.correlation(score(arrays), held)
    fits = min(float(np.median(arrays["sub_unconfounded"])), float(np.median(arrays["x2_fit"])))
    key = f"{CHAPTER}/predicts-{formulation}{FRESH if fresh else ''}"
    v = registry.decide(key, e, trained=_trained(arrays) and fits >= FIT,
                        controls=_kept_ok(arrays, "y1") and _kept_ok(arrays, "x2"))
    ky1, kx2 = (_pct(float(np.median(arrays[f"kept_{m}"]))) for m in ("y1", "x2"))
    says = (f"In formulation ({formulation}), over all {held.size} {_networks(fresh)} ({int(f.sum())} failing, "
            f"{int((~f).sum())} generalizing), the overlap of the Y1 mask (median kept share {ky1}) and "
            f"the \"use X2\" mask (median kept share {kx2}) above chance predicts held-out accuracy, "
            f"a rank correlation of at least {RHO:.1f} {_direction(key, 'held-out accuracy')}: "
            f"rho {e.text(percent=False)}")
    found = [registry.statement(v, says + ".")]
    return found + ([kept_claim(arrays, formulation)] if fresh else [])


def kept_claim(arrays: dict, formulation: str) -> stats.Claim:
    """The hypothesis registered for the fresh networks alone (an exploratory pattern on the
    chapter's own): over every network, the "use X2" mask's kept share predicts held-out accuracy,
    Spearman's rho at least :data:`RHO` in the registered direction, its Fisher z interval
    excluding 0. It needs the networks to have trained and the "use X2" mask to compute its task
    with its kept share in ``KEPT``."""
    held = arrays["full_held_out"]
    e = stats.correlation(arrays["kept_x2"], held)
    key = f"{CHAPTER}/kept-x2-predicts-{formulation}{FRESH}"
    v = registry.decide(key, e, trained=_trained(arrays) and float(np.median(arrays["x2_fit"])) >= FIT,
                        controls=_kept_ok(arrays, "x2"))
    larger = "higher" if registry.get(key).direction > 0 else "lower"
    says = (f"In formulation ({formulation}), over all {held.size} fresh networks, the \"use X2\" mask's kept "
            f"share (median {_pct(float(np.median(arrays['kept_x2'])))}) predicts held-out accuracy, a rank "
            f"correlation of at least {RHO:.1f} (a larger kept share, {larger} held-out accuracy): "
            f"rho {e.text(percent=False)}")
    return registry.statement(v, says + ".")


def _direction(key: str, outcome: str) -> str:
    """The direction the registry gives the correlation claim ``key`` (never the data's sign), in
    words: "with more overlap, higher ``outcome``" (direction 1) or "lower" (direction -1)."""
    return f"with more overlap, {'higher' if registry.get(key).direction > 0 else 'lower'} {outcome}"


def _networks(fresh: bool) -> str:
    """The networks a claim reads, in words: "fresh networks" for a confirmatory copy's."""
    return "fresh networks" if fresh else "networks"


def claims(arrays: dict, formulation: str, fresh: bool = False) -> list[stats.Claim]:
    """The chapter's claims for one formulation's stored arrays, each under the verdict rule;
    ``fresh``: the arrays are the fresh networks', decided for the claims' confirmatory copies."""
    f = failing(arrays)
    n = int(f.sum())
    where = f"formulation ({formulation}), the {n} failing {_networks(fresh)}"
    fit_y1 = float(np.median(arrays["sub_unconfounded"]))
    fit_u = float(np.median(arrays["untrained_sub_unconfounded"]))
    fit_x2 = float(np.median(arrays["x2_fit"]))
    ky1, kx2 = (float(np.median(arrays[f"kept_{m}"])) for m in ("y1", "x2"))
    ku = _pct(float(np.median(arrays["kept_untrained"])))
    ku_f = _pct(float(np.median(arrays["kept_untrained"][f]))) if f.any() else ku  # over the networks compared
    if "kept_excl" not in arrays:
        raise KeyError("claims need experiment 2's second removal: pass the arrays through "
                       "modlib.bridge.with_exclusive(settings, arrays, formulation) first")
    ke = float(np.median(arrays["kept_excl"]))
    medians = f"medians over all {f.size} networks"  # the kept shares and fits: every seed, not only the failing
    # (name, arm, compared with, the masks whose fit and kept share the claim needs, what it says)
    table = [
        ("inside", "sub", "full", ("y1",),
         f"the Y1 subnetwork ({medians}: kept share {_pct(ky1)}; it computes Y1 on fresh unconfounded "
         f"points with accuracy {_pct(fit_y1)}) scores above the full network on held-out "
         f"and training points alike"),
        ("not-any", "sub", "random_sub", ("y1",),
         "the Y1 subnetwork scores above a random subnetwork with as many weights per layer"),
        ("built", "sub", "untrained_sub", ("y1", "untrained"),
         f"the Y1 subnetwork of the trained weights scores above the one a mask finds in the same "
         f"network's initial, untrained weights (its mask's median kept share: {ku_f} over these {n} "
         f"networks, {ku} over all {f.size}; on fresh unconfounded points, {medians}, the trained "
         f"weights' mask computes Y1 with accuracy {_pct(fit_y1)} and the untrained weights' with "
         f"{_pct(fit_u)}, where the claim needs each to reach {FIT:.0%})"),
        ("repair", "ablated", "full", ("x2",),
         f"removing the weights of the \"use X2\" mask ({medians}: kept share {_pct(kx2)}; it computes "
         f"1 - Y2 with accuracy {_pct(fit_x2)}) raises the worse of held-out and training "
         f"accuracy"),
        ("repair-vs-random", "ablated", "random_ablated", ("x2",),
         "removing the \"use X2\" mask's weights scores above removing as many random weights "
         "per layer"),
        ("repair-excl", "ablated_excl", "full", ("x2", "y1", "excl"),
         f"removing only the weights the \"use X2\" mask keeps and the Y1 mask does not ("
         f"{_share(ke)} of the weights, median over all {f.size} networks) raises the worse of held-out and training accuracy"),
        ("repair-excl-vs-random", "ablated_excl", "random_ablated_excl", ("x2", "y1", "excl"),
         "removing those weights scores above removing as many random weights per layer from "
         "outside the Y1 mask (the mean of three draws)"),
    ]
    if "random_x2_excl_held_out" in arrays:  # the stored control rule2-random-<f> (issue 53)
        kr = float(np.median(arrays["kept_random_x2_excl"]))
        draws = int(arrays["random_x2_draws"])
        table += [
            ("repair-excl-random", "random_x2_excl", "full", ("x2", "y1"),
             f"removing the weights of a random mask with the \"use X2\" mask's counts per layer "
             f"that the Y1 mask does not keep ({_share(kr)} of the weights, median over all {f.size} "
             f"networks; the mean of {draws} draws) raises the worse of held-out and training accuracy"),
            ("repair-excl-needs-mask", "ablated_excl", "random_x2_excl", ("x2", "y1", "excl"),
             "rule 2 with the \"use X2\" mask scores above rule 2 with random masks of its counts "
             f"per layer (the mean of {draws} draws): the mask adds to the repair"),
        ]
    # the second removal is void where it removes (almost) nothing: its kept share is gated too
    fits = {"y1": fit_y1, "untrained": fit_u, "x2": fit_x2, "excl": min(fit_y1, fit_x2)}
    return decided(arrays, f, table, formulation + (FRESH if fresh else ""), where, _trained(arrays), fits,
                   lambda m: _kept_ok(arrays, m))


def unseen_claims(arrays: dict, formulation: str) -> list[stats.Claim]:
    """Experiments 1 and 2 with masks that never saw the held-out cell (:mod:`modlib.bridge.unseen`),
    for one formulation: ``arrays`` a toy result's with its ``unseen-<f>`` result's added
    (:func:`modlib.bridge.experiment.merged`). Each claim under the verdict rule, over the failing
    networks, undecided unless the networks trained and each mask it reads computes its own task
    (median fit on fresh points of its own data at least ``FIT``) with a kept share in ``KEPT``.
    With an ``unseen-random-<f>`` result's arrays added too, rule 2's random-masks control
    (``repair-unseen-random``) and rule 2 against it (``repair-unseen-needs-mask``)."""
    f = failing(arrays)
    where = f"formulation ({formulation}), the {int(f.sum())} failing networks"
    fits = {m: float(np.median(arrays[f"fit_{m}"])) for m in ("y1_unseen", "x2_unseen")}
    fits["excl_unseen"] = min(fits.values())
    ky, kx, ke = (float(np.median(arrays[f"kept_{m}"])) for m in ("y1_unseen", "x2_unseen", "excl_unseen"))
    medians = f"medians over all {f.size} networks"
    rule2 = ("x2_unseen", "y1_unseen", "excl_unseen")
    table = [
        ("inside-unseen", "sub_unseen", "full", ("y1_unseen",),
         f"the subnetwork of a Y1 mask that never saw the held-out cell, trained on the band Y2 = 0 only "
         f"({medians}: kept share {_pct(ky)}; it computes Y1 on fresh points of that band with accuracy "
         f"{_pct(fits['y1_unseen'])}), scores above the full network on held-out and training points alike"),
        ("repair-unseen", "ablated_unseen", "full", rule2,
         f"removing the weights that a \"use X2\" mask trained on the three seen cells keeps ({medians}: "
         f"kept share {_pct(kx)}; it computes 1 - Y2 on fresh points of those cells with accuracy "
         f"{_pct(fits['x2_unseen'])}) and that Y1 mask does not ({_share(ke)} of the weights) raises the "
         "worse of held-out and training accuracy"),
        ("repair-unseen-vs-random", "ablated_unseen", "random_ablated_unseen", rule2,
         "removing those weights scores above removing as many random weights per layer from outside that "
         "Y1 mask (the mean of three draws)"),
    ]
    if "random_x2_unseen_held_out" in arrays:  # the random-masks control (modlib.bridge.unseen_random)
        draws = arrays["random_x2_unseen_held_out_draws"].shape[1]
        kr = float(np.median(arrays["kept_random_x2_unseen"]))
        table += [
            ("repair-unseen-random", "random_x2_unseen", "full", rule2,
             f"removing the weights of a random mask with the blind \"use X2\" mask's counts per layer that the "
             f"blind Y1 mask does not keep ({_share(kr)} of the weights, median over all {f.size} networks; the "
             f"mean of {draws} draws) raises the worse of held-out and training accuracy"),
            ("repair-unseen-needs-mask", "ablated_unseen", "random_x2_unseen", rule2,
             "rule 2 with the blind \"use X2\" mask scores above rule 2 with random masks of its counts per layer "
             f"(the mean of {draws} draws): the mask adds to the repair"),
        ]
    return decided(arrays, f, table, formulation, where, _trained(arrays), fits, lambda m: _kept_ok(arrays, m))


def matched_claims(arrays: dict, formulation: str) -> list[stats.Claim]:
    """"Built" at matched density (:mod:`modlib.bridge.matched`) for one formulation: ``arrays`` a
    toy result's with its ``matched-<f>`` result's added (:func:`modlib.bridge.experiment.merged`).
    The trained weights' Y1 subnetwork against the untrained weights' at the penalty whose kept
    share is nearest, paired over the failing networks, under the verdict rule; undecided unless
    the networks trained, the trained Y1 mask computes Y1 (``FIT``), both masks' kept shares are in
    ``KEPT`` and their medians over the failing networks are within the density rule's factor
    (:func:`apart`). The untrained mask's fit is stated, not gated (as registered)."""
    f = failing(arrays)
    key = f"{CHAPTER}/built-matched-{formulation}"
    e = stats.paired(both(arrays, "sub")[f], both(arrays, "untrained_matched")[f])
    fit_y1 = float(np.median(arrays["sub_unconfounded"]))
    v = registry.decide(key, e, trained=_trained(arrays) and fit_y1 >= FIT,
                        controls=_kept_ok(arrays, "y1") and _kept_ok(arrays, "matched"),
                        reason=apart(arrays, "y1", "matched", units=f) if f.any() else "")
    picks = penalties_chosen(arrays["alpha_index"], f)
    pick = f if f.any() else slice(None)  # the kept shares over the failing networks, or all where none fails
    ky, km = (_pct(float(np.median(arrays[f"kept_{m}"][pick]))) for m in ("y1", "matched"))
    says = (f"In formulation ({formulation}), the {int(f.sum())} failing networks, the Y1 subnetwork of the trained "
            f"weights (median kept share {ky} over these networks) scores above the one a mask finds in the same "
            f"network's untrained weights at matched density (the penalty nearest in kept share: {picks}; median "
            f"kept share {km}; it computes Y1 on fresh unconfounded points with median accuracy "
            f"{_pct(float(np.median(arrays['fit_matched'])))}, not a condition here): "
            f"{e.text(margin=registry.get(key).margin)}")
    return [registry.statement(v, says + ".")]


def penalties_chosen(index: np.ndarray, units: np.ndarray) -> str:
    """Which penalty of :data:`modlib.bridge.matched.ALPHAS` the matched-density search chose, counted
    over the networks ``units`` (``[S]`` bool) from ``index [S]``: "2 at 0.01, 24 at 0.02 and 4 at
    0.04", or "none chosen" where no network is counted."""
    from modlib.bridge.matched import ALPHAS

    if not units.any():
        return "none chosen"
    chosen = np.bincount(index[units], minlength=len(ALPHAS))
    return stats.listing(f"{n} at {a:g}" for a, n in zip(ALPHAS, chosen) if n)


def unseen_controls_claims(arrays: dict, formulation: str) -> list[stats.Claim]:
    """Experiment 1's two controls for the blind Y1 mask (:mod:`modlib.bridge.unseen_controls`), for
    one formulation: ``arrays`` a toy result's with its ``unseen-<f>`` and ``unseen-controls-<f>``
    results' added (:func:`modlib.bridge.experiment.merged`). ``not-any-unseen``: the blind Y1
    subnetwork against random subnetworks as large per layer; ``built-unseen``: against the blind mask
    found in the untrained weights at matched density. Both paired over the failing networks under
    the verdict rule; undecided unless the networks trained, the blind Y1 mask computes Y1 on its band
    (``FIT``) and keeps a share in ``KEPT``; ``built-unseen`` also needs the untrained weights' mask in
    ``KEPT`` and the two masks' medians over the failing networks within the density rule's factor
    (:func:`apart`). The untrained weights' mask's fit is stated, not gated (as registered)."""
    f = failing(arrays)
    fit = float(np.median(arrays["fit_y1_unseen"]))
    trained = _trained(arrays) and fit >= FIT
    pick = f if f.any() else slice(None)  # the kept shares over the failing networks, or all where none fails
    ky, ku = (_pct(float(np.median(arrays[f"kept_{m}"][pick]))) for m in ("y1_unseen", "untrained_unseen"))
    where = (f"In formulation ({formulation}), the {int(f.sum())} failing networks, the subnetwork of a Y1 mask that "
             f"never saw the held-out cell (median kept share {ky} over these networks; it computes Y1 on fresh "
             f"points of its band with median accuracy {_pct(fit)})")
    out = []
    key = f"{CHAPTER}/not-any-unseen-{formulation}"
    e = stats.paired(both(arrays, "sub_unseen")[f], both(arrays, "random_sub_unseen")[f])
    v = registry.decide(key, e, trained=trained, controls=_kept_ok(arrays, "y1_unseen"))
    out.append(registry.statement(v, f"{where} scores above random subnetworks with as many weights per layer (the "
                                     f"mean of three draws): {e.text(margin=registry.get(key).margin)}."))
    key = f"{CHAPTER}/built-unseen-{formulation}"
    e = stats.paired(both(arrays, "sub_unseen")[f], both(arrays, "untrained_sub_unseen")[f])
    v = registry.decide(key, e, trained=trained,
                        controls=_kept_ok(arrays, "y1_unseen") and _kept_ok(arrays, "untrained_unseen"),
                        reason=apart(arrays, "y1_unseen", "untrained_unseen", units=f) if f.any() else "")
    picks = penalties_chosen(arrays["alpha_index_unseen"], f)
    out.append(registry.statement(v, (
        f"{where} scores above the one the same mask finds in the network's untrained weights at matched density "
        f"(the penalty nearest in kept share: {picks}; median kept share {ku}; it computes Y1 on the band with median "
        f"accuracy {_pct(float(np.median(arrays['fit_untrained_unseen'][pick])))}, over these networks too, not a "
        f"condition here): "
        f"{e.text(margin=registry.get(key).margin)}.")))
    return out


COMPARED = {"built": ("y1", "untrained")}  # claims that compare two masks' subnetworks: their masks


def kept_ratio(arrays: dict, a: str, b: str, units: np.ndarray | None = None) -> float:
    """How many times as many weights the denser of masks ``a`` and ``b`` keeps: the ratio of their
    median kept shares over the seeds ``units`` (``[S]`` bool; all seeds where None), at least 1.
    The density condition (:func:`apart`) compares it with :data:`modlib.stats.DENSITY_RATIO`."""
    pick = slice(None) if units is None else units
    ka, kb = (float(np.median(arrays[f"kept_{m}"][pick])) for m in (a, b))
    return max(ka, kb) / max(min(ka, kb), 1e-12)


def times(ratio: float) -> str:
    """A ratio of kept shares as the page prints it wherever it decides the density condition, with
    the same two decimals everywhere: "2.05" (against a factor of 2, "2.1" would hide how close)."""
    return f"{ratio:.2f}"


def apart(arrays: dict, a: str, b: str, units: np.ndarray | None = None) -> str:
    """Why a comparison of the subnetworks of masks ``a`` and ``b`` cannot be decided where their
    median kept shares over the seeds ``units`` (``[S]`` bool; all seeds where None) are more than
    :data:`modlib.stats.DENSITY_RATIO` apart (chapters 6 and 7's density rule: the comparison would
    compare densities as much as networks); "" where they are comparable."""
    pick = slice(None) if units is None else units
    ka, kb = (float(np.median(arrays[f"kept_{m}"][pick])) for m in (a, b))
    ratio = kept_ratio(arrays, a, b, units)
    if ratio <= stats.DENSITY_RATIO:
        return ""
    n = arrays[f"kept_{a}"][pick].size
    return (f"median kept shares {_share(ka)} and {_share(kb)}: the two masks are {times(ratio)} times apart "
            f"in density, medians over the {n} networks compared (the rule needs them within a "
            f"factor of {stats.DENSITY_RATIO:.0f})")


def decided(arrays: dict, units: np.ndarray, table: list, suffix: str, where: str, trained: bool,
            fits: dict, kept_ok, fit_words: dict | None = None) -> list[stats.Claim]:
    """Each row ``(name, arm, other, needs, says)`` of ``table`` decided under the rule: ``arm``
    against ``other`` paired over the seeds ``units`` ``[S]`` bool (by :func:`both`), against
    :data:`stats.CLEAR` (the registered claim ``<name>-<suffix>``); undecided unless ``trained``,
    each mask of ``needs`` has ``fits[m] >= FIT`` and ``kept_ok(m)``, and (for the claims of
    :data:`COMPARED`) the two masks' densities over the seeds compared are comparable
    (:func:`apart`; registered without it, amended twice: the page prints the verdict as registered
    beside it). ``fit_words``: ``{mask: what it must compute}``; given, a claim whose networks trained
    but one of whose masks falls short of ``FIT`` says so as its reason (part of its registered bar),
    instead of the rule's generic "an arm did not train"."""
    out = []
    for name, arm, other, needs, says in table:
        e = stats.paired(both(arrays, arm)[units], both(arrays, other)[units])
        key = f"{CHAPTER}/{name}-{suffix}"
        conditions = {"trained": trained and min(fits[m] for m in needs) >= FIT,
                      "controls": all(kept_ok(m) for m in needs)}
        short = [m for m in needs if m in (fit_words or {}) and fits[m] < FIT]
        reason = "; ".join(f"{fit_words[m]} at a median {_pct(fits[m])}, below the registered {_pct(FIT)}"
                           for m in short) if trained and short else ""
        v = registry.decide(key, e, **conditions, reason=reason)
        if name in COMPARED and (v.outcome != stats.UNDECIDED or stats.open_interval(v)):
            far = apart(arrays, *COMPARED[name], units=units)
            if far:  # registered without the density condition: as registered, no reason
                v = registry.decide(key, e, **conditions, reason=far, as_registered={"reason": ""})
        out.append(registry.statement(v, f"In {where}, {says}: {e.text(margin=registry.get(key).margin)}."))
    return out


def statements(arrays: dict, formulation: str) -> list[stats.Finding]:
    """Descriptive statements for the appendix: shares, kept shares, the reference surgery."""
    f = failing(arrays)
    s = arrays["full_held_out"].size
    out = [stats.Finding(
        f"failing-{formulation}", True,
        f"Formulation ({formulation}): {int(f.sum())} of {s} networks fail the held-out cell "
        f"(accuracy below {GENERALIZES:.0%}); median accuracy on their training points "
        f"{_pct(float(np.median(arrays['full_train'])))}.")]
    for m, what in (("y1", "Y1 mask (trained weights)"), ("untrained", "Y1 mask (untrained weights)"),
                    ("x2", "\"use X2\" mask")):
        k = arrays[f"kept_{m}"]
        layers = np.median(arrays[f"kept_{m}_layers"], axis=0)
        out.append(stats.Finding(
            f"kept-{m}-{formulation}", _kept_ok(arrays, m),
            f"Formulation ({formulation}), {what}: kept share median {_pct(float(np.median(k)))} "
            f"(range {_pct(float(k.min()))}–{_pct(float(k.max()))}); per layer "
            + ", ".join(_pct(float(x)) for x in layers) + "."))
    shared, chance = overlap(arrays)
    out.append(stats.Finding(
        f"overlap-{formulation}", True,
        f"Formulation ({formulation}): the \"use X2\" mask keeps a median {_pct(float(np.median(shared)))} "
        f"of the Y1 mask's weights (range {_pct(float(shared.min()))}–{_pct(float(shared.max()))}), "
        f"against a median {_pct(float(np.median(chance)))} by chance at the same kept shares per layer."))
    for m, what in (("y1", "the Y1 mask's"), ("x2", "the \"use X2\" mask's")):
        e = stats.correlation(arrays[f"kept_{m}"], arrays["full_held_out"])
        out.append(stats.Finding(
            f"kept-predicts-{m}-{formulation}", e.measurable,
            f"Formulation ({formulation}), the kept share alone ({EXPLORATORY}): {what} kept share against held-out "
            f"accuracy, rho {e.text(percent=False)} (the score above is corrected for kept shares "
            f"per layer; this is what the kept share by itself would predict)."))
    if f.sum() >= 2:
        e = stats.paired(both(arrays, "zero_x2")[f], both(arrays, "full")[f])
        out.append(stats.Finding(
            f"zero-x2-{formulation}", e.low > 0,
            f"Formulation ({formulation}): setting the first layer's weights from x2 to zero "
            f"(no mask needed) changes the worse of held-out and training accuracy of the failing "
            f"networks by {e.text()}."))
    return out


ARM_WORDS = {"full": "network", "sub": "Y1 subnetwork", "random_sub": "random subnetwork",
             "untrained_sub": "untrained Y1 subnetwork", "ablated": "rule 1",
             "random_ablated": "rule 1's random control", "zero_x2": "x2 weights zeroed",
             "ablated_excl": "rule 2", "random_ablated_excl": "rule 2, random weights, same count",
             "random_x2_excl": "rule 2, random masks, same per-layer counts"}
RULE2_ARMS = ("ablated_excl", "random_ablated_excl", "random_x2_excl")  # scored from the stored networks
MASK_WORDS = {"y1": "Y1 mask", "untrained": "untrained Y1 mask", "x2": "\"use X2\" mask"}


def table(arrays: dict, formulation: str):
    """One row per seed: ``pandas.DataFrame`` of every arm's held-out and training accuracy, rule 2's
    arms (:data:`RULE2_ARMS`) too where ``arrays`` has them."""
    import pandas as pd

    from modlib.bridge.experiment import ARMS

    cols = {"seed": np.arange(arrays["full_held_out"].size), "fails": failing(arrays)}
    for arm in ARMS + tuple(a for a in RULE2_ARMS if f"{a}_held_out" in arrays):
        cols[f"{ARM_WORDS.get(arm, arm)}: held-out"] = arrays[f"{arm}_held_out"].round(3)
        cols[f"{ARM_WORDS.get(arm, arm)}: train"] = arrays[f"{arm}_train"].round(3)
    for m in ("y1", "untrained", "x2"):
        cols[f"kept share: {MASK_WORDS[m]}"] = arrays[f"kept_{m}"].round(3)
    shared, chance = overlap(arrays)
    cols["overlap"], cols["overlap by chance"] = shared.round(3), chance.round(3)
    return pd.DataFrame({"formulation": formulation, **cols})


def summary_table(rows):
    """The appendix's one-screen summary of :func:`table`'s rows (every network of every formulation,
    as a ``pandas.DataFrame``): one row per measured column, one column per formulation with the
    column's mean over that formulation's failing networks (the units of experiments 1 and 2) and
    its Student's t 95% interval, "0.52 (0.48 to 0.56)" (the mean alone where the values do not
    vary or are fewer than two), and how many networks that is in the heading. The per-network rows
    stay in the table it summarises."""
    import pandas as pd

    measured = [c for c in rows.columns if c not in ("formulation", "seed", "fails")]

    def cell(values) -> str:
        v = np.asarray(values.dropna(), dtype=float)
        if v.size == 0:
            return "—"
        if v.size < 2 or np.ptp(v) == 0:
            return stats.number(v.mean())
        mean, low, high = stats.t_interval(v)
        return f"{stats.number(mean)} ({stats.number(low)} to {stats.number(high)})"

    out = {"measure": measured}
    for f, g in rows.groupby("formulation", sort=False):
        g = g[g["fails"]]
        out[f"({f}): {len(g)} failing networks"] = [cell(g[c]) for c in measured]
    return pd.DataFrame(out)


KINDS = {"inside": "the Y1 subnetwork scores above the full network",
         "not-any": "... and above a random subnetwork as large per layer",
         "built": "... and above the Y1 subnetwork of the untrained weights",
         "repair": "(rule 1) removing the \"use X2\" mask's weights repairs the network",
         "repair-vs-random": "... more than removing as many random weights",
         "repair-excl": "(rule 2) removing the \"use X2\" weights the Y1 mask does not keep repairs it",
         "repair-excl-vs-random": "(rule 2) ... more than removing random weights, same count, outside the Y1 "
                                  "mask",
         "repair-excl-random": "control, where holds counts against the mask: rule 2 repairs without the "
                               "\"use X2\" mask's choice too (random masks, same per-layer counts, in its place)",
         "repair-excl-needs-mask": "rule 2 with the \"use X2\" mask repairs more than with the random "
                                   "masks, same per-layer counts",
         "predicts": "the Y1 and \"use X2\" masks' overlap above chance predicts held-out accuracy"}
# the CNNs' cuts that need no mask, and rule 2 beside them (modlib.bridge.digit_cut): no toy row
CUT_ROWS = {"cut-dense": "(no mask) zeroing the dense weights that read only the right-hand digit repairs the CNN",
            "cut-dense-vs-random": "... more than zeroing as many random dense weights",
            "cut-input": "(no mask) blanking the right half of every pair repairs the CNN",
            "excl-vs-cut": "(rule 2) ... more than the dense cut that needs no mask",
            "cut-dense-vs-left": "(no mask) zeroing the right-only dense weights scores above zeroing as many "
                                 "left-only ones",
            "cut-dense-vs-shifted": "(no mask) zeroing the right-only dense weights scores above the same block "
                                    "moved one column left",
            "excl-cut-vs-cut": "(rule 2 with the cut) rule 2's removal and the dense cut together repair more than "
                               "the cut alone",
            "excl-cut-vs-random-cut": "... and more than the cut with random \"use X2\" masks, same counts, in "
                                      "rule 2",
            "excl-outside": "(rule 2 outside the cut) rule 2's removal without the cut's columns, alone, repairs the CNN",
            "excl-outside-vs-random": "... more than as many random weights outside the Y1 mask and the cut"}
# rule 2 with a mask for another target in the "use X2" mask's place (modlib.bridge.surgery_target)
TARGET_ROWS = {"excl-vs-left5": "(rule 2) ... more than rule 2 with a mask for the left digit's label plus 5 in "
                                 "the \"use X2\" mask's place",
               "excl-vs-right5": "(rule 2) ... more than rule 2 with a mask for the right digit's label plus 5 "
                                  "in its place",
               "excl-vs-left5-sized": "(rule 2) ... more than a mask for the left digit's label plus 5 trained "
                                       "at a weaker penalty, as many weights per tensor removed",
               "excl-vs-right5-sized": "(rule 2) ... more than a mask for the right digit's label plus 5 trained "
                                        "at a weaker penalty, as many weights per tensor removed",
               "excl-vs-left5-ranked": "(rule 2) ... more than the left digit plus 5 mask's top-ranked weights, "
                                        "as many per tensor",
               "excl-vs-right5-ranked": "(rule 2) ... more than the right digit plus 5 mask's top-ranked weights, "
                                         "as many per tensor"}
# the hypothesis registered for the fresh networks alone (exploratory on the chapter's own)
FRESH_ONLY = {"kept-x2-predicts": "the \"use X2\" mask's kept share predicts held-out accuracy"}
# experiments 1 and 2 with masks that never saw the held-out cell (modlib.bridge.unseen)
UNSEEN_KINDS = {"inside-unseen": "the Y1 subnetwork of a mask that never saw the held-out cell scores above the "
                                 "full network",
                "not-any-unseen": "... and above a random subnetwork as large per layer",
                "built-unseen": "... and above the same mask's in the untrained weights at matched density",
                "repair-unseen": "(rule 2, masks that never saw the held-out cell) removing the \"use X2\" "
                                 "weights the Y1 mask does not keep repairs the network",
                "repair-unseen-vs-random": "... more than removing random weights, same count, outside that Y1 "
                                           "mask",
                "repair-unseen-random": "(control) random masks in the blind \"use X2\" mask's place, their "
                                        "weights outside that Y1 mask removed, repair the network",
                "repair-unseen-needs-mask": "(rule 2, masks that never saw the held-out cell) ... more than with "
                                            "random masks in the blind \"use X2\" mask's place"}
MATCHED_KINDS = {"built-matched": "the Y1 subnetwork scores above the untrained weights' one at matched density"}
ROW_WORDS = {**KINDS, **FRESH_ONLY, **UNSEEN_KINDS, **MATCHED_KINDS, **CUT_ROWS, **TARGET_ROWS}  # every claim's row in a verdict table

# the claims whose table row continues the one above ("... and above ..."), as one sentence each
WHOLE = {"not-any": "the Y1 subnetwork scores above a random subnetwork as large per layer",
         "built": "the Y1 subnetwork scores above the Y1 subnetwork of the untrained weights",
         "repair-vs-random": "(rule 1) removing the \"use X2\" mask's weights repairs the network more than "
                             "removing "
                             "as many random weights",
         "repair-excl-vs-random": "(rule 2) removing the \"use X2\" weights the Y1 mask does not keep "
                                  "repairs the network more than removing random weights, same count, outside "
                                  "the Y1 mask",
         "repair-unseen-vs-random": "(rule 2, masks that never saw the held-out cell) removing the \"use X2\" "
                                    "weights the Y1 mask does not keep repairs the network more than removing "
                                    "random weights, same count, outside that Y1 mask",
         "repair-unseen-needs-mask": "(rule 2, masks that never saw the held-out cell) removing the \"use X2\" "
                                     "weights the Y1 mask does not keep repairs the network more than random "
                                     "masks in the blind \"use X2\" mask's place, same per-layer counts",
         "not-any-unseen": "the Y1 subnetwork of a mask that never saw the held-out cell scores above a random "
                           "subnetwork as large per layer",
         "built-unseen": "the Y1 subnetwork of a mask that never saw the held-out cell scores above the same "
                         "mask's in the untrained weights at matched density",
         "excl-cut-vs-random-cut": "(rule 2 with the cut) rule 2's removal and the dense cut together repair "
                                   "more than the cut with random \"use X2\" masks, same counts, in rule 2",
         "excl-vs-cut": "(rule 2) removing the \"use X2\" weights the Y1 mask does not keep repairs the CNN more "
                        "than zeroing the dense weights that read only the right-hand digit",
         "excl-vs-left5-sized": "(rule 2) removing the \"use X2\" weights the Y1 mask does not keep repairs the "
                                "CNN more than a mask for the left digit's label plus 5 trained at a weaker "
                                "penalty, as many weights per tensor removed",
         "excl-vs-right5-sized": "(rule 2) removing the \"use X2\" weights the Y1 mask does not keep repairs the "
                                 "CNN more than a mask for the right digit's label plus 5 trained at a weaker "
                                 "penalty, as many weights per tensor removed",
         "excl-vs-left5-ranked": "(rule 2) removing the \"use X2\" weights the Y1 mask does not keep repairs the "
                                 "CNN more than removing the weights outside it that a mask for the left digit's "
                                 "label plus 5 ranks highest, as many per tensor",
         "excl-vs-right5-ranked": "(rule 2) removing the \"use X2\" weights the Y1 mask does not keep repairs the "
                                  "CNN more than removing the weights outside it that a mask for the right digit's "
                                  "label plus 5 ranks highest, as many per tensor",
         "excl-outside-vs-random": "(rule 2 outside the cut) its removal without the cut's columns, alone, repairs "
                                   "the CNN more than as many random weights outside the Y1 mask and the cut"}
WHERE = {"a": "chapter 1's toy, formulation (a)", "b": "chapter 1's toy, formulation (b)",
         "mnist": "chapter 3's CNNs", "monolithic": "chapter 2's monolithic decoders",
         "compositional": "chapter 2's compositional decoders"}


def plain_name(cid: str) -> str:
    """A claim of the chapter (its id, ``"renders-monolithic"``) in plain words, as the page names
    it in prose: its table row's statement and the models it is about (a confirmatory copy's:
    "fresh networks")."""
    fresh = cid.endswith(FRESH)
    kind, where = cid.removesuffix(FRESH).rsplit("-", 1)
    decoders = where in ("monolithic", "compositional")  # chapter 2's claims read SPRITE_KINDS' words
    said = (SPRITE_KINDS.get(kind) if decoders else None) or WHOLE.get(kind) or ROW_WORDS.get(kind) \
        or SPRITE_KINDS.get(kind) or kind
    return f"\u201c{said}\u201d ({WHERE.get(where, where)}{', fresh networks' if fresh else ''})"


# what each toy claim's verdict means for the chapter's question (does structure show what the
# networks could do, and can it repair them?), in plain words: a control's "holds" counts against a
# claim, so no mark reads as good news where it is not (issue 57)
MEANS = {"inside": ("a subnetwork inside gets the held-out cell right", "no such subnetwork found"),
         "not-any": ("not just any subnetwork as large: the weights chosen matter",
                     "a random subnetwork as large does as well"),
         "built": ("training built it", "the untrained weights hold one as good"),
         "repair": ("cutting the mask repairs the networks", "no repair"),
         "repair-vs-random": ("the mask's cut beats a random one", "no better than a random cut"),
         "repair-excl": ("rule 2 repairs the networks", "no repair"),
         "repair-excl-vs-random": ("rule 2 beats random weights outside the Y1 mask",
                                   "no better than random weights outside the Y1 mask"),
         "repair-excl-random": ("against the mask: random masks repair too, so part of rule 2's repair "
                                "is not the mask's", "for the mask: random masks do not repair"),
         "repair-excl-needs-mask": ("for the mask: rule 2 repairs more with it than with random masks",
                                    "random masks repair as much"),
         "predicts": ("the overlap predicts which networks generalize",
                      f"not at the registered size: the whole interval lies below {RHO:g}"),
         "built-matched": ("training built it: at the same density mask training found none as good in the "
                           "untrained weights",
                           "at the same density the untrained weights hold one as good"),
         "inside-unseen": ("a mask finds the subnetwork without seeing the held-out cell",
                           "a mask that never saw the held-out cell finds no such subnetwork"),
         "not-any-unseen": ("not just any subnetwork as large: the blind mask's choice matters",
                            "a random subnetwork as large does as well"),
         "built-unseen": ("training built what the blind mask finds: at the same density mask training found "
                          "none in the untrained weights that scores as well on held-out and training points "
                          "together (on the held-out cell alone they are not shown to do worse)",
                          "at the same density the untrained weights hold one as good"),
         "repair-unseen": ("the surgery repairs without a mask that saw the held-out cell", "no repair"),
         "repair-unseen-vs-random": ("the blind masks' cut beats random weights outside their Y1 mask",
                                     "no better than random weights outside that Y1 mask"),
         "repair-unseen-random": ("against the blind mask: random masks repair too, so part of the repair with "
                                  "blind masks is not the blind \"use X2\" mask's", "for the blind mask: random "
                                  "masks in its place do not repair"),
         "repair-unseen-needs-mask": ("for the blind mask: rule 2 repairs more with it than with random masks",
                                      "random masks in its place repair as much"),
         "cut-dense": ("a cut that needs no mask repairs the CNNs", "no repair"),
         "cut-input": ("removing the right-hand digit from the input repairs the CNNs", "no repair"),
         "cut-dense-vs-random": ("where the cut falls matters: the right half's weights, not their number",
                                 "as many random dense weights repair as much"),
         "excl-vs-cut": ("for the mask: rule 2 repairs more than the cut that needs none",
                         "the cut that needs no mask repairs as much"),
         "cut-dense-vs-left": ("where the cut falls matters: its mirror image on the left does not repair",
                               "its mirror image scores as well"),
         "cut-dense-vs-shifted": ("the repair needs every column that reads only the right-hand digit",
                                  "one right-only column left in place does not spoil the repair"),
         "excl-cut-vs-cut": ("for the mask: it finds weights the cut leaves that still carry the shortcut",
                             "the few weights rule 2 adds to the cut make no measurable difference"),
         "excl-cut-vs-random-cut": ("for the mask: with the cut, its choice beats random masks",
                                    "with the cut, random masks in its place (removing more) do as well"),
         "excl-outside": ("the few weights rule 2 removes beyond the cut repair on their own",
                          "the few weights rule 2 removes beyond the cut do not repair on their own"),
         "excl-outside-vs-random": ("for the mask: beyond the cut, its choice beats random weights as many",
                                    "beyond the cut, rule 2's weights do no better than random weights as many"),
         "excl-vs-left5": ("for the mask: a mask for another target does not repair as much",
                           "a mask for another target repairs as much"),
         "excl-vs-right5": ("for the mask: a mask for another target does not repair as much",
                            "a mask for another target repairs as much"),
         "excl-vs-left5-sized": ("for the mask: a mask that reads the left-hand digit, removing as many weights, "
                                 "does not repair as much", "a mask that reads the left-hand digit, removing as "
                                 "many weights, repairs as much"),
         "excl-vs-right5-sized": ("for the mask: a mask that reads the right-hand digit for another target, "
                                  "removing as many weights, does not repair as much", "a mask that reads the "
                                  "right-hand digit for another target, removing as many weights, repairs as "
                                  "much"),
         "excl-vs-left5-ranked": ("for the mask: the weights a left-digit mask ranks highest, as many, do not "
                                  "repair as much", "the weights a left-digit mask ranks highest, as many, repair "
                                  "as much"),
         "excl-vs-right5-ranked": ("for the mask: the weights a mask that reads the right-hand digit for another "
                                   "target ranks highest, as many, do not repair as much", "the weights a mask "
                                   "that reads the right-hand digit for another target ranks highest, as many, "
                                   "repair as much"),
         "kept-x2-predicts": ("the \"use X2\" mask's kept share predicts which networks generalize",
                              f"not at the registered size: the whole interval lies below {RHO:g}")}
# a "does not hold" whose whole interval lies on the other side of 0 (:func:`opposite`), where "no
# better than" would undersell it
OPPOSITE = {"repair-vs-random": "worse than a random cut"}


def opposite(c: stats.Claim) -> bool:
    """Whether the claim ``c`` does not hold with its whole interval on the other side of 0 from the
    registered direction (an effect the other way), read from its recorded decision."""
    v = c.verdict
    if v is None or v.outcome != stats.NOT_REPRODUCED or not v.claim:
        return False
    d = registry.decisions().get(v.claim)
    if d is None:
        return False
    s = 1.0 if registry.get(v.claim).direction > 0 else -1.0
    return max(s * d.low, s * d.high) < 0


def meaning(kind: str, outcomes: list[str], other_side: list[bool] | None = None) -> str:
    """What the rule's verdicts ``outcomes`` (:data:`modlib.stats.REPRODUCED` for *holds*; one per
    formulation, in order (a), (b)) of the toy claim
    ``kind`` mean for the chapter's question, in plain words (:data:`MEANS`): one phrase where the
    formulations agree, else one per formulation. ``other_side``: per formulation, whether its
    "does not hold" lies wholly on the other side of 0 (:func:`opposite`; :data:`OPPOSITE`'s words)."""
    other_side = other_side or [False] * len(outcomes)

    def said(outcome: str, other: bool) -> str:
        if outcome == stats.UNDECIDED:
            return "not settled here"
        if outcome != stats.REPRODUCED and other and kind in OPPOSITE:
            return OPPOSITE[kind]
        return MEANS[kind][0 if outcome == stats.REPRODUCED else 1]

    words = [said(o, x) for o, x in zip(outcomes, other_side)]
    if len(set(words)) == 1:
        return words[0]
    return "; ".join(f"({f}) {w}" for f, w in zip("ab", words))


def verdict_table(claims_by_formulation: dict[str, list[stats.Claim]], kinds=tuple(KINDS)):
    """The verdicts of ``kinds`` as one table (a ``pandas.DataFrame``; :func:`verdict_frame` shows
    it): a row per claim, a column per formulation (the mark and the outcome; the intervals are in
    the appendix), and what the verdicts mean for the chapter's question (:func:`meaning`)."""
    import pandas as pd

    fs = list(claims_by_formulation)
    scope = "over all networks" if set(kinds) == {"predicts"} else "on the failing networks"
    rows = []
    for kind in kinds:
        found = [_named(claims_by_formulation[f], kind, f) for f in fs]
        rows.append([ROW_WORDS[kind]] + [_cell(c) for c in found]
                    + [meaning(kind, [c.verdict.outcome for c in found], [opposite(c) for c in found])])
    return pd.DataFrame(rows, columns=[f"claim, {scope}"] + [f"formulation ({f})" for f in fs]
                        + ["what it means"])


def _named(claims: list[stats.Claim], kind: str, formulation: str, fresh: bool = False) -> stats.Claim:
    """The claim ``kind`` of ``formulation`` (its confirmatory copy where ``fresh``) among ``claims``."""
    return next(c for c in claims if c.name == f"{kind}-{formulation}{FRESH if fresh else ''}")


EXPLORATORY_CELL = "exploratory, not a claim"  # the fresh table's cell where only the fresh networks test it


def _tagged_mark(c: stats.Claim) -> str:
    """A claim's mark and outcome with "(post hoc)" where it was written down after its results
    began to be computed (:func:`modlib.claims.post_hoc`)."""
    return c.marked + (f" ({registry.POST_HOC})" if c.verdict is not None and registry.post_hoc(c.verdict.claim) else "")


def fresh_table(claims_by_formulation: dict[str, list[stats.Claim]],
                fresh_by_formulation: dict[str, list[stats.Claim]], seeds: tuple[str, str],
                kinds=(*KINDS, *FRESH_ONLY)):
    """The toy's claims beside their confirmatory copies (a ``pandas.DataFrame``;
    :func:`verdict_frame` shows it): a row per claim of ``kinds``; per formulation, the verdict on
    the chapter's own networks (written down after it was seen; :data:`EXPLORATORY_CELL` for a
    hypothesis of :data:`FRESH_ONLY`) and on the fresh ones (registered before they were computed),
    "(post hoc)" beside each verdict written down after its results began, ``seeds`` naming the two sets of seeds (``("seeds 0-99",
    "seeds 100-199")``). Each cell holds the mark and outcome only; the intervals are in the
    appendix."""
    import pandas as pd

    fs = list(claims_by_formulation)
    rows = []
    for kind in kinds:
        row = [ROW_WORDS[kind]]
        fresh = [_named(fresh_by_formulation[f], kind, f, True) for f in fs]
        for f, c in zip(fs, fresh):
            own = EXPLORATORY_CELL if kind in FRESH_ONLY else _tagged_mark(_named(claims_by_formulation[f], kind, f))
            row += [own, _tagged_mark(c)]
        rows.append(row)
    return pd.DataFrame(rows, columns=["claim"] + [f"({f}) {s}" for f in fs for s in seeds])


def fresh_agreement(claims_by_formulation: dict[str, list[stats.Claim]],
                    fresh_by_formulation: dict[str, list[stats.Claim]]) -> stats.Finding:
    """How many of the toy's verdicts their confirmatory copies repeat on the fresh networks (of
    them, how many were decided both times and how many undecided both times, which confirms
    nothing), and which they do not (named in plain words, :func:`plain_name`, each with both
    verdicts): a statement for the page, true where every one is repeated."""
    pairs = [(c, _named(fresh_by_formulation[f], c.name.removesuffix(f"-{f}"), f, True))
             for f, cs in claims_by_formulation.items() for c in cs]
    differ = [(c, d) for c, d in pairs if c.verdict.outcome != d.verdict.outcome]
    open_both = sum(c.verdict.outcome == d.verdict.outcome == stats.UNDECIDED for c, d in pairs)
    controls = sum(is_control(c.name) for c, _ in pairs)
    said = (f"Of the {len(pairs)} claims copied ({controls} of them controls), {len(pairs) - len(differ)} come out "
            f"the same on the fresh networks as on the chapter's own ({len(pairs) - len(differ) - open_both} decided "
            f"both times, {open_both} undecided both times)")
    if differ:
        said += ("; not " + stats.listing(f"{plain_name(c.name)} ({c.marked} there, {d.marked} on the fresh ones)"
                                          for c, d in differ))
    return stats.Finding("fresh-agreement", not differ, said + ".")


def _amended(c: stats.Claim) -> str:
    """For an amended claim, what the page prints beside its verdict: the verdict as registered
    where the amendment changed it, else that the amendment left the verdict as it was; "" for a
    claim never amended. Read from the recorded decision (:func:`modlib.claims.decisions`), not
    from the verdict's words."""
    v = c.verdict
    if v is None or not v.amended or not v.claim:
        return ""
    a = registry.amended(v.claim)
    if a is None or not a.decided:
        return ""
    if a.same:
        return "amended after the results were seen; the same verdict as registered"
    return f"changed after the results were seen; as registered: {a.first}"


def _cell(c: stats.Claim) -> str:
    """A claim's mark and outcome as a verdict table shows it, with the verdict as registered where
    the claim was amended after its results were seen and that changed it, and
    :data:`modlib.claims.AMENDED` where the amendment left it as it was (:func:`amended_note` says so
    under the table)."""
    if c.verdict is not None and c.verdict.claim and registry.amended_unchanged(c.verdict.claim):
        return f"{c.marked} {registry.AMENDED}"
    note = _amended(c)
    return f"{c.marked} ({note})" if note else c.marked


def amended_note(table) -> str:
    """The line under a verdict table of this module (:func:`verdict_table`,
    :func:`digit_verdict_table`) that says what its :data:`modlib.claims.AMENDED` marks; "" where no
    cell carries one."""
    cells = table.astype(str).to_numpy().ravel()
    if not any(cell.endswith(f" {registry.AMENDED}") for cell in cells):
        return ""
    return (f"{registry.AMENDED} The claim was amended after its results were seen; under the claim as first "
            "registered the verdict is the same. The appendix's line for the claim says what changed; the claims "
            "ledger, when and why.")


def post_hoc_note(keys) -> str:
    """The line under a verdict table whose cells print a verdict without its "(post hoc)" label:
    which of the table's claims ``keys`` (``"<chapter>/<id>"``) were written down after their results
    were seen (:func:`modlib.claims.post_hoc`), all of them or those named (:func:`plain_name`); where
    none was, that they were registered before their results were computed (:data:`FIRST`), or
    before the newest of them (:data:`NEWEST`)."""
    keys = list(keys)
    late = [k for k in keys if registry.post_hoc(k)]
    if not late:
        return FIRST if all(registry.written(registry.get(k)) == "before" for k in keys) else NEWEST
    if len(late) == len(keys):
        return ("Every verdict in this table is post hoc: its claim was written down after its results were "
                "seen (the claims ledger dates each).")
    return ("Post hoc, written down after their results were seen: "
            + stats.listing(plain_name(k.split("/", 1)[1]) for k in late) + ".")


# under a verdict table none of whose claims is post hoc
FIRST = ("Every verdict in this table is of a claim registered before its results were computed (the claims "
         "ledger dates each).")
NEWEST = ("Every verdict in this table is of a claim registered before the results it adds were computed, on "
          "networks (and masks) stored and seen before (the claims ledger dates each).")
HOLM_MARK = "‡"  # beside a verdict that holds one claim at a time but not after Holm's correction


def holm_note(table) -> str:
    """The line under a verdict table that says what its :data:`HOLM_MARK` marks; "" where no cell
    carries one."""
    cells = table.astype(str).to_numpy().ravel()
    if not any(cell.endswith(f" {HOLM_MARK}") for cell in cells):
        return ""
    return (f"{HOLM_MARK} Holds one claim at a time, as registered; read together with the chapter's other "
            "claims, after Holm's correction (the appendix's \"Many claims at once\"), its interval no longer "
            "clears 0.")


def table_note(table, keys) -> str:
    """Everything the page says under a verdict table: what a dagger marks (:func:`amended_note`),
    what a double dagger marks (:func:`holm_note`) and which of its claims ``keys`` are post hoc
    (:func:`post_hoc_note`), one line each."""
    return "\n\n".join(x for x in (amended_note(table), holm_note(table), post_hoc_note(keys)) if x)


NO_FAILING = "– (no network fails at this profile)"  # what a page prints for a mean over no failing network


def mean_gain(arrays: dict, arm: str, against: str = "full") -> float:
    """Mean over the failing networks of ``both(arm) - both(against)`` (nan when none fails:
    the page prints :data:`NO_FAILING`)."""
    f = failing(arrays)
    return float((both(arrays, arm)[f] - both(arrays, against)[f]).mean()) if f.any() else float("nan")


# ---------------------------------------------------------------- experiment 1 on chapter 3's CNNs
# (notebooks/bridge.ipynb, "On chapter 3's CNNs"; the arrays of modlib.bridge.digits)

GAP = stats.CLEAR  # a CNN fails the held-out pairs: held-out accuracy at least this below its training accuracy
DIGIT_KINDS = ("inside", "not-any", "built")
SURGERY_KINDS = ("repair", "repair-vs-random", "repair-excl", "repair-excl-vs-random", "repair-excl-needs-mask")


def digit_failing(arrays: dict) -> np.ndarray:
    """``[S]`` bool: the CNNs whose held-out accuracy falls at least :data:`GAP` below their
    accuracy on fresh pairs of their training distribution (Li et al.'s failure: the held-out
    combinations answered worse than the seen ones)."""
    return arrays["full_held_out"] <= arrays["full_train"] - GAP


def _digit_kept_ok(arrays: dict, mask: str) -> bool:
    """A CNN mask is not degenerate: in the median seed it keeps at most ``KEPT[1]`` of the weights
    and at least one weight of every tensor (else the output is the biases' constant). A small
    pooled share is not degenerate here: 98% of the CNN's weights sit in one dense layer."""
    pooled = float(np.median(arrays[f"kept_{mask}"]))
    fewest = float(np.median(arrays[f"kept_{mask}_layers"].min(axis=1)))
    return fewest > 0 and pooled <= KEPT[1]


def digit_claims(arrays: dict) -> list[stats.Claim]:
    """Experiment 1's claims on chapter 3's setting-A CNNs (:mod:`modlib.bridge.digits`), as
    :func:`claims` states them for the toy: paired by seed over the failing CNNs
    (:func:`digit_failing`), each arm scored by the worse of held-out and training accuracy
    (:func:`both`). They need the CNNs to have trained (median training accuracy at least chapter
    3's ``TRAINED``), the masks they compare to compute Y1 on fresh unconfounded pairs (median at
    least ``FIT``) and to be non-degenerate (:func:`_digit_kept_ok`)."""
    from modlib.resists_at_scale.findings import TRAINED as CH3_TRAINED

    f = digit_failing(arrays)
    where = f"chapter 3's setting-A CNNs, the {int(f.sum())} of {f.size} that fail the held-out pairs"
    fits = {m: float(np.median(arrays[f"{arm}_unconfounded"]))
            for m, arm in (("y1", "sub"), ("untrained", "untrained_sub"))}
    ks = {m: _share(float(np.median(arrays[f"kept_{m}"]))) for m in MASKS_DIGITS}
    table = [
        ("inside", "sub", "full", ("y1",),
         f"the Y1 subnetwork (median kept share {ks['y1']}; it names the left digit of fresh "
         f"unconfounded pairs with median accuracy {_pct(fits['y1'])}) scores above the full CNN on "
         f"held-out and training pairs alike"),
        ("not-any", "sub", "random_sub", ("y1",),
         "the Y1 subnetwork scores above a random subnetwork with as many weights per tensor"),
        ("built", "sub", "untrained_sub", ("y1", "untrained"),
         f"the Y1 subnetwork of the trained weights scores above the one a mask finds in the same "
         f"CNN's initial, untrained weights (median kept share {ks['untrained']}; median accuracy "
         f"{_pct(fits['untrained'])} on fresh unconfounded pairs)"),
    ]
    trained = float(np.median(arrays["full_train"])) >= CH3_TRAINED
    return decided(arrays, f, table, "mnist", where, trained, fits, lambda m: _digit_kept_ok(arrays, m))


MASKS_DIGITS = ("y1", "untrained")  # the CNN masks of modlib.bridge.digits


def surgery_claims(arrays: dict, fresh: bool = False) -> list[stats.Claim]:
    """Experiment 2's rules on chapter 3's setting-A CNNs (:mod:`modlib.bridge.digit_surgery`;
    ``arrays`` its results stacked, :func:`modlib.bridge.digit_surgery.stacked`; ``fresh``: the fresh
    CNNs' of :mod:`modlib.bridge.surgery_fresh`, decided for the claims' copies), as :func:`claims`
    states them for the toy: paired by seed over the failing CNNs (:func:`digit_failing`), each arm
    scored by the worse of held-out and training accuracy (:func:`both`). They need the CNNs to have
    trained (median training accuracy at least chapter 3's ``TRAINED``), the masks they read to
    compute their tasks (median at least ``FIT``: the Y1 mask names the left digit of fresh
    unconfounded pairs, the "use X2" mask the right digit of fresh setting-B pairs) and not to be
    degenerate (:func:`_digit_kept_ok`), and rule 2's removal not to be empty (:func:`surgery_gates`)."""
    f = digit_failing(arrays)
    cnns = "fresh CNNs of chapter 3's setting-A recipe" if fresh else "chapter 3's setting-A CNNs"
    where = f"{cnns}, the {int(f.sum())} of {f.size} that fail the held-out pairs"
    fits = {"y1": float(np.median(arrays["sub_unconfounded"])), "x2": float(np.median(arrays["x2_fit"]))}
    ks = {m: _share(float(np.median(arrays[f"kept_{m}"]))) for m in ("y1", "x2", "excl")}
    table = [
        ("repair", "ablated", "full", ("x2",),
         f"removing the weights of the \"use X2\" mask (median kept share {ks['x2']}; it names the right "
         f"digit of fresh setting-B pairs with median accuracy {_pct(fits['x2'])}) raises the worse of "
         f"held-out and training accuracy"),
        ("repair-vs-random", "ablated", "random_ablated", ("x2",),
         "removing the \"use X2\" mask's weights scores above removing as many random weights per tensor"),
        ("repair-excl", "ablated_excl", "full", ("x2", "y1", "excl"),
         f"removing only the weights the \"use X2\" mask keeps and the Y1 mask (median kept share "
         f"{ks['y1']}) does not ({ks['excl']} of the weights, median) raises the worse of held-out and "
         f"training accuracy"),
        ("repair-excl-vs-random", "ablated_excl", "random_ablated_excl", ("x2", "y1", "excl"),
         "removing those weights scores above removing as many random weights per tensor from outside "
         "the Y1 mask (the mean of three draws)"),
        ("repair-excl-needs-mask", "ablated_excl", "random_x2_excl", ("x2", "y1", "excl"),
         "rule 2 with the \"use X2\" mask scores above rule 2 with random masks of its counts per tensor "
         "(the mean of five draws): the mask adds to the repair"),
    ]
    return decided(arrays, f, table, "mnist" + (FRESH if fresh else ""), where, *surgery_gates(arrays))


def surgery_gates(arrays: dict) -> tuple:
    """The bar of the surgery claims on CNNs (:func:`surgery_claims`), as :func:`decided` takes it:
    ``(trained, fits, kept_ok, fit_words)`` from the stacked surgery ``arrays``: the median CNN at
    chapter 3's ``TRAINED`` on its training pairs; each mask's median fit (rule 2's removal gated by
    the Y1 mask's); a mask not degenerate (:func:`_digit_kept_ok`), rule 2's removal not empty."""
    from modlib.resists_at_scale.findings import TRAINED as CH3_TRAINED

    trained = float(np.median(arrays["full_train"])) >= CH3_TRAINED
    fits = {"y1": float(np.median(arrays["sub_unconfounded"])), "x2": float(np.median(arrays["x2_fit"]))}
    fits["excl"] = fits["y1"]  # rule 2's removal is gated by its two masks' fits and its own kept share

    def kept_ok(m: str) -> bool:
        return float(np.median(arrays["kept_excl"])) > 0 if m == "excl" else _digit_kept_ok(arrays, m)

    words = {"y1": "the Y₁ mask names the left-hand digit",  # a verdict's reason, in the page's prose: subscripts
             "x2": "the \"use X₂\" mask names the right-hand digit"}
    return trained, fits, kept_ok, words


def _share(v: float) -> str:
    """A kept share with two significant digits: "1.9%", "0.088%", "88%" (a CNN mask keeps little)."""
    return f"{100 * v:.2g}%"


def digit_statements(arrays: dict) -> list[stats.Finding]:
    """Descriptive statements for the appendix: the CNNs against chapter 3's numbers, every mask's
    kept share (pooled and per weight tensor), and how much each arm leans on the right digit (the
    swap test)."""
    f = digit_failing(arrays)
    med = lambda k: _pct(float(np.median(arrays[k])))  # noqa: E731
    out = [stats.Finding(
        "failing-mnist", True,
        f"Chapter 3's setting-A CNNs: {int(f.sum())} of {f.size} fail the held-out pairs (held-out "
        f"accuracy at least {GAP * 100:.0f} points below training accuracy); median held-out "
        f"accuracy {med('full_held_out')}, training {med('full_train')}; chapter 3's own final "
        f"measurement of the same CNNs: held-out {med('ch3_final_test')}, training "
        f"{med('ch3_final_train')}.")]
    for m, what in (("y1", "Y1 mask (trained weights)"), ("untrained", "Y1 mask (untrained weights)")):
        k = arrays[f"kept_{m}"]
        layers = np.median(arrays[f"kept_{m}_layers"], axis=0)
        out.append(stats.Finding(
            f"kept-{m}-mnist", _digit_kept_ok(arrays, m),
            f"Chapter 3's CNNs, {what}: kept share median {_share(float(np.median(k)))} (range "
            f"{_share(float(k.min()))}–{_share(float(k.max()))}); per weight tensor "
            + ", ".join(_share(float(x)) for x in layers) + "."))
    for arm, what in (("full", "the full CNNs"), ("sub", "their Y1 subnetworks"),
                      ("untrained_sub", "the Y1 subnetworks of the untrained weights")):
        out.append(stats.Finding(
            f"swapped-{arm}-mnist", True,
            f"Chapter 3's CNNs, {what}: median accuracy {med(f'{arm}_swapped')} on training pairs "
            f"whose right digit is replaced by a random one, against {med(f'{arm}_train')} on the "
            f"pairs themselves (a drop means the right digit is used; none, that it is not)."))
    return out


def digit_table(arrays: dict):
    """One row per seed: ``pandas.DataFrame`` of every arm's accuracy on every scored set and
    every mask's kept share."""
    import pandas as pd

    from modlib.bridge.digits import ARMS as DIGIT_ARMS
    from modlib.bridge.digits import SETS as DIGIT_SETS

    cols = {"seed": np.arange(arrays["full_held_out"].size), "fails": digit_failing(arrays)}
    for arm in DIGIT_ARMS:
        for k in DIGIT_SETS:
            cols[f"{ARM_WORDS.get(arm, arm)}: {k.replace('_', '-')}"] = arrays[f"{arm}_{k}"].round(3)
    for m in MASKS_DIGITS:
        cols[f"kept share: {MASK_WORDS[m]}"] = arrays[f"kept_{m}"].round(4)
    return pd.DataFrame(cols)


def digit_verdict_table(claims: list[stats.Claim], kinds: tuple[str, ...] = DIGIT_KINDS,
                        fresh: list[stats.Claim] | None = None):
    """The verdicts of ``kinds`` among ``claims`` (:func:`digit_claims`, or :func:`surgery_claims`
    with :data:`SURGERY_KINDS`) as one table (a ``pandas.DataFrame``; the intervals are in the
    appendix), with what each verdict means (:func:`meaning`). ``fresh``: the same kinds' copies on
    fresh CNNs (:func:`surgery_claims` with ``fresh``), a column of their own; what the verdicts
    mean is then read from theirs."""
    import pandas as pd

    rows = []
    for kind in kinds:
        c = _named(claims, kind, "mnist")
        read = c if fresh is None else _named(fresh, kind, "mnist", fresh=True)
        rows.append([KINDS[kind], _cell(c)] + ([] if fresh is None else [_cell(read)])
                    + [meaning(kind, [read.verdict.outcome], [opposite(read)])])
    columns = ["claim, on the failing CNNs", "chapter 3's CNNs, setting A"]
    return pd.DataFrame(rows, columns=columns + ([] if fresh is None else ["fresh CNNs, setting A"])
                        + ["what it means" if fresh is None else "what the fresh CNNs' verdict means"])


def surgery_table(arrays: dict, first_seed: int = 0):
    """One row per CNN of the surgery (:mod:`modlib.bridge.digit_surgery`; seeds from ``first_seed``,
    5 for the fresh CNNs of :mod:`modlib.bridge.surgery_fresh`): ``pandas.DataFrame`` of every arm's
    held-out and training accuracy, the masks' kept shares and the "use X2" mask's fit."""
    import pandas as pd

    from modlib.bridge.digit_surgery import ARMS as SURGERY_ARMS

    cols = {"seed": first_seed + np.arange(arrays["full_held_out"].size), "fails": digit_failing(arrays)}
    for arm in SURGERY_ARMS:
        for k in ("held_out", "train"):
            cols[f"{ARM_WORDS.get(arm, arm)}: {k.replace('_', '-')}"] = arrays[f"{arm}_{k}"].round(3)
    for m, words in (("y1", MASK_WORDS["y1"]), ("x2", MASK_WORDS["x2"]), ("excl", "rule 2's removal")):
        cols[f"kept share: {words}"] = arrays[f"kept_{m}"].round(4)
    cols["'use X2' mask: right digit named"] = arrays["x2_fit"].round(3)
    return pd.DataFrame(cols)


def digit_gain(arrays: dict, arm: str, against: str = "full") -> float:
    """Mean over the failing CNNs of ``both(arm) - both(against)`` (nan when none fails)."""
    f = digit_failing(arrays)
    return float((both(arrays, arm)[f] - both(arrays, against)[f]).mean()) if f.any() else float("nan")


# ---------------------------------------------------------------- chapter 2's decoders
# "Chapter 2's decoders" (experiment 3), from the stored results of :mod:`modlib.bridge.sprites`
# (arrays per model: "monolithic", "compositional"). A decoder seed is one unit. The masks are read
# only where the decoders fit their training support (median in-domain R^2 at least chapter 2's
# ``FIT``) and each slot's subnetwork draws its sprite alone (median R^2 against that scene at
# least ``MASK_FIT``), with kept shares inside ``KEPT``.

MASK_FIT = 0.5  # a slot subnetwork draws its sprite: median R^2 against the one-sprite scene at least this
SPRITE_KINDS = {
    "renders": "each slot's subnetwork draws its sprite alone better than a random one as large",
    "separate": "the two slot masks share fewer weights than chance",
    "selective": "removing a slot's own weights harms its own sprite more than the other",
    "predicts": "the slot masks' overlap above chance predicts whole-cube R² (more overlap, higher R²)",
    "vs-reference": "the slot masks overlap more (above chance) than the compositional model's",
}


def _decoder_fit() -> float:
    from modlib.compositional_sprites.findings import FIT as decoder_fit

    return decoder_fit


def _layer_counts(arrays: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per seed and masked tensor: the weights slot 0's mask keeps, slot 1's, and both keep
    (each ``[S, L]``), from the stored masks ``mask [S, 2, W]`` and ``mask_layers [L]``."""
    m = np.asarray(arrays["mask"], dtype=bool)
    cuts = np.cumsum(np.asarray(arrays["mask_layers"], dtype=int))[:-1]
    parts = np.split(m, cuts, axis=2)  # L arrays [S, 2, n_l]
    a = np.stack([p[:, 0].sum(1) for p in parts], axis=1)
    b = np.stack([p[:, 1].sum(1) for p in parts], axis=1)
    both = np.stack([(p[:, 0] & p[:, 1]).sum(1) for p in parts], axis=1)
    return a.astype(float), b.astype(float), both.astype(float)


def _iou(inter: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    union = a + b - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)


def slot_overlap(arrays: dict, per_layer: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The two slot masks' overlap: ``(iou, chance)``, each ``[S]`` (pooled over the masked
    weights) or ``[S, L]`` (per tensor). ``iou`` is |m0 & m1| / |m0 | m1|; ``chance`` the same
    with the intersection two masks of these kept counts per tensor would have at random places,
    sum over tensors of |m0_l| |m1_l| / n_l. Two masks that keep nothing overlap 0 (and 0)."""
    a, b, both = _layer_counts(arrays)
    expected = a * b / np.asarray(arrays["mask_layers"], dtype=float)
    if per_layer:
        return _iou(both, a, b), _iou(expected, a, b)
    return _iou(both.sum(1), a.sum(1), b.sum(1)), _iou(expected.sum(1), a.sum(1), b.sum(1))


def slot_score(arrays: dict) -> np.ndarray:
    """``[S]``: the slot masks' overlap above chance (:func:`slot_overlap`, pooled): below 0 they
    share fewer weights than chance (the slots separate), above 0 more."""
    iou, chance = slot_overlap(arrays)
    return iou - chance


def selectivity(damage: np.ndarray) -> np.ndarray:
    """``[S]`` from ``damage [S, j, k]`` (the rise of the error on sprite k's pixels with the weights
    only slot j's mask keeps removed, :func:`modlib.bridge.sprites.exclusive`): (own sprites' damage
    - the other's) / the sum of all four magnitudes, from -1 to 1; 1: removing a slot's own weights
    harms only its own sprite; 0 where nothing changes."""
    d = np.asarray(damage, dtype=float)
    own, other = d[:, 0, 0] + d[:, 1, 1], d[:, 0, 1] + d[:, 1, 0]
    total = np.abs(d).sum((1, 2))
    return np.where(total > 0, (own - other) / np.maximum(total, 1e-12), 0.0)


def _sprite_gates(arrays: dict) -> tuple[bool, bool, bool]:
    """``(decoders fit, slot subnetworks fit, kept shares inside KEPT)``."""
    trained = float(np.median(arrays["r2_in"])) >= _decoder_fit()
    fits = bool((np.median(arrays["slot_in"], axis=0) >= MASK_FIT).all())
    k = np.median(arrays["kept"], axis=0)
    return trained, fits, bool(((k >= KEPT[0]) & (k <= KEPT[1])).all())


def sprite_claims(arrays: dict, model: str) -> list[stats.Claim]:
    """The claims of "Chapter 2's decoders" for one model's stored arrays, under the verdict rule:
    ``renders`` (each slot subnetwork's R^2 against its one-sprite scene, mean over the two slots,
    above a random subnetwork as large per layer; paired t over seeds), ``separate`` (chance minus
    observed IoU of the two masks; paired t), ``selective`` (:func:`selectivity` above that of
    random removals; paired t), each with :data:`modlib.stats.CLEAR` as margin, and ``predicts``
    (Spearman's rho of :func:`slot_score` with whole-cube R^2, Fisher z, in the registered direction,
    margin :data:`RHO`). ``renders`` needs the decoders to fit and the kept shares inside ``KEPT``; the
    others also need both slot subnetworks to fit (``MASK_FIT``)."""
    trained, fits, kept_ok = _sprite_gates(arrays)
    n = arrays["r2_in"].size
    iou, chance = slot_overlap(arrays)
    sel, sel_random = selectivity(arrays["damage"]), selectivity(arrays["damage_random"])
    k0, k1 = (_pct(float(np.median(arrays["kept"][:, j]))) for j in range(2))
    s0, s1 = (f"{float(np.median(arrays['slot_in'][:, j])):.2f}" for j in range(2))
    where = f"The {n} {model} decoders' slot masks (median kept shares {k0} and {k1})"
    out = []
    e = stats.paired(arrays["slot_in"].mean(1), arrays["random_in"].mean(1))
    v = registry.decide(f"{CHAPTER}/renders-{model}", e, trained=trained, controls=kept_ok)
    out.append(registry.statement(v, (
        f"{where}: each slot's subnetwork draws the scene with its sprite alone (median R² {s0} and "
        f"{s1} in-domain) better than a random subnetwork as large per layer, R² "
        f"{e.text(percent=False)}")))
    table = [("separate", stats.paired(chance, iou),
              "share fewer weights than two masks of their sizes per layer at random places: "
              "chance minus observed IoU"),
             ("selective", stats.paired(sel, sel_random),
              "are selective: removing the weights only one slot's mask keeps harms its own sprite's "
              "pixels more than the other's, selectivity above random removals by")]
    for name, e, says in table:
        v = registry.decide(f"{CHAPTER}/{name}-{model}", e, trained=trained and fits, controls=kept_ok)
        out.append(registry.statement(v, f"{where} {says} {e.text(percent=False)}"))
    e = stats.correlation(slot_score(arrays), arrays["r2_whole"])
    key = f"{CHAPTER}/predicts-{model}"
    v = registry.decide(key, e, trained=trained and fits, controls=kept_ok)
    out.append(registry.statement(v, (
        f"Over the {n} {model} decoders, their slot masks' overlap above chance predicts the "
        f"decoder's whole-cube R², a rank correlation of at least {RHO:.1f} "
        f"{_direction(key, 'whole-cube R²')}: rho {e.text(percent=False)}")))
    return out


def sprite_statements(arrays: dict, model: str) -> list[stats.Finding]:
    """Descriptive statements for the appendix: the decoders' fit, each slot mask's kept share and
    R^2, the overlap per layer, the selectivity and what it alone would predict."""
    r_in, r_whole = arrays["r2_in"], arrays["r2_whole"]
    fit = _decoder_fit()
    out = [stats.Finding(
        f"decoders-{model}", float(np.median(r_in)) >= fit,
        f"The {r_in.size} {model} decoders: R² in-domain {stats.mean_pm(r_in)} (chapter 2's fit "
        f"threshold {fit}), on the whole cube {stats.mean_pm(r_whole)}.")]
    for j in range(2):
        k, layers = arrays["kept"][:, j], np.median(arrays["kept_layers"][:, j], axis=0)
        out.append(stats.Finding(
            f"slot{j}-{model}", float(np.median(arrays["slot_in"][:, j])) >= MASK_FIT,
            f"{model.capitalize()}, slot {j}'s mask: kept share median {_pct(float(np.median(k)))} (range "
            f"{_pct(float(k.min()))}–{_pct(float(k.max()))}; per layer "
            + ", ".join(_pct(float(x)) for x in layers)
            + f"); R² against the scene with sprite {j} alone: subnetwork {stats.mean_pm(arrays['slot_in'][:, j])} "
            f"in-domain and {stats.mean_pm(arrays['slot_whole'][:, j])} on the whole cube, a random "
            f"subnetwork as large per layer {stats.mean_pm(arrays['random_in'][:, j])}, the whole decoder "
            f"{stats.mean_pm(arrays['full_slot_in'][:, j])} (in-domain)."))
    iou, chance = slot_overlap(arrays)
    li, lc = (np.median(x, axis=0) for x in slot_overlap(arrays, per_layer=True))
    out.append(stats.Finding(
        f"overlap-{model}", True,
        f"{model.capitalize()}: the slot masks' IoU median {float(np.median(iou)):.2f} against "
        f"{float(np.median(chance)):.2f} by chance; per layer (observed / chance) "
        + ", ".join(f"{a:.2f}/{c:.2f}" for a, c in zip(li, lc)) + "."))
    sel, sel_random = selectivity(arrays["damage"]), selectivity(arrays["damage_random"])
    out.append(stats.Finding(
        f"selectivity-{model}", True,
        f"{model.capitalize()}: selectivity of removing the weights only one slot's mask keeps "
        f"{stats.mean_pm(sel)}, of removing as many random weights per layer {stats.mean_pm(sel_random)} (1: "
        f"a removal harms only its own sprite's pixels)."))
    e = stats.correlation(sel, r_whole)
    out.append(stats.Finding(
        f"selectivity-predicts-{model}", e.measurable,
        f"{model.capitalize()}, the selectivity instead of the overlap ({EXPLORATORY}): against whole-cube R², rho "
        f"{no_interval(e.text(percent=False))}."))
    return out


def sprite_table(arrays: dict, model: str):
    """One row per decoder seed: ``pandas.DataFrame`` of its R^2, each slot mask's kept share and
    R^2, the overlap and the selectivity."""
    import pandas as pd

    iou, chance = slot_overlap(arrays)
    cols = {"model": model, "seed": np.arange(arrays["r2_in"].size),
            "decoder: R² in-domain": arrays["r2_in"].round(3),
            "decoder: R² whole cube": arrays["r2_whole"].round(3)}
    for j in range(2):
        cols[f"slot {j} mask: kept share"] = arrays["kept"][:, j].round(3)
        cols[f"slot {j} subnetwork: R² in-domain"] = arrays["slot_in"][:, j].round(3)
        cols[f"slot {j} subnetwork: R² whole cube"] = arrays["slot_whole"][:, j].round(3)
        cols[f"slot {j} random subnetwork: R² in-domain"] = arrays["random_in"][:, j].round(3)
    cols["IoU"], cols["IoU by chance"] = iou.round(3), chance.round(3)
    cols["selectivity"] = selectivity(arrays["damage"]).round(3)
    cols["selectivity of random removals"] = selectivity(arrays["damage_random"]).round(3)
    return pd.DataFrame(cols)


def sprite_verdict_table(claims_by_model: dict[str, list[stats.Claim]], kinds=tuple(SPRITE_KINDS)):
    """The verdicts of "Chapter 2's decoders" as one table (a ``pandas.DataFrame``): a row per claim
    made for some model, a column per model (the compositional one is the reference); the intervals
    are in the appendix; :data:`HOLM_MARK` beside a verdict that holds one claim at a time but no
    longer clears 0 after Holm's correction (:func:`after_holm`)."""
    import pandas as pd

    ms = list(claims_by_model)
    name = {"monolithic": "monolithic decoder", "compositional": "compositional (reference)"}

    def cell(c: stats.Claim) -> str:  # with HOLM_MARK where Holm's correction undoes a "holds"
        lost = c.verdict is not None and c.verdict.reproduced and after_holm(c.name) == "no longer clears 0"
        return f"{c.marked} {HOLM_MARK}" if lost else c.marked

    rows = []
    for kind in kinds:
        cells = [next((cell(c) for c in claims_by_model[m] if c.name == f"{kind}-{m}"), "—")
                 for m in ms]
        if cells != ["—"] * len(ms):
            rows.append([SPRITE_KINDS[kind]] + cells)
    return pd.DataFrame(rows, columns=["claim, over decoder seeds"] + [name.get(m, m) for m in ms])


def reference_claim(mono: dict, comp: dict) -> stats.Claim:
    """The monolithic decoders against the reference: their slot masks' overlap above chance
    (:func:`slot_score`) exceeds the compositional models' (Welch's t interval over the two groups
    of seeds, :data:`modlib.stats.CLEAR` as margin), decided only where both models' decoders and
    slot subnetworks fit and every kept share lies inside ``KEPT``."""
    gates = [_sprite_gates(a) for a in (mono, comp)]
    e = stats.unpaired(slot_score(mono), slot_score(comp))
    v = registry.decide(f"{CHAPTER}/vs-reference-monolithic", e, trained=all(g[0] and g[1] for g in gates),
                        controls=all(g[2] for g in gates))
    return registry.statement(v, (
        f"The monolithic decoders' slot masks overlap more, above chance, than the compositional "
        f"models' (the reference, whose slots are separate by construction): "
        f"{e.text(percent=False)}"))


def all_sprite_claims(arrays_by_model: dict[str, dict]) -> dict[str, list[stats.Claim]]:
    """Every claim of "Chapter 2's decoders" by model (:func:`sprite_claims`), the comparison with
    the reference (:func:`reference_claim`) among the monolithic decoders' where both are there."""
    out = {m: sprite_claims(a, m) for m, a in arrays_by_model.items()}
    if {"monolithic", "compositional"} <= set(arrays_by_model):
        out["monolithic"].append(reference_claim(arrays_by_model["monolithic"],
                                                 arrays_by_model["compositional"]))
    return out


# ---------------------------------------------------------------- the verdict tables as the page shows them


SUBSCRIPTS = {r"\bY1\b": "Y₁", r"\bY2\b": "Y₂", r"\bX2\b": "X₂", r"\bx2\b": "x₂", r"\bx1\b": "x₁"}  # the prose's Y_1, ...


def typeset(text: str) -> str:
    """``text`` with the variables the prose typesets ($Y_1$, $X_2$, ...) written with subscripts,
    for a table, where no maths is rendered: "the Y1 subnetwork" -> "the Y₁ subnetwork"."""
    for plain, sub in SUBSCRIPTS.items():
        text = re.sub(plain, sub, text)
    return text


def verdict_frame(table):
    """A verdict table of this module (:func:`verdict_table`, :func:`digit_verdict_table`,
    :func:`sprite_verdict_table`) as the page shows it, the way chapters 5 and 6 show theirs: a
    pandas Styler, left-aligned, without an index, its variables typeset as the prose's (:func:`typeset`),
    a rule under each row and room around each cell (a row whose text wraps stays one row to the eye)."""
    shown = table.apply(lambda column: column.map(lambda v: typeset(v) if isinstance(v, str) else v))
    shown = shown.rename(columns=typeset)
    cell = [("padding", "0.35em 0.6em"), ("border-bottom", "1px solid #d0d0d0"), ("vertical-align", "top")]
    return shown.style.hide(axis="index").set_properties(**{"text-align": "left"}).set_table_styles(
        [{"selector": "th", "props": [("text-align", "left"), *cell]}, {"selector": "td", "props": cell}])


def predicts_why(cid: str) -> str:
    """Why the rank-correlation claim ``cid`` of the chapter (``"predicts-b"``, registered in the
    positive direction) got the verdict last decided, in plain words for the box: the rule
    (:func:`modlib.stats.verdict`) read for a correlation and its margin; "" where it was not
    decided."""
    key = f"{CHAPTER}/{cid}"
    d = registry.decisions(CHAPTER).get(key)
    if d is None:
        return ""
    bar = f"{registry.get(key).margin:g}"
    if d.outcome == stats.REPRODUCED:
        return f"the interval is clear of 0 and rho reaches {bar}"
    if d.outcome == stats.NOT_REPRODUCED:
        return f"the whole interval lies below {bar}, so a correlation of the registered size is ruled out"
    if not d.open:
        return stats.undecided_reason(stats.Verdict(d.outcome, d.why))
    if d.low > 0:
        return f"the interval is clear of 0, but rho falls short of {bar} while the interval reaches it"
    return f"the interval allows both no correlation and one of {bar}"


def _estimate_points(d, margin: float) -> str:
    """A decision's estimate and interval in points, as the page's prose gives accuracies: "+4 points
    (+2 to +6)"."""
    return (f"{stats.points(d.estimate, margin)} points ({stats.points(d.low, margin)} to "
            f"{stats.points(d.high, margin)})")


def lead_points(key: str) -> str:
    """The accuracy claim ``key``'s estimate and interval in points (:func:`_estimate_points`), for
    the prose beside a verdict: "+5.2 points (+3 to +8)"; "not decided" where it was not."""
    d = registry.decisions().get(key)
    return "not decided" if d is None else _estimate_points(d, registry.get(key).margin)


def _in_points(key: str) -> str:
    """Why the accuracy claim ``key`` cannot be decided where only its interval's place does it
    (:attr:`modlib.claims.Decision.open`), in points as the page's prose gives accuracies: "+4.7 points
    (+3 to +6): clear of 0, but the estimate falls short of the margin of +5 points"."""
    d = registry.decisions()[key]
    m = registry.get(key).margin
    said = _estimate_points(d, m)
    if d.low > 0:
        return f"{said}: clear of 0, but the estimate falls short of the margin of {stats.points(m)} points"
    return f"{said}: wide enough for no effect and for one of {stats.points(m)} points"


def lead_short(key: str) -> str:
    """Where the interval of the accuracy claim ``key`` alone leaves it undecided under the rule
    (:func:`modlib.stats.verdict`, with no further condition), why, in points: "its lead, +4 points
    (+2 to +6), falls short of the margin of +5 points while its interval reaches it"; "" where
    the interval alone decides it, or the claim was not decided. Chapter 7's "built" claims read it
    for their verdict as first registered, before the density condition was added."""
    d = registry.decisions().get(key)
    if d is None:
        return ""
    m = registry.get(key).margin
    lead = f"its lead, {_estimate_points(d, m)},"
    if d.high < m or (d.low > 0 and d.estimate >= m):
        return ""
    if d.low > 0:
        return f"{lead} falls short of the margin of {stats.points(m)} points while its interval reaches it"
    return f"{lead} has an interval wide enough for no effect and for one of {stats.points(m)} points"


def built_first(cid: str) -> str:
    """The verdict of chapter 7's claim ``cid`` ("built-b") as first registered, with no density
    condition, in the registry's words and, where its interval alone leaves it undecided, why
    (:func:`lead_short`): "? cannot be decided here, as its lead, +4 points (+2 to +6), falls short
    of ..."; "not computed" where it was not decided."""
    key = f"{CHAPTER}/{cid}"
    d = registry.decisions(CHAPTER).get(key)
    if d is None:
        return "not computed"
    said = built_words(cid, d.registered_outcome or d.outcome)
    short = lead_short(key) if (d.registered_outcome or d.outcome) == stats.UNDECIDED else ""
    return f"{said}, as {short}" if short else said


def built_words(cid: str, outcome: str) -> str:
    """The outcome ``outcome`` of chapter 7's claim ``cid`` ("built-a") in the registry's words, with
    "(post hoc)" after it where the claim was written down after its results were seen
    (:func:`modlib.claims.post_hoc_words`), as :func:`modlib.claims.tagged` marks its verdict as amended:
    the verdict as first registered and under the first amendment are no less post hoc."""
    return registry.post_hoc_words(registry.outcome_words(outcome, own=True), f"{CHAPTER}/{cid}")


def first_amendment(arrays: dict, formulation: str) -> str:
    """The outcome of chapter 7's claim "built-<formulation>" under its first amendment, which took
    the density condition's medians over all networks (the second took them over the failing ones):
    the verdict as registered where the two masks are comparable over all networks (:func:`apart`),
    else undecided; "" where the claim was not decided."""
    d = registry.decisions(CHAPTER).get(f"{CHAPTER}/built-{formulation}")
    if d is None:
        return ""
    return stats.UNDECIDED if apart(arrays, "y1", "untrained") else (d.registered_outcome or d.outcome)


def built_turns(arrays_by_formulation: dict[str, dict]) -> str:
    """One sentence for the page's body and Summary: each formulation whose "built" verdict turns on
    which networks the density condition's medians are taken over, with the ratio that decides
    (:func:`kept_ratio` over the failing networks, printed by :func:`times`) against
    :data:`modlib.stats.DENSITY_RATIO`, and the verdict under the first amendment (over all
    networks, :func:`first_amendment`)."""
    said = []
    for f, a in arrays_by_formulation.items():
        d = registry.decisions(CHAPTER).get(f"{CHAPTER}/built-{f}")
        fails = failing(a)
        mid = first_amendment(a, f)
        if d is None or not fails.any() or mid == d.outcome:
            continue
        said.append(f"formulation ({f})'s verdict turns on {times(kept_ratio(a, 'y1', 'untrained', fails))} "
                    f"against the factor of {stats.DENSITY_RATIO:g}: with the medians over all networks "
                    f"({times(kept_ratio(a, 'y1', 'untrained'))}), it read: {built_words(f'built-{f}', mid)}")
    if not said:
        return "No formulation's verdict turns on which networks the medians are taken over."
    text = "; ".join(said) + "."
    return text[0].upper() + text[1:]


def with_first(c: stats.Claim) -> str:
    """The appendix's text of the claim ``c``, with, for the toy's "built" claims whose interval
    alone already left them undecided as first registered, why (:func:`built_first`)."""
    kind, where = c.name.rsplit("-", 1)
    v = c.verdict
    if kind != "built" or where not in ("a", "b") or v is None or not v.claim or not lead_short(v.claim):
        return c.text
    d = registry.decisions(CHAPTER)[v.claim]
    if (d.registered_outcome or d.outcome) != stats.UNDECIDED:
        return c.text
    return f"{c.text} As first registered, without the density condition: {built_first(c.name)}."


def _boundary(text: str, i: int) -> bool:
    """Whether position ``i`` of ``text`` falls between words (not inside one)."""
    return i <= 0 or i >= len(text) or not (text[i - 1].isalnum() and text[i].isalnum())


def changed(a) -> str:
    """What the amendment ``a`` (:class:`modlib.claims.Amendment`) changed, from its recorded old and
    new values: the words that differ, whole words, "“all networks” → “the failing ones”"; the
    registry's name of the density factor as its value ("a factor of 2"); a list (the results a claim
    reads) whole, its items joined: "“cut-mnist, cut-mnist-left” → “cut-mnist-left”"."""
    if isinstance(a.old, list) or isinstance(a.new, list):
        old, new = (", ".join(map(str, v)) if isinstance(v, list) else str(v) for v in (a.old, a.new))
        return f"\u201c{old}\u201d \u2192 \u201c{new}\u201d"
    old, new = str(a.old), str(a.new)
    i = 0
    while i < min(len(old), len(new)) and old[i] == new[i]:
        i += 1
    while not (_boundary(old, i) and _boundary(new, i)):
        i -= 1
    j = 0
    while j < min(len(old), len(new)) - i and old[-1 - j] == new[-1 - j]:
        j += 1
    def open_brackets(j: int) -> bool:  # a cut that leaves a bracket of what differs unclosed
        return any(x[i:len(x) - j].count("(") > x[i:len(x) - j].count(")") for x in (old, new))

    while not (_boundary(old, len(old) - j) and _boundary(new, len(new) - j)) or (j and open_brackets(j)):
        j -= 1
    factor = f"a factor of {stats.DENSITY_RATIO:g}"
    o, n = (x.strip(" ;,:").replace("stats.DENSITY_RATIO", factor)
            for x in (old[i:len(old) - j], new[i:len(new) - j]))
    if not o or not n:  # one text holds the other: both whole, so that neither reads as nothing
        o, n = (x.replace("stats.DENSITY_RATIO", factor) for x in (old, new))
    return f"\u201c{o}\u201d \u2192 \u201c{n}\u201d"


def amendments_said(key: str) -> str:
    """What the amendments of the registered claim ``key`` changed, each from its own record in the
    registry (:func:`changed`, the field in :data:`modlib.claims.FIELD_WORDS`' words), and the
    verdict under the claim as registered, for the appendix's line: "Amended twice after the
    results were seen. What counts as a unit: first “…” → “…”, then “…” → “…” (when and why: the
    claims ledger). Under the claim as registered: holds"; "" for a claim never amended."""
    a = registry.amended(key)
    if a is None or not a.shown:
        return ""
    shown = a.shown
    often = {1: "", 2: " twice"}.get(len(shown), f" {len(shown)} times")
    parts = []
    for field in dict.fromkeys(x.field for x in shown):
        steps = [changed(x) for x in shown if x.field == field]
        said = steps[0] if len(steps) == 1 else "first " + ", then ".join(steps)
        parts.append(f"{registry.FIELD_WORDS.get(field, field)}: {said}")
    said = "; ".join(parts)
    text = f"Amended{often} {a.when}. {said[0].upper()}{said[1:]} (when and why: the claims ledger)"
    if not a.decided:
        return text
    return text + (". The same verdict as under the claim as registered" if a.same
                   else f". Under the claim as registered: {a.first}")


# a rank correlation over fewer than 4 units: Fisher's z gives no interval, and
# :func:`modlib.stats.correlation` prints -1 to +1 in its place; the appendix says so in the words of
# the note under Holm's table (:func:`holm_no_p_note`), not as an interval computed
_NO_Z = (re.compile(r"95% Spearman rank, Fisher z interval over ([1-3]) seeds -1\.00 to \+1\.00"),
         re.compile(r"Spearman rank, Fisher z interval -1\.00 to \+1\.00 over ([1-3]) seeds"))


def no_interval(text: str) -> str:
    """``text`` with each Fisher z interval of a rank correlation over fewer than 4 seeds, which is
    -1 to +1 by definition, not by computation, said as such: "Spearman rank over 3 seeds; Fisher's
    z is undefined with 3 seeds, so no interval, shown as -1.00 to +1.00"."""
    for pattern in _NO_Z:
        text = pattern.sub(lambda m: f"Spearman rank over {m[1]} seeds; Fisher's z is undefined with {m[1]} "
                                     "seeds, so no interval, shown as -1.00 to +1.00", text)
    return text


def appendix_text(c: stats.Claim) -> str:
    """The appendix's line for the claim ``c``: its text (with :func:`with_first`), the closing
    sentence on an amendment saying what each amendment changed (:func:`amendments_said`), and a
    reason the rule words as two-sided ("within the margin of no effect (±0.30)") in the claim's
    one-sided words ("the whole interval lies below +0.30"): the rule reads only the registered side."""
    text = no_interval(with_first(c))
    v = c.verdict
    if v is None or not v.claim:
        return text
    if v.amended:
        text = text.replace(stats.amended_sentence(v), f" *{amendments_said(v.claim)}*.")
    r = registry.get(v.claim)
    s = 1 if r.direction > 0 else -1
    side = "below" if s > 0 else "above"
    return text.replace(f"within the margin of no effect (\u00b1{r.margin:.2f})",
                        f"the whole interval lies {side} {s * r.margin:+.2f}")


def mark_of(claims: list[stats.Claim], name: str, missing: str = "no verdict here",
            points: bool = False) -> str:
    """The verdict of the claim ``name`` among ``claims`` as the page's summary glues it: its mark
    and outcome ("holds"), with the reason where it cannot be decided ("? cannot be decided here:
    the two masks are ..."), or ``missing`` where no such claim was made. Where an amendment made
    after the results were seen changed the verdict, the verdict as first registered comes first,
    as in every chapter's box and summary: "as first registered: holds (post hoc); as amended after
    the results were seen: ? cannot be decided here (post hoc): ...", each "(post hoc)" where the
    claim was written down after its results were seen. ``points``: a claim on accuracies that only
    its interval's place leaves undecided gives its reason in points (:func:`_in_points`)."""
    c = next((c for c in claims if c.name == name), None)
    if c is None:
        return missing
    v = c.verdict
    marked = registry.tagged(c)  # with "(post hoc)" where the claim was written down after its results
    if v is None or v.outcome != stats.UNDECIDED:
        said = marked
    elif points and v.claim and registry.decisions()[v.claim].open:
        said = f"{marked}: {_in_points(v.claim)}"
    else:
        reason = stats.undecided_reason(v)
        said = f"{marked}: {reason}" if reason else marked
    a = registry.amended(v.claim) if v is not None and v.amended and v.claim else None
    if a is not None and a.decided and not a.same:
        first = registry.post_hoc_words(a.first, v.claim)  # the first registration came after the results too
        return f"as first registered: {first}; as amended after the results were seen: {said}"
    note = _amended(c)
    return said + (f" ({note})" if note else "")


# ---------------------------------------------------------------- every claim at once


# the chapter's controls: registered and decided like its claims, but a control's "holds" counts
# against a claim (random masks in the "use X2" mask's place repair too), never for one, so Holm's
# family is the claims alone (issue 57)
CONTROLS = ("repair-excl-random", "repair-unseen-random")

# claims registered after Holm's correction over the chapter's claims had been read (issue 53), by kind: each
# batch a family of its own, so that no correction read before moves; their registered notes say so
LATE = {"repair-unseen-needs-mask": "blind", "excl-vs-left5-sized": "sized", "excl-vs-right5-sized": "sized",
        "excl-vs-left5-ranked": "ranked", "excl-vs-right5-ranked": "ranked"}
FAMILIES = {"chapter": "claims of the chapter", "fresh": "claims read on the fresh networks",
            "blind": "claims of rule 2 with blind masks against random masks",
            "sized": "claims of rule 2 against size-matched masks for other targets",
            "ranked": "claims of rule 2 against other targets' masks' top-ranked weights, as many"}


def family(cid: str) -> str:
    """The Holm family (of :data:`FAMILIES`) of the chapter's claim id ``cid``: the one :data:`LATE`
    gives its kind, else ``"fresh"`` for a confirmatory copy and ``"chapter"`` for the rest."""
    kind = cid.removesuffix(FRESH).rsplit("-", 1)[0]
    if kind in LATE:
        return LATE[kind]
    return "fresh" if cid.endswith(FRESH) else "chapter"


def is_control(cid: str) -> bool:
    """Whether the chapter's claim id (``"repair-excl-random-b"``, or its confirmatory copy's) names
    one of its :data:`CONTROLS`."""
    return cid.removesuffix(FRESH).rsplit("-", 1)[0] in CONTROLS


def _family(made: dict | None, name: str = "chapter") -> dict:
    """The decisions Holm's correction reads: ``made`` (default those recorded now) without the
    :data:`CONTROLS`, those of the family ``name`` (:data:`FAMILIES`, :func:`family`), each a
    family of its own."""
    if name not in FAMILIES:
        raise ValueError(f"family={name!r}; Holm's families of chapter 7: {', '.join(FAMILIES)}")
    made = registry.decisions(CHAPTER) if made is None else made
    return {k: d for k, d in made.items()
            if not is_control(k.split("/", 1)[-1]) and family(k.split("/", 1)[-1]) == name}


def holm_frame(made: dict | None = None, alpha: float = 0.025, family: str = "chapter"):
    """Holm's correction over every claim of the chapter, its controls left out (:data:`CONTROLS`;
    :func:`modlib.claims.holm`; ``made``: the decisions, default those recorded now) as a
    ``pandas.DataFrame``, one row per claim, named in plain words (:func:`plain_name`, not its id):
    its verdict in the words for its kind (the book's own hypotheses: holds / does not hold / ?),
    the one-sided p on its registered side, the Holm-adjusted p and whether the interval still, on that side,
    clears 0 after the correction. :func:`verdict_frame` shows it. ``family``: which of
    :data:`FAMILIES` (:func:`_family`)."""
    import pandas as pd

    chosen = _family(made, family)
    rows = [{"claim": plain_name(k.split("/", 1)[1]), "verdict": registry.outcome_words(o, registry.get(k).own),
             "one-sided p": NO_P if _no_fisher_z(chosen[k]) else _p_text(p), "Holm-adjusted p": _p_text(q),
             f"clear of 0 on the claim's side at {alpha:g} after Holm": "yes" if ok else "no"}
            for k, (o, p, q, ok) in registry.holm(CHAPTER, alpha, chosen).items()]
    return pd.DataFrame(rows)


def _p_text(p: float) -> str:
    """A p-value to two significant digits, an exponent's sign as a minus (U+2212): a browser may
    wrap "7.8e-05" after its hyphen, splitting the number over two lines."""
    return f"{p:.2g}".replace("e-", "e\u2212")


NO_P = "–"  # in Holm's table, beside a rank correlation whose Fisher z p is undefined (:func:`holm_no_p_note`)


def _no_fisher_z(d) -> bool:
    """Whether the decision ``d`` is a rank correlation over fewer than 4 units, where Fisher's z
    (its standard error needs n - 3 > 0) gives no p: :func:`modlib.claims.one_sided_p` counts it as 1."""
    return bool(d.how) and d.how[0] == "correlation" and len(d.arms) == 2 and len(d.arms[0]) < 4


def holm_no_p_note(made: dict | None = None, family: str = "chapter") -> str:
    """The line under Holm's table (:func:`holm_frame`) that says what its :data:`NO_P` marks: which
    claims, why, the exact test their own lines print instead, and that the correction counts their
    p as 1; "" where no row carries it."""
    rows = [(k, d) for k, d in _family(made, family).items() if _no_fisher_z(d)]
    if not rows:
        return ""
    def exact(d) -> str:  # the exact test the claim's own line prints instead; none where nothing varies
        test = stats.correlation(*d.arms).test
        return f"; its own line gives the exact {test} (two-sided)" if test else ""

    said = "; ".join(f"{plain_name(k.split('/', 1)[1])}: Fisher's z is undefined with {len(d.arms[0])} seeds, "
                     "so no interval (its line shows -1.00 to +1.00) and no p" + exact(d) for k, d in rows)
    return f"{NO_P} {said[0].upper()}{said[1:]}. The correction counts this p as 1."


def after_holm(cid: str, made: dict | None = None, alpha: float = 0.025) -> str:
    """Whether the claim ``cid`` (its id) still clears 0 on its side after Holm's correction over the
    chapter (:func:`holm_frame`'s last column), in words for the prose beside its verdict: "still
    clears 0" or "no longer clears 0"; "not decided" where it was not decided or is a control."""
    h = registry.holm(CHAPTER, alpha, _family(made, family(cid))).get(f"{CHAPTER}/{cid}")
    if h is None:
        return "not decided"
    return "still clears 0" if h[3] else "no longer clears 0"


def _fresh_family(h: dict) -> str:
    """Holm's family on the fresh networks in words: how many confirmatory copies and how many
    hypotheses read there alone (:data:`FRESH_ONLY`) it holds."""
    only = sum(k.split("/", 1)[1].removesuffix(FRESH).rsplit("-", 1)[0] in FRESH_ONLY for k in h)
    cnn = sum(k.endswith(f"-mnist{FRESH}") for k in h)
    return (f"claims read on the fresh networks: {len(h) - only - cnn} confirmatory copies of the toy's claims, "
            f"{cnn} on the fresh CNNs and {only} hypotheses tested there alone")


def holm_statement(made: dict | None = None, alpha: float = 0.025, family: str = "chapter") -> stats.Finding:
    """What Holm's correction over every claim of the chapter (its controls left out,
    :data:`CONTROLS`) does to the verdicts that hold (:func:`holm_frame`): how many claims were
    decided, how many controls were left out, how many claims hold, and which of those no longer
    clear 0 once corrected (held when none), named in plain words (:func:`plain_name`). ``family``:
    which of :data:`FAMILIES`, each corrected on its own (:func:`_family`)."""
    everything = registry.decisions(CHAPTER) if made is None else made
    h = registry.holm(CHAPTER, alpha, _family(everything, family))
    fresh = family == "fresh"
    controls = sum(is_control(k.split("/", 1)[-1]) for k in everything
                   if k.startswith(f"{CHAPTER}/") and k.endswith(FRESH) == fresh and family in ("chapter", "fresh"))
    holding = [k for k, (o, *_rest) in h.items() if o == stats.REPRODUCED]
    lost = [plain_name(k.split("/", 1)[1]) for k in holding if not h[k][3]]
    one = len(lost) == 1
    left_out = (f" ({'its control' if controls == 1 else f'its {controls} controls'}, random masks in the \"use X₂\" "
                f"mask's place, left out: a control that holds counts against a claim, not for one)"
                if controls else "")
    return stats.Finding(
        "holm", not lost,
        f"Over the {len(h)} {_fresh_family(h) if fresh else FAMILIES[family]}"
        f"{left_out}, family-wise {alpha:.1%} one-sided (the "
        f"side of a 95% interval the rule reads), "
        + ("the one that holds still clears 0" if len(holding) == 1 and not lost else
           f"{len(holding) - len(lost)} of the {len(holding)} that hold "
           + (f"still clear 0; {'; '.join(lost)} no longer {'does' if one else 'do'}: "
              f"{'it holds' if one else 'they hold'} one claim at a time, not over the whole "
              f"{'chapter' if family == 'chapter' else 'family'}"
              if lost else "still clear 0, every one"))
        + ". The correction moves only the interval's side of 0, not the margin; the verdicts the "
        "page prints are uncorrected, one claim at a time, as registered.")


def late_in_chapter(family: str, made: dict | None = None, alpha: float = 0.025) -> str:
    """For a late family (:data:`LATE`): whether its claims that hold would still clear 0 had they been
    corrected with the chapter's claims as one family (a reading, not how they are registered), in
    words: "Corrected with the chapter's 52 claims instead, as one family of 54, both still clear 0"."""
    if family not in set(LATE.values()):
        raise ValueError(f"family={family!r}; the late families of chapter 7: {', '.join(sorted(set(LATE.values())))}")
    made = registry.decisions(CHAPTER) if made is None else made
    own, chapter = _family(made, family), _family(made, "chapter")
    h = registry.holm(CHAPTER, alpha, {**chapter, **own})
    holding = [k for k in own if k in h and h[k][0] == stats.REPRODUCED]
    lost = [k for k in holding if not h[k][3]]
    if not holding:
        said = "none of them holds"
    elif len(holding) == 1:
        said = f"the one that holds {'no longer clears' if lost else 'still clears'} 0"
    else:
        said = f"{len(holding) - len(lost)} of the {len(holding)} that hold still clear 0"
    return (f"Corrected with the chapter's {len(chapter)} claims instead, as one family of {len(h)} (a reading, "
            f"not the registered analysis), {said}.")


def shown_table(frame, height: str | None = "28em"):
    """An appendix table as the page shows it: HTML without the index, numbers to three significant
    digits, True / False as yes / no, its variables typeset as the prose's (:func:`typeset`), in a box
    that scrolls past ``height`` (a table of 200 rows stays one screen high, every row there); every
    row shown, no box, where ``height`` is None."""
    from IPython.display import HTML

    frame = frame.rename(columns=typeset)
    for col in frame.columns:
        if frame[col].dtype == bool:
            frame[col] = frame[col].map({True: "yes", False: "no"})
        else:  # text, of whatever dtype this pandas gives it
            frame[col] = frame[col].map(lambda v: typeset(v) if isinstance(v, str) else v)
    body = frame.to_html(index=False, border=0, float_format=lambda x: f"{x:.3g}".replace("e-", "e\u2212"),
                         classes="dataframe")  # an exponent's sign as a minus, as _p_text writes it
    if height is None:
        return HTML(body)
    return HTML(f'<div style="max-height: {height}; overflow: auto">{body}</div>')


# ---------------------------------------------------------------- the cut that needs no mask (CNNs)

def cut_claims(cut: dict, fresh: dict | None = None, random: dict | None = None) -> list[stats.Claim]:
    """The CNN's cuts that need no mask (:mod:`modlib.bridge.digit_cut`; ``cut`` its arrays, one row
    per CNN, seeds in ``seed``): each cut against the full CNN over the failing CNNs
    (:func:`digit_failing`), by :func:`both`, paired by seed; given ``random`` (``cut-mnist-random``'s
    arrays, the same CNNs), the dense cut against as many random dense weights removed, undecided
    unless the two results' full CNNs score the same; and, given ``fresh`` (the fresh CNNs'
    surgery, :func:`modlib.bridge.digit_surgery.stacked`), rule 2 against the dense cut on those
    CNNs, gated as :func:`surgery_claims` gates rule 2."""
    from modlib.resists_at_scale.findings import TRAINED as CH3_TRAINED

    f = digit_failing(cut)
    trained = float(np.median(cut["full_train"])) >= CH3_TRAINED
    where = f"chapter 3's setting-A CNNs (seeds {_seeds_text(cut['seed'])}), the {int(f.sum())} of {f.size} that fail"
    out = []
    for kind, arm, says in (("cut-dense", "cut_dense", "zeroing the dense layer's weights from the feature columns "
                             "that read only the right-hand digit"),
                            ("cut-input", "cut_input", "blanking the right half of every pair")):
        e = stats.paired(both(cut, arm)[f], both(cut, "full")[f])
        key = f"{CHAPTER}/{kind}-mnist"
        v = registry.decide(key, e, trained=trained)
        out.append(registry.statement(v, f"In {where}, {says} changes the worse of held-out and training accuracy: "
                                         f"{e.text(margin=registry.get(key).margin)}."))
    if random is not None:
        same = np.array_equal(random["seed"], cut["seed"]) and cut_same(cut, random) == 0
        e = stats.paired(both(cut, "cut_dense")[f], both(random, "cut_random")[f])
        key = f"{CHAPTER}/cut-dense-vs-random-mnist"
        v = registry.decide(key, e, trained=trained and same,
                            reason="" if same else "the control's CNNs are not the cut's (their full scores differ)")
        out.append(registry.statement(v, f"In {where}, zeroing the right-only dense weights scores above zeroing as "
                                         f"many of the dense layer's weights at random (the mean of three draws; the "
                                         f"random cut alone changes the score by "
                                         f"{100 * float((both(random, 'cut_random') - both(cut, 'full'))[f].mean()):+.0f} "
                                         f"points): {e.text(margin=registry.get(key).margin)}."))
    if fresh is not None:
        n = len(fresh["full_held_out"])  # the cut's seeds end with the fresh CNNs'
        merged = {**fresh, **{f"cut_dense_{k}": cut[f"cut_dense_{k}"][-n:] for k in ("held_out", "train")}}
        table = [("excl-vs-cut", "ablated_excl", "cut_dense", ("x2", "y1", "excl"),
                  "rule 2 (the \"use X2\" mask's weights outside the Y1 mask removed) scores above the cut that needs "
                  "no mask (the right-only dense weights zeroed)")]
        g = digit_failing(fresh)
        out += decided(merged, g, table, "mnist" + FRESH,
                       f"fresh CNNs of chapter 3's setting-A recipe, the {int(g.sum())} of {g.size} that fail",
                       *surgery_gates(fresh))
    return out


TARGET_WORDS = {"left5": "the left digit's label plus 5 (mod 10)", "right5": "the right digit's label plus 5 (mod 10)"}


def target_claims(target: dict, fresh: dict) -> list[stats.Claim]:
    """Rule 2 of the CNN surgery against rule 2 with a mask for another target in the "use X2"
    mask's place (:mod:`modlib.bridge.surgery_target`; ``target`` its results stacked,
    :func:`modlib.bridge.digit_surgery.stacked`), over the fresh CNNs that fail, by :func:`both`,
    paired by seed. Gated as :func:`surgery_gates` gates rule 2, and besides: the target's mask
    computes its task (median fit at least ``FIT``) and is not degenerate, the "use X2" mask and the
    target's are comparable in density (:func:`apart`), and the CNNs and rule 2 are the fresh
    surgery's own (``fresh``: its stacked arrays; the full and rule-2 scores equal)."""
    f = digit_failing(target)
    trained, fits, kept_ok, _ = surgery_gates(target)
    keys = [f"{arm}_{k}" for arm in ("full", "ablated_excl") for k in DIGIT_SETS]
    same = all(np.array_equal(target[k], fresh[k]) for k in keys)
    where = f"fresh CNNs of chapter 3's setting-A recipe, the {int(f.sum())} of {f.size} that fail"
    out = []
    for t, says in TARGET_WORDS.items():
        key = f"{CHAPTER}/excl-vs-{t}-mnist{FRESH}"
        e = stats.paired(both(target, "ablated_excl")[f], both(target, f"{t}_excl")[f])
        fit = float(np.median(target[f"{t}_fit"]))
        needs = {**fits, t: fit}
        reasons = [f"the mask for {says} names it at a median {_pct(fit)}, below the registered {_pct(FIT)}"
                   if trained and fit < FIT else "", apart(target, "x2", t, f),
                   "" if same else "the CNNs or rule 2 are not the fresh surgery's (their scores differ)"]
        v = registry.decide(key, e, trained=trained and min(needs.values()) >= FIT,
                            controls=all(kept_ok(m) for m in ("x2", "y1", "excl")) and _digit_kept_ok(target, t),
                            reason="; ".join(r for r in reasons if r))
        alone = (f"{100 * float((both(target, f'{t}_excl') - both(target, 'full'))[f].mean()):+.0f} points"
                 if f.any() else "an amount no failing CNN measures")
        out.append(registry.statement(v, (
            f"In {where}, rule 2 (the \"use X2\" mask's weights outside the Y1 mask removed) scores above "
            f"rule 2 with a mask for {says} in the \"use X2\" mask's place (kept share {_share(float(np.median(target[f'kept_{t}'])))} "
            f"against {_share(float(np.median(target['kept_x2'])))}, median; it names its target at "
            f"{_pct(fit)}; its weights outside the Y1 mask, {_share(float(np.median(target[f'kept_{t}_excl'])))} of the "
            f"weights, removed change the score by {alone}): {e.text(margin=registry.get(key).margin)}.")))
    return out


SIZE_MATCH = {"sized": "a random subset of its weights outside the Y1 mask, or all of them and random weights "
                    "outside the Y1 mask besides, as many per tensor as rule 2 removes (the mean of three draws)",
           "ranked": "its weights outside the Y1 mask that it ranks highest, as many per tensor as rule 2 "
                     "removes (nothing drawn)"}  # how a target mask's removal is matched to rule 2's


def size_matched_claims(arrays: dict, how: str) -> list[stats.Claim]:
    """Rule 2 of the CNN surgery against rule 2 with a mask for another target, its removal matched
    per tensor to rule 2's ``how`` (:data:`SIZE_MATCH`: ``"sized"`` at random,
    :mod:`modlib.bridge.surgery_sized`; ``"ranked"`` by the mask's logits,
    :mod:`modlib.bridge.surgery_ranked`; ``arrays`` their results stacked,
    :func:`modlib.bridge.digit_surgery.stacked`, with arms ``<t>_<how>``), over the fresh CNNs that
    fail, by :func:`both`, paired by seed. Gated as :func:`surgery_gates` gates rule 2, and besides:
    the target's mask computes its task (median fit at least ``FIT``) and is not degenerate; no density
    condition (as registered: the removals are matched)."""
    if how not in SIZE_MATCH:
        raise ValueError(f"how={how!r}; choose from {', '.join(SIZE_MATCH)}")
    f = digit_failing(arrays)
    trained, fits, kept_ok, _ = surgery_gates(arrays)
    where = f"fresh CNNs of chapter 3's setting-A recipe, the {int(f.sum())} of {f.size} that fail"
    out = []
    for t, says in TARGET_WORDS.items():
        key = f"{CHAPTER}/excl-vs-{t}-{how}-mnist{FRESH}"
        e = stats.paired(both(arrays, "ablated_excl")[f], both(arrays, f"{t}_{how}")[f])
        fit = float(np.median(arrays[f"{t}_fit"]))
        short = trained and fit < FIT
        v = registry.decide(key, e, trained=trained and min({**fits, t: fit}.values()) >= FIT,
                            controls=all(kept_ok(m) for m in ("x2", "y1", "excl")) and _digit_kept_ok(arrays, t),
                            reason=f"the mask for {says} names it at a median {_pct(fit)}, below the registered "
                                   f"{_pct(FIT)}" if short else "")
        alone = (f"{100 * float((both(arrays, f'{t}_{how}') - both(arrays, 'full'))[f].mean()):+.0f} points"
                 if f.any() else "an amount no failing CNN measures")
        out.append(registry.statement(v, (
            f"In {where}, rule 2 (the \"use X2\" mask's weights outside the Y1 mask removed, "
            f"{_share(float(np.median(arrays['kept_excl'])))} of the weights, median) scores above rule 2 with a "
            f"mask for {says} in its place (kept share {_share(float(np.median(arrays[f'kept_{t}'])))}, median; it "
            f"names its target at {_pct(fit)}), {SIZE_MATCH[how]}; removed alone they change the score by {alone}: "
            f"{e.text(margin=registry.get(key).margin)}.")))
    return out


def left_claims(left: dict, cut: dict) -> list[stats.Claim]:
    """The dense cut against its mirror image, both on the same CNNs (:mod:`modlib.bridge.cut_controls`;
    ``left`` the arrays of ``cut-mnist-left``), over its failing CNNs, by :func:`both`, paired by seed.
    ``cut``: ``cut-mnist``'s arrays, the CNNs the claim was registered to read; as registered it was
    undecided unless they score as ``left``'s (amended: the arms are on the same CNN, and the page
    prints both verdicts)."""
    from modlib.resists_at_scale.findings import TRAINED as CH3_TRAINED

    f = digit_failing(left)
    trained = float(np.median(left["full_train"])) >= CH3_TRAINED
    gap = cut_same(cut, left) if np.array_equal(left["seed"], cut["seed"]) else float("inf")
    where = f"chapter 3's setting-A CNNs (seeds {_seeds_text(left['seed'])}), the {int(f.sum())} of {f.size} that fail"
    key = f"{CHAPTER}/cut-dense-vs-left-mnist"
    e = stats.paired(both(left, "cut_dense")[f], both(left, "cut_left")[f])
    then = "" if gap == 0 else f"the mirror cut's CNNs are not the cut's (their full scores differ by up to {_points(gap)})"
    v = registry.decide(key, e, trained=trained, as_registered={"reason": then})
    alone = 100 * float((both(left, "cut_left") - both(left, "full"))[f].mean()) if f.any() else float("nan")
    return [registry.statement(v, f"In {where}, each trained again, zeroing the right-only dense weights (columns "
                                  f"14-24 of 25) scores above zeroing as many from the left-only columns (0-10; that "
                                  f"cut alone changes the score by {alone:+.0f} points): "
                                  f"{e.text(margin=registry.get(key).margin)}.")]


def shifted_claims(shifted: dict) -> list[stats.Claim]:
    """The dense cut against its block moved one column left, both on the same CNNs
    (:mod:`modlib.bridge.cut_controls`; ``shifted`` the arrays of ``cut-mnist-shifted``, its blocks'
    scores ``block_<set> [C, O]`` at the offsets ``offsets [O]``), over its failing CNNs, by
    :func:`both`, paired by seed."""
    from modlib.resists_at_scale.findings import TRAINED as CH3_TRAINED

    f = digit_failing(shifted)
    trained = float(np.median(shifted["full_train"])) >= CH3_TRAINED
    where = f"chapter 3's setting-A CNNs (seeds {_seeds_text(shifted['seed'])}), the {int(f.sum())} of {f.size} that fail"
    from modlib.bridge import digit_cut

    key = f"{CHAPTER}/cut-dense-vs-shifted-mnist"
    first = digit_cut.right_columns()[0]  # the cut's block starts there; the claim's, one column left
    cut, moved = (block_arm(shifted, o) for o in (first, first - 1))
    e = stats.paired(both(cut, "block")[f], both(moved, "block")[f])
    v = registry.decide(key, e, trained=trained)
    alone = 100 * float((both(moved, "block") - both(shifted, "full"))[f].mean()) if f.any() else float("nan")
    return [registry.statement(v, f"In {where}, each trained again, zeroing the right-only dense weights (columns "
                                  f"14-24 of 25) scores above zeroing the same block moved one column left (columns "
                                  f"13-23; that cut alone changes the score by {alone:+.0f} points): "
                                  f"{e.text(margin=registry.get(key).margin)}.")]


def shifted_table(shifted: dict):
    """The cut's block at every offset (``cut-mnist-shifted``'s arrays) as a ``pandas.DataFrame``, a row
    per offset: the columns it zeroes, how many of them read only the right-hand digit and how many
    read both halves, and over the failing CNNs the median held-out and training accuracy and the
    mean change of the score (:func:`both`) from the full CNN, in points."""
    import pandas as pd

    from modlib.bridge import digit_cut

    f = digit_failing(shifted)
    right = set(digit_cut.right_columns())
    last, width = max(right), len(right)
    left = {last - q for q in right}  # the mirror's: the columns that read only the left-hand digit
    rows = []
    for o in np.asarray(shifted["offsets"]):
        cols = set(range(int(o), int(o) + width))
        a = block_arm(shifted, int(o))
        rows.append([f"{o}-{o + width - 1}", len(cols & right), len(cols - right - left),
                     f"{np.median(a['block_held_out'][f]):.0%}", f"{np.median(a['block_train'][f]):.0%}",
                     f"{100 * float((both(a, 'block') - both(a, 'full'))[f].mean()):+.0f}"])
    return pd.DataFrame(rows, columns=["columns zeroed", "right-only", "reading both", "held-out",
                                       "training", "score change (points)"])


def block_arm(shifted: dict, first: int) -> dict:
    """``cut-mnist-shifted``'s scores with the block at offset ``first`` as the arm ``block``:
    ``{"block_<set>": [C]}`` for every set, beside the full CNN's ``full_<set>`` (``[C]``)."""
    i = int(np.flatnonzero(np.asarray(shifted["offsets"]) == first)[0])
    return {**{k: v for k, v in shifted.items() if k.startswith("full_")},
            **{f"block_{k}": shifted[f"block_{k}"][:, i] for k in DIGIT_SETS}}


def _points(v: float) -> str:
    """A difference of accuracy in points, one decimal: "3.2 points"."""
    return f"{100 * v:.1f} points"


def combined_gaps(combined: dict, fresh: dict, cut: dict) -> dict[str, float]:
    """How far rule 2 with the cut's CNNs, trained again, are from the stored ones: the largest
    difference over the fresh CNNs and the sets of :data:`DIGIT_SETS` of the full CNNs' scores
    (against ``fresh``, the fresh surgery's stacked arrays), rule 2's (the same) and the dense cut's
    (against ``cut``, ``cut-mnist``'s arrays, whose last CNNs are the fresh ones); 0 where bit for bit."""
    n = len(combined["full_held_out"])
    return {arm: float(max(np.abs(combined[f"{arm}_{k}"] - (stored[f"{arm}_{k}"][-n:])).max() for k in DIGIT_SETS))
            for arm, stored in (("full", fresh), ("ablated_excl", fresh), ("cut_dense", cut))}


def _rule2_gate(arrays: dict) -> tuple[np.ndarray, str, bool, bool, str]:
    """What every claim on rule 2 retrained on the fresh CNNs reads first (``arrays``: its results
    stacked): ``(failing, where, trained, controls, reason)``, the CNNs that fail (:func:`digit_failing`)
    and those words, whether the CNNs trained and both masks fit (:func:`surgery_gates`), whether no mask
    is degenerate and rule 2 removes something, and why a gate fails."""
    f = digit_failing(arrays)
    trained, fits, kept_ok, words = surgery_gates(arrays)
    needs = ("x2", "y1", "excl")
    short = [m for m in ("y1", "x2") if fits[m] < FIT]
    reason = "; ".join(f"{words[m]} at a median {_pct(fits[m])}, below the registered {_pct(FIT)}" for m in short) \
        if trained else ""
    where = f"fresh CNNs of chapter 3's setting-A recipe, the {int(f.sum())} of {f.size} that fail"
    return (f, where, trained and min(fits[m] for m in needs) >= FIT, all(kept_ok(m) for m in needs), reason)


def combined_claims(combined: dict, fresh: dict, cut: dict) -> list[stats.Claim]:
    """Rule 2 of the CNN surgery together with the dense cut (:mod:`modlib.bridge.cut_controls`;
    ``combined`` its results stacked, :func:`modlib.bridge.digit_surgery.stacked`) against the cut
    alone, and against the cut with random "use X2" masks in rule 2, every arm on the same CNN, over
    the fresh CNNs that fail, by :func:`both`, paired by seed. Gated as :func:`surgery_gates` gates
    rule 2. As registered, undecided unless the CNNs, rule 2 and the cut score exactly as the stored
    ones (``fresh``: the fresh surgery's stacked arrays; ``cut``: ``cut-mnist``'s); amended, the
    differences (:func:`combined_gaps`) are reported, and the page prints both verdicts."""
    from modlib.bridge import cut_controls

    f, where, trained, controls, reason = _rule2_gate(combined)
    gaps = combined_gaps(combined, fresh, cut)
    then = "" if max(gaps.values()) == 0 else (
        "the CNNs, rule 2 or the cut are not the stored ones (their scores differ by up to "
        f"{_points(max(gaps.values()))})")
    right = float(np.nanmedian(combined["in_right"])) if np.isfinite(combined["in_right"]).any() else float("nan")
    out = []
    for kind, other, says in (("excl-cut-vs-cut", "cut_dense", "the dense cut alone"),
                              ("excl-cut-vs-random-cut", "random_x2_cut",
                               "the dense cut together with random \"use X2\" masks of the same counts per "
                               "tensor in rule 2 (five draws)")):
        key = f"{CHAPTER}/{kind}-mnist{FRESH}"
        e = stats.paired(both(combined, "excl_cut")[f], both(combined, other)[f])
        v = registry.decide(key, e, trained=trained, controls=controls, reason=reason,
                            as_registered={"reason": "; ".join(r for r in (reason, then) if r)})
        out.append(registry.statement(v, (
            f"In {where}, each trained again with its masks, rule 2's removal (the \"use X2\" mask's weights "
            f"outside the Y1 mask, {_share(float(np.median(combined['kept_excl'])))} of the weights; a median "
            f"{_pct(right)} of its dense-layer weights lie in the cut's columns, which hold {_pct(cut_controls.cut_share())} of "
            f"that layer) and the dense cut removed together score above {says}: "
            f"{e.text(margin=registry.get(key).margin)}.")))
    return out


def outside_claims(outside: dict) -> list[stats.Claim]:
    """Rule 2's removal outside the cut's columns, alone (:mod:`modlib.bridge.outside_cut`; ``outside``
    its results stacked, :func:`modlib.bridge.digit_surgery.stacked`), against the full CNN and against
    as many random weights per tensor outside the Y1 mask and the cut, every arm on the same CNN, over
    the fresh CNNs that fail, by :func:`both`, paired by seed. Gated as :func:`surgery_gates` gates
    rule 2, and rule 2's removal outside the cut not empty."""
    f, where, trained, controls, reason = _rule2_gate(outside)
    beyond = float(np.median(outside["kept_excl_outside"]))
    out = []
    for kind, other, says in (("excl-outside", "full", "the full CNN"),
                              ("excl-outside-vs-random", "random_outside",
                               "as many random weights in each weight tensor, outside the Y1 mask and the cut "
                               "(three draws)")):
        key = f"{CHAPTER}/{kind}-mnist{FRESH}"
        e = stats.paired(both(outside, "excl_outside")[f], both(outside, other)[f])
        v = registry.decide(key, e, trained=trained, controls=controls and beyond > 0,
                            reason=reason or ("" if beyond > 0 else "rule 2 removes nothing outside the cut"))
        out.append(registry.statement(v, (
            f"In {where}, each trained again with its masks, rule 2's removal without its weights in the "
            f"cut's columns ({_share(beyond)} of the weights) scores above {says}: "
            f"{e.text(margin=registry.get(key).margin)}.")))
    return out


def _seeds_text(seeds) -> str:
    seeds = [int(s) for s in seeds]
    return f"{seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else ", ".join(map(str, seeds))


def cut_same(cut: dict, *surgeries: dict) -> float:
    """The largest difference between the cut's full CNNs' scores and the surgeries' (``surgeries``:
    stacked arrays in the cut's seed order, concatenated): 0 where each CNN trained again is the
    surgery's own."""
    keys = [f"full_{k}" for k in DIGIT_SETS]
    theirs = {k: np.concatenate([s[k] for s in surgeries]) for k in keys}
    n = len(theirs[keys[0]])
    return float(max(np.abs(cut[k][:n] - theirs[k]).max() for k in keys))


def cut_table(found: list[stats.Claim]):
    """The verdicts of :func:`cut_claims` as one table (a ``pandas.DataFrame``; the statements are
    in the appendix): a row per claim, the CNNs it reads, its mark and what it means (:func:`meaning`)."""
    import pandas as pd

    rows = []
    for c in found:
        fresh = c.name.endswith(FRESH)
        kind = c.name.removesuffix(FRESH).rsplit("-", 1)[0]
        rows.append([ROW_WORDS[kind], "fresh CNNs" if fresh else "every CNN", _cell(c),
                     meaning(kind, [c.verdict.outcome], [opposite(c)])])
    return pd.DataFrame(rows, columns=["claim, on the failing CNNs", "CNNs", "verdict", "what it means"])
