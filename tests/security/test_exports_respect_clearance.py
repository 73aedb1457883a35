"""Exports, errors and listings respect clearance and mission scope as the digest does; attribution comes
from the token; decisions inherit the level of what they supersede; the MCP write tools and the handover
answer from the server's mission (issue 22 item 8; docs/adr/0055)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.errors import InputError
from mission_memory.mcp.decision_tool import DECISION_TOOL_NAME
from mission_memory.mcp.server import build_server
from mission_memory.records import AccessLevel, Provenance, Record, RecordKind, SourceKind
from mission_memory.refresh.ledger import REFRESH_MISSION
from mission_memory.refresh.orchestrator import TaskRefreshState
from mission_memory.teams.access_control import AccessContext, Role
from tests.conftest import GitRepo

TASK_CANARY = "MARMOT-TASK-51"
QUERY_CANARY = "MARMOT-QUERY-52"
DOC_CANARY = "MARMOT-DOC-53"
BOB = AccessContext("bob", AccessLevel.INTERNAL, Role.OPERATOR, frozenset({"ops"}))
ALICE = AccessContext("alice", AccessLevel.RESTRICTED, Role.LEAD)

RESTRICTED_ADR = """---
access: restricted
---

# 1. Encrypt the archive with the offline key

Date: 2024-02-01

## Status

Accepted

## Context

The archive leaves the building on tapes.

## Decision

Encrypt every archive batch with the offline key held in the vault.

## Consequences

Restores need the vault officer.
"""
OPEN_ADR = """# 2. Keep the upload ledger in SQLite

Date: 2024-02-02

## Status

Accepted

## Context

One writer, many readers.

## Decision

Keep the upload ledger in SQLite in WAL mode.

## Consequences

Backups are file copies.
"""


def _record(kind: RecordKind, title: str, text: str, mission: str, level: AccessLevel = AccessLevel.INTERNAL,
            component: str | None = None, attributes: dict[str, Any] | None = None) -> Record:
    source = {RecordKind.ISSUE: SourceKind.ISSUE, RecordKind.DOC_CHUNK: SourceKind.DOC}[kind]
    return Record.build(
        kind=kind, title=title, text=text, component=component, access_level=level, attributes=attributes,
        provenance=Provenance(kind=source, ref=f"{component or 'docs'}/{title}", uri=f"file:///{title}",
                              mission=mission, time=datetime(2025, 3, 1, tzinfo=UTC)),
    )


def _plant(memory: Memory, records: list[Record]) -> None:
    memory.store.upsert(records, memory.embedder.embed_passages([r.embedding_text for r in records]),
                        memory.embedder.model_id)


@pytest.fixture
def ops(make_git_repo: Callable[[str], GitRepo], monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """Mission ``ops``: a restricted ADR 0001 and an internal ADR 0002, ingested; and mission ``other``."""
    repo = make_git_repo("ops")
    repo.commit("Add the decisions", "2024-02-02T10:00:00+00:00", {
        "docs/adr/0001-encrypt-the-archive.md": RESTRICTED_ADR,
        "docs/adr/0002-keep-the-ledger-in-sqlite.md": OPEN_ADR,
    })
    other = make_git_repo("other")
    other.commit("Add the guide", "2024-02-02T10:00:00+00:00", {
        "README.md": f"# Other mission\n\nThe other mission's convoy schedule is {DOC_CANARY}.\n",
    })
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        memory.ingest_repository(other.root)
    return repo


def test_a_limited_export_holds_no_restricted_task_title_and_no_operators_query_text(
    ops: GitRepo, tmp_path: Path
) -> None:
    with Memory.open() as memory:
        _plant(memory, [_record(RecordKind.ISSUE, f"OPS-9 {TASK_CANARY} move the vault", "Move the vault.", "ops",
                                AccessLevel.RESTRICTED, attributes={"key": "OPS-9"})])
        state = TaskRefreshState(key="OPS-9", title=f"OPS-9 {TASK_CANARY} move the vault")
        memory.store.set_state(REFRESH_MISSION, "task:OPS-9", state.model_dump_json())  # as the refresher keeps it
        memory.query(f"where is {QUERY_CANARY} kept", access=ALICE, session_id="alice-1")
    target = tmp_path / "shareable.jsonl"
    for level in ("internal", "public"):
        done = CliRunner().invoke(app, ["export", "--max-access-level", level, "-o", str(target)])
        assert done.exit_code == 0, done.output
        text = target.read_text(encoding="utf-8")
        assert "Keep the upload ledger in SQLite" in text or level == "public"
        assert TASK_CANARY not in text and QUERY_CANARY not in text, level
    done = CliRunner().invoke(app, ["export", "-o", str(target)])  # the owner's full export keeps everything
    assert done.exit_code == 0 and TASK_CANARY in target.read_text(encoding="utf-8")


def test_a_mission_scoped_token_reads_no_other_missions_documents(ops: GitRepo) -> None:
    with Memory.open() as memory:
        for filters in ({"mission": "*"}, None):
            for scope in ("domain", "all"):
                digest = memory.query("convoy schedule of the other mission", scope=scope, filters=filters,
                                      access=BOB, token_budget=20_000)
                assert DOC_CANARY not in digest.text, (scope, filters)
                assert {e.record.provenance.mission for e in digest.entries} <= {"ops"}
        unscoped = memory.query("convoy schedule of the other mission", filters={"mission": "*"},
                                access=AccessContext("carol", AccessLevel.INTERNAL), token_budget=20_000)
    assert DOC_CANARY in unscoped.text  # the rule is the scope, not the query


def test_an_unknown_component_error_lists_no_folder_that_holds_only_restricted_files(ops: GitRepo) -> None:
    with Memory.open() as memory:
        _plant(memory, [_record(RecordKind.DOC_CHUNK, f"vault-{i}", f"vault procedure {i}", "ops",
                                AccessLevel.RESTRICTED, component="vaultroom") for i in range(3)])
        with pytest.raises(InputError) as unknown:
            memory.query("procedure", filters={"component": "nowhere"}, access=BOB)
        with pytest.raises(InputError) as hidden:
            memory.query("procedure", filters={"component": "vaultroom"}, access=BOB)
        with pytest.raises(InputError) as for_lead:
            memory.query("procedure", filters={"component": "nowhere"}, access=ALICE)
    assert "vaultroom" not in str(unknown.value) and "docs" in str(unknown.value)
    assert "no component named 'vaultroom'" in str(hidden.value)  # as if it did not exist
    assert "vaultroom" in str(for_lead.value)


def test_a_decision_superseding_a_restricted_adr_is_restricted_unless_the_recorder_sets_a_level(
    ops: GitRepo
) -> None:
    with Memory.open() as memory:
        inherited = memory.record_decision(
            "Encrypt the archive with the HSM", decision="Use the HSM.", rationale="the vault key is lost",
            supersedes="0001", mission="ops", access=ALICE,
        )
        chosen = memory.record_decision(
            "Keep the ledger in SQLite with backups", decision="Nightly copies.", rationale="cheap",
            supersedes="0002", mission="ops", access=ALICE,
        )
        declared = memory.record_decision(
            "Announce the encryption change", decision="Tell the team.", rationale="they restore tapes",
            supersedes="decision/encrypt-the-archive-with-the-hsm", mission="ops", access=ALICE,
            access_level="internal",
        )
        stored = {r.provenance.ref: r for r in memory.store.records_of_kind([RecordKind.DECISION.value], mission="ops")}
        seen_by_bob = memory.query("archive encryption HSM", scope="workflow", access=BOB, token_budget=20_000)
    assert stored[inherited.record.provenance.ref].access_level is AccessLevel.RESTRICTED
    assert stored[chosen.record.provenance.ref].access_level is AccessLevel.INTERNAL
    assert stored[declared.record.provenance.ref].access_level is AccessLevel.INTERNAL
    assert "Encrypt the archive with the HSM" not in seen_by_bob.text


def test_an_events_operator_comes_from_the_token_not_from_the_posted_body(ops: GitRepo) -> None:
    event = {"id": "ev-1", "time": "2025-03-01T10:00:00Z", "sector": "north", "type": "shelling",
             "criticality": 0.7, "text": "Shelling near the depot.", "operator": "alice"}
    with Memory.open() as memory:
        memory.record_events([event], "ops", access=BOB, embed=False)
        [stored] = memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="ops")
    assert stored.operator == "bob"


def _mcp(call: Callable[[Client], Any], **server: Any) -> Any:
    async def go() -> Any:
        async with Client(build_server(write_tools=True, **server)) as client:
            return await call(client)

    return anyio.run(go)


def test_record_decision_and_the_handover_answer_from_serve_mission_not_the_working_folder(
    ops: GitRepo, make_git_repo: Callable[[str], GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = make_git_repo("elsewhere")
    elsewhere.commit("init", "2024-02-02T10:00:00+00:00", {"README.md": "# Elsewhere\n"})
    monkeypatch.chdir(elsewhere.root)  # the server process runs in another repository

    async def decide(client: Client) -> Any:
        return await client.call_tool(DECISION_TOOL_NAME, {
            "title": "Rotate the duty phone weekly", "decision": "Weekly.", "rationale": "fair load",
        })

    async def handover(client: Client) -> Any:
        return await client.call_tool("workflow_memory_query", {"task_description": "handover",
                                                                "scope": "handover"})

    decided = _mcp(decide, default_mission="ops")
    assert not decided.is_error, decided.content[0].text
    assert json.loads(decided.content[0].text)["mission"] == "ops"
    brief = _mcp(handover, default_mission="ops")
    assert not brief.is_error, brief.content[0].text
    assert "Rotate the duty phone weekly" in brief.content[0].text
