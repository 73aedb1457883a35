"""The MCP tool's ``scope: handover`` shares the core's rules for the brief it answers with."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from mission_memory.api import Memory
from mission_memory.mcp.server import build_server
from mission_memory.records import RecordKind
from tests.conftest import GitRepo


def _call(arguments: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(build_server()) as client:
            return await client.call_tool("workflow_memory_query", arguments)

    return anyio.run(go)


def _archived_briefs() -> list[str]:
    with Memory.open() as memory:
        return [r.title for b in memory.store.iterate() for r in b if r.kind is RecordKind.HANDOVER_BRIEF]


def test_a_handover_from_an_operator_memory_never_saw_is_answered_and_says_so_but_is_not_archived(
    mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo in a read-only call (``filters.operator``) archived a permanent brief "from nobody", which
    the next SessionStart brief then showed as the last handover, not acknowledged."""
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "tester@example.org")
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    typo = _call({"task_description": "keycloak", "scope": "handover", "filters": {"operator": "nobody@nowhere"}})
    assert not typo.is_error, typo.content[0].text
    text = " ".join(typo.content[0].text.split())
    assert "from: nobody@nowhere (memory holds nothing from this operator on the mission" in text
    assert "This brief is not archived." in text
    assert _archived_briefs() == []
    with Memory.open() as memory:
        brief = memory.rotation_brief()  # the next brief, e.g. the SessionStart hook's
    assert "nobody@nowhere" not in brief.text
    assert brief.archived_id and brief.from_operator_known


def test_a_handover_from_a_known_operator_is_archived(mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice@example.org")
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
        memory.query("where is the upload ledger")  # alice worked on the mission: her query is logged
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "tester@example.org")
    known = _call({"task_description": "take over", "scope": "handover", "filters": {"operator": "alice@example.org"}})
    assert not known.is_error, known.content[0].text
    assert "memory holds nothing" not in known.content[0].text
    assert len(_archived_briefs()) == 1
