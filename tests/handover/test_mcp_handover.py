"""An agent reaches the rotation brief through the one MCP tool, ``workflow_memory_query`` with scope=handover."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from mission_memory.api import Memory
from mission_memory.mcp.server import build_server
from tests.conftest import GitRepo
from tests.handover.scenario import MISSION
from tests.hostile_texts import assert_stored_text_is_fenced


def _session(calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(build_server()) as client:
            return [await (client.list_tools() if name == "list" else client.call_tool(name, args))
                    for name, args in calls]

    return anyio.run(go)


def test_the_tool_schema_documents_the_handover_scope() -> None:
    tools = _session([("list", {})])[0].tools
    scope = tools[0].input_schema["properties"]["scope"]
    assert "handover" in scope["enum"]
    assert "rotation brief" in scope["description"]


def test_an_agent_gets_the_brief_through_workflow_memory_query(
    shift: tuple[Memory, GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "bob")
    result = _session([("workflow_memory_query", {
        "task_description": "I am taking over the uploader", "scope": "handover", "token_budget": 3000,
        "filters": {"mission": MISSION, "operator": "alice", "since": "2025-02-20"},
    })])[0]

    assert not result.is_error
    text = result.content[0].text
    assert text.startswith("# Mission memory handover brief")
    assert "from: alice\nto: bob" in text
    assert "Cap upload retries at four" in text and "Component src/" in text
    assert "Should we shard the ledger per field team?" in text
    assert_stored_text_is_fenced(text)
    with Memory.open() as memory:
        assert memory.tokenizer.count(text) <= 3000
        event = memory.retrieval_events(1)[0]
    assert (event.scope, event.client, event.operator) == ("handover", "mcp", "bob")


def test_a_bad_handover_request_is_a_tool_error_naming_the_input(shift: tuple[Memory, GitRepo]) -> None:
    result = _session([("workflow_memory_query", {
        "task_description": "take over", "scope": "handover", "filters": {"mission": "billing"},
    })])[0]
    assert result.is_error and "no mission named 'billing'" in result.content[0].text
