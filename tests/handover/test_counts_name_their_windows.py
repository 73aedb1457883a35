"""Every count of events in the incident block and the digest names its window (from–to), and each is
exact against the events sent: the rate line, the recurring kinds' line and the digest's flood footer
can be reconciled by a reader. On the trial, "3814 events in the last 10 minutes" stood beside
"… in the window: 25 kinds, 5172 events" and "Flood window: 5174 events" with no window named."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mission_memory.api import Memory
from mission_memory.config import load_settings

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
KINDS = (("WARN", 0.6), ("INFO", 0.2), ("ERROR", 0.8), ("DEBUG", 0.1), ("FATAL", 0.95))


def _events(n: int, first: datetime, last: datetime) -> list[dict[str, Any]]:
    step = (last - first) / (n - 1)
    return [{"id": f"log-{i}", "time": (first + i * step).isoformat(), "sector": "checkout",
             "type": KINDS[i % len(KINDS)][0], "criticality": KINDS[i % len(KINDS)][1], "source": "app-log",
             "text": f"{KINDS[i % len(KINDS)][0]} line {i}"} for i in range(n)]


def _window(line: str) -> tuple[datetime, datetime]:
    """The window a line names: ``in the 10 min to 12:00:00``, ``per 10 min window to 12:00`` or
    ``since 11:29:07`` (to the clock, NOW); times are UTC on NOW's day."""
    day = NOW.strftime("%Y-%m-%d ")
    to = re.search(r"(\d+) min(?: window)? to (\d\d:\d\d(?::\d\d)?)", line)
    if to:
        end = datetime.fromisoformat(day + to[2]).replace(tzinfo=UTC)
        return end - timedelta(minutes=int(to[1])), end
    since = re.search(r"since (\d\d:\d\d:\d\d)", line)
    assert since, line
    return datetime.fromisoformat(day + since[1]).replace(tzinfo=UTC) - timedelta(microseconds=1), NOW


def _sent_in(events: list[dict[str, Any]], start: datetime, end: datetime) -> int:
    """Events sent in the window as a reader reads it: after its start, up to and including its end."""
    return sum(1 for e in events if start < datetime.fromisoformat(e["time"]) <= end)


def test_each_count_names_its_window_and_matches_what_was_sent(tmp_path: Path) -> None:
    events = _events(600, NOW - timedelta(minutes=25), NOW - timedelta(seconds=5))
    with Memory(load_settings(data_dir=tmp_path / "data")) as memory:
        for start in range(0, len(events), 100):  # as a feed delivers them, in batches over time
            batch = events[start:start + 100]
            memory.record_events(batch, mission="shop", now=datetime.fromisoformat(batch[-1]["time"]), embed=False)
        assert memory.escalation_status("shop", now=NOW).mode.value == "degraded"
        brief = memory.rotation_brief(mission="shop", now=NOW, token_budget=4000, archive=False, embed_archived=False)
        digest = memory.query("what is failing in checkout", token_budget=3000, filters={"mission": "shop"}, now=NOW)
    block = next(shown for item, shown in brief.entries if item.section.name == "CRISIS")
    severity = next(line for line in block.splitlines() if line.startswith("Severity:"))
    rate = int(re.search(r"(\d+) events in the", severity)[1])  # type: ignore[index]
    assert rate == _sent_in(events, *_window(severity)), severity
    recurring = next(line for line in block.splitlines() if line.startswith("Recurring log events"))
    counted = int(re.search(r"(\d+) events", recurring)[1])  # type: ignore[index]
    assert counted == _sent_in(events, *_window(recurring)), recurring
    footer = next(line for line in digest.text.splitlines() if line.startswith("_Flood window"))
    total = int(re.search(r"since [\d:]+: (\d+) events", footer)[1])  # type: ignore[index]
    assert total == _sent_in(events, *_window(footer)), footer
