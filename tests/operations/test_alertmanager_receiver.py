"""Alertmanager webhooks and JSON Lines posted over real HTTP to the running streamable-HTTP server:
mapped to events, stored at once, refused with 400/413 naming the problem and storing nothing; a flood
of posted alerts switches degraded mode on and a quiet period off, with hysteresis; and events posted
while an ingest and queries run in other processes are all stored (issue 10 items 1 and 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from mission_memory.api import Memory
from mission_memory.records import RecordKind
from tests.conftest import GitRepo
from tests.mcp_http_server import http_mcp_server
from tests.operations.event_factory import T0, event


def _alert(name: str, fingerprint: str, *, severity: str = "critical", service: str = "checkout",
           status: str = "firing", summary: str = "Error budget burning") -> dict[str, Any]:
    return {
        "status": status,
        "labels": {"alertname": name, "severity": severity, "service": service, "namespace": "shop"},
        "annotations": {"summary": summary, "description": f"{name} on {service}"},
        "startsAt": "2026-03-01T11:58:00Z",
        "endsAt": "2026-03-01T12:04:00Z" if status == "resolved" else "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus:9090/graph",
        "fingerprint": fingerprint,
    }


def _payload(*alerts: dict[str, Any], status: str = "firing") -> dict[str, Any]:
    return {
        "version": "4", "groupKey": "{}:{alertname=\"x\"}", "truncatedAlerts": 0, "status": status,
        "receiver": "mission-memory", "groupLabels": {}, "commonLabels": {}, "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093", "alerts": list(alerts),
    }


JSON = {"content-type": "application/json"}
JSONL = {"content-type": "application/x-ndjson"}  # the receivers take declared JSON only (ADR 0054)


def _base(mcp_url: str) -> str:
    return mcp_url.removesuffix("/mcp")


def _events(mission: str) -> list[dict[str, Any]]:
    with Memory.open() as memory:
        return [r.attributes | {"criticality": r.criticality, "component": r.component}
                for r in memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission=mission)]


def test_alertmanager_alerts_are_mapped_stored_and_resolved(data_dir: Path) -> None:
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        firing = http.post("/alerts/alertmanager?mission=shop", json=_payload(
            _alert("HighErrorRate", "a1"), _alert("DiskFilling", "b2", severity="warning", service="db")))
        assert firing.status_code == 200, firing.text
        assert firing.json()["added"] == 2
        stored = {e["event_type"]: e for e in _events("shop")}
        assert stored["HighErrorRate"]["criticality"] == 0.9 and stored["HighErrorRate"]["component"] == "checkout"
        assert stored["DiskFilling"]["criticality"] == 0.6 and stored["DiskFilling"]["sector"] == "db"
        assert stored["HighErrorRate"]["event_id"] == "a1@2026-03-01T11:58:00Z"
        resolved = http.post("/alerts/alertmanager?mission=shop", json=_payload(
            _alert("HighErrorRate", "a1", status="resolved"), status="resolved"))
        assert resolved.json()["replaced"] == 1
        assert {e["event_type"]: e["state"] for e in _events("shop")} == {"HighErrorRate": "resolved", "DiskFilling": "firing"}


def test_a_posted_mission_one_typo_from_a_stored_one_is_refused_and_stores_nothing(data_dir: Path) -> None:
    """``?mission=shpo`` and ``?mission=Shop`` beside a stored ``shop`` were filed as missions of their
    own (200), where no brief, digest or ``events firing --mission shop`` reads the alerts."""
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        assert http.post("/alerts/alertmanager?mission=shop", json=_payload(_alert("A", "a1"))).status_code == 200
        for typo in ("shpo", "Shop", "sho"):
            refused = http.post(f"/alerts/alertmanager?mission={typo}", json=_payload(_alert("B", "b1")))
            assert refused.status_code == 400, refused.text
            assert "'shop'" in refused.json()["error"] and "new_mission=1" in refused.json()["error"]
        lines = http.post("/events?mission=shpo", content=json.dumps(event(1, datetime.now(UTC))) + "\n", headers=JSONL)
        assert lines.status_code == 400, lines.text
        with Memory.open() as memory:
            assert sorted(memory.store.missions()) == ["shop"]
        started = http.post("/alerts/alertmanager?mission=shpo&new_mission=1", json=_payload(_alert("B", "b1")))
        assert started.status_code == 200, started.text
        other = http.post("/alerts/alertmanager?mission=payments", json=_payload(_alert("C", "c1")))
        assert other.status_code == 200, other.text  # a name of its own starts its mission, as before
        with Memory.open() as memory:
            assert sorted(memory.store.missions()) == ["payments", "shop", "shpo"]


def test_events_posted_without_a_mission_go_to_the_servers_mission(data_dir: Path) -> None:
    """``serve --mission ops`` stored a POST without ``?mission=`` under the folder the server ran in."""
    with http_mcp_server(data_dir, "--mission", "ops") as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        posted = http.post("/alerts/alertmanager", json=_payload(_alert("A", "a1")))
        assert posted.status_code == 200, posted.text
        assert posted.json()["mission"] == "ops"
    assert [e["event_type"] for e in _events("ops")] == ["A"]


def test_the_severity_mapping_is_configurable(data_dir: Path) -> None:
    mapping = json.dumps({"severity_criticality": {"sev1": 1.0, "sev3": 0.3}, "sector_labels": ["namespace"]})
    with http_mcp_server(data_dir, MISSION_MEMORY_ALERTMANAGER_MAPPING=mapping) as url, httpx.Client(timeout=60) as http:
        answer = http.post(_base(url) + "/alerts/alertmanager?mission=shop", json=_payload(_alert("Down", "c3", severity="sev1")))
        assert answer.status_code == 200, answer.text
    [stored] = _events("shop")
    assert stored["criticality"] == 1.0 and stored["sector"] == "shop"


def test_malformed_posts_get_400_or_413_naming_the_problem_and_store_nothing(data_dir: Path) -> None:
    labels_as_text = _alert("Down", "d9") | {"labels": "alertname=Down,severity=critical"}
    labels_as_list = _alert("Down", "d8") | {"labels": ["alertname", "Down"]}
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        broken = http.post("/alerts/alertmanager", content=b'{"alerts": [', headers={"content-type": "application/json"})
        assert broken.status_code == 400
        assert "alertmanager webhook: the body is not valid JSON" in broken.json()["error"]
        partial = http.post("/alerts/alertmanager", json=_payload(_alert("Up", "ok1"), labels_as_text))
        assert partial.status_code == 400
        assert partial.json()["error"] == ("alertmanager webhook alerts[1]: labels must be an object of names to "
                                           "values, got str; nothing was stored")
        listed = http.post("/alerts/alertmanager", json=_payload(labels_as_list))
        assert listed.status_code == 400 and "alerts[0]: labels must be an object" in listed.json()["error"]
        huge = http.post("/alerts/alertmanager", content=b"{" + b" " * 10_000_000 + b"}", headers=JSON)
        assert huge.status_code == 413
        assert "larger than the 5,000,000 bytes accepted in one batch" in huge.json()["error"]
        bad_line = json.dumps(event(1, T0)) + "\n" + json.dumps(event(2, T0) | {"criticality": -0.1}) + "\n"
        jsonl = http.post("/events?mission=ops", content=bad_line.encode(), headers=JSONL)
        assert jsonl.status_code == 400
        assert "request body line 2: criticality: Input should be greater than or equal to 0" in jsonl.json()["error"]
        unknown = http.post("/events?mission=ops", content=(json.dumps(event(3, T0) | {"priority": 1}) + "\n").encode(),
                            headers=JSONL)
        assert unknown.status_code == 400 and "line 1: priority is not a known field" in unknown.json()["error"]
        untimed = {k: v for k, v in event(5, T0).items() if k != "time"}
        no_time = http.post("/events?mission=ops", content=(json.dumps(event(4, T0)) + "\n" + json.dumps(untimed)).encode(),
                            headers=JSONL)
        assert no_time.status_code == 400
        assert no_time.json()["error"] == "request body line 2: time is missing; nothing was stored"
        no_start = http.post("/alerts/alertmanager", json=_payload(_alert("Up", "ok2"), _alert("Down", "d2") | {"startsAt": ""}))
        assert no_start.status_code == 400 and "alerts[1]: startsAt is missing" in no_start.json()["error"]
    with Memory.open() as memory:
        assert memory.store.counts().get("domain", {}) == {}


def _small_repo(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_git_repo("estate")
    for i in range(6):
        repo.commit(f"OPS-{i}: runbook step {i}", f"2026-01-0{i + 1}T00:00:00+00:00",
                    {f"docs/runbook{i}.md": f"# Runbook {i}\n\n## Restart\n\nRestart the checkout worker {i} after a deploy.\n"})
    return repo


def test_events_posted_while_an_ingest_and_queries_run_are_all_stored(
    data_dir: Path, make_git_repo: Callable[[str], GitRepo]
) -> None:
    repo = _small_repo(make_git_repo)
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    querying = (
        "from mission_memory.api import Memory\n"
        "with Memory.open() as m:\n"
        "    for q in ('restart the checkout worker', 'перезапуск сервісу', 'error budget burning'):\n"
        "        m.query(q, token_budget=800)\n"
    )
    posts = 24
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=120) as http:
        ingest = subprocess.Popen([sys.executable, "-m", "mission_memory", "ingest", str(repo.root), "--json"],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        query = subprocess.Popen([sys.executable, "-c", querying], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        feed = subprocess.Popen(
            [sys.executable, "-m", "mission_memory", "feed", "-", "--mission", "shop", "--no-embed"], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

        def post(i: int) -> int:
            alerts = [_alert(f"Alert{i}", f"fp-{i}-{j}", service=f"svc{j}") for j in range(5)]
            return http.post("/alerts/alertmanager?mission=shop", json=_payload(*alerts)).status_code

        with ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(post, range(posts)))
        fed = "".join(json.dumps(event(1000 + i, T0)) + "\n" for i in range(40))
        outputs = [feed.communicate(fed, timeout=600), ingest.communicate(timeout=600), query.communicate(timeout=600)]
        for proc in (feed, ingest, query):
            proc.__exit__(None, None, None)
        for proc, (_out, err) in zip((feed, ingest, query), outputs, strict=True):
            assert proc.returncode == 0, err
    assert statuses == [200] * posts
    with Memory.open() as memory:
        assert memory.store.count_kind("shop", RecordKind.DOMAIN_EVENT.value) == posts * 5 + 40
        assert memory.store.count_kind("estate", RecordKind.COMMIT.value) == 6


def test_posted_alerts_switch_degraded_mode_on_and_a_quiet_period_off_with_hysteresis(data_dir: Path) -> None:
    """An 18 s window (the server assesses at its real clock): 11 alerts flood it, 7 keep the flood going
    only because one was under way (7 alone are normal), 2 end it."""
    window = 18.0
    started = time.monotonic()

    def alerts(tag: str, count: int, age_s: float) -> dict[str, Any]:
        at = (datetime.now(UTC) - timedelta(seconds=age_s)).isoformat().replace("+00:00", "Z")
        return _payload(*[_alert(f"Flood{tag}", f"{tag}-{i}", service="db") | {"startsAt": at} for i in range(count)])

    def wait_until(offset_s: float) -> None:
        time.sleep(max(0.0, started + offset_s - time.monotonic()))

    with http_mcp_server(data_dir, MISSION_MEMORY_ESCALATION_WINDOW_MINUTES=str(window / 60)) as url, \
            httpx.Client(base_url=_base(url), timeout=60) as http:
        started = time.monotonic()
        flood = http.post("/alerts/alertmanager?mission=shop", json=alerts("a", 11, age_s=window - 3)).json()["escalation"]
        assert (flood["mode"], flood["rate"]) == ("degraded", 11)
        assert flood["alpha"] == pytest.approx(1 - 10 / 11, abs=1e-3)
        more = http.post("/alerts/alertmanager?mission=shop", json=alerts("b", 6, age_s=10)).json()["escalation"]
        assert (more["mode"], more["rate"]) == ("degraded", 17)
        wait_until(4)  # the first 11 have left the window
        held = http.post("/alerts/alertmanager?mission=shop", json=alerts("c", 1, age_s=0)).json()["escalation"]
        assert (held["mode"], held["rate"], held["alpha"]) == ("degraded", 7, 0.0)
        calm = http.post("/alerts/alertmanager?mission=calm", json=alerts("d", 7, age_s=0)).json()["escalation"]
        assert (calm["mode"], calm["rate"]) == ("normal", 7)  # the same rate without a flood under way
        wait_until(13)  # the 6 have left too
        quiet = http.post("/alerts/alertmanager?mission=shop", json=alerts("e", 1, age_s=0)).json()["escalation"]
        assert (quiet["mode"], quiet["rate"]) == ("normal", 2)
        assert datetime.fromisoformat(quiet["since"]) > datetime.fromisoformat(flood["since"])


def test_over_http_a_critical_alert_worded_unlike_the_task_reaches_the_digest_only_once_alerts_flood(
    data_dir: Path, make_git_repo: Callable[[str], GitRepo]
) -> None:
    """The triage test of tests/operations/test_triage_in_pull.py end to end: alerts posted to the running
    server, the digest asked for by an MCP client over streamable HTTP."""
    import anyio
    from mcp import Client as McpClient

    from tests.operations.test_triage_in_pull import CRITICAL_TEXT, TASK, repository_for_triage

    with Memory.open() as memory:
        memory.ingest_repository(repository_for_triage(make_git_repo).root, mission="ops")

    def now_minus(seconds: float) -> str:
        return (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")

    def worded_like_the_task(tag: str, count: int) -> dict[str, Any]:
        return _payload(*[
            _alert("UploadRetries", f"{tag}-{i}", severity="warning", service=f"relay-{i}",
                   summary=f"Upload proxy on relay {tag}-{i} retried a failed upload with backoff.")
            | {"startsAt": now_minus(60 - i)}
            for i in range(count)
        ])

    critical = _alert("Shelling", "critical-1", severity="critical", service="north", summary=CRITICAL_TEXT)

    async def ask(url: str) -> str:
        async with McpClient(url) as client:
            result = await client.call_tool("workflow_memory_query", {"task_description": TASK, "filters": {"mission": "ops"}})
            assert not result.is_error
            return "\n".join(getattr(part, "text", "") for part in result.content)

    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        http.post("/alerts/alertmanager?mission=ops", json=_payload(critical | {"startsAt": now_minus(120)}))
        posted = http.post("/alerts/alertmanager?mission=ops", json=worded_like_the_task("a", 4)).json()["escalation"]
        assert posted["mode"] == "normal"
        normal = anyio.run(ask, url)
        assert CRITICAL_TEXT not in normal and "Mode: degraded" not in normal
        flood = http.post("/alerts/alertmanager?mission=ops", json=worded_like_the_task("b", 36)).json()["escalation"]
        assert flood["mode"] == "degraded" and flood["rate"] == 41
        degraded = anyio.run(ask, url)
    assert "Mode: degraded" in degraded
    assert CRITICAL_TEXT in degraded


def test_grafanas_webhook_contact_point_may_put(data_dir: Path) -> None:
    """Grafana's webhook contact point can be set to send PUT: on 6adcb71 that was answered 405."""
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        put = http.put("/alerts/alertmanager?mission=shop&new_mission=1", json=_payload(_alert("HighErrorRate", "g1")))
        assert put.status_code == 200, put.text
        assert put.json()["added"] == 1
    assert [e["event_type"] for e in _events("shop")] == ["HighErrorRate"]
