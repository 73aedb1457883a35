"""Every backend keeps every open alert (issue 37): more open alerts than the 5,000 the state used to keep,
written in two intakes, are all open afterwards; one resolves and exactly it closes; the old one-value
form of the open alerts (a store written before) is still read and only shrinks."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from mission_memory.operations.alert_state import ALERTS_KEY, open_alerts, update_open_alerts
from mission_memory.operations.domain_events import DomainEvent, EventState
from mission_memory.stores.base import MemoryStore

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
OPEN = 5_600


def _alert(i: int, *, resolved: bool = False) -> DomainEvent:
    return DomainEvent(id=f"am-{i}", time=T0 + timedelta(milliseconds=50 * i), sector="edge", type="HostDown",
                       criticality=0.9, source="alertmanager", text=f"host edge-{i:05d} unreachable",
                       fingerprint=f"fp-{i:05d}", labels=(("instance", f"edge-{i:05d}:9100"),),
                       state=EventState.RESOLVED if resolved else EventState.FIRING,
                       ends_at=T0 + timedelta(hours=2) if resolved else None)


def test_every_open_alert_is_kept_above_five_thousand(store: MemoryStore) -> None:
    assert update_open_alerts(store, "prod", [_alert(i) for i in range(OPEN // 2)]) == OPEN // 2
    assert update_open_alerts(store, "prod", [_alert(i) for i in range(OPEN // 2, OPEN)]) == OPEN
    assert {a.fingerprint for a in open_alerts(store, "prod")} == {f"fp-{i:05d}" for i in range(OPEN)}
    assert update_open_alerts(store, "prod", [_alert(7, resolved=True)]) == OPEN - 1
    assert "fp-00007" not in {a.fingerprint for a in open_alerts(store, "prod")}
    assert open_alerts(store, "other") == []


def test_the_one_value_of_a_store_written_before_is_read_and_only_shrinks(store: MemoryStore) -> None:
    old = {f"fp-old-{i}": {"event_id": f"old-{i}", "since": T0.isoformat(), "last": T0.isoformat(), "type": "DiskFull",
                           "sector": "db", "criticality": 0.6, "text": "disk full", "title": "disk full"}
           for i in range(3)}
    store.set_state("prod", ALERTS_KEY, json.dumps(old))
    assert update_open_alerts(store, "prod", [_alert(1)]) == 4
    resolved = DomainEvent(id="old-0", time=T0, sector="db", type="DiskFull", criticality=0.6, text="disk ok",
                           fingerprint="fp-old-0", state=EventState.RESOLVED, ends_at=T0 + timedelta(minutes=5))
    again = DomainEvent(id="old-1b", time=T0 + timedelta(minutes=9), sector="db", type="DiskFull", criticality=0.7,
                        text="disk still full", fingerprint="fp-old-1")
    assert update_open_alerts(store, "prod", [resolved, again]) == 3
    alerts = {a.fingerprint: a for a in open_alerts(store, "prod")}
    assert sorted(alerts) == ["fp-00001", "fp-old-1", "fp-old-2"]
    assert alerts["fp-old-1"].since == T0 and alerts["fp-old-1"].event_id == "old-1b"  # its start kept, moved
    assert set(json.loads(store.get_state("prod", ALERTS_KEY) or "{}")) == {"fp-old-2"}
