"""A flood of any size: every distinct kind of the window cited, the repeat's count exact, an honest footer.

On 6adcb71 the degraded views read only the newest 2,000 events (``TRIAGE_SCAN_MAX``): 5,000 repeats of
one 0.8 error in nine minutes beside four distinct events (0.95; 0.80 but older than the newest 2,000
repeats; 0.79; 0.75), asked "what is failing in the storage layer right now?", kept only the 0.95 one,
counted the repeat "≥1999×" and closed with "nothing relevant omitted". The kinds, their counts and
their first and last times are now one aggregate query over the whole window (docs/adr/0088).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mission_memory.api import Memory
from mission_memory.config import load_settings

START = datetime(2026, 11, 20, 3, 0, tzinfo=UTC)
REPEATS = 5000
STEP = timedelta(minutes=9) / REPEATS
NOW = START + timedelta(minutes=9, seconds=30)
QUESTION = "what is failing in the storage layer right now?"

DISTINCT = {
    "d-095": (START + timedelta(minutes=8), "raid_degraded", 0.95, "md0 array degraded: member sdc removed after SMART failure"),
    # as critical as the repeats, and older than the newest 2,000 of them
    "d-080": (START + (REPEATS - 2500) * STEP, "fs_readonly", 0.80, "EXT4-fs remounted /var/lib/postgres read-only after journal abort"),
    "d-079": (START + timedelta(minutes=7), "nfs_timeout", 0.79, "nfs: server filer-2 not responding, still trying"),
    "d-075": (START + timedelta(minutes=6), "osd_latency", 0.75, "p99 latency of ceph osd.14 above 400 ms for 5 minutes"),
}


def flood() -> list[dict[str, Any]]:
    """5,000 repeats of one kernel I/O error (0.8) in nine minutes, and the four distinct events."""
    events: list[dict[str, Any]] = [
        {"id": f"rep-{i:05d}", "time": (START + i * STEP).isoformat(), "sector": "storage", "type": "io_error",
         "criticality": 0.8, "source": "kernel", "text": f"blk_update_request: I/O error, dev sdb, sector {1000 + 8 * i}"}
        for i in range(REPEATS)
    ]
    events += [{"id": eid, "time": when.isoformat(), "sector": "storage", "type": kind, "criticality": crit,
                "source": "kernel", "text": text} for eid, (when, kind, crit, text) in DISTINCT.items()]
    return events


def test_a_flood_of_5000_repeats_hides_no_distinct_kind_and_counts_exactly(tmp_path: Path) -> None:
    with Memory(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.record_events(flood(), mission="storage", now=NOW, embed=False)
        assert memory.escalation_status("storage", now=NOW).mode.value == "degraded"
        digest = memory.query(QUESTION, filters={"mission": "storage"}, token_budget=2000, now=NOW, client="api")
    cited = {e.record.provenance.ref for e in digest.entries}
    for eid in DISTINCT:
        assert f"event:{eid}" in cited, (eid, sorted(cited))
    text = digest.text
    assert "repeated 5000×" in text  # exact, not "≥1999×"
    counts = {int(n) for n in re.findall(r"(?:repeated |×)≥?(\d+)", text)}
    assert counts <= {5000}, counts  # no view of the flood counts it otherwise
    # the footer says in numbers what the window held and what the entries stand for
    assert "5004 events of 5 kinds" in text, text[-800:]
    assert "4999 repeats counted in their kind's entry" in text, text[-800:]
