"""Receivers complete (issue 37 item 4), over real HTTP to the running server with the vendors' payload
shapes: Grafana's route keeps its dashboard, panel and silence links; a per-source label -> sector
setting; PagerDuty's v3 signature and HTTP basic auth (401, nothing stored, the secret never echoed);
silenced alerts (Alertmanager's suppressed state, or the operator's silence) marked and not counted."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.alert_state import open_alerts
from mission_memory.records import RecordKind
from tests.mcp_http_server import http_mcp_server

PAYLOADS = Path(__file__).parent / "webhook_payloads"
JSON = {"content-type": "application/json"}


def _fixture(name: str) -> Any:
    return json.loads((PAYLOADS / name).read_text(encoding="utf-8"))


def _base(url: str) -> str:
    return url.removesuffix("/mcp")


def _stored(mission: str) -> int:
    with Memory.open() as memory:
        return len(memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission=mission))


def _cli(*args: str) -> str:
    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, done.output
    return done.output


def test_grafanas_route_keeps_title_sector_and_its_dashboard_panel_and_silence_links(data_dir: Path) -> None:
    """On 6adcb71 Grafana's links were dropped and its team/zone labels gave sector unknown."""
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        for method in ("POST", "PUT"):  # Grafana's contact point sends either
            answer = http.request(method, "/alerts/grafana?mission=estate", json=_fixture("grafana_webhook_firing.json"))
            assert answer.status_code == 200, answer.text
    with Memory.open() as memory:
        alerts = {a.type: a for a in open_alerts(memory.store, "estate")}
    memory_alert = alerts["High memory usage"]
    assert memory_alert.sector == "blue" and alerts["High CPU usage"].sector == "blue"
    assert memory_alert.title == "This alert was triggered for zone us-1"
    assert dict(memory_alert.links) == {
        "dashboard": "https://play.grafana.org/d/000000012?orgId=1",
        "panel": "https://play.grafana.org/d/000000012?orgId=1&viewPanel=2",
        "silence": "https://play.grafana.org/alerting/silence/new?alertmanager=grafana&matchers=alertname%3DT2%2Cteam"
                   "%3Dblue%2Czone%3Dus-1",
    }
    assert [k for k, _ in alerts["High CPU usage"].links] == ["silence"]  # empty links are not kept
    shown = _cli("events", "firing", "--mission", "estate", "--now", "2021-10-12T10:00:00Z")
    assert "This alert was triggered for zone us-1" in shown
    assert "dashboard https://play.grafana.org/d/000000012?orgId=1" in shown
    assert "panel https://play.grafana.org/d/000000012?orgId=1&viewPanel=2" in shown
    assert "silence https://play.grafana.org/alerting/silence/new" in shown


def test_the_sector_labels_setting_names_each_sources_labels_in_order(data_dir: Path) -> None:
    labels = json.dumps({"grafana": ["zone", "team"], "alertmanager": ["team", "service"]})
    alert = {"status": "firing", "labels": {"alertname": "QueueBacklog", "team": "payments", "service": "queue",
                                            "severity": "critical"},
             "annotations": {"summary": "Queue backlog"}, "startsAt": "2026-03-01T11:58:00Z",
             "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "q1"}
    with http_mcp_server(data_dir, MISSION_MEMORY_SECTOR_LABELS=labels) as url, \
            httpx.Client(base_url=_base(url), timeout=60) as http:
        assert http.post("/alerts/grafana?mission=estate", json=_fixture("grafana_webhook_firing.json")).status_code == 200
        assert http.post("/alerts/alertmanager?mission=estate", json={"alerts": [alert]}).status_code == 200
    with Memory.open() as memory:
        sectors = {a.type: a.sector for a in open_alerts(memory.store, "estate")}
    assert sectors == {"High memory usage": "us-1", "High CPU usage": "eu-1", "QueueBacklog": "payments"}


SECRET = "pd-subscription-secret-0123456789abcdef"


def _signed(body: bytes, *secrets: str) -> dict[str, str]:
    signatures = ",".join("v1=" + hmac.new(s.encode(), body, hashlib.sha256).hexdigest() for s in secrets)
    return {**JSON, "x-pagerduty-signature": signatures}


def test_pagerduty_signatures_are_verified_and_a_bad_one_is_401_storing_nothing(data_dir: Path) -> None:
    auth = json.dumps({"pagerduty": {"signing_secrets": [SECRET]}})
    body = (PAYLOADS / "pagerduty_v3_incident_triggered.json").read_bytes()
    with http_mcp_server(data_dir, MISSION_MEMORY_RECEIVER_AUTH=auth) as url, \
            httpx.Client(base_url=_base(url), timeout=60) as http:
        for headers in (JSON, _signed(body, "another-secret"), {**JSON, "x-pagerduty-signature": "v0=abc"},
                        _signed(body + b" ", SECRET) | {"x-pagerduty-signature": _signed(body + b" ", SECRET)[
                            "x-pagerduty-signature"]}):
            refused = http.post("/alerts/pagerduty?mission=estate&new_mission=1", content=body, headers=headers)
            assert refused.status_code == 401, refused.text
            assert refused.json()["error"].startswith("pagerduty webhook: ") and "nothing was stored" in refused.text
            assert SECRET not in refused.text
        tampered = http.post("/alerts/pagerduty?mission=estate", content=body.replace(b"P1", b"P5"),
                             headers=_signed(body, SECRET))
        assert tampered.status_code == 401
        assert _stored("estate") == 0
        # several signatures while a secret rotates: one that matches is enough
        accepted = http.post("/alerts/pagerduty?mission=estate", content=body, headers=_signed(body, "old", SECRET))
        assert accepted.status_code == 200, accepted.text
    assert _stored("estate") == 1
    assert not any(SECRET.encode() in f.read_bytes() for f in data_dir.rglob("*") if f.is_file())


def test_a_bad_receiver_auth_setting_is_named_without_its_secret(data_dir: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("MISSION_MEMORY_RECEIVER_AUTH", '{"opsgenie": {"basic_auth": "no-colon-secret-value"}}')
    done = CliRunner().invoke(app, ["events", "firing", "--mission", "estate"])
    assert done.exit_code != 0 and "MISSION_MEMORY_RECEIVER_AUTH" in done.output, done.output
    assert "no-colon-secret-value" not in done.output and "Traceback" not in done.output
    for value in ('{"opsgenie": {"signing_secrets": ["no-colon-secret-value"]}}',
                  '{"opsgneie": {"basic_auth": "u:no-colon-secret-value"}}'):
        started = subprocess.run(
            [sys.executable, "-m", "mission_memory", "serve", "--transport", "http", "--port", "1"],
            env={**os.environ, "MISSION_MEMORY_RECEIVER_AUTH": value}, capture_output=True, text=True, timeout=120)
        assert started.returncode != 0 and "MISSION_MEMORY_RECEIVER_AUTH" in started.stderr, started.stderr
        assert "no-colon-secret-value" not in started.stderr + started.stdout and "Traceback" not in started.stderr


def test_basic_auth_guards_a_receiver_in_constant_time_and_never_echoes_the_secret(data_dir: Path) -> None:
    auth = json.dumps({"opsgenie": {"basic_auth": "opsgenie:s3cret-pass"}})
    body = _fixture("opsgenie_create.json")

    def basic(user_password: str) -> dict[str, str]:
        return {"authorization": "Basic " + base64.b64encode(user_password.encode()).decode()}

    with http_mcp_server(data_dir, MISSION_MEMORY_RECEIVER_AUTH=auth) as url, \
            httpx.Client(base_url=_base(url), timeout=60) as http:
        for headers in ({}, basic("opsgenie:wrong"), {"authorization": "Basic !!!"}, basic("opsgenie:s3cret-pas")):
            refused = http.post("/alerts/opsgenie?mission=estate&new_mission=1", json=body, headers=headers)
            assert refused.status_code == 401, refused.text
            assert refused.headers["www-authenticate"].startswith("Basic")
            assert "s3cret-pass" not in refused.text
        assert _stored("estate") == 0
        # another source without auth configured is unaffected
        assert http.post("/alerts/grafana?mission=estate", json=_fixture("grafana_webhook_firing.json")).status_code == 200
        accepted = http.post("/alerts/opsgenie?mission=estate", json=body, headers=basic("opsgenie:s3cret-pass"))
        assert accepted.status_code == 200, accepted.text


def test_alertmanagers_suppressed_alerts_are_marked_silenced_and_not_counted_as_firing(data_dir: Path) -> None:
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        answer = http.post("/alerts/alertmanager?mission=estate", json=_fixture("alertmanager_api_v2_suppressed.json"))
        assert answer.status_code == 200, answer.text
    now = "2026-03-01T12:00:00Z"
    with Memory.open() as memory:
        alerts = {a.type: a for a in open_alerts(memory.store, "estate")}
    assert alerts["DiskFilling"].silenced.startswith("silenced by 9c3e1a2b")
    assert alerts["HighErrorRate"].silenced == ""
    shown = _cli("events", "firing", "--mission", "estate", "--now", now)
    assert "1 firing, 1 silenced" in shown
    disk = next(line for line in shown.splitlines() if "DiskFilling" in line)
    assert "SILENCED (silenced by 9c3e1a2b" in disk
    as_json = json.loads(_cli("events", "firing", "--mission", "estate", "--now", now, "--json"))
    assert {a["type"]: a["silenced"] != "" for a in as_json} == {"DiskFilling": True, "HighErrorRate": False}


def test_an_operator_silence_marks_an_alert_until_it_expires_and_unsilence_lifts_it(data_dir: Path) -> None:
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        assert http.post("/alerts/grafana?mission=estate", json=_fixture("grafana_webhook_firing.json")).status_code == 200
    at = "2021-10-12T08:00:00Z"
    done = json.loads(_cli("events", "silence", "High memory usage", "--for", "2h", "--reason", "planned resize",
                           "--mission", "estate", "--now", at, "--json"))
    assert [s["fingerprint"] for s in done["silenced"]] == ["c6eadffa33fcdf37"]
    assert done["silenced"][0]["until"] == "2021-10-12T10:00:00+00:00"
    during = _cli("events", "firing", "--mission", "estate", "--now", "2021-10-12T09:00:00Z")
    line = next(x for x in during.splitlines() if "High memory usage" in x)
    assert "SILENCED until 2021-10-12 10:00 UTC" in line and "planned resize" in line
    assert "1 firing, 1 silenced" in during
    after = _cli("events", "firing", "--mission", "estate", "--now", "2021-10-12T10:00:01Z")
    assert "SILENCED" not in after and "2 firing" in after  # a silence expires by itself
    _cli("events", "silence", "c6eadffa33fcdf37", "--for", "30m", "--reason", "again", "--mission", "estate", "--now", at)
    lifted = json.loads(_cli("events", "unsilence", "High memory usage", "--mission", "estate", "--json"))
    assert [s["fingerprint"] for s in lifted["unsilenced"]] == ["c6eadffa33fcdf37"]
    assert "SILENCED" not in _cli("events", "firing", "--mission", "estate", "--now", "2021-10-12T08:10:00Z")
    refused = CliRunner().invoke(app, ["events", "silence", "NoSuchAlert", "--for", "1h", "--reason", "x",
                                       "--mission", "estate", "--now", at])
    assert refused.exit_code != 0 and "NoSuchAlert" in refused.output and "Traceback" not in refused.output
    bad = CliRunner().invoke(app, ["events", "silence", "High memory usage", "--for", "nan", "--reason", "x",
                                   "--mission", "estate"])
    assert bad.exit_code != 0 and "--for" in bad.output and "Traceback" not in bad.output
    assert datetime(2021, 10, 12, tzinfo=UTC)  # the fixture's day


def test_an_alerts_instance_and_title_are_searchable(data_dir: Path) -> None:
    """Two alerts of one name on two hosts: a question naming one host finds that host's alert first."""
    def alert(host: str) -> dict[str, Any]:
        return {"status": "firing", "labels": {"alertname": "HostDown", "severity": "critical", "service": "edge",
                                               "instance": host},
                "annotations": {"summary": "Host does not answer ping"}, "startsAt": "2026-03-01T11:58:00Z",
                "endsAt": "0001-01-01T00:00:00Z", "fingerprint": f"fp-{host}"}

    with http_mcp_server(data_dir) as url, httpx.Client(base_url=_base(url), timeout=60) as http:
        answer = http.post("/alerts/alertmanager?mission=estate&new_mission=1",
                           json={"alerts": [alert("edge-fra-07.internal:9100"), alert("edge-ams-02.internal:9100")]})
        assert answer.status_code == 200, answer.text
    with Memory.open() as memory:
        memory.embed_pending()
        digest = memory.query("is edge-ams-02 down?", filters={"mission": "estate"}, token_budget=1500,
                              now="2026-03-01T12:00:00Z")
    assert digest.entries, digest.text
    assert digest.entries[0].record.attributes["labels"]["instance"] == "edge-ams-02.internal:9100", digest.text
