"""The MCP server, driven by a real MCP client: in-process, and once over stdio in a subprocess."""

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


def _call(arguments: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(build_server()) as client:
            return await client.call_tool("workflow_memory_query", arguments)

    return anyio.run(go)


def test_the_server_exposes_exactly_one_tool_with_the_documented_parameters() -> None:
    async def go() -> Any:
        async with Client(build_server()) as client:
            return await client.list_tools()

    tools = anyio.run(go).tools
    assert [t.name for t in tools] == ["workflow_memory_query"]
    schema = tools[0].input_schema
    assert schema["required"] == ["task_description"]
    assert set(schema["properties"]) == {"task_description", "scope", "token_budget", "filters"}
    assert schema["properties"]["token_budget"]["default"] == 8000
    assert schema["properties"]["scope"]["default"] == "all"


def test_the_tool_returns_a_digest_with_provenance_within_the_budget(ingested: GitRepo) -> None:
    result = _call({"task_description": "Which database holds the upload ledger?", "token_budget": 1500})
    assert not result.is_error
    text = result.content[0].text
    assert "ADR-0002: Use SQLite in WAL mode for the embedded ledger" in text
    assert "`docs/adr/0002-use-sqlite-in-wal-mode.md`" in text
    with Memory.open() as memory:
        assert memory.tokenizer.count(text) <= 1500
        event = memory.retrieval_events(1)[0]
    assert event.query == "Which database holds the upload ledger?" and event.token_budget == 1500


def test_filters_and_scope_reach_the_query(ingested: GitRepo) -> None:
    result = _call({"task_description": "upload ledger database", "scope": "domain",
                    "filters": {"component": "docs"}})
    assert not result.is_error
    assert "ADR-0002" not in result.content[0].text
    assert "## Workflow" not in result.content[0].text


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"task_description": "   "}, "task_description is empty"),
        ({"task_description": "x", "filters": {"colour": "red"}}, "colour"),
        ({"task_description": "x", "token_budget": 5}, "too small"),
        ({"task_description": "x", "scope": "everything"}, "scope"),
    ],
)
def test_bad_arguments_come_back_as_tool_errors(arguments: dict[str, Any], message: str) -> None:
    result = _call(arguments)
    assert result.is_error
    assert message in result.content[0].text


def test_the_stdio_server_answers_a_real_client_in_a_subprocess(ingested: GitRepo, data_dir: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mission_memory", "serve", "--transport", "stdio"],
        env={"MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": os.environ["HOME"]},
    )

    async def go() -> Any:
        async with Client(params) as client:
            tools = await client.list_tools()
            result = await client.call_tool(
                "workflow_memory_query",
                {"task_description": "Чому перевірка антивірусом повторюється?", "token_budget": 2000},
            )
            return tools, result

    tools, result = anyio.run(go)
    assert [t.name for t in tools.tools] == ["workflow_memory_query"]
    assert not result.is_error
    assert "ADR-0003" in result.content[0].text


def test_the_http_server_answers_a_real_client_over_streamable_http(ingested: GitRepo, data_dir: Path) -> None:
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    with subprocess.Popen(
        [sys.executable, "-m", "mission_memory", "serve", "--transport", "http", "--port", str(port)],
        env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    ) as server:
        try:
            assert server.stderr is not None
            for line in server.stderr:  # wait for the server to say it listens; no sleeps
                if "Uvicorn running on" in line:
                    break

            async def go() -> Any:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    return await client.call_tool("workflow_memory_query",
                                                  {"task_description": "upload ledger database", "token_budget": 1200})

            result = anyio.run(go)
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert not result.is_error
    assert "ADR-0002" in result.content[0].text
