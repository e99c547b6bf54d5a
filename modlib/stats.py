"""Shared statistics for the chapters' findings (each chapter's ``findings`` module): the statement
a page prints (:class:`Finding`), the book's verdict rule (an effect is *clear* when its interval
excludes 0 and it is at least :data:`CLEAR`), and the intervals and tests behind it: Wilson
intervals for shares of seeds, paired and unpaired bootstrap intervals of differences, the
Brown-Forsythe spread and an exact permutation test. Used by every chapter's page and by the
claims tests (``tests/test_claims.py``), so that the prose and the tests say the same thing.
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


def _difference(a: np.ndarray, b: np.ndarray, percent: bool = True) -> tuple[str, bool, float]:
    """The paired difference ``a - b`` as text, whether its interval excludes 0, and its sign."""
    d, low, high = paired_difference(a, b)
    fmt = (lambda v: f"{100 * v:+.0f} points") if percent else (lambda v: f"{v:+.2f}")
    return f"{fmt(d)} (95% interval {fmt(low)} to {fmt(high)})", low > 0 or high < 0, d


def unpaired_difference(a: np.ndarray, b: np.ndarray, resamples: int = 10_000,
                        seed: int = 0) -> tuple[float, float, float]:
    """``mean(a) - mean(b)`` for two independent groups of base models and its 95% bootstrap
    interval ``(difference, low, high)``: each group resampled on its own."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"each group needs at least 2 values; got {a.size} and {b.size}")
    rng = np.random.default_rng(seed)
    means = (a[rng.integers(a.size, size=(resamples, a.size))].mean(1)
             - b[rng.integers(b.size, size=(resamples, b.size))].mean(1))
    low, high = np.percentile(means, [2.5, 97.5])
    return float(a.mean() - b.mean()), float(low), float(high)


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
