"""An event re-sent under a stored id replaces it as the current version and keeps the version it
replaced (docs/adr/0078): a sender that reuses an id, or downgrades a report, never makes memory
forget what it said before. Real SQLite files and the real embedder."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.records import Record, RecordKind
from tests.operations.event_factory import T0, event

STALLED = "Pump P-3 stalled: pressure lost on the northern water main"
FINE = "Pump P-3 all fine, pressure nominal"


def _events(memory: Memory) -> list[Record]:
    return memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="ops", limit=100)


def test_a_resent_id_keeps_the_critical_version_it_replaced_and_the_digest_shows_it() -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events([event(1, T0, text=STALLED, criticality=0.9, sector="north")], now=T0, embed=False)
        later = T0 + timedelta(minutes=3)
        again = memory.record_events([event(1, later, text=FINE, criticality=0.1, sector="north")], now=later)
        assert (again.added, again.replaced) == (0, 1)
        (current,) = _events(memory)
        assert current.text == FINE and current.criticality == 0.1
        (earlier,) = current.attributes["earlier_versions"]
        assert earlier["text"] == STALLED and earlier["criticality"] == 0.9 and earlier["state"] == "firing"
        assert earlier["time"] == T0.isoformat()
        memory.embed_pending()
        digest = memory.query("What is the state of pump P-3 on the northern water main?", token_budget=1500, now=later)
        assert FINE in digest.text and STALLED in digest.text, digest.text
        assert "Earlier version" in digest.text


def test_two_versions_of_one_id_in_one_batch_keep_both_and_an_identical_resend_adds_nothing() -> None:
    with Memory.open(event_mission="ops") as memory:
        first = memory.record_events(
            [event(1, T0, text=STALLED, criticality=0.9), event(1, T0, text=FINE, criticality=0.1)], now=T0, embed=False)
        assert (first.received, first.added) == (1, 1)
        (current,) = _events(memory)
        assert [v["text"] for v in current.attributes["earlier_versions"]] == [STALLED]
        same = memory.record_events([event(1, T0, text=FINE, criticality=0.1)], now=T0, embed=False)
        assert (same.added, same.replaced, same.unchanged) == (0, 0, 1)
        (kept,) = _events(memory)
        assert kept.id == current.id
        resolved = memory.record_events([event(1, T0, text="Pump P-3 restarted", state="resolved")], now=T0, embed=False)
        assert resolved.replaced == 1
        (last,) = _events(memory)
        assert [v["text"] for v in last.attributes["earlier_versions"]] == [STALLED, FINE]


def test_a_long_run_of_resends_keeps_the_first_report_and_the_newest_and_counts_the_rest() -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events([event(1, T0, text=STALLED, criticality=0.95)], now=T0, embed=False)
        for i in range(1, 25):
            memory.record_events([event(1, T0, text=f"Pump P-3 pressure reading {i}", criticality=0.3)], now=T0, embed=False)
        (current,) = _events(memory)
        kept = current.attributes["earlier_versions"]
        assert len(kept) == 20 and kept[0]["text"] == STALLED
        assert kept[-1]["text"] == "Pump P-3 pressure reading 23"
        assert current.attributes["earlier_versions_omitted"] == 4
        digest = memory.query("pump P-3 pressure reading", token_budget=1500, now=T0)
        assert STALLED in digest.text and "Earlier versions not shown: 21" in digest.text, digest.text


def test_the_excerpt_states_the_current_versions_criticality_beside_the_earlier_ones() -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events([event(1, T0, text=STALLED, criticality=0.9)], now=T0, embed=False)
        memory.record_events([event(1, T0, text=FINE, criticality=0.1)], now=T0, embed=False)
        digest = memory.query("pump P-3 pressure", token_budget=1500, now=T0)
    assert "Current version: criticality 0.10" in digest.text, digest.text


def test_a_resolved_alert_states_its_criticality_once() -> None:
    """The trial read "State: RESOLVED … was criticality 0.8" and then "Current version: criticality 0.80"
    of one alert: two statements of one fact. A resolved version says it once."""
    with Memory.open(event_mission="ops") as memory:
        memory.record_events([event(1, T0, text=STALLED, criticality=0.8, fingerprint="p3")], now=T0, embed=False)
        memory.record_events([event(1, T0, text="RESOLVED: " + STALLED, criticality=0.8, fingerprint="p3",
                                    state="resolved", ends_at=(T0 + timedelta(minutes=7)).isoformat())],
                             now=T0 + timedelta(minutes=8), embed=False)
        digest = memory.query("pump P-3 pressure lost northern water main", token_budget=1500,
                              now=T0 + timedelta(minutes=8))
    assert "State: RESOLVED" in digest.text, digest.text
    stated = [line for line in digest.text.splitlines() if "criticality 0.8" in line and "Earlier version" not in line]
    assert len(stated) == 1 and "was criticality 0.80" in stated[0], digest.text
    assert "Current version: criticality" not in digest.text


def test_a_secret_in_a_replaced_version_never_reaches_disk(data_dir: Path) -> None:
    secret = "ghp_" + "a1b2c3d4e5f6g7h8i9j0" * 2
    with Memory.open(event_mission="ops") as memory:
        memory.record_events([event(1, T0, text=f"Deploy token {secret} pasted into the channel", criticality=0.9)],
                             now=T0, embed=False)
        memory.record_events([event(1, T0, text="Token rotated", criticality=0.1)], now=T0, embed=False)
        (current,) = _events(memory)
        assert "[REDACTED" in current.attributes["earlier_versions"][0]["text"]
    assert not any(secret.encode() in f.read_bytes() for f in data_dir.rglob("*") if f.is_file())


_WRITER = """
import sys, time
from datetime import datetime, timezone
from mission_memory.api import Memory
writer, start = sys.argv[1], float(sys.argv[2])
time.sleep(max(0.0, start - time.time()))
with Memory.open(event_mission="ops") as memory:
    for n in range(5):
        memory.record_events([{"id": "ev-1", "time": "2026-03-01T12:00:00+00:00", "sector": "north",
                               "type": "telemetry", "criticality": 0.5, "source": "test-post",
                               "text": f"Pump P-3 reading from writer {writer}, report {n}"}],
                             now=datetime(2026, 3, 1, 12, 5, tzinfo=timezone.utc), embed=False)
        print(f"acknowledged {writer}-{n}", flush=True)
"""


def test_versions_sent_by_four_processes_at_once_are_all_kept(data_dir: Path) -> None:
    """Four real processes re-send one id five times each, at the same moment: every acknowledged
    version is the current one or among the earlier versions (the store folds the stored version in
    inside its own write transaction)."""
    import os
    import subprocess
    import sys
    import time

    start = time.time() + 3.0
    env = {**os.environ, "MISSION_MEMORY_DATA_DIR": str(data_dir)}
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(w), str(start)], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE) for w in range(4)]
    outputs = [w.communicate(timeout=300) for w in writers]
    for w, (_, err) in zip(writers, outputs, strict=True):
        assert w.returncode == 0, err
    acknowledged = {line.split()[1] for out, _ in outputs for line in out.splitlines() if line.startswith("acknowledged")}
    assert len(acknowledged) == 20
    with Memory.open(event_mission="ops") as memory:
        (current,) = _events(memory)
    said = {current.text, *(v["text"] for v in current.attributes["earlier_versions"])}
    assert said == {f"Pump P-3 reading from writer {w}, report {n}" for w in range(4) for n in range(5)}
