"""An alert without an ``instance`` label is shown by its most specific identifying label (pod, then
container, job, service …) instead of ``instance -``: KubePodCrashLooping names a pod, not an instance."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.sources.alertmanager import events_from_alertmanager

runner = CliRunner()
NOW = "2026-03-01T12:00:00Z"


def _alert(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"status": "firing", "labels": {"alertname": name, "severity": "critical", **labels},
            "annotations": {"summary": f"{name} fired"}, "startsAt": "2026-03-01T11:58:00Z",
            "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus:9090/graph",
            "fingerprint": f"fp-{name}"}


def test_an_alert_without_an_instance_label_names_its_pod_container_or_job() -> None:
    payload = {"version": "4", "status": "firing", "receiver": "mm", "alerts": [
        _alert("KubePodCrashLooping", {"namespace": "shop", "pod": "checkout-7d9f-x2", "container": "api",
                                       "job": "kube-state-metrics"}),
        _alert("KubeContainerOOM", {"namespace": "shop", "container": "worker", "job": "kube-state-metrics"}),
        _alert("TargetDown", {"namespace": "shop", "job": "node-exporter"}),
        _alert("NodeDiskFull", {"namespace": "shop", "instance": "node-1:9100", "pod": "exporter-1"}),
    ]}
    with Memory.open() as memory:
        memory.record_events(events_from_alertmanager(payload), "shop", refuse_typo=False)
    result = runner.invoke(app, ["events", "firing", "--mission", "shop", "--now", NOW])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "instance -" not in text, text
    assert "instance checkout-7d9f-x2 (pod)" in text, text
    assert "instance worker (container)" in text, text
    assert "instance node-exporter (job)" in text, text
    assert "instance node-1:9100 ·" in text, text  # an instance label is shown as it is
    result = runner.invoke(app, ["events", "firing", "--mission", "shop", "--now", NOW, "--json"])
    data = json.loads(result.stdout)
    shown = {a["type"]: a["instance"] for a in (data["alerts"] if isinstance(data, dict) else data)}
    assert shown["KubePodCrashLooping"] == "checkout-7d9f-x2 (pod)"
