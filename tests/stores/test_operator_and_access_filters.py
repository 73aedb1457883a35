"""The operator and clearance filters reach every path: the CLI flags and the MCP tool's filters."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest
from mcp import Client as McpClient
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.mcp.server import build_server
from mission_memory.records import AccessLevel, Provenance, Record, RecordKind, SourceKind

TASK = "How are the satellite uplink keys rotated?"


@pytest.fixture
def graded() -> dict[str, Record]:
    """Four records on one topic, one per access level, two operators."""
    texts = [
        "Satellite uplink keys are rotated every 30 days by the ground station duty officer.",
        "Key rotation for the uplink needs two signatures and a logged change ticket in the tracker.",
        "When an uplink key leaks, rotate it at once and revoke the old key on every antenna site.",
        "The cryptographic module that stores uplink keys is audited before each rotation window.",
    ]
    out = {}
    for level, operator, text in zip(AccessLevel, ["alice", "bob", "alice", "bob"], texts, strict=True):
        out[level.value] = Record.build(
            kind=RecordKind.DOC_CHUNK, title=f"Uplink key rotation ({level.value})",
            text=text,
            provenance=Provenance(kind=SourceKind.DOC, ref=f"ops/{level.value}.md", uri=f"file:///ops/{level.value}.md",
                                  mission="orbit", time=datetime(2025, 1, 1, tzinfo=UTC)),
            access_level=level, operator=operator,
        )
    with Memory.open() as memory:
        records = list(out.values())
        memory.store.upsert(records, memory.embedder.embed_passages([r.embedding_text for r in records]),
                            memory.embedder.model_id)
    return out


def _cli_levels(*flags: str) -> set[str]:
    done = CliRunner().invoke(app, ["query", TASK, "--json", *flags])
    assert done.exit_code == 0, done.output
    return {e["title"].split("(")[1].rstrip(")") for e in json.loads(done.stdout)["entries"]}


def test_max_access_on_the_cli_returns_records_up_to_that_clearance(graded: dict[str, Record]) -> None:
    assert _cli_levels() == {"public", "internal", "restricted", "secret"}
    assert _cli_levels("--max-access", "internal") == {"public", "internal"}
    assert _cli_levels("--max-access", "public") == {"public"}


def test_operator_on_the_cli_returns_only_that_operators_records(graded: dict[str, Record]) -> None:
    assert _cli_levels("--operator", "alice") == {"public", "restricted"}
    assert _cli_levels("--operator", "alice", "--max-access", "internal") == {"public"}


def test_an_unknown_clearance_is_an_error_naming_the_value() -> None:
    done = CliRunner().invoke(app, ["query", TASK, "--max-access", "top-secret"])
    assert done.exit_code == 1
    assert "max_access 'top-secret'" in done.output


def test_the_mcp_tool_takes_operator_and_max_access_filters(graded: dict[str, Record]) -> None:
    async def go() -> Any:
        async with McpClient(build_server()) as client:
            return await client.call_tool("workflow_memory_query", {
                "task_description": TASK, "filters": {"max_access": "internal", "operator": "bob"},
            })

    result = anyio.run(go)
    assert not result.is_error
    text = result.content[0].text
    assert "(internal)" in text
    assert not any(f"({level})" in text for level in ("public", "restricted", "secret"))
