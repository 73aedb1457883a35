"""The rotation brief names the alerts still firing, also when the mission is not in a flood.

A critical alert that fired before the shift and never resolved was listed by ``events firing`` but
appeared nowhere in the brief (``_1 entry; nothing omitted._``); only the incident block of degraded
mode listed firing alerts.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.operations.sources.alertmanager import events_from_alertmanager


def _alert(name: str, fingerprint: str, started: datetime, *, status: str = "firing",
           severity: str = "critical") -> dict[str, object]:
    return {"status": status, "labels": {"alertname": name, "severity": severity, "service": "ledger"},
            "annotations": {"summary": f"{name} on the ledger", "runbook_url": f"https://runbooks.example/{name}"},
            "startsAt": started.isoformat().replace("+00:00", "Z"),
            "endsAt": (started + timedelta(minutes=5)).isoformat().replace("+00:00", "Z") if status == "resolved"
            else "0001-01-01T00:00:00Z", "fingerprint": fingerprint}


def test_a_critical_alert_firing_since_before_the_shift_is_in_the_brief(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    with Memory(load_settings(data_dir=tmp_path / "data")) as memory:
        payload = {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [
            _alert("LedgerWritesFailing", "f1", now - timedelta(days=3)),
            _alert("DiskFilling", "f2", now - timedelta(days=3), severity="warning"),
            _alert("CacheCold", "f3", now - timedelta(days=3), status="resolved")]}
        memory.record_events([e.model_dump() for e in events_from_alertmanager(payload)], mission="shop",
                             now=now, embed=False)
        assert memory.escalation_status("shop", now=now).mode.value == "normal"
        monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "night@x")
        memory.handover_note("Watch the ledger writes", kind="warning", mission="shop")
        monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "day@x")
        brief = memory.rotation_brief(mission="shop", now=now + timedelta(minutes=1), embed_archived=False)
    text = " ".join(brief.text.split())
    # a critical alert open is an incident, flood or not: the incident block lists the open alerts first
    assert "Open alerts (2, most critical first" in text
    assert text.index("LedgerWritesFailing") < text.index("DiskFilling")  # most critical first
    assert "0.90 · since" in text and "runbook https://runbooks.example/LedgerWritesFailing" in text
    assert "CacheCold" not in text  # resolved: not firing
    (item,) = [i for i, _ in brief.entries if i.section.name == "CRISIS"]
    assert len(item.record_ids) == 2
