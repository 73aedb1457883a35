"""The event routes of a token-less loopback server get ``/mcp``'s Host/Origin protection and take
JSON only (issue 22 item 4), and deeply nested JSON is a 400, not a 500 (item 6).

A page the operator opens can POST ``text/plain`` to 127.0.0.1 without the browser asking first (a
CORS simple request), and a DNS-rebinding page reaches it under its own host name; both must be
turned away before anything is read, as ``/mcp`` turns them away.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from mission_memory.api import Memory
from mission_memory.records import RecordKind
from tests.mcp_http_server import http_mcp_server

ROUTES = ("/events", "/alerts/alertmanager")


def _body(route: str, i: int) -> bytes:
    now = datetime.now(UTC).isoformat()
    if route == "/events":
        return (json.dumps({"id": f"page-{i}", "time": now, "sector": "north", "type": "alarm", "criticality": 0.9,
                            "text": "written by a web page"}) + "\n").encode()
    return json.dumps({"version": "4", "status": "firing", "alerts": [{
        "status": "firing", "labels": {"alertname": "FromAPage", "service": "shop"}, "annotations": {},
        "startsAt": now, "fingerprint": f"page-{i}"}]}).encode()


def _stored() -> int:
    with Memory.open() as memory:
        return sum(memory.store.count_kind(m, RecordKind.DOMAIN_EVENT.value) for m in memory.store.missions())


@pytest.fixture
def base(data_dir: Path) -> Iterator[str]:
    with http_mcp_server(data_dir) as url:
        yield url.removesuffix("/mcp")


@pytest.mark.parametrize("route", ROUTES)
def test_a_foreign_host_or_origin_is_refused_as_on_mcp_and_nothing_is_stored(base: str, route: str) -> None:
    port = base.rsplit(":", 1)[1]
    cases: list[tuple[dict[str, str], int]] = [
        ({"Host": "evil.example.com", "Origin": "http://evil.example.com", "Content-Type": "text/plain"}, 421),
        ({"Host": f"evil.example.com:{port}", "Content-Type": "application/json"}, 421),
        ({"Origin": "http://evil.example.com", "Content-Type": "application/json"}, 403),
        ({"Origin": "https://attacker.test", "Content-Type": "application/x-ndjson"}, 403),
    ]
    with httpx.Client(timeout=60) as http:
        mcp_answers = [http.post(f"{base}/mcp", content=b"{}", headers=h | {"Content-Type": "application/json"}).status_code
                       for h, _ in cases]
        assert mcp_answers == [status for _, status in cases]  # what /mcp answers, the event routes answer
        for i, (headers, status) in enumerate(cases):
            answer = http.post(f"{base}{route}?mission=ops", content=_body(route, i), headers=headers)
            assert answer.status_code == status, (headers, answer.text)
    assert _stored() == 0


@pytest.mark.parametrize("route", ROUTES)
def test_a_body_not_declared_json_is_refused_with_415(base: str, route: str) -> None:
    with httpx.Client(timeout=60) as http:
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None):
            headers = {"Content-Type": content_type} if content_type else {}
            answer = http.post(f"{base}{route}?mission=ops", content=_body(route, 0), headers=headers)
            assert answer.status_code == 415, (content_type, answer.text)
            assert "nothing was stored" in answer.json()["error"] and "application/json" in answer.json()["error"]
    assert _stored() == 0


def test_json_and_json_lines_from_the_loopback_origin_are_stored(base: str) -> None:
    with httpx.Client(timeout=60) as http:
        events = http.post(f"{base}/events?mission=ops", content=_body("/events", 1),
                           headers={"Content-Type": "application/x-ndjson", "Origin": base})
        alert = http.post(f"{base}/alerts/alertmanager?mission=ops", content=_body("/alerts/alertmanager", 2),
                          headers={"Content-Type": "application/json; charset=utf-8"})
    assert (events.status_code, alert.status_code) == (200, 200), (events.text, alert.text)
    assert _stored() == 2


def _nested(depth: int) -> Any:
    value: Any = "deep"
    for _ in range(depth):
        value = [value]
    return value


def test_deeply_nested_json_is_a_400_naming_the_depth(base: str) -> None:
    answers = []
    with httpx.Client(timeout=60) as http:
        for depth in (40, 5_000, 200_000):
            deep_alert = ("[" * depth + "]" * depth).encode()
            deep_labels = json.dumps({"version": "4", "alerts": [{"labels": {"alertname": _nested(min(depth, 400))}}]})
            deep_line = '{"id": "x", "caused_by": ' + "[" * depth + "]" * depth + "}\n"
            answers += [
                http.post(f"{base}/alerts/alertmanager", content=deep_alert, headers={"Content-Type": "application/json"}),
                http.post(f"{base}/alerts/alertmanager", content=deep_labels.encode(),
                          headers={"Content-Type": "application/json"}),
                http.post(f"{base}/events", content=deep_line.encode(), headers={"Content-Type": "application/x-ndjson"}),
            ]
    for answer in answers:
        assert answer.status_code == 400, answer.text
        assert "nests JSON deeper than 32 levels" in answer.json()["error"]
    assert _stored() == 0
