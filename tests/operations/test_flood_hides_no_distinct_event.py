"""A flood of one repeated alert hides no distinct critical event of the same type, nor a less critical one.

1,996 repeats of "connection refused to db-primary" at 0.90 filled the 500 most critical events the
triage scan read: a distinct 0.90 event older than them ("relay log corrupted") and a 0.80 one
("backup failed") never became candidates, the repeat group was counted "≥ 498×" beside the
timeline's "×1996", and the digest said nothing relevant was omitted.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.config import load_settings

START = datetime(2026, 12, 3, 15, 3, 27, tzinfo=UTC)
DISTINCT = {
    300: ("db_conn", 0.90, "replication stopped on db-replica-2: relay log corrupted"),
    900: ("db_conn", 0.95, "primary db-primary out of disk space, writes rejected"),
    1500: ("backup_failed", 0.80, "nightly backup of ledger failed: bucket access denied"),
    1800: ("db_conn", 0.90, "connection refused to db-primary:5432 after 3 retries, and the standby is gone too"),
}


def _flood() -> list[dict[str, object]]:
    events = []
    for i in range(2000):
        kind, criticality, text = DISTINCT.get(i, ("db_conn", 0.9, f"connection refused to db-primary:5432 after {1 + i % 4} retries"))
        events.append({"id": f"f2-{i:05d}", "time": (START + timedelta(seconds=i * 0.03)).isoformat(), "sector": "payments",
                       "type": kind, "criticality": criticality, "source": "prom", "text": text})
    return events


def test_every_distinct_critical_event_of_a_flood_is_in_the_digest(tmp_path: Path) -> None:
    now = START + timedelta(minutes=2)
    with Memory(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.record_events(_flood(), mission="f2", now=now, embed=False)
        assert memory.escalation_status("f2", now=now).mode.value == "degraded"
        digest = memory.query("status of the payments database", filters={"mission": "f2"}, token_budget=2000,
                              now=now, client="api")
    texts = [e.record.text for e in digest.entries]
    for _, _, text in DISTINCT.values():
        assert any(text in t for t in texts), (text, texts)
    assert "repeated 1996×" in digest.text  # the group's count is exact, as the timeline's
