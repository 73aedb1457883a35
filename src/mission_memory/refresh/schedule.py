"""The refresh schedule: how often a ``LONG-TERM`` task is refreshed, and which tasks are due now.

A pure module with an injected clock (every function takes ``now`` or no time at all), after
docs/design.md §5 step 2 and the source paper's push mode::

    f_refresh(task) = g(commits touching the task, comments on the issue, time since the last pull)

where g rises monotonically in each argument and is clamped to at most one refresh per 24 h and at
least one per 7 days. The g used here is an additive activity score in refreshes per day::

    score = 1/7 + 0.30·ln(1 + commits) + 0.20·ln(1 + comments) + 0.15·staleness
    staleness = 1 − 72 / (72 + hours_since_last_pull)      (1 when the task was never pulled)
    f = clamp(score, 1/7, 1)    interval = 1 day / f        ∈ [24 h, 7 days]

Each term is non-decreasing in its signal, so f is too. The logarithms make the tenth commit worth
less than the first; 18 commits alone, or 5 commits and 5 comments, reach the daily ceiling. The
staleness term saturates: a task nobody has pulled for three days gets half its weight, and a
task that was pulled a minute ago gets none (its operator is looking at it already). Due tasks are
ordered by the unclamped score, most active first, through a ``heapq`` priority queue; the degraded
mode (docs/design.md §7) may later mix criticality into that priority.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from mission_memory.errors import InputError

__all__ = [
    "MAX_INTERVAL",
    "MIN_INTERVAL",
    "ActivitySignals",
    "DueTask",
    "activity_score",
    "due_tasks",
    "is_due",
    "refresh_frequency",
    "refresh_interval",
]

MIN_INTERVAL = timedelta(hours=24)
"""At most one refresh per 24 h (docs/design.md §5)."""
MAX_INTERVAL = timedelta(days=7)
"""At least one refresh per 7 days (docs/design.md §5)."""

_DAY = timedelta(days=1)
_MIN_FREQUENCY = _DAY / MAX_INTERVAL  # 1/7 refreshes per day
_MAX_FREQUENCY = _DAY / MIN_INTERVAL  # 1 refresh per day
COMMIT_WEIGHT = 0.30
"""Refreshes per day added per unit of ``ln(1 + commits)``."""
COMMENT_WEIGHT = 0.20
"""Refreshes per day added per unit of ``ln(1 + comments)``."""
STALENESS_WEIGHT = 0.15
"""Refreshes per day added by a task nobody has pulled (scaled by staleness in [0, 1))."""
STALENESS_HALF_HOURS = 72.0
"""Hours since the last pull at which staleness is one half."""


@dataclass(frozen=True)
class ActivitySignals:
    """The three activity signals of one task since its last refresh.

    Attributes:
        commits: commits touching the task (≥ 0).
        comments: new comments on the task (≥ 0).
        hours_since_last_pull: hours (≥ 0) since the last pull that returned one of the task's
            records; None when no pull ever did.

    Raises:
        InputError: a count is negative, or the hours are negative or not a number.
    """

    commits: int
    comments: int
    hours_since_last_pull: float | None

    def __post_init__(self) -> None:
        if self.commits < 0 or self.comments < 0:
            raise InputError(f"activity counts must be ≥ 0, got commits={self.commits}, comments={self.comments}")
        hours = self.hours_since_last_pull
        if hours is not None and not (hours >= 0.0):  # also rejects NaN
            raise InputError(f"hours_since_last_pull must be ≥ 0 or None, got {hours!r}")


def _staleness(hours: float | None) -> float:
    """Staleness in [0, 1]: 0 right after a pull, 1/2 after 72 h, 1 when never pulled.

    Written as ``1 − K/(K + h)`` rather than ``h/(K + h)`` so it is monotone in floating point too.
    """
    if hours is None or math.isinf(hours):
        return 1.0
    return 1.0 - STALENESS_HALF_HOURS / (STALENESS_HALF_HOURS + hours)


def activity_score(signals: ActivitySignals) -> float:
    """The unclamped activity score g in refreshes per day (≥ 1/7); the due-queue priority.

    See the module docstring for the formula. Non-decreasing in each signal.
    """
    return (
        _MIN_FREQUENCY
        + COMMIT_WEIGHT * math.log1p(signals.commits)
        + COMMENT_WEIGHT * math.log1p(signals.comments)
        + STALENESS_WEIGHT * _staleness(signals.hours_since_last_pull)
    )


def refresh_frequency(signals: ActivitySignals) -> float:
    """Refreshes per day for a task with ``signals``: the activity score clamped to [1/7, 1].

    Source: docs/design.md §5 step 2; the paper's f_refresh = g(commits, comments, time since last pull).
    """
    return min(_MAX_FREQUENCY, max(_MIN_FREQUENCY, activity_score(signals)))


def refresh_interval(signals: ActivitySignals) -> timedelta:
    """Time between two refreshes of a task with ``signals``: 1 day / frequency, in [24 h, 7 days].

    The result is clamped again after the division, so rounding never leaves the bounds.
    """
    interval = timedelta(days=1.0 / refresh_frequency(signals))
    return min(MAX_INTERVAL, max(MIN_INTERVAL, interval))


def _require_aware(name: str, value: datetime) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise InputError(f"{name} must be a timezone-aware datetime, got naive {value.isoformat()}")


def is_due(last_refresh: datetime | None, signals: ActivitySignals, now: datetime) -> bool:
    """True when a task last refreshed at ``last_refresh`` should be refreshed at ``now``.

    Args:
        last_refresh: the time of the task's last refresh (timezone-aware), or None if never.
        signals: the task's activity since then.
        now: the injected clock (timezone-aware).

    Returns:
        True when never refreshed, or when ``now - last_refresh`` ≥ :func:`refresh_interval`.

    Raises:
        InputError: a datetime is naive.
    """
    _require_aware("now", now)
    if last_refresh is None:
        return True
    _require_aware("last_refresh", last_refresh)
    return now - last_refresh >= refresh_interval(signals)


@dataclass(frozen=True)
class DueTask:
    """One task due for a refresh.

    Attributes:
        task_key: the tracker key (``OPS-7``).
        priority: the unclamped activity score in refreshes per day (higher goes first).
        interval: the refresh interval the schedule gives the task, in [24 h, 7 days].
        last_refresh: when it was last refreshed, or None.
    """

    task_key: str
    priority: float
    interval: timedelta
    last_refresh: datetime | None


def due_tasks(
    candidates: Iterable[tuple[str, datetime | None, ActivitySignals]], now: datetime
) -> list[DueTask]:
    """The candidates due at ``now``, most active first.

    Args:
        candidates: ``(task_key, last_refresh or None, signals)`` per task.
        now: the injected clock (timezone-aware).

    Returns:
        Due tasks popped from a ``heapq`` priority queue: highest activity score first; ties go to
        the task never refreshed, then the one refreshed longest ago, then the key, then input order.

    Raises:
        InputError: a datetime is naive.
    """
    queue: list[tuple[float, float, str, int, DueTask]] = []
    for order, (key, last_refresh, signals) in enumerate(candidates):
        if not is_due(last_refresh, signals, now):
            continue
        task = DueTask(
            task_key=key,
            priority=activity_score(signals),
            interval=refresh_interval(signals),
            last_refresh=last_refresh,
        )
        age = math.inf if last_refresh is None else (now - last_refresh).total_seconds()
        heapq.heappush(queue, (-task.priority, -age, key, order, task))
    return [heapq.heappop(queue)[-1] for _ in range(len(queue))]
