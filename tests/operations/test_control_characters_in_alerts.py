"""An alert whose text or labels hold a control character (ESC of an ANSI colour, BEL of a title
sequence) is stored, never refused: the sender cannot fix it, retries fail forever and the page is lost.

On main before this change an Opsgenie ``message`` or an Alertmanager ``summary`` holding ``\\x1b[31m``
was answered 400 ("holds the control character U+001B … nothing was stored"), for Alertmanager the
whole group. Now every intake of events (the webhooks, ``POST /events``, ``feed``) stores such text
with each control character written as the visible escape a terminal is shown
(:func:`mission_memory.fence.escape_control_characters`, the escape of
:func:`~mission_memory.fence.terminal_safe`): idempotent, so a re-sent notification is unchanged, and no
control character reaches a digest or a terminal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.fence import escape_control_characters, name_problem, terminal_safe
from mission_memory.operations.domain_events import DomainEvent, read_events_csv, read_events_jsonl
from mission_memory.operations.sources import one_line
from mission_memory.records import RecordKind
from tests.mcp_http_server import http_mcp_server

PAYLOADS = Path(__file__).parent / "webhook_payloads"
ESC = "\x1b[31mRED\x1b[0m \x1b]0;owned\x07"
SHOWN = "\\u001b[31mRED\\u001b[0m \\u001b]0;owned\\u0007"
_CONTROLS = [chr(c) for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)]


def _alertmanager() -> dict[str, Any]:
    alert = {"status": "firing", "labels": {"alertname": "Evil\x1b[2J", "severity": "critical", "service": "pay\x1bments",
                                            "instance": "pay-api-3:8080"},
             "annotations": {"summary": f"Payments 5xx {ESC}", "runbook_url": "https://runbooks.example/x"},
             "startsAt": "2026-03-01T11:58:00Z", "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "ansi01"}
    plain = {**alert, "labels": {**alert["labels"], "alertname": "DiskFull", "service": "db"},
             "annotations": {"summary": "Disk full"}, "fingerprint": "plain02"}
    return {"version": "4", "status": "firing", "receiver": "mm", "alerts": [alert, plain]}


def _opsgenie() -> dict[str, Any]:
    payload = json.loads((PAYLOADS / "opsgenie_create.json").read_text(encoding="utf-8"))
    payload["alert"]["message"] = f"Disk {ESC} title"
    return payload


def _pagerduty() -> dict[str, Any]:
    payload = json.loads((PAYLOADS / "pagerduty_v3_incident_triggered.json").read_text(encoding="utf-8"))
    payload["event"]["data"]["title"] = f"Checkout {ESC}"
    return payload


def _stored(mission: str) -> list[dict[str, Any]]:
    with Memory.open() as memory:
        return [{**r.attributes, "text": r.text} for r in memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value],
                                                                                       mission=mission)]


def test_alerts_with_control_characters_are_stored_escaped_by_every_receiver(data_dir: Path) -> None:
    event = {"id": "log-1", "time": "2026-03-01T11:59:00Z", "sector": "payments", "type": "ERROR",
             "criticality": 0.9, "source": "app\x1b-log", "text": f"upstream {ESC}"}
    posts = [("/alerts/alertmanager", _alertmanager(), 2), ("/alerts/grafana", _alertmanager(), 2),
             ("/alerts/opsgenie", _opsgenie(), 1), ("/alerts/pagerduty", _pagerduty(), 1), ("/events", [event], 1)]
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=url.removesuffix("/mcp"), timeout=60) as http:
        for path, body, count in posts:
            mission = path.rsplit("/", 1)[1]
            first = http.post(f"{path}?mission={mission}&new_mission=1", json=body)
            assert first.status_code == 200, (path, first.text)
            assert first.json()["added"] == count, (path, first.json())
            again = http.post(f"{path}?mission={mission}", json=body)  # a retry changes nothing
            assert again.status_code == 200 and again.json()["unchanged"] == count, (path, again.json())
            for stored in _stored(mission):
                flat = json.dumps(stored, ensure_ascii=False)
                assert not any(c in flat for c in _CONTROLS), (path, stored)
            assert any(SHOWN in s["text"] for s in _stored(mission)), (path, _stored(mission))
    names = {s["event_type"]: s["sector"] for s in _stored("alertmanager")}
    assert names == {"Evil\\u001b[2J": "pay\\u001bments", "DiskFull": "db"}
    listed = CliRunner().invoke(app, ["events", "firing", "--mission", "opsgenie", "--now", "2026-03-01T12:30:00Z"],
                                env={"MISSION_MEMORY_DATA_DIR": str(data_dir)})
    assert listed.exit_code == 0 and "\x1b" not in listed.output, listed.output


def test_feed_files_store_control_characters_escaped_too(data_dir: Path, tmp_path: Path) -> None:
    line = {"id": "e1", "time": "2026-03-01T11:59:00Z", "sector": "payments", "type": "ERROR", "criticality": 0.9,
            "text": f"upstream {ESC}"}
    feed = tmp_path / "esc.jsonl"
    feed.write_text(json.dumps(line) + "\n", encoding="utf-8")
    fed = CliRunner().invoke(app, ["feed", str(feed), "--mission", "ops", "--new-mission", "--now",
                                   "2026-03-01T12:00:00Z", "--no-embed"])
    assert fed.exit_code == 0, fed.output
    assert [s["text"] for s in _stored("ops")] == [f"upstream {SHOWN}"]
    [from_csv] = read_events_csv(f"id,time,sector,type,criticality,text\ne,2026-03-01T12:00:00Z,N,t,0.9,a{ESC}\n")
    assert from_csv.text == f"a{SHOWN}"


@given(st.text(alphabet=st.sampled_from([*_CONTROLS, "\t", "\n", "\r", "a", "\\", "u", "0", "1", "b", "\u202e", "é"]),
               min_size=1, max_size=40))
def test_escaping_is_idempotent_and_leaves_no_control_character(text: str) -> None:
    once = escape_control_characters(text)
    assert escape_control_characters(once) == once
    assert not any(c in once for c in _CONTROLS)
    assert terminal_safe(once) == terminal_safe(text) or "\r" in text or "\u202e" in text
    if text.strip():
        event = DomainEvent(id="e", time="2026-03-01T12:00:00Z", sector="s", type="t", criticality=0.5, text=text)
        assert event.text == once.strip()
        again = DomainEvent.model_validate(event.model_dump())  # stored and read back: the same event
        assert again == event
    name = one_line(text)
    if name:
        assert name_problem(name) is None or "control" not in name_problem(name)  # type: ignore[operator]
        assert one_line(name) == name


def test_a_jsonl_line_with_control_characters_is_read() -> None:
    line = json.dumps({"id": "e", "time": "2026-03-01T12:00:00Z", "sector": "s", "type": "t", "criticality": 0.5,
                       "text": "shel\u0000ling \u001b[31m"})
    assert read_events_jsonl(line)[0].text == "shel\\u0000ling \\u001b[31m"
