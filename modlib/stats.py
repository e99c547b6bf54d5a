"""Shared statistics for the chapters' findings (each chapter's ``findings`` module): the statement
a page prints (:class:`Finding`, :class:`Claim`), the book's verdict rule, written once (:data:`RULE`,
applied by :func:`verdict`: reproduced / not reproduced / cannot be decided here), and the
intervals and tests behind it, chosen for few units. Two arms are compared by :func:`paired` or
:func:`unpaired` (an :class:`Effect`: Student's or Welch's t interval for measurements, Newcombe's
interval for shares, with the exact sign, McNemar or Fisher test beside it); one arm by
:func:`t_interval`; shares by Wilson intervals; spreads by the Brown-Forsythe deviations and the
exact permutation test.
Used by every chapter's page and by the claims tests, so that the prose and the tests say the same.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np

CLEAR = 0.05  # an effect the page calls clear: a paired difference of at least this, interval clear of 0
# The book's one bar for "trained": a network has trained when it reaches this accuracy on its own
# training data (or on the task's test set, where the chapter trains on the task as the paper does).
# A claim that needs another bar states it and why in its registry entry (``trained``), and the
# chapter's departure is named in :data:`TRAINED_DEPARTURES`.
TRAINED = 0.95
TRAINED_DEPARTURES = {
    "compositional_sprites": "the models regress images: 'fits' is an in-domain R² of at least 0.8 "
                             "(compositional_sprites.findings.FIT), not an accuracy",
    "resists_at_scale": "0.90 on training-distribution data, every seed: the paper's 200 steps leave MNIST "
                        "setting B and control C learning still, between 0.90 and 0.95 on training pairs",
    "weight_masks": "the CNN claims ask 0.5 mean per-class accuracy under the all-classes mask (CNN_TRAINED): "
                    "a masked network far above chance (0.1), so that a class's drop can be read",
    "bridge": "the median network at 0.95, not every one (one population of 100 toy seeds, one of which may "
              "stop early); the claims on chapter 3's CNNs and chapter 2's decoders take those chapters' bars",
}


@dataclass(frozen=True)
class Finding:
    """One statement about the results: ``name``, whether it ``holds``, and ``text`` (Markdown)."""

    name: str
    holds: bool
    text: str


def mean_pm(values: np.ndarray) -> str:
    """``"0.93 ± 0.02"`` over seeds (just ``"0.93"`` for one seed)."""
    values = np.asarray(values, dtype=float)
    # + 0.0: a mean that rounds to zero from below prints 0.00, not -0.00
    return f"{round(float(values.mean()), 2) + 0.0:.2f}" + (f" ± {values.std():.2f}" if values.size > 1 else "")


def listing(items) -> str:
    """Items in a sentence: ``["a"]`` -> "a", ``["a", "b", "c"]`` -> "a, b and c"."""
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def number(x: float, places: int = 2, sign: bool = False) -> str:
    """``x`` to ``places`` decimals as a page prints it, with "+" before a positive number where
    ``sign``; a number that rounds to zero prints with no sign at all ("0.00", never "-0.00" or
    "+0.00"): the sign of a rounded zero tells the reader nothing (chapter 6's tables and
    statements)."""
    r = round(float(x), places) + 0.0  # + 0.0: -0.0 becomes 0.0
    if r == 0:
        return f"{0:.{places}f}"
    return f"{r:+.{places}f}" if sign else f"{r:.{places}f}"


def mean_sd(values, places: int = 2) -> str:
    """``"0.93 ± 0.02"`` over seeds (just ``"0.93"`` for one seed), as :func:`mean_pm`, but a spread that
    rounds to 0.00 reads ``"± <0.01"``: it is small, not zero (chapter 2's tables and statements);
    ``places=3``: ``"0.052 ± 0.006"``, ``"± <0.001"``."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return f"{values.mean():.{places}f}"
    sd = values.std()
    return f"{values.mean():.{places}f} ± " + (f"{sd:.{places}f}" if sd >= 0.5 * 10 ** -places
                                                else f"<{10 ** -places:.{places}f}")


def percent_span(values: np.ndarray) -> str:
    """``"0.02–0.14"`` (just ``"0.02"`` when all are equal to two decimals), as percentages."""
    lo, hi = f"{np.min(values):.1%}", f"{np.max(values):.1%}"
    return lo if lo == hi else f"{lo}–{hi}"


def seeds_phrase(n: int) -> str:
    return "the one seed" if n == 1 else f"all {n} seeds"


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson interval ``(low, high)`` at ``z`` standard errors (1.96: 95%) for a share of
    ``successes`` out of ``n`` (e.g. the seeds that generalise): binomial, and sensible at shares of
    0 and 1. scipy's (``binomtest(...).proportion_ci(method="wilson")``), at the confidence level
    that ``z`` stands for."""
    from scipy import stats as _st

    if n < 1:
        raise ValueError(f"n={n}: a share needs at least one trial")
    ci = _st.binomtest(int(successes), int(n)).proportion_ci(confidence_level=1 - 2 * _st.norm.sf(z),
                                                              method="wilson")
    return max(0.0, float(ci.low)), min(1.0, float(ci.high))


def spread(values) -> np.ndarray:
    """Absolute deviations from the median ``[n]`` of ``values`` ``[n]``: their mean is the
    Brown-Forsythe measure of spread, which one outlying base model moves less than the standard
    deviation; :func:`permutation_test` of two groups' deviations compares their spreads."""
    values = np.asarray(values, dtype=float)
    return np.abs(values - np.median(values))


def permutation_test(a, b) -> tuple[float, float]:
    """``mean(a) - mean(b)`` and its one-sided p-value (that large or larger) over every way of
    splitting the pooled values into groups of ``len(a)`` and ``len(b)`` (252 for 5 and 5): exact,
    where a bootstrap of five values per group gives intervals that are too narrow (scipy's
    ``permutation_test``, every split)."""
    from scipy import stats as _st

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"each group needs at least 2 values; got {a.size} and {b.size}")

    def difference(x, y, axis):  # to 12 places: a split with the observed difference ties it exactly,
        return np.round(x.mean(axis=axis) - y.mean(axis=axis), 12)  # though summed in another order

    res = _st.permutation_test((a, b), difference, permutation_type="independent", vectorized=True,
                               n_resamples=np.inf, alternative="greater")
    return float(a.mean() - b.mean()), float(res.pvalue)


# ---------------------------------------------------------------- the book's verdict rule

REPRODUCED, NOT_REPRODUCED, UNDECIDED = "reproduced", "not reproduced", "cannot be decided here"
STATED = "the stated margin of"  # a verdict's source where the paper gives no size: the margin stands in
MARKS = {REPRODUCED: "✓", NOT_REPRODUCED: "✗", UNDECIDED: "?"}
RULE = (
    "**The verdict rule.** A claim of a paper is *reproduced* when, over at least two independent "
    "units (seeds, or base models; mask seeds of one base model are not independent), the "
    "interval of the effect the paper reports lies wholly on the paper's side of 0 and the "
    "effect's estimate reaches the margin (the smallest effect that counts: 0.05 unless the page "
    "states another), every arm it compares trained (a network reaches 0.95 accuracy on its own "
    "training data, unless the claim states another bar and why) and every control it needs passed; below the "
    "paper's own number it is still reproduced, and the page says the effect is smaller. It is "
    "*not reproduced* when those hold but the whole interval lies short of the margin: an effect "
    "too small to count, no effect, or the opposite one. A failure thus asks more than a success "
    "(an interval from +0.01 to +0.30 is reproduced, though effects below the margin fit it). "
    "Where a paper gives a direction but no size, the page states the margin that stands in for its "
    "number; a claim that asks for a size the paper never gives cannot be decided here, and the "
    "verdict at the book's stand-in is shown beside it. Where a claim allows a loss, the measure "
    "includes the allowance and its side of 0 decides. Anything else (one unit, an arm that did not "
    "train, a control that did not pass (failed or undecided) or is degenerate, a quantity "
    "at its floor or ceiling in both arms, an interval that reaches the margin but also 0, or one "
    "clear of 0 whose estimate falls short of the margin) *cannot be decided here*. "
    "✓ marks reproduced, ✗ not reproduced (the paper's claim was not found at this scale; never "
    "\"the sentence is false\"), ? cannot be decided. The book's own hypotheses are decided by the "
    "same rule and said to *hold* or *not hold*.")

DENSITY_RATIO = 2.0  # "comparable density": two masks compared keep within this factor of each other (medians)
# (chapter 5's sweep: removing masks of 1 % or less costs nothing, so density alone moves an effect;
# chapters 6 and 7 decide a comparison of two arms' masks only within this factor)


@dataclass(frozen=True)
class Verdict:
    """One claim's verdict under the rule (:data:`RULE`): ``outcome`` (one of :data:`MARKS`' keys),
    its ``mark`` and ``why`` in words (units, interval, test, what was missing)."""

    outcome: str
    why: str
    open: bool = False  # undecided only by where the interval lies (see :func:`open_interval`)
    claim: str = ""  # the registered claim it decides ("<chapter>/<id>", :func:`modlib.claims.decide`)
    amended: str = ""  # for an amended claim: what changed after the results were seen, and the verdict before
    plain: str = ""  # where the interval is clear of 0 but the verdict is not reproduced or undecided: in plain words

    @property
    def mark(self) -> str:
        return MARKS[self.outcome]

    @property
    def reproduced(self) -> bool:
        return self.outcome == REPRODUCED


def _t_bounds(test, *arms, level: float = 0.95) -> tuple[float, float]:
    """``(low, high)``: the ``level`` interval of scipy's t ``test`` (``ttest_1samp`` against 0, or
    Welch's ``ttest_ind``) on ``arms``. Units that agree to the last digit (seeds that ended alike)
    have a variance of 0, which scipy reports as a loss of precision; here it is the answer (an
    interval of no width), so that one warning is not shown."""
    import warnings

    from scipy import stats as _st

    kwargs = {"popmean": 0.0} if test == "ttest_1samp" else {"equal_var": False}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Precision loss occurred in moment calculation", RuntimeWarning)
        ci = getattr(_st, test)(*arms, **kwargs).confidence_interval(confidence_level=level)
    return float(ci.low), float(ci.high)


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``values [n]`` (n >= 2 independent units) with Student's t interval
    (scipy's ``ttest_1samp(...).confidence_interval``): right for few units, where a percentile
    bootstrap is too narrow."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 2:
        raise ValueError(f"a t interval needs at least 2 units; got shape {values.shape}")
    return float(values.mean()), *_t_bounds("ttest_1samp", values, level=level)


def sign_test(differences) -> float:
    """The exact two-sided sign test's p-value for paired ``differences [n]`` (zeros dropped;
    scipy's ``binomtest`` at one half): with 5 of 5 on one side it is 0.0625, so five seeds alone
    cannot reach 0.05."""
    from scipy import stats as _st

    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return 1.0
    return float(_st.binomtest(int((d > 0).sum()), d.size).pvalue)


def points(x: float, margin: float = 0) -> str:
    """A difference of accuracies ``x`` in points with its sign ("+8"), as :meth:`Effect.text` prints
    it: with one decimal where whole points would print the ``margin`` it misses ("+4.7", not "+5",
    beside a margin of 0.05); a difference that rounds to 0 with no sign (:func:`number`)."""
    if margin and round(abs(100 * x)) == round(100 * margin) and abs(x) != margin:
        return f"{100 * x:+.1f}"
    return number(100 * x, 0, sign=True)


def bound(x: float, margin: float) -> str:
    """An interval's end as a page prints it: two places, or as many more (up to five) as it takes
    not to print the ``margin`` it misses (``+0.048`` where ``+0.05`` would read as the margin itself)
    nor an end clear of 0 as 0 (``+0.005``, not ``+0.00``: the end shows its side of 0). An end
    that still rounds to 0 prints with no sign, as :func:`number` prints it (``"0.00"``, never
    ``"+0.00"`` or ``"-0.00"``): the sign of a rounded zero tells the reader nothing."""
    for places in range(2, 6):
        text = f"{x:+.{places}f}"
        if float(text) == 0:
            if x == 0:
                break
            continue
        if margin == 0 or round(abs(x), places) != round(abs(margin), places) or abs(x) == abs(margin):
            return text
    return number(x, 2, sign=True) if float(text) == 0 else text


def ends(low: float, high: float, margin: float) -> str:
    """An interval's two ends as a page prints them, ``"+0.035 to +0.051"``: each as :func:`bound`
    prints it, and both with as many places as the longer one needs, so that one interval shows one
    precision (not ``"+0.04 to +0.051"``). An end that rounds to 0 even so prints with no sign."""
    texts = bound(low, margin), bound(high, margin)
    places = max(len(t.split(".")[1]) for t in texts)
    return " to ".join(t if len(t.split(".")[1]) == places else number(x, places, sign=True)
                       for x, t in zip((low, high), texts))


def verdict(low: float, high: float, *, units: int, paper: float, margin: float | None = None,
            trained: bool = True, controls: bool = True, measurable: bool = True,
            what: str = "", over: str = "", source: str = "the paper's",
            estimate: float | None = None) -> Verdict:
    """The verdict on a claim whose effect the paper reports as ``paper`` (its sign gives the
    claim's direction), measured as an interval ``[low, high]`` over ``units`` independent units,
    as :data:`RULE` words it. ``trained``: every arm compared trained (fit above its stated
    threshold); ``controls``: every control the claim needs passed (neither failed nor undecided)
    and is not degenerate; ``measurable``: the quantity is not at a floor or ceiling in both arms.
    ``margin``: the smallest effect that counts (default :data:`CLEAR`). ``what`` names the
    interval's test and ``over`` its units (default ``"<units> units"``), for ``why``. ``source``
    names where ``paper`` comes from: :data:`STATED` where the paper gives a direction but no size
    and a margin the book states stands in for it; ``paper`` is then that margin (``margin``
    defaults to ``abs(paper)`` and may not differ from it).

    In the paper's direction, with ``est`` the ``estimate`` (the mean difference; the interval's
    middle where not given), an interval ``[lo, hi]`` is reproduced when ``lo > 0`` and ``est >=
    margin`` (the direction is sure and the effect's size, as estimated, counts); not reproduced
    when ``hi < margin`` (no effect that counts fits it: clear of 0 but below the margin, within
    the margin of no effect, or on the other side); anything else cannot be decided: an interval
    across 0 that reaches the margin, or one clear of 0 whose estimate falls short of it (``+0.01``
    to ``+0.06``). A failure needs the whole interval short of the margin, so ``-0.30`` to ``+0.90``
    against a paper's ``+1.00`` is undecided, not a failure: the paper's own number only words the
    outcome ("below the paper's ..."). ``margin=0`` where the measure already holds the claim's
    allowance (e.g. an effect plus the loss a claim tolerates): then its interval's side of 0
    decides."""
    if low > high:
        raise ValueError(f"low={low} > high={high}")
    if paper == 0:
        raise ValueError("paper=0: give the effect the paper reports, with its sign")
    if source == STATED:
        if margin is not None and not np.isclose(margin, abs(paper)):
            raise ValueError(f"source={STATED!r} makes paper={paper:+.2f} the margin; got margin={margin}")
        margin = abs(paper)
    margin = CLEAR if margin is None else margin
    if margin < 0:
        raise ValueError(f"margin={margin}: the smallest effect that counts cannot be below 0")
    interval = (f"{what + ' ' if what else ''}interval {ends(low, high, margin)} over "
                f"{over or f'{units} units'}")
    if units == 1 and low == high:  # one value, no interval: "one seed alone gives -0.29, no interval"
        one = over or "one unit"
        one = "one " + one[2:] if one.startswith("1 ") else one
        interval = f"{one} alone gives {bound(low, margin)}, no interval"
    if units < 2:
        return Verdict(UNDECIDED, f"one unit only ({interval})")
    if not trained:
        return Verdict(UNDECIDED, f"an arm did not train ({interval})")
    if not controls:
        return Verdict(UNDECIDED, f"a control did not pass or is degenerate ({interval})")
    if not measurable:
        return Verdict(UNDECIDED, f"both arms sit at a floor or ceiling ({interval})")
    s = 1.0 if paper > 0 else -1.0
    lo, hi = sorted((s * low, s * high))  # the effect in the paper's direction
    est = s * (estimate if estimate is not None else (low + high) / 2)
    shown = f"{s * est:+.3f}" if round(abs(est), 2) == round(margin, 2) else f"{s * est:+.2f}"  # at the margin: 3 places
    edge = f"{s * margin:+.2f}"
    if margin == 0:  # the measure holds the claim's allowance (chapter 4's "spares"): its sign decides
        if lo > 0:
            return Verdict(REPRODUCED, f"{interval}: clear of 0 on the paper's side")
        if hi < 0:
            return Verdict(NOT_REPRODUCED, f"{interval}: clear of 0 on the other side")
        return Verdict(UNDECIDED, f"{interval}: wide enough for either side of 0", open=True)
    if lo > 0 and est >= margin:
        smaller = f", below {source} {paper:+.2f}" if hi < abs(paper) else ""
        return Verdict(REPRODUCED, f"{interval}: clear of 0 on the paper's side, the estimate "
                                   f"{shown} beyond the margin of {edge}{smaller}")
    if hi < margin:  # no effect that counts fits the interval
        if lo > 0:
            plain = f"an effect was found, but smaller than the margin of {edge}"
            if round(hi, 2) == round(margin, 2):  # the upper end prints as the margin at two places
                plain += f": the interval ends at {bound(s * hi, margin)}, just short of it"
            return Verdict(NOT_REPRODUCED, f"{interval}: clear of 0 but below the margin of {edge}", plain=plain)
        opposite = "an effect was found, but in the direction opposite to the one claimed" if hi < 0 else ""
        if lo > -margin:
            return Verdict(NOT_REPRODUCED, f"{interval}: within the margin of no effect (±{margin:.2f})",
                           plain=opposite)
        if hi < 0:
            return Verdict(NOT_REPRODUCED, f"{interval}: wholly opposite to the paper's side", plain=opposite)
        return Verdict(NOT_REPRODUCED, f"{interval}: short of the margin of {edge} on the paper's side")
    if lo > 0:
        return Verdict(UNDECIDED, f"{interval}: clear of 0, but the estimate {shown} falls short of the "
                                  f"margin of {edge} while the interval reaches it", open=True,
                       plain=f"an effect was found, but its estimate is smaller than the margin of {edge}")
    return Verdict(UNDECIDED, f"{interval}: wide enough for no effect and for one beyond the margin of {edge}",
                   open=True)


def open_interval(v: Verdict) -> bool:
    """Whether ``v`` is undecided only because of where its interval lies (every arm trained, every
    control passed, more than one unit): the outcome an honest small study may have, unlike a
    failed arm or control."""
    return v.outcome == UNDECIDED and v.open


def distinct_units(*per_unit) -> int:
    """How many units differ among ``per_unit`` arrays ``[n, ...]`` (rows that repeat one another,
    e.g. seeds identical to seed 0, count once): the ``units`` to give :func:`verdict`."""
    rows = np.concatenate([np.asarray(x, dtype=float).reshape(len(x), -1) for x in per_unit], axis=1)
    return len({r.tobytes() for r in np.round(rows, 9)})


def undecided_reason(v: Verdict) -> str:
    """Why ``v`` cannot be decided, in words without its interval ("an arm did not train", "wide
    enough for no effect and ..."); "" for a decided verdict."""
    if v.outcome != UNDECIDED:
        return ""
    return v.why.split(": ", 1)[1] if ": " in v.why else v.why.split(" (", 1)[0]


def marked(v: Verdict, untrained: str = "") -> str:
    """A verdict as a page prints it after its interval: ``" — ✓ reproduced"``, or with the reason
    when it cannot be decided (``untrained``, the arm's stated threshold, follows "an arm did not
    train")."""
    reason = undecided_reason(v)
    if reason.startswith("an arm did not train") and untrained:
        reason += f": {untrained}"
    said = "; ".join(x for x in (reason, v.plain) if x)
    return f" — {v.mark} {v.outcome}" + (f" ({said})" if said else "") + (f" ({v.amended})" if v.amended else "")


# ---------------------------------------------------------------- claims decided by the rule (chapters 4-6)


@dataclass(frozen=True)
class Claim(Finding):
    """A :class:`Finding` whose mark comes from the verdict rule (:func:`verdict`): ``holds`` is
    ``verdict.reproduced``. A finding that checks a condition (an arm trained) rather than a paper's
    claim has no verdict; it is marked "check passed" or "check failed", never with the rule's
    ✓ / ✗ (which say whether a paper's claim was found)."""

    verdict: Verdict | None = None
    own: bool = False  # the book's own hypothesis, not a paper's claim (see :func:`claim`)

    @property
    def mark(self) -> str:
        if self.verdict is None:
            return self.outcome
        return "" if self.own and self.verdict.outcome != UNDECIDED else self.verdict.mark

    @property
    def outcome(self) -> str:
        if self.verdict is None:
            return "check passed" if self.holds else "check failed"
        if self.own and self.verdict.outcome != UNDECIDED:
            return HOLDS if self.verdict.reproduced else DOES_NOT_HOLD
        return self.verdict.outcome

    @property
    def marked(self) -> str:
        """The mark and the outcome as a table shows them: "✓ reproduced", "holds", "? cannot be
        decided here"; a check's "check passed" or "check failed"."""
        if self.verdict is None:
            return self.outcome
        return f"{self.mark} {self.outcome}".strip()


HOLDS, DOES_NOT_HOLD = "holds", "does not hold"  # a decided hypothesis of the book's own


def claim(name: str, v: Verdict, text: str, own: bool = False) -> Claim:
    """A :class:`Claim` whose text ends with the verdict and why (the interval and its test).
    ``own``: the claim is the book's own hypothesis, not a paper's; the same rule decides it, but a
    decided one reads "holds" / "does not hold", without the ✓ / ✗ the pages keep for whether a
    paper's claim was found."""
    c = Claim(name, v.reproduced, "", v, own)
    why = v.why.replace("the paper's side", "the claim's side") if own else v.why
    plain = f" {v.plain[0].upper()}{v.plain[1:]}." if v.plain else ""
    return Claim(name, v.reproduced, f"{text} **{c.marked}**: {why}.{plain}{amended_sentence(v)}", v, own)


def amended_sentence(v: Verdict) -> str:
    """The sentence, in italics, that closes the text of an amended claim's statement (:func:`claim`):
    what changed and the verdict as registered (``v.amended``); "" for a claim never amended."""
    return f" *{v.amended[0].upper()}{v.amended[1:]}*." if v.amended else ""


# ---------------------------------------------------------------- comparing two arms: one paired path, one unpaired


@dataclass(frozen=True)
class Effect:
    """A difference between two arms, ``mean(a) - mean(b)``, with its 95% interval ``[low, high]``
    over ``n`` units (pairs, or the smaller group) of which ``units`` are distinct (a unit that
    repeats another counts once), the interval's name ``interval`` and the exact test beside it
    (``test``, e.g. ``"sign test p = 0.06"``). ``measurable`` is false where both arms sit at one
    value (a floor or a ceiling): nothing can be read there. Made by :func:`paired` and
    :func:`unpaired`; :meth:`verdict` applies the rule, :meth:`text` writes it for a page."""

    mean: float
    low: float
    high: float
    n: int
    units: int
    interval: str
    test: str
    unit: str
    measurable: bool = True
    sizes: tuple[int, ...] = ()  # the two groups' sizes where they differ (unpaired)
    # what it was computed from, so that it can be computed again on altered arms (modlib.claims.replay):
    # the per-unit values of the two arms ([n], [m]) and (function name, other arguments)
    arms: tuple = field(default=(), compare=False, repr=False)
    how: tuple = field(default=(), compare=False, repr=False)

    @property
    def over(self) -> str:
        """``"5 seeds"``, or ``"5 and 3 seeds"`` for groups of different sizes."""
        if len(set(self.sizes)) > 1:
            return f"{self.sizes[0]} and {self.sizes[1]} {_plural(self.unit, 2)}"
        return f"{self.n} {_plural(self.unit, self.n)}"

    def text(self, percent: bool = True, margin: float | None = None) -> str:
        """``"+8 points (95% paired t interval over 5 seeds +3 to +13 points; sign test p = 0.06)"``.
        ``margin``: the claim's margin, where a number that would print as the margin it misses gets
        the digits to show it (:func:`bound`; in points, one decimal: "+4.7 points" where "+5" would
        read as a margin of 5 points). Not in points, the interval's ends
        print as :func:`ends` prints them (an end clear of 0 shows its side of it; both ends at one
        precision) and a mean that rounds to 0 prints with no sign (:func:`number`)."""
        edge = margin if margin is not None and margin > 0 else 0

        def plain(v):
            return bound(v, edge) if edge and round(abs(v), 2) == round(edge, 2) else number(v, 2, sign=True)
        num = (lambda v: points(v, edge)) if percent else plain
        end = " points" if percent else ""
        test = f"; {self.test}" if self.test else ""
        if self.n < 2:  # one unit: its value, and no interval to give
            return f"{num(self.mean)}{end} (one {self.unit} alone, no interval)"
        span = f"{num(self.low)} to {num(self.high)}" if percent else ends(self.low, self.high, edge)
        return f"{num(self.mean)}{end} (95% {self.interval} interval over {self.over} {span}{end}{test})"

    def verdict(self, *, paper: float, margin: float | None = None, trained: bool = True, controls: bool = True,
                measurable: bool = True, source: str = "the paper's") -> Verdict:
        """The rule (:func:`verdict`) on this effect; ``measurable=False`` adds the caller's own
        reason that the quantity cannot be read (e.g. both arms under a stated floor)."""
        measurable = measurable and self.measurable
        if self.n >= 2 and self.units < 2 and measurable:
            which = f"the {self.over} are" if len(self.sizes) < 2 else f"one arm's {_plural(self.unit, 2)} are"
            return Verdict(UNDECIDED, f"{which} identical: one distinct unit ({self.interval} interval "
                                      f"{self.low:+.2f} to {self.high:+.2f} over {self.over})")
        return verdict(self.low, self.high, units=self.n if not measurable else self.units, paper=paper,
                       margin=margin, trained=trained, controls=controls, measurable=measurable,
                       what=self.interval, over=self.over, source=source, estimate=self.mean)


def _plural(unit: str, n: int) -> str:
    return unit if n == 1 else unit + "s"


def _check_shares(*arms: np.ndarray) -> None:
    for x in arms:
        if not np.isin(x, (0.0, 1.0)).all():
            raise ValueError(f"shares=True needs values 1 or 0 per unit; got {sorted(set(x.tolist()))[:5]}")


def _one_value(a: np.ndarray, b: np.ndarray) -> bool:
    """Both arms at one and the same value (a floor or a ceiling)."""
    both = np.concatenate([a, b])
    return both.size > 0 and float(np.ptp(both)) < 1e-9


def _newcombe(p1, l1, u1, p2, l2, u2, phi: float = 0.0) -> tuple[float, float]:
    """Newcombe's hybrid score interval for ``p1 - p2`` from the two shares' Wilson limits; ``phi``
    the correlation of paired outcomes (0 for independent groups)."""
    low = (p1 - p2) - np.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = (p1 - p2) + np.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return float(max(-1.0, low)), float(min(1.0, high))


def _replayable(compare):
    """Make ``compare(a, b, ...)`` return an :class:`Effect` that keeps its arms and arguments."""

    @functools.wraps(compare)
    def keeping(a, b, *args, **kwargs):
        e = compare(a, b, *args, **kwargs)
        arms = (np.asarray(a, dtype=float).ravel().copy(), np.asarray(b, dtype=float).ravel().copy())
        return replace(e, arms=arms, how=(compare.__name__, args, kwargs))

    return keeping


@_replayable
def paired(a, b, unit: str = "seed", units: int | None = None, shares: bool = False) -> Effect:
    """``mean(a - b)`` over units ``a [n]``, ``b [n]`` paired by unit (two settings that share each
    seed's initial weights; two measurements of one base model). ``shares``: the values are 1 or 0
    per unit (a seed generalises or not): Newcombe's interval for paired shares (his method 10) and
    the exact McNemar test (the sign test of the discordant pairs); otherwise Student's t interval
    of the differences and the exact sign test. ``units``: how many distinct units there are, where the
    caller can tell better than the values (default: distinct (a, b) rows for measurements, ``n``
    for shares, whose rows repeat by nature)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be [n] paired by unit; got shapes {a.shape} and {b.shape}")
    n, d = a.size, a - b
    if n < 2:
        m = float(d.mean()) if n else 0.0
        return Effect(m, m, m, n, n, "single-unit", "", unit)
    flat = _one_value(a, b)
    if shares:
        _check_shares(a, b)
        both, only_a = int(((a == 1) & (b == 1)).sum()), int(((a == 1) & (b == 0)).sum())
        only_b, neither = int(((a == 0) & (b == 1)).sum()), int(((a == 0) & (b == 0)).sum())
        den = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
        cross = both * neither - only_a * only_b
        if den > 0 and cross > 0:  # Newcombe's continuity correction of phi
            cross = max(cross - n / 2, 0.0)
        phi = cross / np.sqrt(den) if den > 0 else 0.0
        p1, p2 = a.mean(), b.mean()
        low, high = _newcombe(p1, *wilson(int(a.sum()), n), p2, *wilson(int(b.sum()), n), phi=phi)
        return Effect(float(p1 - p2), low, high, n, units if units is not None else n,
                      "Newcombe (paired shares)", f"exact McNemar p = {sign_test(d):.2g}", unit, not flat)
    mean, low, high = t_interval(d)
    distinct = n if flat else distinct_units(a, b)
    return Effect(mean, low, high, n, units if units is not None else distinct, "paired t",
                  f"sign test p = {sign_test(d):.2g}", unit, not flat)


@_replayable
def unpaired(a, b, unit: str = "seed", units: int | None = None, shares: bool = False) -> Effect:
    """``mean(a) - mean(b)`` for two independent groups of units ``a [n]``, ``b [m]`` (different
    models, or base models of two arms). ``shares`` (values 1 or 0 per unit): Newcombe's hybrid
    score interval and Fisher's exact test; otherwise Welch's t interval. ``n`` is the smaller group; the
    distinct units are the fewer of the two groups' (identical units in either arm count once)."""
    from scipy import stats as _st

    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    n = int(min(a.size, b.size))
    if n < 2:
        m = float(a.mean() - b.mean()) if a.size and b.size else 0.0
        return Effect(m, m, m, n, n, "single-unit", "", unit)
    flat = _one_value(a, b)
    d = float(a.mean() - b.mean())
    if shares:
        _check_shares(a, b)
        ka, kb = int(a.sum()), int(b.sum())
        low, high = _newcombe(ka / a.size, *wilson(ka, a.size), kb / b.size, *wilson(kb, b.size))
        p = _st.fisher_exact([[ka, a.size - ka], [kb, b.size - kb]])[1]
        return Effect(d, low, high, n, units if units is not None else n, "Newcombe (shares)",
                      f"Fisher's exact p = {p:.2g}", unit, not flat, (a.size, b.size))
    low, high = _t_bounds("ttest_ind", a, b)  # Welch's
    distinct = n if flat else min(distinct_units(a), distinct_units(b))
    return Effect(d, low, high, n, units if units is not None else distinct, "Welch t", "", unit,
                  not flat, (a.size, b.size))


def units_to_decide(kind: str, a, b, margin: float, direction: float = 1.0, most: int = 200) -> int | None:
    """A planning number, not a verdict: how many units (pairs, or base models per arm) the rule would
    need to decide a claim if the effect and the spread measured now on ``a [n]`` and ``b [m]`` were
    the truth. ``kind`` is how the effect was computed (``"paired"``: Student's t interval of the
    differences; ``"unpaired"``: Welch's, with as many units in each arm). Where the estimate (in
    the claim's ``direction``) reaches the ``margin``, the units at which the interval's low end
    clears 0 (reproduced, or holds); where it falls short, those at which the whole interval lies
    short of the margin (not reproduced, or does not hold). None where no such count exists up to
    ``most`` (an estimate on the margin), or where the interval is not a t interval (shares,
    correlations)."""
    from scipy import stats as _st

    if kind not in ("paired", "unpaired"):
        return None
    sign = 1.0 if direction > 0 else -1.0
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if kind == "paired":
        d = sign * (a - b)
        mean, var_a, var_b = float(d.mean()), float(d.var(ddof=1)) if d.size > 1 else 0.0, 0.0
    else:
        mean = sign * float(a.mean() - b.mean())
        var_a, var_b = (float(x.var(ddof=1)) if x.size > 1 else 0.0 for x in (a, b))
    distance = mean if mean >= margin else margin - mean  # how far the interval's end may reach
    if distance <= 0:
        return None
    for n in range(2, most + 1):
        se2 = (var_a + var_b) / n
        if se2 == 0:
            return n
        if kind == "paired":
            df = n - 1
        else:  # Welch-Satterthwaite with n units in each arm
            df = se2 ** 2 / ((var_a / n) ** 2 / (n - 1) + (var_b / n) ** 2 / (n - 1))
        if _st.t.ppf(0.975, df) * np.sqrt(se2) < distance:
            return n
    return None


@_replayable
def correlation(x, y, unit: str = "seed", units: int | None = None) -> Effect:
    """Spearman's rank correlation of ``x [n]`` and ``y [n]`` over ``n`` independent units, as an
    :class:`Effect` (``mean`` is rho): its 95% interval by Fisher's z, ``tanh(atanh(rho) +-
    1.96 * sqrt(1.06 / (n - 3)))`` (Fieller, Hartley and Pearson's standard error for a rank
    correlation; it needs n >= 4, with fewer the interval is -1 to +1), and scipy's two-sided p beside
    it (its t approximation, not an exact permutation test); where that approximation cannot serve
    (n < 4, or rho at +-1, where it gives p = 0), the exact permutation p (:func:`_permutation_p`)
    in its place, so that a page never prints p = 0 beside an interval that spans 0. A quantity that does
    not vary over the units (either ``x`` or ``y``) has no correlation: ``measurable`` is false.
    Read it with ``text(percent=False)`` and ``verdict(paper=..., margin=...)`` with a margin of
    correlation, not :data:`CLEAR`."""
    from scipy import stats as _st

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be [n] paired by unit; got shapes {x.shape} and {y.shape}")
    n = x.size
    if n < 2 or np.ptp(x) < 1e-12 or np.ptp(y) < 1e-12:
        return Effect(0.0, -1.0, 1.0, n, units if units is not None else n, "Spearman (Fisher z)", "",
                      unit, False)
    res = _st.spearmanr(x, y)
    rho = float(np.clip(res.statistic, -1.0, 1.0))
    if n >= 4:
        z, half = np.arctanh(np.clip(rho, -0.999999, 0.999999)), 1.96 * np.sqrt(1.06 / (n - 3))
        low, high = float(np.tanh(z - half)), float(np.tanh(z + half))
    else:
        low, high = -1.0, 1.0
    p = f"p = {float(res.pvalue):.2g}"
    if n < 4 or abs(rho) > 1 - 1e-12:
        p = f"permutation p = {_permutation_p(x, y):.2g}"
    return Effect(rho, low, high, n, units if units is not None else distinct_units(x, y),
                  "Spearman rank, Fisher z", p, unit)


def partial_correlation(x, y, given, unit: str = "seed") -> Effect:
    """Spearman's partial rank correlation of ``x [n]`` and ``y [n]`` holding ``given [n]`` fixed: the
    correlation of the ranks of ``x`` and ``y`` once each is regressed (least squares) on the ranks
    of ``given``, as an :class:`Effect` (``mean`` is the partial rho), its 95% interval by Fisher's z
    with one more degree of freedom used, ``tanh(atanh(r) +- 1.96 * sqrt(1.06 / (n - 4)))``, and the
    t test of a partial correlation beside it (``n - 3`` degrees of freedom). A description, not a
    claim's measure: no page's verdict reads it."""
    from scipy import stats as _st

    x, y, z = (np.asarray(v, dtype=float) for v in (x, y, given))
    if not x.shape == y.shape == z.shape or x.ndim != 1:
        raise ValueError(f"x, y and given must be [n] paired by unit; got shapes {x.shape}, {y.shape}, {z.shape}")
    n = x.size
    if n < 5 or min(np.ptp(v) for v in (x, y, z)) < 1e-12:
        return Effect(0.0, -1.0, 1.0, n, n, "partial Spearman (Fisher z)", "", unit, False)
    rz = _st.rankdata(z)
    design = np.stack([np.ones(n), rz], axis=1)  # [n, 2]
    rx, ry = (r - design @ np.linalg.lstsq(design, r, rcond=None)[0] for r in (_st.rankdata(x), _st.rankdata(y)))
    r = float(np.clip(np.corrcoef(rx, ry)[0, 1], -1.0, 1.0))
    zr, half = np.arctanh(np.clip(r, -0.999999, 0.999999)), 1.96 * np.sqrt(1.06 / (n - 4))
    t = r * np.sqrt((n - 3) / max(1 - r * r, 1e-12))
    p = f"p = {float(2 * _st.t.sf(abs(t), n - 3)):.2g}"
    return Effect(r, float(np.tanh(zr - half)), float(np.tanh(zr + half)), n, n,
                  "partial Spearman rank, Fisher z", p, unit)


PERMUTED = 8  # up to this many units :func:`_permutation_p` counts all n! orderings (8! = 40,320)


def _permutation_p(x, y) -> float:
    """The exact two-sided permutation p of Spearman's rho of ``x [n]`` and ``y [n]``: the share of
    the n! orderings of ``y`` whose rho is at least as far from 0 as the observed one (1/3 at
    rho = 1 over 3 units), every ordering counted up to :data:`PERMUTED` units. Beyond, only at
    rho = +-1 (:func:`correlation` asks for no other case): 2 * prod(t!) / n! over ``y``'s groups
    of t tied values, the orderings that keep ``y``'s ranks or reverse them (exact without ties, an
    upper bound with them)."""
    import itertools
    import math

    from scipy import stats as _st

    rx, ry = _st.rankdata(x), _st.rankdata(y)
    rho = lambda r: np.corrcoef(rx, r)[0, 1]  # noqa: E731  (Spearman's rho: Pearson's on the ranks)
    seen = abs(rho(ry))
    if ry.size > PERMUTED:
        ties = math.prod(math.factorial(t) for t in np.unique(ry, return_counts=True)[1])
        return min(1.0, 2 * ties / math.factorial(ry.size))
    return float(np.mean([abs(rho(np.array(r))) >= seen - 1e-12 for r in itertools.permutations(ry)]))


# ---------------------------------------------------------------- several claims at once

def holm(pvalues: dict, alpha: float = 0.025) -> dict:
    """Holm's step-down correction of ``pvalues`` ({name: p}) for testing them all at once:
    {name: (adjusted p, whether it stays below ``alpha``)}. The adjusted p of the i-th smallest
    of m is the largest of ``min(1, (m - j) * p_j)`` over the j <= i smaller ones (j from 0); the
    family-wise error is at most ``alpha``. The default 0.025 is the one side of a two-sided 95 %
    interval, the level at which the verdict rule asks an interval to clear 0 on the claim's side."""
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha={alpha}: must be in (0, 1]")
    order = sorted(pvalues, key=lambda k: pvalues[k])
    m, running, out = len(order), 0.0, {}
    for j, k in enumerate(order):
        running = max(running, min(1.0, (m - j) * float(pvalues[k])))
        out[k] = (running, running <= alpha)
    return out
