"""Retention (issue 24 item 4): ``prune`` deletes domain events older than their retention, per mission and
event type, resolved alerts first, keeps alerts still open, counts only on ``--dry-run``, and never touches
decisions, documents, commits or notes; the HTTP server prunes on its schedule. Real git repository, real
SQLite file, real HTTP."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.records import RecordKind
from tests.conftest import GitRepo
from tests.mcp_http_server import http_mcp_server
from tests.operations.event_factory import event

runner = CliRunner()
NOW = datetime.now(UTC)


def _events() -> list[dict[str, Any]]:
    old = NOW - timedelta(days=200)
    return [
        event(1, old, type_="telemetry"),                                          # due: a point event
        event(2, old, type_="DiskFull", criticality=0.9, fingerprint="fp-open"),   # due, but still firing
        event(3, old, type_="Down", criticality=0.9, fingerprint="fp-closed", state="resolved",
              ends_at=(old + timedelta(minutes=5)).isoformat()),                   # due: resolved
        event(4, NOW - timedelta(days=3), type_="heartbeat"),                      # due by its type's 2 days
        event(5, NOW - timedelta(days=3), type_="telemetry"),                      # within 90 days
        event(6, NOW - timedelta(hours=1), type_="heartbeat"),                     # recent
    ]


def _kinds(mission: str) -> dict[str, int]:
    with Memory.open() as memory:
        counts = memory.store.counts()
    return {kind: n for layer in counts.values() for kind, n in layer.items() if n}


def _event_ids(mission: str) -> set[str]:
    with Memory.open() as memory:
        return {str(r.attributes["event_id"]) for r in
                memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission=mission)}


def test_prune_keeps_decisions_documents_and_open_alerts_and_dry_run_deletes_nothing(mission_repo: GitRepo) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root, mission="ops")
        memory.record_events(_events(), "ops", embed=False)
    before = _kinds("ops")
    assert before["decision"] >= 2 and before["domain_event"] == 6

    dry = runner.invoke(app, ["prune", "--dry-run", "--kind", "heartbeat=2", "--json"])
    assert dry.exit_code == 0, dry.output
    report = json.loads(dry.output)
    assert (report["dry_run"], report["pruned"], report["resolved"], report["kept_open"]) == (True, 3, 1, 1)
    assert report["by_type"] == {"Down": 1, "heartbeat": 1, "telemetry": 1}
    assert list(report["type_cutoffs"]) == ["heartbeat"]  # its own cutoff, beside the default one
    assert _kinds("ops") == before

    done = runner.invoke(app, ["prune", "--mission", "ops", "--kind", "heartbeat=2"])
    assert done.exit_code == 0, done.output
    assert "Pruned 3 events (heartbeat older than" in done.output and "; other types older than" in done.output
    assert "1 kept because their alert is still open" in done.output
    assert _event_ids("ops") == {"ev-2", "ev-5", "ev-6"}
    after = _kinds("ops")
    assert {k: v for k, v in after.items() if k != "domain_event"} == {k: v for k, v in before.items() if k != "domain_event"}

    bad = runner.invoke(app, ["prune", "--kind", "heartbeat"])
    assert bad.exit_code == 1 and "--kind 'heartbeat' is not TYPE=DAYS" in bad.output
    unknown = runner.invoke(app, ["prune", "--mission", "nope"])
    assert unknown.exit_code == 1 and "no mission named 'nope' is stored" in unknown.output


def test_the_http_server_prunes_on_its_schedule(data_dir: Path) -> None:
    with Memory.open() as memory:
        memory.record_events(_events(), "ops", embed=False)
    with http_mcp_server(data_dir, MISSION_MEMORY_PRUNE_INTERVAL_MINUTES="0.02",
                         MISSION_MEMORY_EVENT_RETENTION_KINDS='{"heartbeat": 2}'):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _event_ids("ops") != {"ev-2", "ev-5", "ev-6"}:
            time.sleep(0.5)
    assert _event_ids("ops") == {"ev-2", "ev-5", "ev-6"}


def test_prune_reads_every_page_of_due_events(monkeypatch: Any) -> None:
    import mission_memory.operations.retention as retention

    monkeypatch.setattr(retention, "_BATCH", 3)  # pages of 3 records: 20 due events take 7 pages
    old = NOW - timedelta(days=100)
    with Memory.open() as memory:
        memory.record_events([event(i, old - timedelta(minutes=i % 4)) for i in range(20)]
                             + [event(99, NOW - timedelta(days=1))], "ops", embed=False)
        dry = memory.prune_events("ops", dry_run=True, now=NOW)
        assert dry.total == 20
        assert memory.prune_events("ops", now=NOW).total == 20
    assert _event_ids("ops") == {"ev-99"}


def test_the_store_reads_due_events_as_rows_not_records(tmp_path: Path) -> None:
    """What pruning reads of each event: its record id, time, type, event id and state, in pages, for one
    mission's domain events before the cutoff only (docs/adr/0058)."""
    from mission_memory.stores.sqlite import SqliteStore

    old = NOW - timedelta(days=100)
    with Memory.open(data_dir=tmp_path / "data") as memory:
        memory.record_events([event(i, old - timedelta(seconds=i % 3)) for i in range(11)]
                             + [event(50, old, type_="Down", criticality=0.9, fingerprint="fp-x", state="resolved",
                                      ends_at=(old + timedelta(minutes=1)).isoformat()),
                                event(60, NOW - timedelta(days=1))], "ops", embed=False)
        memory.record_events([event(70, old)], "elsewhere", embed=False)
        store = memory.store
        assert isinstance(store, SqliteStore)
        pages = list(store.event_retention_rows("ops", NOW - timedelta(days=30), batch=4))
        ids = {r.id for r in memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="ops",
                                                                 until=NOW - timedelta(days=30), limit=100)}
    assert [len(p) for p in pages] == [4, 4, 4]
    rows = [row for page in pages for row in page]
    assert {r.record_id for r in rows} == ids
    assert {r.event_id for r in rows} == {f"ev-{i}" for i in range(11)} | {"ev-50"}
    down = next(r for r in rows if r.event_id == "ev-50")
    assert (down.event_type, down.state, down.time) == ("Down", "resolved", old)


def test_pruned_events_leave_no_vector_and_no_lexical_match(tmp_path: Path) -> None:
    old = NOW - timedelta(days=100)
    with Memory.open(data_dir=tmp_path / "data") as memory:
        memory.record_events([event(i, old, text=f"Pump station {i} reports cavitation in the intake") for i in range(6)]
                             + [event(9, NOW - timedelta(hours=1), text="Pump station 9 reports cavitation, fresh")],
                             "ops", embed=False)
        memory.embed_pending()
        assert sum(memory.store.vector_models().values()) == 7
        assert memory.prune_events("ops", now=NOW, max_age_days=30).total == 6
        assert sum(memory.store.vector_models().values()) == 1
        digest = memory.query("pump station cavitation", filters={"mission": "ops"}, now=NOW)
    assert "event:ev-9" in digest.text
    assert not any(f"event:ev-{i}`" in digest.text for i in range(6))


def test_notes_decisions_and_events_written_while_another_process_prunes_all_survive(mission_repo: GitRepo) -> None:
    """A real ``prune`` process deletes 20,000 old events while this one writes handover notes,
    decisions and new events: every write acknowledged meanwhile is stored afterwards, and only the
    old events are gone."""
    import subprocess
    import sys

    old = NOW - timedelta(days=200)
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root, mission="ops")
        memory.record_events([event(i, old + timedelta(seconds=i), type_="telemetry") for i in range(20_000)],
                             "ops", embed=False)
        prune = subprocess.Popen([sys.executable, "-m", "mission_memory", "prune", "--mission", "ops", "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        notes, decisions, events, i = set(), set(), set(), 0
        while True:  # write at least once, then for as long as the prune runs
            i += 1
            notes.add(memory.handover_note(f"Check relay {i} after the prune", mission="ops", operator="alice").id)
            decisions.add(memory.record_decision(f"Keep relay {i} on battery", decision=f"Relay {i} stays on battery.",
                                                 rationale="The mains feed is unstable.", mission="ops").record.id)
            memory.record_events([event(100_000 + i, NOW - timedelta(minutes=1), type_="telemetry")], "ops", embed=False)
            events.add(f"ev-{100_000 + i}")
            if prune.poll() is not None:
                break
        out, err = prune.communicate(timeout=300)
    assert prune.returncode == 0, err.decode()
    assert json.loads(out)["pruned"] == 20_000
    with Memory.open() as memory:
        stored = {r.id for r in memory.store.records_of_kind([RecordKind.HANDOVER_NOTE.value, RecordKind.DECISION.value],
                                                                mission="ops")}
    assert notes <= stored and decisions <= stored, (len(notes), len(decisions))
    assert _event_ids("ops") == events
