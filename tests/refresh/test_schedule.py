"""The refresh schedule as a pure function: monotone in each signal, bounded by 24 h and 7 days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mission_memory.errors import InputError
from mission_memory.refresh.schedule import (
    MAX_INTERVAL,
    MIN_INTERVAL,
    ActivitySignals,
    due_tasks,
    is_due,
    refresh_frequency,
    refresh_interval,
)

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

counts = st.integers(min_value=0, max_value=100_000)
hours = st.one_of(st.none(), st.floats(min_value=0.0, max_value=1e7, allow_nan=False))
signals = st.builds(ActivitySignals, commits=counts, comments=counts, hours_since_last_pull=hours)


def _later_or_never(a: float | None, b: float | None) -> tuple[float | None, float | None]:
    """Order two hour values so the second is at least as stale (None = never pulled = stalest)."""
    if a is None:
        return b, a
    if b is None:
        return a, b
    return (a, b) if a <= b else (b, a)


@given(signals)
def test_interval_stays_between_a_day_and_a_week(s: ActivitySignals) -> None:
    interval = refresh_interval(s)
    assert MIN_INTERVAL <= interval <= MAX_INTERVAL
    assert 1 / 7 <= refresh_frequency(s) <= 1.0


@given(signals, counts)
def test_more_commits_never_lower_the_frequency(s: ActivitySignals, extra: int) -> None:
    more = ActivitySignals(s.commits + extra, s.comments, s.hours_since_last_pull)
    assert refresh_frequency(more) >= refresh_frequency(s)
    assert refresh_interval(more) <= refresh_interval(s)


@given(signals, counts)
def test_more_comments_never_lower_the_frequency(s: ActivitySignals, extra: int) -> None:
    more = ActivitySignals(s.commits, s.comments + extra, s.hours_since_last_pull)
    assert refresh_frequency(more) >= refresh_frequency(s)
    assert refresh_interval(more) <= refresh_interval(s)


@given(counts, counts, hours, hours)
def test_a_longer_time_since_the_last_pull_never_lowers_the_frequency(
    commits: int, comments: int, a: float | None, b: float | None
) -> None:
    fresh, stale = _later_or_never(a, b)
    assert refresh_frequency(ActivitySignals(commits, comments, stale)) >= refresh_frequency(
        ActivitySignals(commits, comments, fresh)
    )


def test_an_idle_task_pulled_just_now_is_refreshed_weekly() -> None:
    assert refresh_interval(ActivitySignals(0, 0, 0.0)) == MAX_INTERVAL


def test_a_busy_task_is_refreshed_at_most_daily() -> None:
    assert refresh_interval(ActivitySignals(500, 200, None)) == MIN_INTERVAL
    assert refresh_frequency(ActivitySignals(500, 200, None)) == 1.0


def test_activity_shortens_the_interval_strictly_below_the_ceiling() -> None:
    quiet = refresh_interval(ActivitySignals(0, 0, 0.0))
    some = refresh_interval(ActivitySignals(2, 0, 0.0))
    more = refresh_interval(ActivitySignals(2, 3, 0.0))
    stale = refresh_interval(ActivitySignals(2, 3, 500.0))
    assert quiet > some > more > stale >= MIN_INTERVAL


def test_a_task_never_refreshed_is_due() -> None:
    assert is_due(None, ActivitySignals(0, 0, 0.0), NOW)


def test_no_task_is_due_twice_within_24_hours() -> None:
    busy = ActivitySignals(1000, 1000, None)
    assert not is_due(NOW - timedelta(hours=23, minutes=59), busy, NOW)
    assert is_due(NOW - timedelta(hours=24), busy, NOW)


def test_every_task_is_due_after_seven_days() -> None:
    idle = ActivitySignals(0, 0, 0.0)
    assert not is_due(NOW - timedelta(days=6, hours=23), idle, NOW)
    assert is_due(NOW - timedelta(days=7), idle, NOW)
    assert is_due(NOW - timedelta(days=8), idle, NOW)


@given(signals, st.integers(min_value=0, max_value=30 * 24 * 60))
def test_due_exactly_when_the_interval_has_passed(s: ActivitySignals, minutes_ago: int) -> None:
    last = NOW - timedelta(minutes=minutes_ago)
    assert is_due(last, s, NOW) == (timedelta(minutes=minutes_ago) >= refresh_interval(s))
    if minutes_ago < 24 * 60:
        assert not is_due(last, s, NOW)
    if minutes_ago >= 7 * 24 * 60:
        assert is_due(last, s, NOW)


def test_naive_datetimes_are_rejected() -> None:
    with pytest.raises(InputError, match="timezone-aware"):
        is_due(None, ActivitySignals(0, 0, None), datetime(2025, 3, 1))
    with pytest.raises(InputError, match="last_refresh"):
        is_due(datetime(2025, 2, 1), ActivitySignals(0, 0, None), NOW)


def test_negative_signals_are_rejected() -> None:
    with pytest.raises(InputError, match="commits=-1"):
        ActivitySignals(-1, 0, None)
    with pytest.raises(InputError, match="hours_since_last_pull"):
        ActivitySignals(0, 0, float("nan"))


def test_due_tasks_puts_the_most_active_first_and_leaves_out_those_not_due() -> None:
    week_ago = NOW - timedelta(days=8)
    candidates = [
        ("OPS-1", week_ago, ActivitySignals(0, 0, 0.0)),
        ("OPS-2", week_ago, ActivitySignals(12, 4, 10.0)),
        ("OPS-3", NOW - timedelta(hours=3), ActivitySignals(50, 50, None)),  # refreshed 3 h ago
        ("OPS-4", None, ActivitySignals(3, 0, None)),
        ("OPS-5", week_ago, ActivitySignals(40, 9, None)),
    ]
    due = due_tasks(candidates, NOW)
    assert [d.task_key for d in due] == ["OPS-5", "OPS-2", "OPS-4", "OPS-1"]
    assert [d.priority for d in due] == sorted((d.priority for d in due), reverse=True)
    assert due[2].last_refresh is None
    assert all(MIN_INTERVAL <= d.interval <= MAX_INTERVAL for d in due)


def test_due_tasks_breaks_ties_by_staleness_then_key() -> None:
    idle = ActivitySignals(0, 0, 0.0)
    candidates = [
        ("B", NOW - timedelta(days=8), idle),
        ("A", NOW - timedelta(days=8), idle),
        ("C", NOW - timedelta(days=30), idle),
        ("D", None, idle),
    ]
    assert [d.task_key for d in due_tasks(candidates, NOW)] == ["D", "C", "A", "B"]


@given(st.lists(st.tuples(st.text(min_size=1, max_size=5), st.none(), signals), max_size=20))
def test_due_tasks_returns_every_due_candidate_in_priority_order(
    candidates: list[tuple[str, None, ActivitySignals]],
) -> None:
    due = due_tasks(candidates, NOW)
    assert len(due) == len(candidates)
    assert [d.priority for d in due] == sorted((d.priority for d in due), reverse=True)
