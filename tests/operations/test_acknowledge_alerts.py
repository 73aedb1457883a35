"""`events ack` acknowledges an open alert from any source: Alertmanager and Grafana send no
acknowledgement, so before it only a PagerDuty `incident.acknowledged` webhook set "acknowledged by"
(trial defect 5). The acknowledgement is written by the open alerts' compare-and-set (docs/adr/0091),
kept by the alert's later notifications, and named in `events firing`, the incident and the brief."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from itertools import count, islice
from pathlib import Path

import httpx
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.alert_state import alerts_key
from mission_memory.operations.sources.alertmanager import events_from_alertmanager
from tests.mcp_http_server import http_mcp_server

T0 = datetime(2026, 3, 1, 11, 55, tzinfo=UTC)


def _am(name: str, at: datetime, fingerprint: str) -> dict[str, object]:
    alert = {"status": "firing", "labels": {"alertname": name, "severity": "critical", "service": "checkout"},
             "annotations": {"summary": f"{name} on api-7"}, "startsAt": at.isoformat().replace("+00:00", "Z"),
             "endsAt": "0001-01-01T00:00:00Z", "fingerprint": fingerprint}
    return {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [alert]}


def test_an_operator_acknowledges_an_alertmanager_alert_received_over_http(data_dir: Path) -> None:
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=url.removesuffix("/mcp"), timeout=60) as http:
        for name, fp in (("CheckoutDown", "fp-down"), ("DiskFilling", "fp-disk")):
            sent = http.post("/alerts/alertmanager?mission=shop&new_mission=1", json=_am(name, T0, fp))
            assert sent.status_code == 200, sent.text
    runner = CliRunner()
    at = (T0 + timedelta(minutes=3)).isoformat()
    done = runner.invoke(app, ["events", "ack", "CheckoutDown", "--mission", "shop", "--operator", "bob@x", "--now", at])
    assert done.exit_code == 0, done.output
    assert "Acknowledged CheckoutDown (fp-down) as bob@x" in done.output
    with Memory.open() as memory:
        acked = {a.type: a.acknowledged_by for a in memory.firing_alerts("shop", now=T0 + timedelta(minutes=3))}
        assert acked == {"CheckoutDown": "bob@x", "DiskFilling": ""}
        incident = memory.incident("shop")
        assert incident is not None
        assert {a.type: a.acknowledged_by for a in incident.alerts}["CheckoutDown"] == "bob@x"
        # the alert notifies again (Alertmanager repeats every few minutes): the acknowledgement stays
        memory.record_events(list(events_from_alertmanager(_am("CheckoutDown", T0, "fp-down"))), mission="shop", now=T0 + timedelta(minutes=5), embed=False)
        assert {a.type: a.acknowledged_by for a in memory.firing_alerts("shop", now=T0 + timedelta(minutes=5))} == acked
    firing = runner.invoke(app, ["events", "firing", "--mission", "shop", "--now", at])
    assert "acknowledged by bob@x" in firing.output and "not acknowledged" in firing.output, firing.output
    # no open alert of that name: a clear error naming the open ones, nothing written
    missing = runner.invoke(app, ["events", "ack", "NoSuchAlert", "--mission", "shop", "--operator", "bob@x", "--now", at])
    assert missing.exit_code == 1 and "no open alert" in missing.stderr and "CheckoutDown" in missing.stderr, missing.stderr
    # an acknowledgement needs a name that passes the name rule
    bad = runner.invoke(app, ["events", "ack", "DiskFilling", "--mission", "shop", "--operator", "bob\nx", "--now", at])
    assert bad.exit_code != 0 and "Traceback" not in bad.output


ACK = """
import sys
from datetime import datetime
from mission_memory.api import Memory
with Memory.open() as m:
    m.acknowledge_alerts(sys.argv[1], mission="shop", operator=sys.argv[2], now=datetime.fromisoformat(sys.argv[3]))
"""


def test_acknowledgements_of_several_processes_at_once_are_all_kept(data_dir: Path) -> None:
    # six alerts in one bucket of the open-alert state, so the six writers contend for one value
    same = list(islice((fp for fp in (f"fp-{n}" for n in count()) if alerts_key(fp) == alerts_key("fp-0")), 6))
    names = [f"Alert{i}" for i in range(len(same))]
    with Memory.open() as memory:
        for name, fp in zip(names, same, strict=True):
            memory.record_events(list(events_from_alertmanager(_am(name, T0, fp))), mission="shop", now=T0, embed=False)
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    at = (T0 + timedelta(minutes=1)).isoformat()
    procs = [subprocess.Popen([sys.executable, "-c", ACK, name, f"op{i}", at], env=env, stderr=subprocess.PIPE, text=True)
             for i, name in enumerate(names)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with Memory.open() as memory:
        acked = {a.type: a.acknowledged_by for a in memory.firing_alerts("shop", now=T0 + timedelta(minutes=1))}
    assert acked == {name: f"op{i}" for i, name in enumerate(names)}, json.dumps(acked)
