"""The team server over real HTTP on loopback, driven by the SDK's streamable-HTTP client with bearer tokens.

Two operators with different clearances ask 200 varied questions; none of the answers (digests,
briefs, write-tool responses) holds a record above the lower clearance or another operator's
practitioner record, and a request without a token, with a wrong one or with an expired one gets
401 and stores nothing.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mission_memory.teams.operator_tokens import add_token, revoke_token
from tests.teams.scenario import (
    ACCESS_PATHS,
    ALICE_PRACTITIONER_CANARY,
    MISSION,
    RESTRICTED_CANARIES,
    TeamMission,
    team_server,
)

TOPICS = [
    "How are the archive signing keys rotated?",
    "Who may open the offline vault and what is the procedure?",
    "Why is the archive encrypted and with which key?",
    "How are failed uploads retried?",
    "Where is the upload ledger kept and why SQLite?",
    "What is the escrow code word?",
    "MARMOT code word",
    "What did the refresh say about the key rotation task OPS-9?",
    "What corrections did operators make about uploads?",
    "How do I rotate a key after a courier loses a disk?",
    "ADR-0002 encryption decision",
    "Summarise the security documentation",
    "Which procedures need two officers or a witness?",
    "cold storage shipping of archive batches",
    "What should I test about the backoff clock?",
    "Що робити, якщо ключ підпису скомпрометовано?",
    "vault combination",
    "what changed in June 2024",
    "master key escrow ceremony",
    "Is anything lost when the network drops?",
]
VARIANTS: list[dict[str, Any]] = [
    {},
    {"scope": "domain"},
    {"scope": "workflow"},
    {"scope": "practitioner", "filters": {"practitioner_operator": "alice"}},
    {"filters": {"max_access": "secret"}},
    {"filters": {"mission": "*", "max_access": "restricted"}},
    {"scope": "practitioner", "filters": {"operator": "alice"}},
    {"filters": {"component": "docs"}},
    {"token_budget": 600},
    {"scope": "handover"},
]
QUERIES = [
    {"task_description": topic, **variant} for topic, variant in itertools.product(TOPICS, VARIANTS)
]


def _ask_all(url: str, token: str | None, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Make the calls in order over one streamable-HTTP session carrying ``token``."""

    async def go() -> list[Any]:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        async with (
            create_mcp_http_client(headers=headers) as http,
            McpClient(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(go)


@pytest.fixture(scope="module")
def server(team: TeamMission) -> Iterator[str]:
    with team_server(team.env(), "--write-tools", "--mission", MISSION) as url:
        yield url


def _leaks(text: str) -> list[str]:
    """The canary words of restricted records in ``text``, restricted file names included (a commit
    touching a restricted file is restricted too, ADR 0045)."""
    return [c for c in RESTRICTED_CANARIES if c in text]


def test_the_lower_clearance_gets_no_restricted_record_across_200_varied_queries(team: TeamMission, server: str) -> None:
    assert len(QUERIES) == 200
    with team.memory() as memory:
        before = memory.store.count_retrieval_events()
    results = _ask_all(server, team.bob_token, [("workflow_memory_query", q) for q in QUERIES])
    assert [r.is_error for r in results] == [False] * 200, [r.content[0].text for r in results if r.is_error][:3]
    leaked = {
        q["task_description"] + repr(q.get("filters")): _leaks(r.content[0].text)
        for q, r in zip(QUERIES, results, strict=True)
    }
    assert {k: v for k, v in leaked.items() if v} == {}
    # Alice's practitioner records stay hidden from bob outside his rotation brief (where the
    # outgoing operator's profile is handed over, ADR 0045).
    searched = [r for q, r in zip(QUERIES, results, strict=True) if q.get("scope") != "handover"]
    assert not [r for r in searched if ALICE_PRACTITIONER_CANARY in r.content[0].text]
    with team.memory() as memory:
        events = memory.store.retrieval_events(1000)[: memory.store.count_retrieval_events() - before]
    assert len(events) == 200 and {e.operator for e in events} == {"bob"}
    served = {rid for e in events for rid in e.record_ids}
    assert served and not served & team.restricted_ids
    assert not served & {rid for e in events if e.scope != "handover" for rid in e.record_ids} & team.alice_practitioner_ids


def test_the_higher_clearance_sees_the_restricted_records_the_lower_one_does_not(team: TeamMission, server: str) -> None:
    calls = [("workflow_memory_query", {"task_description": q, "token_budget": 4000}) for q in (
        "How are the archive signing keys rotated?", "Who may open the offline vault?",
        "Why is the archive encrypted?", "What did the refresh say about the key rotation task?",
    )] + [("workflow_memory_query", {"task_description": "escrow ceremony correction", "scope": "practitioner"})]
    alice = "\n".join(r.content[0].text for r in _ask_all(server, team.alice_token, calls))
    bob = "\n".join(r.content[0].text for r in _ask_all(server, team.bob_token, calls))
    assert set(_leaks(alice)) >= {"MARMOT-PATH-41", "MARMOT-FRONT-42", "MARMOT-PRACT-44"}
    assert _leaks(bob) == []
    assert "Bob asked for the backoff" in bob and ALICE_PRACTITIONER_CANARY not in bob  # his own, not alice's


@pytest.mark.parametrize("named", ["docs/adr/0002-encrypt-the-archive.md", "ADR-0002"])
def test_a_correction_naming_a_record_above_the_clearance_is_refused_as_unknown(
    team: TeamMission, server: str, named: str
) -> None:
    with team.memory() as memory:
        before = len(memory.corrections(mission=MISSION))
    hidden = _ask_all(server, team.bob_token, [("record_correction", {
        "correction_class": "missed-decision", "category": "security", "outcome": "modified",
        "summary": "The agent did not know the encryption decision.", "component": "docs",
        "expected": [named], "mission": MISSION,
    })])[0]
    assert hidden.is_error and f"expected {named!r} names no record stored" in hidden.content[0].text
    assert not _leaks(hidden.content[0].text)
    with team.memory() as memory:
        assert len(memory.corrections(mission=MISSION)) == before


def test_write_tool_answers_name_no_record_above_the_callers_clearance(team: TeamMission, server: str) -> None:
    shown = _ask_all(server, team.bob_token, [
        ("workflow_memory_query", {"task_description": "How are failed uploads retried?"}),
        ("record_correction", {
            "correction_class": "missed-decision", "category": "data", "outcome": "modified",
            "summary": "The agent missed the upload guide.", "component": "docs",
            "expected": ["ADR-0001"], "mission": MISSION,
        }),
        ("record_decision", {"title": "Park uploads after three retries", "decision": "Park them.",
                             "rationale": "The guide says so.", "supersedes": "ADR-0002"}),
    ])
    assert not shown[1].is_error and not _leaks(shown[1].content[0].text)
    assert shown[2].is_error and "ADR-0002" in shown[2].content[0].text  # bob cannot see, so cannot supersede it
    with team.memory() as memory:
        mine = [c for c in memory.corrections(mission=MISSION) if c.summary == "The agent missed the upload guide."]
    assert [c.operator for c in mine] == ["bob"]


def _flattened(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _flattened(inner)]
    return [exc, *(_flattened(exc.__cause__) if exc.__cause__ else [])]


JSONL = {"Content-Type": "application/x-ndjson"}  # the event receivers take declared JSON only (ADR 0054)


def _post_initialize(url: str, token: str | None) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    return httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=60)


@pytest.mark.parametrize("which", ["none", "wrong", "expired"])
def test_a_request_without_a_valid_token_gets_401_and_stores_nothing(team: TeamMission, server: str, which: str) -> None:
    token = {"none": None, "wrong": "mmt_" + "x" * 43, "expired": team.expired_token}[which]
    with team.memory() as memory:
        before = (memory.store.count_retrieval_events(), memory.store.counts())
    assert _post_initialize(server, token).status_code == 401
    event = json.dumps({"id": f"unauth-{which}", "time": "2025-01-11T10:00:00Z", "sector": "north", "type": "alarm",
                        "text": "an alarm that must not be stored", "criticality": 0.9})
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    for path in ("/events", "/alerts/alertmanager"):
        answer = httpx.post(f"{server}{path}?mission={MISSION}", content=event + "\n", headers=headers, timeout=60)
        assert answer.status_code == 401, (path, answer.text)
    with pytest.raises(BaseException) as refused:  # the SDK's client itself is turned away
        _ask_all(server, token, [("workflow_memory_query", {"task_description": "How are failed uploads retried?"})])
    assert "Server returned an error response" in " ".join(str(e) for e in _flattened(refused.value))
    with team.memory() as memory:
        assert (memory.store.count_retrieval_events(), memory.store.counts()) == before


def test_a_valid_token_reaches_the_event_receiver(team: TeamMission, server: str) -> None:
    event = json.dumps({"id": "standby-1", "time": "2025-01-11T10:00:00Z", "sector": "north", "type": "alarm",
                        "text": "generator on standby", "criticality": 0.3})
    answer = httpx.post(f"{server}/events?mission={MISSION}", content=event + "\n",
                        headers={"Authorization": f"Bearer {team.alice_token}", **JSONL}, timeout=60)
    assert answer.status_code == 200, answer.text


def test_a_token_scoped_to_other_missions_cannot_post_events_into_this_one(team: TeamMission, server: str) -> None:
    """The posted events would set this mission's escalation state, so only its own operators post here."""
    issued = add_token(team.data_dir / "team-tokens.toml", operator="dave", clearance="internal",
                       missions=["harbour-watch"])
    headers = {"Authorization": f"Bearer {issued.token}", **JSONL}
    event = json.dumps({"id": "intruder-1", "time": "2025-01-11T10:05:00Z", "sector": "north", "type": "alarm",
                        "text": "perimeter breach", "criticality": 0.9})
    alert = json.dumps({"version": "4", "status": "firing", "alerts": [{
        "status": "firing", "labels": {"alertname": "Breach", "severity": "critical"},
        "annotations": {"summary": "perimeter breach"}, "startsAt": "2025-01-11T10:05:00Z", "fingerprint": "f1"}]})
    with team.memory() as memory:
        before = memory.store.counts()
    for path, body in ((f"/events?mission={MISSION}", event), ("/events", event),
                       (f"/alerts/alertmanager?mission={MISSION}", alert)):
        answer = httpx.post(f"{server}{path}", content=body + "\n", headers=headers, timeout=60)
        assert answer.status_code == 403, (path, answer.text)
        assert "harbour-watch" in answer.json()["error"] and "nothing was stored" in answer.json()["error"]
    with team.memory() as memory:
        assert memory.store.counts() == before
    own = httpx.post(f"{server}/events?mission=harbour-watch", content=event + "\n", headers=headers, timeout=60)
    assert own.status_code == 200, own.text


def test_tokens_added_or_revoked_while_the_server_runs_take_effect_at_the_next_request(
    team: TeamMission, server: str
) -> None:
    path = team.data_dir / "team-tokens.toml"
    issued = add_token(path, operator="carol", clearance="public")
    assert _post_initialize(server, issued.token).status_code == 200
    revoke_token(path, issued.entry.id)
    assert _post_initialize(server, issued.token).status_code == 401


def test_the_token_file_holds_hashes_only(team: TeamMission) -> None:
    text = (team.data_dir / "team-tokens.toml").read_text(encoding="utf-8")
    assert team.alice_token not in text and team.bob_token not in text and "sha256" in text
    assert (team.data_dir / "team-tokens.toml").stat().st_mode & 0o077 == 0


def test_without_tokens_the_server_refuses_a_non_loopback_address(tmp_path: Any) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mission_memory", "serve", "--transport", "http", "--host", "0.0.0.0", "--port", "9"],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MISSION_MEMORY_DATA_DIR": str(tmp_path / "d"),
             "MISSION_MEMORY_ACCESS_PATHS": ACCESS_PATHS},
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 1
    assert "refusing to listen on 0.0.0.0:9 without authentication" in done.stderr


def _tool_description(url: str, token: str) -> str:
    async def go() -> str:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
            McpClient(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            tools = await client.list_tools()
            return next(t.description or "" for t in tools.tools if t.name == "workflow_memory_query")

    return anyio.run(go)


def test_the_team_servers_tool_description_names_the_default_mission_only(
    team: TeamMission, tmp_path: Any
) -> None:
    """Another stored mission (one bob's clearance or a mission-scoped token would not reach) and the
    record counts stay out of the description every caller reads (ADR 0045)."""
    import shutil
    from datetime import UTC, datetime

    from mission_memory.api import Memory
    from mission_memory.config import load_settings
    from mission_memory.records import AccessLevel, Provenance, Record, RecordKind, SourceKind

    data_dir = tmp_path / "data"
    shutil.copytree(team.data_dir, data_dir)
    with Memory(load_settings(data_dir=data_dir)) as memory:
        hidden = Record.build(
            kind=RecordKind.DOC_CHUNK, title="skunkworks plan", text="A plan nobody outside the project knows.",
            access_level=AccessLevel.SECRET,
            provenance=Provenance(kind=SourceKind.DOC, ref="plan.md", uri="file:///plan.md", mission="skunkworks-x",
                                  time=datetime(2025, 1, 12, tzinfo=UTC)),
        )
        memory.store.upsert([hidden], memory.embedder.embed_passages([hidden.embedding_text]), memory.embedder.model_id)
    env = dict(team.env(), MISSION_MEMORY_DATA_DIR=str(data_dir))
    with team_server(env, "--mission", MISSION) as url:
        description = _tool_description(url, team.bob_token)
    assert f"Default mission: '{MISSION}'" in description
    assert "skunkworks" not in description and "records)" not in description
