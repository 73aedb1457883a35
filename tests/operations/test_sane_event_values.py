"""Sane times and values at intake (issue 24 item 5): dates far in the future or before 1970 are refused, booleans
and strings are not criticalities, NaN is named as such, control characters never reach a digest (stored escaped), and in
degraded mode an old event does not take a current one's place; a future date is never shown as "(today)"."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from mission_memory.api import Memory
from mission_memory.errors import InputError
from mission_memory.operations.domain_events import read_events_csv, read_events_jsonl
from mission_memory.retrieval.digest import format_age
from tests.operations.event_factory import burst, event


@pytest.mark.parametrize("when", [datetime(2100, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC)])
def test_events_dated_beyond_the_future_skew_are_refused_and_nothing_is_stored(when: datetime) -> None:
    now = datetime.now(UTC)
    with Memory.open(event_mission="ops") as memory:
        with pytest.raises(InputError, match=r"events\[1\] \(id 'ev-2'\): time .* is more than 300 s after the clock"):
            memory.record_events([event(1, now), event(2, when)], embed=False)
        assert memory.store.count_kind("ops", "domain_event") == 0
        memory.record_events([event(3, now + timedelta(seconds=60))], embed=False)  # within the skew
        replay = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)  # the skew counts from the intake clock, for replays too
        with pytest.raises(InputError, match="more than 300 s after the clock 2026-03-01T12:00:00"):
            memory.record_events([event(4, replay + timedelta(hours=1))], now=replay, embed=False)


def test_year_one_booleans_strings_and_nan_are_refused_by_name_and_control_characters_escaped() -> None:
    def line(**change: object) -> str:
        return json.dumps(event(1, datetime(2026, 3, 1, tzinfo=UTC)) | change)

    with pytest.raises(InputError, match="line 1: time: Value error, 0001-01-01T00:00:00\\+00:00 is before 1970"):
        read_events_jsonl(line(time="0001-01-01T00:00:00Z"))
    with pytest.raises(InputError, match="criticality: Value error, must be a number in \\[0, 1\\], got bool True"):
        read_events_jsonl(line(criticality=True))
    with pytest.raises(InputError, match=r"got str '0\.9'"):
        read_events_jsonl(line(criticality="0.9"))
    with pytest.raises(InputError, match="criticality: Value error, must be a number in \\[0, 1\\], got nan"):
        read_events_jsonl('{"id": "n", "time": "2026-03-01T00:00:00Z", "sector": "s", "type": "t", '
                          '"criticality": NaN, "text": "x"}')
    # a control character is stored as its visible escape, never refused (a machine's page is not lost)
    assert read_events_jsonl(line(text="shel\u0000ling"))[0].text == "shel\\u0000ling"
    assert read_events_jsonl(line(text="red \u001b[31m alert"))[0].text == "red \\u001b[31m alert"
    assert read_events_jsonl(line(text="two\nlines\tand a tab"))[0].text == "two\nlines\tand a tab"
    [from_csv] = read_events_csv("id,time,sector,type,criticality,text\ne,2026-03-01T12:00:00Z,N,t,0.9,x\n")
    assert from_csv.criticality == 0.9  # CSV cells are text: converted, not refused
    with pytest.raises(InputError, match="line 2: criticality 'high' is not a number"):
        read_events_csv("id,time,sector,type,criticality,text\ne,2026-03-01T12:00:00Z,N,t,high,x\n")


def test_a_future_date_is_not_today() -> None:
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert format_age(now + timedelta(days=3), now) == "in the future"
    assert format_age(now, now) == "today"


def test_in_degraded_mode_an_old_critical_event_does_not_outrank_the_current_flood() -> None:
    now = datetime.now(UTC)
    old = event(900, now - timedelta(days=400), sector="north", type_="shelling", criticality=0.95,
                text="Relay station heartbeat lost after shelling, archived report")
    current = burst(30, now - timedelta(seconds=10), start_index=100, criticality=0.9, type_="lost_link")
    with Memory.open(event_mission="ops") as memory:
        memory.record_events([old, *current], embed=False)
        digest = memory.query("relay station heartbeat", scope="domain", filters={"mission": "ops"})
    assert "Mode: degraded" in digest.text
    first = digest.entries[0].record
    assert first.attributes["event_id"] != "ev-900"
