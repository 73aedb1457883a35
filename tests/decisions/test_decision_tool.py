"""The opt-in MCP write tool ``record_decision``, driven by a real MCP client against the real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mission_memory.api import Memory
from mission_memory.mcp.decision_tool import DECISION_TOOL_NAME, decision_tool_schema
from mission_memory.mcp.server import build_server
from mission_memory.records import RecordKind
from tests.conftest import GitRepo


def _with_tool(call: str, arguments: dict[str, Any] | None = None) -> Any:
    async def go() -> Any:
        server = build_server(write_tools=True)  # serve --write-tools
        async with Client(server) as client:
            if call == "list":
                return await client.list_tools()
            return await client.call_tool(DECISION_TOOL_NAME, arguments or {})

    return anyio.run(go)


def test_the_tool_is_listed_beside_the_query_tool_with_the_schema_decision_tool_schema_gives() -> None:
    tools = {tool.name: tool for tool in _with_tool("list").tools}
    assert set(tools) == {"workflow_memory_query", "record_correction", DECISION_TOOL_NAME}
    schema = tools[DECISION_TOOL_NAME].input_schema
    assert set(schema["required"]) == {"title", "decision", "rationale"}
    assert set(schema["properties"]) == set(decision_tool_schema()["properties"])


def test_an_agent_records_a_decision_through_the_tool(mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(mission_repo.root)
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    result = _with_tool("call", {
        "title": "Cap antivirus retries at five", "decision": "Five retries, then report.",
        "rationale": "an endless queue hid failing scanners", "supersedes": "0003",
        "rejected": [{"option": "Unbounded queue", "why": "hides failures"}],
    })
    assert not result.is_error, result.content[0].text
    out = json.loads(result.content[0].text)
    assert out["decided_by"] == "agent" and out["mission"] == "uploader" and out["supersedes"] == ["0003"]
    with Memory.open() as memory:
        [record] = [r for r in memory.store.records_of_kind([RecordKind.DECISION.value], mission="uploader")
                    if r.provenance.ref == "decision/cap-antivirus-retries-at-five"]
    assert record.attributes["rejected_alternatives"] == [{"option": "Unbounded queue", "reason": "hides failures"}]


def test_a_bad_reference_is_a_tool_error_naming_it(mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(mission_repo.root)
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    result = _with_tool("call", {"title": "T", "decision": "d", "rationale": "r", "supersedes": "0099"})
    assert result.is_error and "supersedes '0099'" in result.content[0].text
    assert "--supersedes" not in result.content[0].text  # the tool's parameter, not the CLI's flag (issue 36)


def _call_on(server_mission: str | None, arguments: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(build_server(default_mission=server_mission, write_tools=True)) as client:
            return await client.call_tool(DECISION_TOOL_NAME, arguments)

    return anyio.run(go)


def test_the_tool_outside_any_repository_records_into_the_only_stored_mission(
    mission_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    (tmp_path / "tmp").mkdir()
    monkeypatch.chdir(tmp_path / "tmp")
    result = _call_on(None, {"title": "Pin the scanner", "decision": "1.4", "rationale": "1.5 crashes"})
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text)["mission"] == "uploader"
    with Memory.open() as memory:
        assert set(memory.store.missions()) == {"uploader"}


@pytest.mark.parametrize(
    ("server_mission", "message"),
    [("uploadr", "no mission named 'uploadr' is stored (missions: uploader; did you mean 'uploader'?)"),
     ("evil\nmission", "mission 'evil\\nmission' has control characters")],
)
def test_the_tool_refuses_a_mission_decide_refuses(
    mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch, server_mission: str, message: str
) -> None:
    monkeypatch.chdir(mission_repo.root)
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    result = _call_on(server_mission, {"title": "T", "decision": "d", "rationale": "r"})
    assert result.is_error and message in result.content[0].text
    with Memory.open() as memory:
        assert set(memory.store.missions()) == {"uploader"}
