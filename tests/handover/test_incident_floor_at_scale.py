"""An outage with hundreds of open alerts (one HostDown per host of a fleet) still fits the brief's
floor at the SessionStart hook's budget: alerts beyond what one line each can hold are grouped by name
and sector, each group with its count, so every open alert is counted and its name shown, and the
brief is never refused (a refused brief leaves the hook with nothing to say)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mission_memory.api import Memory
from mission_memory.hook.session_start import TOKEN_BUDGET
from mission_memory.operations.sources.alertmanager import events_from_alertmanager


def _payload(started: datetime, hosts: int) -> dict[str, Any]:
    alerts = [("HostDown", "critical", f"edge-{i:03d}:9100", "edge", f"edge-{i:03d} unreachable") for i in range(hosts)]
    alerts += [(f"Disk{j}", "warning", f"db-{j}:9100", "db", f"disk {j} fills") for j in range(hosts // 10)]
    return {"version": "4", "status": "firing", "receiver": "mission-memory", "alerts": [
        {"status": "firing", "labels": {"alertname": name, "severity": severity, "service": service, "instance": instance},
         "annotations": {"summary": summary}, "startsAt": started.isoformat().replace("+00:00", "Z"),
         "endsAt": "0001-01-01T00:00:00Z", "fingerprint": f"fp-{instance}"}
        for name, severity, instance, service, summary in alerts]}


@pytest.mark.parametrize("hosts", [150, 1500])
def test_hundreds_of_open_alerts_are_counted_in_the_floor_at_the_hooks_budget(data_dir: object, hosts: int) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    with Memory.open() as memory:
        memory.record_events(list(events_from_alertmanager(_payload(now - timedelta(minutes=25), hosts))),
                             mission="prod", now=now - timedelta(minutes=20), embed=False)
        opened = len(memory.firing_alerts("prod", now=now))
        brief = memory.rotation_brief(mission="prod", for_operator="bob@example.org", token_budget=TOKEN_BUDGET,
                                      now=now)
    assert opened == hosts + hosts // 10
    text = brief.text
    assert f"Open alerts ({opened}" in text, text[:3000]
    assert re.search(rf"HostDown\b.*×{hosts}\b", text), text[:3000]
    counted = sum(int(n) for n in re.findall(r"×(\d+)", text.split("Open alerts", 1)[1].split("\n\n", 1)[0]))
    singles = len(re.findall(r"^- Disk\d+ · ", text, flags=re.M))
    assert counted + singles == opened, text[:3000]
