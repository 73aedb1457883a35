"""Escalation: sliding-window rates, flood hysteresis (ISA-18.2 defaults) and the triage weight α."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mission_memory.errors import InputError
from mission_memory.operations.escalation import (
    EscalationMode,
    EscalationState,
    FloodPolicy,
    assess_escalation,
    event_rates,
    triage_alpha,
)

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
POLICY = FloodPolicy()


def burst(count: int, end: datetime, sector: str = "north", spread: timedelta = timedelta(minutes=9)) -> list[tuple[datetime, str]]:
    step = spread / max(count, 1)
    return [(end - i * step, sector) for i in range(count)]


def test_the_window_counts_events_after_its_start_up_to_and_including_now() -> None:
    events = [(T0 - timedelta(minutes=10), "a"), (T0 - timedelta(minutes=9, seconds=59), "a"), (T0, "b"),
              (T0 + timedelta(seconds=1), "b"), (T0 - timedelta(minutes=1), None)]
    rates = event_rates(events, T0, timedelta(minutes=10))
    assert rates.total == 3
    assert rates.by_sector == {"a": 1, "b": 1, "": 1}


def test_naive_times_are_refused_with_the_time_named() -> None:
    with pytest.raises(InputError, match="2026-03-01T12:00:00 has no timezone"):
        event_rates([(T0.replace(tzinfo=None), "a")], T0, timedelta(minutes=10))


def test_a_flood_starts_above_ten_per_ten_minutes_and_ends_only_below_five() -> None:
    state = EscalationState()
    timeline = [(9, "normal"), (10, "normal"), (11, "degraded"), (8, "degraded"), (5, "degraded"),
                (4, "normal"), (9, "normal"), (12, "degraded")]
    seen = []
    for minute, (count, _) in enumerate(timeline):
        now = T0 + timedelta(minutes=10 * minute)
        state = assess_escalation(state, event_rates(burst(count, now), now, POLICY.window), POLICY)
        seen.append(state.mode.value)
    assert seen == [expected for _, expected in timeline]


def test_the_mode_records_when_it_changed_and_keeps_that_time_while_it_holds() -> None:
    state = EscalationState()
    t1, t2 = T0, T0 + timedelta(minutes=5)
    state = assess_escalation(state, event_rates(burst(15, t1), t1, POLICY.window), POLICY)
    assert state.mode is EscalationMode.DEGRADED and state.since == t1
    state = assess_escalation(state, event_rates(burst(7, t2), t2, POLICY.window), POLICY)
    assert state.mode is EscalationMode.DEGRADED and state.since == t1
    assert state.alpha == 0.0  # the flood subsides: ranking is back to similarity, the mode still holds


def test_capacity_grows_with_the_operators_on_duty() -> None:
    three = FloodPolicy(operators_on_duty=3)
    state = assess_escalation(EscalationState(), event_rates(burst(25, T0), T0, three.window), three)
    assert state.mode is EscalationMode.NORMAL and state.alpha == 0.0
    state = assess_escalation(state, event_rates(burst(31, T0), T0, three.window), three)
    assert state.mode is EscalationMode.DEGRADED
    assert state.alpha == pytest.approx(1 - 30 / 31)


def test_a_sector_escalates_on_its_own_rate_with_the_same_hysteresis() -> None:
    events = burst(12, T0, "east") + burst(3, T0, "west")
    state = assess_escalation(EscalationState(), event_rates(events, T0, POLICY.window), FloodPolicy(operators_on_duty=2))
    assert state.mode is EscalationMode.NORMAL  # 15 < 2 operators × 10
    assert state.escalating_sectors == {"east": 12} and state.sector_since == {"east": T0}
    later = T0 + timedelta(minutes=4)
    state = assess_escalation(state, event_rates(burst(6, later, "east"), later, POLICY.window), FloodPolicy(operators_on_duty=2))
    assert state.escalating_sectors == {"east": 6} and state.sector_since == {"east": T0}
    quiet = T0 + timedelta(minutes=30)
    state = assess_escalation(state, event_rates([], quiet, POLICY.window), FloodPolicy(operators_on_duty=2))
    assert state.escalating_sectors == {}


@given(st.floats(min_value=0, max_value=1e6), st.floats(min_value=0, max_value=1e6), st.floats(min_value=0.1, max_value=1e3))
def test_alpha_is_zero_up_to_capacity_and_rises_monotonically_below_one(r1: float, r2: float, capacity: float) -> None:
    low, high = sorted((r1, r2))
    a_low, a_high = triage_alpha(low, capacity), triage_alpha(high, capacity)
    assert 0.0 <= a_low <= a_high < 1.0
    assert triage_alpha(capacity, capacity) == 0.0
    if high > capacity:
        assert (1 - a_high) * high == pytest.approx(capacity)


@given(st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=60))
def test_the_mode_never_flaps_between_the_thresholds(counts: list[int]) -> None:
    state = EscalationState()
    for i, count in enumerate(counts):
        now = T0 + timedelta(minutes=10 * i)
        before = state.mode
        state = assess_escalation(state, event_rates(burst(count, now), now, POLICY.window), POLICY)
        if 5 <= count <= 10:
            assert state.mode is before


def test_bad_thresholds_are_refused_with_the_values_named() -> None:
    with pytest.raises(InputError, match="start 5, end 10"):
        FloodPolicy(flood_start=5, flood_end=10)
    with pytest.raises(InputError, match="operators on duty"):
        FloodPolicy(operators_on_duty=0)
