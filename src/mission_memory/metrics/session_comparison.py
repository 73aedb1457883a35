"""Comparing two groups of sessions (say, with memory vs without) on T, K, W and rounds.

The paper reports group differences as a relative change ("rotation costs +136% dialogue
rounds") with Hedges' g ("g=0.81"); docs/design.md §9 asks for effect sizes with confidence
intervals. For each metric this module gives both groups' distributions, the relative change of
mean and median of group a against group b, Hedges' g with its interval, and a seeded percentile
bootstrap interval of the difference in medians.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mission_memory.errors import InputError
from mission_memory.metrics.session_metrics import SessionMetrics
from mission_memory.metrics.stats import (
    Distribution,
    EffectSize,
    Interval,
    bootstrap_difference_ci,
    describe,
    hedges_g,
)

__all__ = ["COMPARED_METRICS", "GroupComparison", "MetricComparison", "compare_session_groups"]

COMPARED_METRICS = ("T", "K", "W", "rounds")
"""Metrics compared, in report order."""


@dataclass(frozen=True)
class MetricComparison:
    """One metric compared between group a and group b.

    Attributes:
        metric: ``T``, ``K``, ``W`` or ``rounds``.
        a, b: distributions in each group (sessions without a value left out).
        mean_change: ``mean_a / mean_b - 1`` (0.5 = a is 50% higher); None when undefined.
        median_change: ``median_a / median_b - 1``; None when undefined.
        hedges_g: effect size of a against b; None with fewer than 2 values in a group or no
            spread at all.
        median_difference: ``median_a - median_b`` with a percentile bootstrap interval; None
            when a group is empty.
    """

    metric: str
    a: Distribution
    b: Distribution
    mean_change: float | None
    median_change: float | None
    hedges_g: EffectSize | None
    median_difference: Interval | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "metric": self.metric,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "mean_change": self.mean_change,
            "median_change": self.median_change,
            "hedges_g": self.hedges_g.to_dict() if self.hedges_g else None,
            "median_difference": self.median_difference.to_dict() if self.median_difference else None,
        }


@dataclass(frozen=True)
class GroupComparison:
    """Two groups of sessions compared metric by metric.

    Attributes:
        label_a, label_b: the groups' names.
        n_a, n_b: sessions in each group.
        metrics: one comparison per metric, in :data:`COMPARED_METRICS` order.
    """

    label_a: str
    label_b: str
    n_a: int
    n_b: int
    metrics: tuple[MetricComparison, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"a": ..., "b": ..., "metrics": {"T": {...}, ...}}``."""
        return {
            "a": {"label": self.label_a, "N": self.n_a},
            "b": {"label": self.label_b, "N": self.n_b},
            "metrics": {m.metric: m.to_dict() for m in self.metrics},
        }


def compare_session_groups(
    a: Sequence[SessionMetrics],
    b: Sequence[SessionMetrics],
    *,
    label_a: str = "a",
    label_b: str = "b",
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> GroupComparison:
    """Compare two groups of measured sessions on T, K, W and rounds.

    Args:
        a, b: the groups (for example sessions with memory, sessions without).
        label_a, label_b: names shown in reports.
        confidence: confidence level of every interval, in (0, 1).
        n_resamples: bootstrap resamples.
        seed: bootstrap seed; same seed, same intervals.

    Returns:
        The comparison.

    Raises:
        InputError: a group has no session, or ``confidence`` is outside (0, 1).
    """
    if not a or not b:
        raise InputError(f"comparing needs sessions in both groups, got {len(a)} in a and {len(b)} in b")
    compared = tuple(
        _compare_metric(name, _values(a, name), _values(b, name), confidence, n_resamples, seed)
        for name in COMPARED_METRICS
    )
    return GroupComparison(label_a=label_a, label_b=label_b, n_a=len(a), n_b=len(b), metrics=compared)


def _compare_metric(
    name: str, a: list[float], b: list[float], confidence: float, n_resamples: int, seed: int
) -> MetricComparison:
    da, db = describe(a), describe(b)
    effect: EffectSize | None = None
    if len(a) >= 2 and len(b) >= 2 and (da.sd or db.sd):
        effect = hedges_g(a, b, confidence)
    difference = (
        bootstrap_difference_ci(a, b, confidence=confidence, n_resamples=n_resamples, seed=seed)
        if a and b
        else None
    )
    return MetricComparison(
        metric=name,
        a=da,
        b=db,
        mean_change=_relative(da.mean, db.mean),
        median_change=_relative(da.median, db.median),
        hedges_g=effect,
        median_difference=difference,
    )


def _values(sessions: Sequence[SessionMetrics], name: str) -> list[float]:
    values: list[float] = []
    for s in sessions:
        value = {"T": s.T, "K": s.K, "W": s.W, "rounds": s.rounds}[name]
        if value is not None:
            values.append(float(value))
    return values


def _relative(a: float | None, b: float | None) -> float | None:
    return a / b - 1 if a is not None and b else None
