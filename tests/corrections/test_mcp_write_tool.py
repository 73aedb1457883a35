"""The opt-in MCP write tool ``record_correction``, driven by a real MCP client; the default server keeps
exactly one tool."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mission_memory.api import Memory
from mission_memory.mcp.server import build_server
from tests.conftest import GitRepo


@pytest.fixture
def ingested(mission_repo: GitRepo) -> GitRepo:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    return mission_repo


def _session(*calls: tuple[str, dict[str, Any]], write_tools: bool = True) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(build_server(write_tools=write_tools)) as client:
            results: list[Any] = [await client.list_tools()]
            for name, arguments in calls:
                results.append(await client.call_tool(name, arguments))
            return results

    return anyio.run(go)


ARGUMENTS = {
    "correction_class": "missed-decision",
    "category": "data",
    "outcome": "modified",
    "summary": "The ledger stays in SQLite for offline field teams",
    "component": "docs",
    "expected": ["ADR-2"],
    "session_id": "mcp-session-1",
}


def test_the_default_server_still_exposes_only_the_query_tool() -> None:
    [tools] = _session(write_tools=False)
    assert [t.name for t in tools.tools] == ["workflow_memory_query"]


def test_with_write_tools_a_correction_is_recorded_and_linked_to_the_query_before_it(ingested: GitRepo) -> None:
    tools, queried, recorded = _session(
        ("workflow_memory_query", {"task_description": "How is the ledger file backed up?", "scope": "domain"}),
        ("record_correction", {k: v for k, v in ARGUMENTS.items() if k != "session_id"}),
    )
    assert [t.name for t in tools.tools] == ["workflow_memory_query", "record_correction", "record_decision"]
    assert set(tools.tools[1].input_schema["required"]) == {"correction_class", "category", "outcome", "summary"}
    assert not queried.is_error and not recorded.is_error, recorded.content[0].text
    answer = recorded.structured_content
    with Memory.open() as memory:
        [correction] = memory.corrections()
        [event] = memory.retrieval_events()
    # no session_id given: the connection's session, whose query it follows (ADR 0082)
    assert correction.session_id == event.session_id and correction.session_id is not None
    assert correction.label.retrieval_event_id == event.id
    [adr2] = correction.label.missed_record_ids
    assert answer == {"correction_id": correction.correction_id, "mission": "uploader", "retrieval_caused": "true",
                      "retrieval_event_id": event.id, "missed_record_ids": [adr2]}
    assert correction.component == "docs"
    assert correction.source.value == "explicit"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"outcome": "ignored"}, "outcome"),
        ({"colour": "red"}, "unknown argument 'colour': record_correction accepts correction_class"),
        ({"category": "Not A Slug"}, "category: 'Not A Slug' is not a lower-case slug"),
        ({"component": "nowhere"}, "no component named 'nowhere' is stored"),
    ],
)
def test_bad_arguments_are_tool_errors_naming_them(ingested: GitRepo, change: dict[str, Any], message: str) -> None:
    _, result = _session(("record_correction", {**ARGUMENTS, **change}))
    assert result.is_error
    assert message in result.content[0].text
    with Memory.open() as memory:
        assert memory.corrections() == []


def test_serve_with_write_tools_over_stdio_exposes_the_write_tool(data_dir: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mission_memory", "serve", "--transport", "stdio", "--write-tools"],
        env={"MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": os.environ["HOME"],
             "MISSION_MEMORY_EMBEDDER_CACHE_DIR": os.environ["MISSION_MEMORY_EMBEDDER_CACHE_DIR"]},
    )

    async def go() -> Any:
        async with Client(params) as client:
            return await client.list_tools()

    assert [t.name for t in anyio.run(go).tools] == ["workflow_memory_query", "record_correction", "record_decision"]


def test_a_session_id_that_asked_nothing_links_to_no_other_sessions_query(ingested: GitRepo) -> None:
    _, _, recorded = _session(
        ("workflow_memory_query", {"task_description": "How is the ledger file backed up?", "scope": "domain"}),
        ("record_correction", ARGUMENTS),
    )
    assert recorded.structured_content["retrieval_caused"] == "unknown", recorded.content[0].text
    with Memory.open() as memory:
        [correction] = memory.corrections()
    assert correction.session_id == "mcp-session-1" and correction.label.retrieval_event_id is None
