"""as_utc: naive times are read as UTC, aware ones converted; the instant never moves for aware input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from mission_memory.utc import as_utc


def test_naive_time_is_read_as_utc() -> None:
    assert as_utc(datetime(2025, 3, 1, 9, 30)) == datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
    assert as_utc(datetime(2025, 3, 1, 9, 30)).tzinfo is UTC


def test_aware_time_keeps_its_instant_and_leaves_in_utc() -> None:
    kyiv = timezone(timedelta(hours=2))
    converted = as_utc(datetime(2025, 3, 1, 11, 30, tzinfo=kyiv))
    assert converted == datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
    assert converted.tzinfo is UTC
    assert converted.hour == 9
