"""The statistics the paper reports: distributions, Hedges' g, Pearson r, bootstrap intervals.

Sources: the paper's results (median/mean/sd/P10/P90 of T, K, W; "+136% dialogue rounds
(Hedges' g=0.81)"; "r=-0.60") and docs/design.md §9. Formulas:

* Hedges' g: Cohen's d with the pooled sample sd, times the exact small-sample correction
  ``J(df) = Γ(df/2) / (sqrt(df/2) Γ((df-1)/2))``, ``df = n_a + n_b - 2`` (Hedges 1981; the
  familiar ``1 - 3/(4 df - 1)`` approximates it). Its interval is the normal approximation
  ``g ± z sqrt((n_a+n_b)/(n_a n_b) + g²/(2 (n_a+n_b)))`` (Hedges & Olkin 1985).
* Pearson r with the Fisher-z interval ``tanh(atanh(r) ± z / sqrt(n-3))``, as
  ``scipy.stats.pearsonr(...).confidence_interval()`` computes it.
* Percentile bootstrap intervals from a seeded ``numpy.random.Generator``: the same seed gives
  the same interval.

Only numpy and the standard library are needed at run time; scipy serves as the reference in
tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mission_memory.errors import InputError

__all__ = [
    "Correlation",
    "Distribution",
    "EffectSize",
    "Interval",
    "Statistic",
    "bootstrap_ci",
    "bootstrap_difference_ci",
    "describe",
    "hedges_correction",
    "hedges_g",
    "median_rows",
    "pearson_r",
]

FloatArray = NDArray[np.float64]
Statistic = Callable[[FloatArray], FloatArray]
"""A statistic for bootstrapping: given a 2-D array (resamples × values), one value per row."""


def median_rows(values: FloatArray) -> FloatArray:
    """Median of each row (the default bootstrap statistic)."""
    return np.asarray(np.median(values, axis=1), dtype=np.float64)


@dataclass(frozen=True)
class Distribution:
    """Summary of one metric over sessions, as the paper reports it.

    Attributes:
        n: values summarised.
        median, mean: central values; None when ``n == 0``.
        sd: sample standard deviation (ddof=1); None when ``n < 2``.
        p10, p90: 10th and 90th percentiles (linear interpolation); None when ``n == 0``.
        min, max: extremes; None when ``n == 0``.
    """

    n: int
    median: float | None
    mean: float | None
    sd: float | None
    p10: float | None
    p90: float | None
    min: float | None
    max: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval.

    Attributes:
        estimate: the statistic on the data.
        low, high: interval bounds.
        confidence: confidence level in (0, 1).
        method: how the bounds were found (``"percentile bootstrap"``, ...).
    """

    estimate: float
    low: float
    high: float
    confidence: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass(frozen=True)
class EffectSize:
    """Hedges' g of group a against group b (positive: a is larger).

    Attributes:
        g: bias-corrected standardised mean difference.
        d: uncorrected Cohen's d (pooled sd).
        low, high: confidence interval of g (normal approximation).
        confidence: confidence level.
        n_a, n_b: group sizes.
    """

    g: float
    d: float
    low: float
    high: float
    confidence: float
    n_a: int
    n_b: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass(frozen=True)
class Correlation:
    """Pearson correlation with its Fisher-z interval.

    Attributes:
        r: correlation coefficient in [-1, 1].
        low, high: confidence interval.
        confidence: confidence level.
        n: pairs.
    """

    r: float
    low: float
    high: float
    confidence: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def describe(values: Sequence[float]) -> Distribution:
    """N, median, mean, sd (ddof=1), P10/P90, min and max of ``values`` (empty input allowed)."""
    data = _array(values, "values")
    n = int(data.size)
    if n == 0:
        return Distribution(0, None, None, None, None, None, None, None)
    return Distribution(
        n=n,
        median=float(np.median(data)),
        mean=float(np.mean(data)),
        sd=float(np.std(data, ddof=1)) if n > 1 else None,
        p10=float(np.percentile(data, 10)),
        p90=float(np.percentile(data, 90)),
        min=float(np.min(data)),
        max=float(np.max(data)),
    )


def hedges_correction(df: int) -> float:
    """Exact small-sample correction J(df) = Γ(df/2) / (sqrt(df/2) Γ((df-1)/2)), in (0, 1).

    Raises:
        InputError: ``df < 2``.
    """
    if df < 2:
        raise InputError(f"Hedges' correction needs at least 2 degrees of freedom, got {df}")
    return math.exp(math.lgamma(df / 2) - 0.5 * math.log(df / 2) - math.lgamma((df - 1) / 2))


def hedges_g(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> EffectSize:
    """Hedges' g of ``a`` against ``b`` with its confidence interval.

    Args:
        a, b: the two groups' values (any unit; g has none).
        confidence: confidence level in (0, 1).

    Returns:
        The effect size.

    Raises:
        InputError: a group has fewer than 2 values, both groups are constant and equal in
            spread (pooled sd 0), or ``confidence`` is outside (0, 1).
    """
    x, y = _array(a, "group a"), _array(b, "group b")
    if x.size < 2 or y.size < 2:
        raise InputError(f"Hedges' g needs at least 2 values per group, got {x.size} and {y.size}")
    z = _z(confidence)
    n_a, n_b = int(x.size), int(y.size)
    df = n_a + n_b - 2
    pooled = math.sqrt(((n_a - 1) * np.var(x, ddof=1) + (n_b - 1) * np.var(y, ddof=1)) / df)
    if pooled == 0:
        raise InputError("Hedges' g is undefined: both groups have zero spread")
    d = float((np.mean(x) - np.mean(y)) / pooled)
    g = d * hedges_correction(df)
    se = math.sqrt((n_a + n_b) / (n_a * n_b) + g * g / (2 * (n_a + n_b)))
    return EffectSize(g=g, d=d, low=g - z * se, high=g + z * se, confidence=confidence, n_a=n_a, n_b=n_b)


def pearson_r(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> Correlation:
    """Pearson r of paired values with the Fisher-z confidence interval.

    Args:
        x, y: paired values, same length, at least 4 pairs.
        confidence: confidence level in (0, 1).

    Returns:
        The correlation; for ``|r| = 1`` the interval collapses to ``r``.

    Raises:
        InputError: lengths differ, fewer than 4 pairs, a variable is constant, or ``confidence``
            is outside (0, 1).
    """
    u, v = _array(x, "x"), _array(y, "y")
    if u.size != v.size:
        raise InputError(f"Pearson r needs paired values, got {u.size} x and {v.size} y")
    if u.size < 4:
        raise InputError(f"Pearson r with a Fisher-z interval needs at least 4 pairs, got {u.size}")
    z = _z(confidence)
    du, dv = u - u.mean(), v - v.mean()
    denominator = math.sqrt(float(np.dot(du, du)) * float(np.dot(dv, dv)))
    if denominator == 0:
        raise InputError("Pearson r is undefined: a variable is constant")
    r = max(-1.0, min(1.0, float(np.dot(du, dv)) / denominator))
    n = int(u.size)
    if abs(r) == 1.0:
        return Correlation(r=r, low=r, high=r, confidence=confidence, n=n)
    centre, half = math.atanh(r), z / math.sqrt(n - 3)
    return Correlation(
        r=r, low=math.tanh(centre - half), high=math.tanh(centre + half), confidence=confidence, n=n
    )


def bootstrap_ci(
    values: Sequence[float],
    statistic: Statistic = median_rows,
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of ``statistic`` over ``values``.

    Args:
        values: the sample (at least 1 value).
        statistic: row-wise statistic (default: median).
        confidence: confidence level in (0, 1).
        n_resamples: bootstrap resamples.
        seed: seed of the ``numpy.random.Generator``; same seed, same interval.

    Returns:
        The statistic on ``values`` and its interval.

    Raises:
        InputError: ``values`` is empty, ``n_resamples < 1`` or ``confidence`` is outside (0, 1).
    """
    data = _array(values, "values")
    _check_bootstrap(data.size, n_resamples, confidence)
    rng = np.random.default_rng(seed)
    resampled = statistic(data[rng.integers(0, data.size, size=(n_resamples, data.size))])
    estimate = float(statistic(data[np.newaxis, :])[0])
    return _percentile_interval(estimate, resampled, confidence)


def bootstrap_difference_ci(
    a: Sequence[float],
    b: Sequence[float],
    statistic: Statistic = median_rows,
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of ``statistic(a) - statistic(b)``, groups resampled apart.

    Args:
        a, b: the two samples (at least 1 value each).
        statistic: row-wise statistic (default: median).
        confidence: confidence level in (0, 1).
        n_resamples: bootstrap resamples.
        seed: seed of the ``numpy.random.Generator``.

    Returns:
        The difference on the data and its interval.

    Raises:
        InputError: a group is empty, ``n_resamples < 1`` or ``confidence`` is outside (0, 1).
    """
    x, y = _array(a, "group a"), _array(b, "group b")
    _check_bootstrap(min(x.size, y.size), n_resamples, confidence)
    rng = np.random.default_rng(seed)
    sx = statistic(x[rng.integers(0, x.size, size=(n_resamples, x.size))])
    sy = statistic(y[rng.integers(0, y.size, size=(n_resamples, y.size))])
    estimate = float(statistic(x[np.newaxis, :])[0] - statistic(y[np.newaxis, :])[0])
    return _percentile_interval(estimate, sx - sy, confidence)


def _percentile_interval(estimate: float, resampled: FloatArray, confidence: float) -> Interval:
    alpha = (1 - confidence) / 2
    low, high = np.percentile(resampled, [100 * alpha, 100 * (1 - alpha)])
    return Interval(estimate, float(low), float(high), confidence, "percentile bootstrap")


def _check_bootstrap(size: int, n_resamples: int, confidence: float) -> None:
    if size < 1:
        raise InputError("bootstrap needs at least 1 value per sample, got an empty sample")
    if n_resamples < 1:
        raise InputError(f"bootstrap needs at least 1 resample, got n_resamples={n_resamples}")
    _z(confidence)


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise InputError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _array(values: Sequence[float], name: str) -> FloatArray:
    data = np.asarray(list(values), dtype=np.float64)
    if data.ndim != 1 or not np.all(np.isfinite(data)):
        raise InputError(f"{name} must be a flat sequence of finite numbers")
    return data
