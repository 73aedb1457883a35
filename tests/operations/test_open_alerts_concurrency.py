"""Receivers in several processes (two team servers, a CLI feed) open alerts of one mission at once: every
alert any of them acknowledged is open afterwards, and silences set at once are all kept. A plain
read-modify-write of the stored value loses the alerts that land between another writer's read and write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mission_memory.api import Memory

T0 = datetime(2026, 3, 1, 11, 55, tzinfo=UTC)
ROUNDS = 12

RECEIVER = """
import json, sys
from datetime import datetime, timedelta
from mission_memory.api import Memory
from mission_memory.operations.sources.alertmanager import events_from_alertmanager
tag, t0, rounds = sys.argv[1], datetime.fromisoformat(sys.argv[2]), int(sys.argv[3])
done = []
with Memory.open() as m:
    for i in range(rounds):
        at = t0 + timedelta(seconds=i + 1)
        alert = {"status": "firing", "labels": {"alertname": f"Disk{tag}{i}", "severity": "warning", "instance": tag},
                 "annotations": {"summary": f"disk {i} filling on {tag}"}, "startsAt": at.isoformat(),
                 "endsAt": "0001-01-01T00:00:00Z", "fingerprint": f"fp-{tag}-{i}"}
        m.record_events(list(events_from_alertmanager({"version": "4", "status": "firing", "receiver": "r",
                                                       "alerts": [alert]})), mission="shop", now=at, embed=False)
        done.append(f"fp-{tag}-{i}")
print(json.dumps(done))
"""


def run_at_once(data_dir: Path, code: str, tags: tuple[str, ...]) -> list[str]:
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    procs = [subprocess.Popen([sys.executable, "-c", code, tag, T0.isoformat(), str(ROUNDS)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in tags]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    return [fp for out, _ in outputs for fp in json.loads(out)]


def test_three_receivers_opening_alerts_at_once_lose_none(data_dir: Path) -> None:
    acknowledged = run_at_once(data_dir, RECEIVER, ("ams", "fra", "waw"))
    assert len(acknowledged) == 3 * ROUNDS
    with Memory.open() as memory:
        firing = memory.firing_alerts("shop", now=T0 + timedelta(minutes=5))
    assert sorted(a.fingerprint for a in firing) == sorted(acknowledged)
