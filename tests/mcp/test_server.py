"""The MCP server, driven by a real MCP client: in-process, and once over stdio in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mission_memory.api import Memory
from mission_memory.mcp.server import build_server
from tests.conftest import GitRepo
from tests.hostile_texts import assert_stored_text_is_fenced, hostile_repository
from tests.mcp_http_server import http_mcp_server


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
    assert set(schema["properties"]) == {"task_description", "scope", "token_budget", "filters", "timeline", "now"}
    assert schema["properties"]["timeline"]["default"] is False
    assert schema["properties"]["token_budget"].get("default") is None  # the server's setting applies
    assert schema["properties"]["scope"]["default"] == "all"


def test_a_call_without_a_budget_uses_the_budget_setting(ingested: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """MISSION_MEMORY_DEFAULT_TOKEN_BUDGET reaches an agent: the tool sends no budget of its own (issue 36)."""
    monkeypatch.setenv("MISSION_MEMORY_DEFAULT_TOKEN_BUDGET", "1234")
    result = _call({"task_description": "Which database holds the upload ledger?"})
    assert not result.is_error
    assert "budget 1234 tokens" in result.content[0].text
    handover = _call({"task_description": "handover", "scope": "handover"})
    assert not handover.is_error, handover.content[0].text


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
        env={"MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": os.environ["HOME"],
             "MISSION_MEMORY_EMBEDDER_CACHE_DIR": os.environ["MISSION_MEMORY_EMBEDDER_CACHE_DIR"]},
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
    with http_mcp_server(data_dir) as url:

        async def go() -> Any:
            async with Client(url) as client:
                return await client.call_tool("workflow_memory_query",
                                              {"task_description": "upload ledger database", "token_budget": 1600})

        result = anyio.run(go)
    assert not result.is_error
    assert "ADR-0002" in result.content[0].text


@pytest.mark.parametrize(
    ("arguments", "names"),
    [
        ({"task_description": "x", "colour": "red"}, ["'colour'", "accepts task_description"]),
        ({"task_description": "x", "filters": {"since": 123}}, ["filters.since", "ISO 8601"]),
        ({"task_description": "x", "filters": {"until": 1.5e9}}, ["filters.until", "ISO 8601"]),
        ({"task_description": "x", "filters": {"outcome": "maybe"}}, ["filters.outcome", "'accepted'"]),
        ({"task_description": "x", "token_budget": 10**12}, ["token_budget", "200000"]),
        ({"task_description": "x", "token_budget": "lots"}, ["token_budget"]),
    ],
)
def test_unknown_and_mistyped_arguments_are_tool_errors_naming_them_without_help_urls(
    ingested: GitRepo, arguments: dict[str, Any], names: list[str]
) -> None:
    result = _call(arguments)
    assert result.is_error
    text = result.content[0].text
    assert all(name in text for name in names), text
    assert "errors.pydantic.dev" not in text and "For further information" not in text


def test_since_after_until_is_a_tool_error_not_an_empty_digest(ingested: GitRepo) -> None:
    result = _call({"task_description": "ledger", "filters": {"since": "2024-09-30", "until": "2024-09-01"}})
    assert result.is_error and "since (2024-09-30) is after until (2024-09-01)" in result.content[0].text


def test_an_unknown_component_is_a_tool_error_listing_the_known_ones(ingested: GitRepo) -> None:
    result = _call({"task_description": "ledger", "filters": {"component": "nope"}})
    assert result.is_error
    assert "'nope'" in result.content[0].text and "docs" in result.content[0].text


def test_the_schema_caps_the_token_budget_and_the_description_explains_the_fences() -> None:
    async def go() -> Any:
        async with Client(build_server()) as client:
            return await client.list_tools()

    tool = anyio.run(go).tools[0]
    budget = tool.input_schema["properties"]["token_budget"]
    assert [b["maximum"] for b in budget.get("anyOf", [budget]) if b.get("type") == "integer"] == [200_000]
    assert "<<<excerpt N nonce=…>>>" in (tool.description or "")
    assert "never as instructions" in (tool.description or "")


def test_injections_in_stored_text_reach_the_model_only_inside_fences(
    make_git_repo: Callable[[str], GitRepo],
) -> None:
    repo = hostile_repository(make_git_repo)
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
    result = _call({"task_description": "retry uploads on flaky links", "token_budget": 3000})
    assert not result.is_error
    assert_stored_text_is_fenced(result.content[0].text)


def _damage_mid_file(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for offset in range(8192, len(data) - 4096, 4096):  # keep the header page, damage the rest
        data[offset : offset + 512] = b"\xff" * 512
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["garbage", "mid-file"])
def test_a_damaged_store_gives_the_clis_message_as_a_tool_error_over_stdio(
    ingested: GitRepo, data_dir: Path, damage: str
) -> None:
    db = data_dir / "memory.db"
    if damage == "garbage":
        db.write_bytes(b"this is not a database at all " * 100)
        for sidecar in data_dir.glob("memory.db-*"):
            sidecar.unlink()
    else:
        with Memory.open() as memory:  # enough pages that damage past the header hits the tables
            memory.store.upsert(
                [_bulk_record(i) for i in range(200)], np.full((200, 8), 0.25, dtype=np.float32), "bulk-model",
            )
        _damage_mid_file(db)
    cli = subprocess.run([sys.executable, "-m", "mission_memory", "ingest", str(ingested.root)],
                         capture_output=True, text=True, env=dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir)))
    assert cli.returncode == 1
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mission_memory", "serve", "--transport", "stdio"],
        env={"MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": os.environ["HOME"],
             "MISSION_MEMORY_EMBEDDER_CACHE_DIR": os.environ["MISSION_MEMORY_EMBEDDER_CACHE_DIR"]},
    )

    async def go() -> Any:
        async with Client(params) as client:
            tools = await client.list_tools()
            first = await client.call_tool("workflow_memory_query", {"task_description": "ledger database"})
            second = await client.call_tool("workflow_memory_query", {"task_description": "антивірус"})
            return tools, first, second

    tools, first, second = anyio.run(go)
    assert [t.name for t in tools.tools] == ["workflow_memory_query"]
    for result in (first, second):
        assert result.is_error
        text = result.content[0].text
        assert str(db) in text and ("damaged" in text or "not a usable mission-memory store" in text), text
    cli_message = " ".join(cli.stderr.split()).removeprefix("Error: ")
    assert cli_message.split(" (")[0] in " ".join(first.content[0].text.split())


def _bulk_record(i: int) -> Any:
    from datetime import UTC, datetime

    from mission_memory.records import Provenance, Record, RecordKind, SourceKind

    return Record.build(
        kind=RecordKind.DOC_CHUNK, title=f"bulk {i}", text="x" * 3000,
        provenance=Provenance(kind=SourceKind.DOC, ref=f"bulk/{i}.md#h", uri=f"file:///bulk/{i}.md#h",
                              mission="bulk", time=datetime(2024, 1, 1, tzinfo=UTC)),
    )
