"""The incident block's "Affected" line names its window and lists a sector with no events in it only
for an open alert, saying so (trial: "Affected: checkout (1777 events)" beside "Recurring … since
00:47:49: 4000 events" and "payments-db (0 events)" with no reason given)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.operations.sources.alertmanager import events_from_alertmanager
from tests.handover.test_counts_name_their_windows import _events, _sent_in, _window

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _alert(service: str, started: datetime) -> dict[str, object]:
    alert = {"status": "firing", "labels": {"alertname": "PrimaryDown", "severity": "critical", "service": service},
             "annotations": {"summary": "Primary unreachable"}, "startsAt": started.isoformat().replace("+00:00", "Z"),
             "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "fp-primary"}
    return {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [alert]}


def test_affected_counts_name_their_window_and_an_alert_only_sector_says_why(tmp_path: Path) -> None:
    events = _events(600, NOW - timedelta(minutes=25), NOW - timedelta(seconds=5))
    with Memory(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.record_events(list(events_from_alertmanager(_alert("payments-db", NOW - timedelta(minutes=20)))),
                             mission="shop", now=NOW - timedelta(minutes=20), embed=False)
        for start in range(0, len(events), 100):
            batch = events[start:start + 100]
            memory.record_events(batch, mission="shop", now=datetime.fromisoformat(batch[-1]["time"]), embed=False)
        brief = memory.rotation_brief(mission="shop", now=NOW, token_budget=4000, archive=False, embed_archived=False)
    block = next(shown for item, shown in brief.entries if item.section.name == "CRISIS")
    affected = next(line for line in block.splitlines() if line.startswith("Affected"))
    assert affected.startswith("Affected (events in the same 10 min): "), affected
    severity = next(line for line in block.splitlines() if line.startswith("Severity:"))  # names the 10 min
    checkout = int(re.search(r"checkout \((\d+)\)", affected)[1])  # type: ignore[index]
    assert checkout == _sent_in(events, *_window(severity)), affected
    assert "payments-db (0 events)" not in affected, affected
    assert "payments-db (open alert, 0 in the window)" in affected, affected
