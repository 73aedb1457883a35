"""Every alert still firing is named in a degraded digest, and a question naming an alert finds it (issue 24
item 2, docs/adr/0057).

The shape a new user met: a server for mission ``shop`` with two operators on duty receives three
Alertmanager alerts (two critical, one warning), resolves one of them, then a flood of 200 repeated 502s
beside three distinct critical events; the mission's repository holds old ADRs unrelated to the incident.
Real HTTP to a real server subprocess, a real git repository, a real SQLite file, the real embedder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from mission_memory.api import Memory
from mission_memory.retrieval.triage import names_alert
from tests.conftest import GitRepo
from tests.mcp_http_server import http_mcp_server

JSONL = {"content-type": "application/x-ndjson"}
TOPICS = ("use postgres for orders", "cache product pages in redis", "ship the catalogue as static files",
          "adopt kubernetes for the storefront", "log in json lines", "store sessions in cookies",
          "use stripe for payments", "run the search on opensearch", "send mail through ses", "keep images on s3",
          "version the api in the path", "feature flags in launchdarkly", "deploy with argo", "use terraform")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _alert(name: str, severity: str, service: str, summary: str, starts: datetime, *,
           ends: datetime | None = None) -> dict[str, Any]:
    return {"status": "resolved" if ends else "firing",
            "labels": {"alertname": name, "severity": severity, "service": service, "instance": f"{service}-1:9100"},
            "annotations": {"summary": summary}, "startsAt": _iso(starts),
            "endsAt": _iso(ends) if ends else "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.internal:9090/graph", "fingerprint": f"fp-{name}"}


def _payload(*alerts: dict[str, Any]) -> dict[str, Any]:
    return {"version": "4", "groupKey": "{}:{}", "truncatedAlerts": 0, "status": alerts[0]["status"],
            "receiver": "mission-memory", "groupLabels": {}, "commonLabels": {}, "commonAnnotations": {},
            "externalURL": "http://alertmanager:9093", "alerts": list(alerts)}


def _shop_repo(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_git_repo("shop")
    repo.commit("Record the estate's decisions", "2023-06-01T10:00:00+00:00", {
        f"docs/adr/{n:04d}-{topic.replace(' ', '-')}.md":
            f"# {n}. {topic.capitalize()}\n\nDate: 2023-06-01\n\n## Status\n\nAccepted\n\n## Context\n\n"
            f"The shop estate needs to {topic}. What is going on in the estate was discussed.\n\n"
            f"## Decision\n\nWe will {topic}.\n\n## Consequences\n\nThe shop estate is simpler to run.\n"
        for n, topic in enumerate(TOPICS, start=1)})
    return repo


@pytest.fixture
def degraded_shop(data_dir: Path, make_git_repo: Callable[[str], GitRepo]) -> datetime:
    """The shop estate, degraded, with HighErrorRate resolved and two alerts still firing; returns the clock."""
    repo = _shop_repo(make_git_repo)
    with Memory.open() as memory:
        memory.ingest_repository(repo.root, mission="shop")
    now = datetime.now(UTC)
    t0 = now - timedelta(minutes=12)  # the alerts began before the flood's window
    high = ("HighErrorRate", "critical", "checkout", "checkout 5xx ratio above 5%", t0)
    env = {"MISSION_MEMORY_EVENT_MISSION": "shop", "MISSION_MEMORY_OPERATORS_ON_DUTY": "2"}
    with http_mcp_server(data_dir, **env) as url, httpx.Client(base_url=url.removesuffix("/mcp"), timeout=60) as http:
        fired = http.post("/alerts/alertmanager", json=_payload(
            _alert(*high),
            _alert("PaymentGatewayDown", "critical", "payments", "payment gateway unreachable", t0 + timedelta(minutes=1)),
            _alert("DiskAlmostFull", "warning", "db", "disk of db-1 at 91%", t0 + timedelta(minutes=2))))
        assert fired.status_code == 200, fired.text
        resolved = http.post("/alerts/alertmanager", json=_payload(_alert(*high, ends=t0 + timedelta(minutes=7))))
        assert resolved.status_code == 200 and resolved.json()["replaced"] == 1, resolved.text
        lines = [{"id": f"e502-{n}", "time": _iso(now - timedelta(seconds=200 - n)), "type": "http_502",
                  "sector": "storefront", "criticality": 0.6, "source": "nginx",
                  "text": f"upstream returned 502 for request {n}"} for n in range(200)]
        lines += [{"id": f"crit-{n}", "time": _iso(now - timedelta(seconds=50 + n)), "type": "critical",
                   "sector": "core", "criticality": 0.95, "source": "app", "text": text}
                  for n, text in enumerate(("orders database primary lost", "payment webhook signature invalid",
                                            "inventory sync job crashed"))]
        flood = http.post("/events", content="\n".join(json.dumps(e) for e in lines).encode(), headers=JSONL)
        assert flood.status_code == 200, flood.text
        assert flood.json()["escalation"]["mode"] == "degraded"
    with Memory.open() as memory:
        memory.embed_pending()
    return now


def _fenced_timeline(text: str) -> str:
    found = re.search(r"<<<excerpt 0 nonce=\d+>>>\n(.*?)<<<end excerpt 0 nonce=\d+>>>", text, re.S)
    assert found is not None
    return found.group(1)


def test_every_alert_still_firing_is_named_before_unrelated_decisions(degraded_shop: datetime) -> None:
    with Memory.open() as memory:
        digest = memory.query("what is going on in the shop estate", filters={"mission": "shop"},
                              timeline=True, token_budget=8000)
    assert "Firing now: 2 alerts open (1 critical)" in digest.text
    timeline = _fenced_timeline(digest.text)
    for name in ("PaymentGatewayDown", "DiskAlmostFull"):  # any severity, inside the fence
        assert re.search(rf"{name} · \w+ · 0\.\d\d .*event:fp-{name}@", timeline), name
    # both firing alerts are entries too, ranked before the mission's unrelated old decisions
    kinds = [(e.record.kind.value, str(e.record.attributes.get("event_type", ""))) for e in digest.entries]
    first_decision = next(i for i, (kind, _) in enumerate(kinds) if kind == "decision")
    for name in ("PaymentGatewayDown", "DiskAlmostFull"):
        assert kinds.index(("domain_event", name)) < first_decision, kinds


def test_a_question_naming_a_resolved_alert_finds_it_marked_resolved(degraded_shop: datetime) -> None:
    with Memory.open() as memory:
        digest = memory.query("HighErrorRate checkout 5xx ratio", filters={"mission": "shop"}, token_budget=8000)
    [entry] = [e for e in digest.entries if e.record.attributes.get("event_type") == "HighErrorRate"]
    assert entry.record.attributes["state"] == "resolved" and entry.record.criticality == 0.0
    assert entry.score > 0.5  # an exact match on the alert's name, not 0.0954
    assert digest.entries[0] is entry
    assert "State: RESOLVED" in digest.text and "fired for 7 min 00 s" in digest.text


def test_names_alert_matches_the_whole_name_or_all_its_words() -> None:
    assert names_alert({"higherrorrate", "checkout"}, "HighErrorRate")
    assert names_alert({"high", "error", "rate"}, "HighErrorRate")
    assert names_alert({"disk", "almost", "full"}, "disk_almost_full")
    assert not names_alert({"high", "rate"}, "HighErrorRate")
    assert names_alert({"error"}, "Error")
    assert not names_alert({"checkout"}, "")
