"""The share of retrieval-caused corrections over time, with counts and a Wilson interval.

docs/design.md §6: "the share of retrieval-caused corrections over time (a falling curve is the goal)".
Corrections are grouped by the UTC day or ISO week (starting Monday) of their time; in each period
the share is ``true / (true + false)`` — corrections labelled ``unknown`` (no retrieval event before
them) are counted but left out of the share — with the Wilson score interval (Wilson 1927; it stays
inside [0, 1] and behaves at small counts, where the normal approximation does not).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path
from statistics import NormalDist
from typing import Any, Literal

from mission_memory.corrections.practitioner_records import Correction, RetrievalCaused
from mission_memory.errors import InputError

__all__ = ["CorrectionRate", "PeriodRate", "correction_rate", "plot_correction_rate", "wilson_interval"]

Period = Literal["day", "week"]


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval of a binomial proportion.

    Args:
        successes: count of successes, 0 <= successes <= trials.
        trials: count of trials.
        confidence: the interval's confidence level, in (0, 1).

    Returns:
        ``(low, high)`` in [0, 1], or None when ``trials`` is 0.

    Raises:
        InputError: counts out of range, or a confidence outside (0, 1).
    """
    if not 0 < confidence < 1:
        raise InputError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    if trials < 0 or not 0 <= successes <= trials:
        raise InputError(f"successes {successes} and trials {trials} are not counts with successes <= trials")
    if trials == 0:
        return None
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the bounds, not 1e-17 off
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class PeriodRate:
    """One period's corrections.

    Attributes:
        start: the period's first day (UTC; a Monday for weeks).
        true, false, unknown: corrections with each label.
        share: ``true / (true + false)``, or None when no correction of the period is labelled.
        low, high: the Wilson interval of ``share``, or None.
    """

    start: date
    true: int
    false: int
    unknown: int
    share: float | None
    low: float | None
    high: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        data = asdict(self)
        data["start"] = self.start.isoformat()
        return data


@dataclass(frozen=True)
class CorrectionRate:
    """The share of retrieval-caused corrections per period.

    Attributes:
        by: ``day`` or ``week``.
        confidence: the intervals' confidence level.
        periods: oldest first; periods without corrections are left out.
        total: the same figures over all periods.
    """

    by: Period
    confidence: float
    periods: tuple[PeriodRate, ...]
    total: PeriodRate | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "by": self.by,
            "confidence": self.confidence,
            "periods": [p.to_dict() for p in self.periods],
            "total": self.total.to_dict() if self.total else None,
        }


def _period_start(day: date, by: Period) -> date:
    return day - timedelta(days=day.weekday()) if by == "week" else day


def _rate(start: date, labels: Sequence[RetrievalCaused], confidence: float) -> PeriodRate:
    true = sum(1 for label in labels if label is RetrievalCaused.TRUE)
    false = sum(1 for label in labels if label is RetrievalCaused.FALSE)
    interval = wilson_interval(true, true + false, confidence)
    return PeriodRate(
        start=start,
        true=true,
        false=false,
        unknown=len(labels) - true - false,
        share=true / (true + false) if true + false else None,
        low=interval[0] if interval else None,
        high=interval[1] if interval else None,
    )


def correction_rate(corrections: Sequence[Correction], by: str = "week", confidence: float = 0.95) -> CorrectionRate:
    """Group ``corrections`` by period and compute each period's retrieval-caused share.

    Raises:
        InputError: ``by`` is not ``day`` or ``week``.
    """
    if by not in ("day", "week"):
        raise InputError(f"--by {by!r} is not one of: day, week")
    period: Period = "day" if by == "day" else "week"
    groups: dict[date, list[RetrievalCaused]] = {}
    for c in corrections:
        groups.setdefault(_period_start(c.time.date(), period), []).append(c.label.retrieval_caused)
    periods = tuple(_rate(start, groups[start], confidence) for start in sorted(groups))
    every = [c.label.retrieval_caused for c in corrections]
    total = _rate(periods[0].start, every, confidence) if periods else None
    return CorrectionRate(by=period, confidence=confidence, periods=periods, total=total)


def plot_correction_rate(rate: CorrectionRate, path: Path) -> Path:
    """Write the share per period with its interval, and the counts, to a PNG file.

    Raises:
        InputError: the file cannot be written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 5), layout="constrained")
    FigureCanvasAgg(figure)
    share_axes, count_axes = figure.subplots(2, 1, sharex=True, height_ratios=(2, 1))
    labelled = [p for p in rate.periods if p.share is not None]
    xs = [p.start for p in labelled]
    shares = [p.share or 0.0 for p in labelled]
    lows = [(p.share or 0.0) - (p.low or 0.0) for p in labelled]
    highs = [(p.high or 0.0) - (p.share or 0.0) for p in labelled]
    share_axes.errorbar(xs, shares, yerr=[lows, highs], marker="o", capsize=3, color="#4c72b0")
    share_axes.set(
        ylim=(0, 1), ylabel="retrieval-caused share",
        title=f"Retrieval-caused corrections per {rate.by} ({rate.confidence:.0%} Wilson interval)",
    )
    all_x = [p.start for p in rate.periods]
    width = 0.8 if rate.by == "day" else 5.0
    true = [p.true for p in rate.periods]
    false = [p.false for p in rate.periods]
    count_axes.bar(all_x, true, width=width, color="#c44e52", label="true")
    count_axes.bar(all_x, false, width=width, bottom=true, color="#55a868", label="false")
    count_axes.bar(
        all_x, [p.unknown for p in rate.periods], width=width,
        bottom=[t + f for t, f in zip(true, false, strict=True)], color="#bbbbbb", label="unknown",
    )
    count_axes.set(ylabel="corrections")
    count_axes.legend(loc="upper left")
    try:
        figure.savefig(path, dpi=100)
    except OSError as exc:
        raise InputError(f"cannot write the plot to {path}: {exc.strerror or exc}") from exc
    return path
