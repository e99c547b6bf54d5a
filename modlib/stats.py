"""Shared statistics for the chapters' findings (each chapter's ``findings`` module): the statement
a page prints (:class:`Finding`, :class:`Claim`), the book's verdict rule, written once (:data:`RULE`,
applied by :func:`verdict`: reproduced / not reproduced / cannot be decided here), and the
intervals and tests behind it, chosen for few units: Student's t (:func:`t_interval`,
:func:`paired_t`, :func:`paired_verdict`) and Welch's (:func:`welch_interval`,
:func:`unpaired_verdict`) intervals, the exact sign and permutation tests, Wilson intervals for
shares, the Brown-Forsythe spread; the paired percentile bootstrap only for chapter 1's 100 seeds.
Used by every chapter's page and by the claims tests, so that the prose and the tests say the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CLEAR = 0.05  # an effect the page calls clear: a paired difference of at least this, interval clear of 0


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


def _span(values: np.ndarray) -> str:
    """``"0.02–0.14"`` (just ``"0.02"`` when all are equal to two decimals), as percentages."""
    lo, hi = f"{np.min(values):.1%}", f"{np.max(values):.1%}"
    return lo if lo == hi else f"{lo}–{hi}"


def _seeds(n: int) -> str:
    return "the one seed" if n == 1 else f"all {n} seeds"


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson 95% interval ``(low, high)`` for a share of ``successes`` out of ``n`` (e.g. the
    seeds that generalise): binomial, and sensible at shares of 0 and 1."""
    if n < 1:
        raise ValueError(f"n={n}: a share needs at least one trial")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_difference(a: np.ndarray, b: np.ndarray, resamples: int = 10_000,
                      seed: int = 0) -> tuple[float, float, float]:
    """``mean(a - b)`` over seeds and its 95% bootstrap interval ``(difference, low, high)``.

    ``a [S]`` and ``b [S]`` hold one value per seed (an accuracy, or 1/0 for "generalises") in two
    settings that share each seed's initial weights, so the seeds are resampled in pairs."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.ndim != 1 or d.size < 2:
        raise ValueError(f"a and b must be [S] with S >= 2 paired seeds; got shape {d.shape}")
    rng = np.random.default_rng(seed)
    means = d[rng.integers(d.size, size=(resamples, d.size))].mean(1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(low), float(high)






def spread(values) -> np.ndarray:
    """Absolute deviations from the median ``[n]`` of ``values`` ``[n]``: their mean is the
    Brown-Forsythe measure of spread, which one outlying base model moves less than the standard
    deviation; :func:`permutation_test` of two groups' deviations compares their spreads."""
    values = np.asarray(values, dtype=float)
    return np.abs(values - np.median(values))


def permutation_test(a, b) -> tuple[float, float]:
    """``mean(a) - mean(b)`` and its one-sided p-value (that large or larger) over every way of
    splitting the pooled values into groups of ``len(a)`` and ``len(b)`` (252 for 5 and 5): exact,
    where a bootstrap of five values per group gives intervals that are too narrow."""
    from itertools import combinations

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"each group needs at least 2 values; got {a.size} and {b.size}")
    pooled, observed = np.concatenate([a, b]), a.mean() - b.mean()
    splits = [np.isin(np.arange(pooled.size), picked)
              for picked in combinations(range(pooled.size), a.size)]  # [C(n, k)] masks
    diffs = np.array([pooled[m].mean() - pooled[~m].mean() for m in splits])
    return float(observed), float((diffs >= observed - 1e-12).mean())


# ---------------------------------------------------------------- the book's verdict rule

REPRODUCED, NOT_REPRODUCED, UNDECIDED = "reproduced", "not reproduced", "cannot be decided here"
MARKS = {REPRODUCED: "✓", NOT_REPRODUCED: "✗", UNDECIDED: "?"}
RULE = (
    "**The verdict rule.** A claim of a paper is *reproduced* when, over at least two independent "
    "units (seeds, or base models; mask seeds of one base model are not independent), the "
    "interval of the effect the paper reports excludes no effect on the paper's side, and every arm "
    "it compares trained and every control it needs passed. It is *not reproduced* when those hold "
    "but the interval excludes the paper's effect (or lies within the stated margin of no effect). "
    "When the interval is clear of 0 and reaches the margin it is reproduced even if it stays below "
    "the paper's number (the page says it is smaller); clear of 0 but below the margin is not "
    "reproduced. "
    "Anything else (one unit, an arm that did not train, a degenerate control, a quantity at its "
    "floor or ceiling in both arms, an interval wide enough for both) *cannot be decided here*. "
    "✓ marks reproduced, ✗ not reproduced (the paper's claim was not found at this scale; never "
    "\"the sentence is false\"), ? cannot be decided.")


@dataclass(frozen=True)
class Verdict:
    """One claim's verdict under the rule (:data:`RULE`): ``outcome`` (one of :data:`MARKS`' keys),
    its ``mark`` and ``why`` in words (units, interval, test, what was missing)."""

    outcome: str
    why: str

    @property
    def mark(self) -> str:
        return MARKS[self.outcome]

    @property
    def reproduced(self) -> bool:
        return self.outcome == REPRODUCED


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``values [n]`` (n >= 2 independent units) with Student's t interval:
    right for few units, where a percentile bootstrap is too narrow."""
    from scipy import stats as _st

    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size < 2:
        raise ValueError(f"a t interval needs at least 2 units; got shape {values.shape}")
    half = _st.t.ppf(0.5 + level / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
    return float(values.mean()), float(values.mean() - half), float(values.mean() + half)


def welch_interval(a, b, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean(a) - mean(b), low, high)`` for two independent groups, Welch's t interval."""
    from scipy import stats as _st

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"each group needs at least 2 units; got {a.size} and {b.size}")
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = np.sqrt(va + vb)
    dof = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1)) if se > 0 else a.size + b.size - 2
    half = _st.t.ppf(0.5 + level / 2, dof) * se
    d = a.mean() - b.mean()
    return float(d), float(d - half), float(d + half)


def sign_test(differences) -> float:
    """The exact two-sided sign test's p-value for paired ``differences [n]`` (zeros dropped):
    with 5 of 5 on one side it is 0.0625, so five seeds alone cannot reach 0.05."""
    from math import comb

    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    n, k = d.size, int((d > 0).sum())
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(k, n - k) + 1)) / 2 ** n
    return float(min(1.0, 2 * tail))


def verdict(low: float, high: float, *, units: int, paper: float, margin: float = CLEAR,
            trained: bool = True, controls: bool = True, measurable: bool = True,
            what: str = "",
            source: str = "the paper's") -> Verdict:
    """The verdict on a claim whose effect the paper reports as ``paper`` (its sign gives the
    claim's direction), measured as an interval ``[low, high]`` over ``units`` independent units.
    ``trained``: every arm compared trained (fit above its stated threshold); ``controls``: every
    control the claim needs passed and is not degenerate; ``measurable``: the quantity is not at
    a floor or ceiling in both arms. ``margin``: the smallest effect that counts (default
    :data:`CLEAR`). ``what`` names the interval's test, for ``why``. ``source`` names where
    ``paper`` comes from: ``"the stated margin of"`` where the paper gives a direction but no size
    and the book's margin stands in for it."""
    if low > high:
        raise ValueError(f"low={low} > high={high}")
    if paper == 0:
        raise ValueError("paper=0: give the effect the paper reports, with its sign")
    interval = f"{what + ' ' if what else ''}interval {low:+.2f} to {high:+.2f} over {units} units"
    if units < 2:
        return Verdict(UNDECIDED, f"one unit only ({interval})")
    if not trained:
        return Verdict(UNDECIDED, f"an arm did not train ({interval})")
    if not controls:
        return Verdict(UNDECIDED, f"a control failed or is degenerate ({interval})")
    if not measurable:
        return Verdict(UNDECIDED, f"both arms sit at a floor or ceiling ({interval})")
    s = 1.0 if paper > 0 else -1.0
    lo, hi = sorted((s * low, s * high))  # the effect in the paper's direction
    if lo > 0 and hi >= margin:
        smaller = f", below {source} {paper:+.2f}" if hi < abs(paper) else ""
        return Verdict(REPRODUCED, f"{interval}: clear of 0 on the paper's side{smaller}")
    if hi < abs(paper):
        return Verdict(NOT_REPRODUCED, f"{interval}: excludes {source} {paper:+.2f}")
    return Verdict(UNDECIDED, f"{interval}: wide enough for no effect and for {source} {paper:+.2f}")


def paired_t(a, b, unit: str = "seeds", percent: bool = True) -> tuple[float, float, float, str]:
    """``(mean(a - b), low, high, text)`` for ``a [n]`` and ``b [n]`` paired by unit: Student's t
    interval of the differences and the exact sign test, both named in ``text`` with the unit
    (``"+8 points (t interval over 5 seeds +3 to +13; sign test p = 0.06)"``)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = a - b
    mean, low, high = t_interval(d)
    num = (lambda v: f"{100 * v:+.0f}") if percent else (lambda v: f"{v:+.2f}")
    end = " points" if percent else ""
    return mean, low, high, (f"{num(mean)}{end} (95% t interval over {d.size} {unit} {num(low)} to "
                             f"{num(high)}{end}; sign test p = {sign_test(d):.2g})")


def distinct_units(*per_unit) -> int:
    """How many units differ among ``per_unit`` arrays ``[n, ...]`` (rows that repeat one another,
    e.g. seeds identical to seed 0, count once): the ``units`` to give :func:`verdict`."""
    rows = np.concatenate([np.asarray(x, dtype=float).reshape(len(x), -1) for x in per_unit], axis=1)
    return len({r.tobytes() for r in np.round(rows, 9)})


def marked(v: Verdict, untrained: str = "") -> str:
    """A verdict as a page prints it after its interval: ``" — ✓ reproduced"``, or with the reason
    when it cannot be decided (``untrained``, the arm's stated threshold, follows "an arm did not
    train")."""
    reason = ""
    if v.outcome == UNDECIDED:
        reason = v.why.split(": ", 1)[1] if ": " in v.why else v.why.split(" (", 1)[0]
        if reason.startswith("an arm did not train") and untrained:
            reason += f": {untrained}"
    return f" — {v.mark} {v.outcome}" + (f" ({reason})" if reason else "")


# ---------------------------------------------------------------- claims decided by the rule (chapters 4-6)


@dataclass(frozen=True)
class Claim(Finding):
    """A :class:`Finding` whose mark comes from the verdict rule (:func:`verdict`): ``holds`` is
    ``verdict.reproduced``. A finding that checks a condition (an arm trained) rather than a paper's
    claim has no verdict; it is marked "check passed" or "check failed", never with the rule's
    ✓ / ✗ (which say whether a paper's claim was found)."""

    verdict: Verdict | None = None

    @property
    def mark(self) -> str:
        return self.verdict.mark if self.verdict is not None else self.outcome

    @property
    def outcome(self) -> str:
        if self.verdict is not None:
            return self.verdict.outcome
        return "check passed" if self.holds else "check failed"


def claim(name: str, v: Verdict, text: str) -> Claim:
    """A :class:`Claim` whose text ends with the verdict and why (the interval and its test)."""
    return Claim(name, v.reproduced, f"{text} **{v.mark} {v.outcome}**: {v.why}.", v)


def _flat(d: np.ndarray) -> bool:
    """Whether per-unit values ``d [n]`` do not vary (identical units, or a floor or ceiling)."""
    return d.size > 1 and float(np.ptp(d)) < 1e-9


def paired_verdict(a, b, *, paper: float, unit: str = "seed", margin: float = CLEAR,
                   trained: bool = True, controls: bool = True, measurable: bool = True, source: str = "the paper's") -> Verdict:
    """The rule (:func:`verdict`) on ``mean(a - b)`` over paired units ``a [n]``, ``b [n]`` (one value
    per independent ``unit``), with Student's t interval of the paired differences. Differences
    that do not vary over units (identical units) leave nothing to estimate: not measurable."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size < 2:
        return verdict(float(d.mean()), float(d.mean()), units=int(d.size), paper=paper, margin=margin, source=source,
                       what=f"one {unit}:")
    _, low, high = t_interval(d)
    return verdict(low, high, units=int(d.size), paper=paper, margin=margin, source=source, trained=trained,
                   controls=controls, measurable=measurable and not _flat(d),
                   what=f"paired t (over {d.size} {unit}s)")


def unpaired_verdict(a, b, *, paper: float, unit: str = "base model", margin: float = CLEAR,
                     trained: bool = True, controls: bool = True, measurable: bool = True, source: str = "the paper's") -> Verdict:
    """The rule on ``mean(a) - mean(b)`` for two independent groups of units, Welch's t interval;
    two groups whose values do not vary and are equal (both at a floor or ceiling) are not
    measurable."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if min(a.size, b.size) < 2:
        d = float(a.mean() - b.mean()) if a.size and b.size else 0.0
        return verdict(d, d, units=int(min(a.size, b.size)), paper=paper, margin=margin, source=source, what="fewer than 2 per group:")
    d, low, high = welch_interval(a, b)
    if not np.isfinite(low):
        low = high = d
    return verdict(low, high, units=int(min(a.size, b.size)), paper=paper, margin=margin, source=source, trained=trained,
                   controls=controls, measurable=measurable and not (_flat(a) and _flat(b)),
                   what=f"Welch t ({a.size} and {b.size} {unit}s)")
