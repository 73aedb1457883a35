"""Secrets in state values: open alerts and read-backs reach disk redacted, and exports carry none.

Event records were redacted, but the open-alert state (mission state ``alerts``) kept a second copy
of each alert's text and runbook URL as sent, and ``brief ack --read-back`` was kept as written: both
on disk in ``memory.db``, shown by ``events firing`` and the next brief, and carried by a full export.
"""

from __future__ import annotations

import io
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.operations.sources.alertmanager import events_from_alertmanager

AWS_KEY = "AKIA" + "QWERTY1234567890"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PASSWORD = "Hunter2Secret99"
SECRETS = (AWS_KEY, GITHUB_TOKEN, PASSWORD)


def _on_disk(data_dir: Path) -> list[str]:
    """The secrets found in any file of the data dir (the database, its WAL, snapshots, logs)."""
    found = []
    for path in data_dir.rglob("*"):
        if path.is_file():
            blob = path.read_bytes()
            found += [f"{path.name}: {s}" for s in SECRETS if s.encode() in blob]
    return found


def _alert(now: datetime) -> dict[str, object]:
    return {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [{
        "status": "firing",
        "labels": {"alertname": "LedgerWritesFailing", "severity": "critical", "service": "ledger"},
        "annotations": {"summary": "ledger writes failing",
                        "description": f"key {AWS_KEY} token {GITHUB_TOKEN} password={PASSWORD}",
                        "runbook_url": f"https://runbooks.example/ledger?token={GITHUB_TOKEN}"},
        "startsAt": now.isoformat().replace("+00:00", "Z"), "endsAt": "0001-01-01T00:00:00Z",
        "fingerprint": "eeee000000000002",
    }]}


def test_an_alerts_text_and_runbook_url_reach_neither_disk_nor_the_firing_list(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    now = datetime.now(UTC).replace(microsecond=0)
    with Memory(load_settings(data_dir=data_dir)) as memory:
        memory.record_events([e.model_dump() for e in events_from_alertmanager(_alert(now))], mission="shop",
                             embed=False)
        firing = memory.firing_alerts("shop")
        out = io.StringIO()
        memory.export_memory(out)
    assert [a.type for a in firing] == ["LedgerWritesFailing"]  # the alert is open …
    shown = " ".join(f"{a.to_json()} {a.text}" for a in firing)
    assert not [s for s in SECRETS if s in shown], shown  # … without its secrets
    assert "[REDACTED:" in str(firing[0].runbook_url) and "[REDACTED:" in firing[0].text
    assert not _on_disk(data_dir)
    assert not [s for s in SECRETS if s in out.getvalue()]


def test_a_read_back_is_redacted_before_it_is_kept(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    data_dir = tmp_path / "data"
    with Memory(load_settings(data_dir=data_dir)) as memory:
        monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "night@x")
        memory.record_events([{"id": "e-1", "time": datetime.now(UTC).isoformat(), "sector": "ledger",
                               "type": "writes", "criticality": 0.4, "text": "ledger writes slow"}],
                             mission="shop", embed=False)
        memory.handover_note("Ledger writes retry three times", kind="next_step", mission="shop")
        monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "day@x")
        memory.rotation_brief(mission="shop", embed_archived=False)
        ack = memory.acknowledge_brief(mission="shop", read_back=f"holding password={PASSWORD} and {GITHUB_TOKEN}")
        monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "eve@x")
        nxt = memory.rotation_brief(mission="shop", from_operator="day@x", embed_archived=False)
    assert not [s for s in SECRETS if s in str(ack)]
    assert "read-back" in nxt.text and "[REDACTED:" in nxt.text and not [s for s in SECRETS if s in nxt.text]
    assert not _on_disk(data_dir)


def test_an_export_of_a_store_whose_state_holds_a_secret_carries_it_redacted(tmp_path: Path) -> None:
    """A store written before state was redacted: the export is the shareable copy, so it redacts."""
    data_dir = tmp_path / "data"
    with Memory(load_settings(data_dir=data_dir)) as memory:
        memory.store.set_state("shop", "probe", "{}")
    conn = sqlite3.connect(data_dir / "memory.db")
    conn.execute("UPDATE ingest_state SET value = ? WHERE key = 'probe'", (f'{{"note": "token {GITHUB_TOKEN}"}}',))
    conn.commit()
    conn.close()
    with Memory(load_settings(data_dir=data_dir)) as memory:
        out = io.StringIO()
        memory.export_memory(out)
    assert GITHUB_TOKEN not in out.getvalue() and "[REDACTED:" in out.getvalue()
