"""Processes changing one incident at once lose nothing any of them was told was stored (docs/adr/0091).

Two operators' processes add contingencies and set fields while a third takes in alert notifications
(which link alerts to the same incident): every acknowledged change is in the stored incident.
A plain read-modify-write of the state value loses the changes that land between a read and a write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.operations.sources.alertmanager import events_from_alertmanager

T0 = datetime(2026, 3, 1, 11, 55, tzinfo=UTC)
ROUNDS = 15

OPERATOR = """
import json, sys
from datetime import datetime, timedelta
from mission_memory.api import Memory
tag, t0 = sys.argv[1], datetime.fromisoformat(sys.argv[2])
done = []
with Memory.open() as m:
    for i in range(int(sys.argv[3])):
        at = t0 + timedelta(seconds=i + 1)
        m.change_incident("contingency", f"if {tag} sees {i} then act", mission="shop", operator=tag, now=at)
        done.append(f"if {tag} sees {i} then act")
        m.change_incident("commander", f"{tag}-{i}", mission="shop", operator=tag, now=at)
print(json.dumps(done))
"""

INTAKE = """
import sys
from datetime import datetime, timedelta
from mission_memory.api import Memory
from mission_memory.operations.sources.alertmanager import events_from_alertmanager
t0 = datetime.fromisoformat(sys.argv[1])
with Memory.open() as m:
    for i in range(int(sys.argv[2])):
        at = t0 + timedelta(seconds=i + 1)
        alert = {"status": "firing", "labels": {"alertname": f"Disk{i}", "severity": "warning", "service": "db"},
                 "annotations": {"summary": f"disk {i} filling"}, "startsAt": at.isoformat(),
                 "endsAt": "0001-01-01T00:00:00Z", "fingerprint": f"fp-disk-{i}"}
        payload = {"version": "4", "status": "firing", "receiver": "r", "alerts": [alert]}
        m.record_events(list(events_from_alertmanager(payload)), mission="shop", now=at, embed=False)
"""


def test_two_operators_and_an_intake_changing_the_incident_at_once_lose_nothing(data_dir: Path) -> None:
    first = {"status": "firing", "labels": {"alertname": "CheckoutDown", "severity": "critical", "service": "checkout"},
             "annotations": {"summary": "checkout down"}, "startsAt": T0.isoformat(),
             "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "fp-checkout"}
    with Memory.open() as memory:
        memory.record_events(list(events_from_alertmanager(
            {"version": "4", "status": "firing", "receiver": "r", "alerts": [first]})), mission="shop", now=T0, embed=False)
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    procs = [subprocess.Popen([sys.executable, "-c", OPERATOR, tag, T0.isoformat(), str(ROUNDS)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in ("ann", "bob")]
    procs.append(subprocess.Popen([sys.executable, "-c", INTAKE, T0.isoformat(), str(ROUNDS)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    acknowledged = [text for out, _ in outputs[:2] for text in json.loads(out)]
    with Memory.open() as memory:
        incident = memory.incident("shop")
    assert incident is not None and incident.is_open
    assert sorted(c[0] for c in incident.contingencies) == sorted(acknowledged)
    assert len(acknowledged) == 2 * ROUNDS
    assert sum(1 for c in incident.log if c.field == "commander") == 2 * ROUNDS
    assert incident.commander in {f"{tag}-{ROUNDS - 1}" for tag in ("ann", "bob")}
    assert {a.fingerprint for a in incident.alerts} == {"fp-checkout", *(f"fp-disk-{i}" for i in range(ROUNDS))}
