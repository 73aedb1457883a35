"""One answer per MCP call (issue 36), with a real MCP client against the real server: the digest as
text content alone, write tools answering with structured objects, descriptions that fit any mission
and give an agent no CLI advice, and a correction that never outranks the record it names."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from mcp import Client

from mission_memory.api import Memory
from mission_memory.mcp.server import build_server
from tests.conftest import GitRepo

QUESTION = "Which database holds the upload ledger?"
DECISION_TITLE = "Use SQLite in WAL mode for the embedded ledger"
SUMMARY = "The agent proposed PostgreSQL for the ledger; the operator pointed to the SQLite decision instead."


@pytest.fixture
def ingested(mission_repo: GitRepo) -> GitRepo:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    return mission_repo


def _session(*calls: tuple[str, dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    async def go() -> tuple[list[Any], list[Any]]:
        async with Client(build_server(write_tools=True)) as client:
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(go)


def test_the_digest_is_answered_once_as_text(ingested: GitRepo) -> None:
    tools, (result,) = _session(("workflow_memory_query", {"task_description": QUESTION, "token_budget": 2000}))
    query_tool = next(t for t in tools if t.name == "workflow_memory_query")
    assert query_tool.output_schema is None
    assert not result.is_error
    assert result.structured_content is None
    assert len(result.content) == 1 and DECISION_TITLE in result.content[0].text


def test_write_tools_answer_with_structured_objects(ingested: GitRepo) -> None:
    tools, (decided, corrected) = _session(
        ("record_decision", {"title": "Keep one ledger row per upload", "decision": "One row per upload.",
                             "rationale": "Audits read the ledger whole."}),
        ("record_correction", {"correction_class": "missed-decision", "category": "data", "outcome": "modified",
                               "summary": SUMMARY, "expected": ["ADR-0002"]}),
    )
    schemas = {t.name: t.output_schema for t in tools}
    assert {"id", "ref", "mission", "status", "decided_by"} <= set(schemas["record_decision"]["properties"])
    assert {"correction_id", "retrieval_caused", "missed_record_ids"} <= set(schemas["record_correction"]["properties"])
    assert not decided.is_error and not corrected.is_error
    assert decided.structured_content["mission"] == "uploader"
    assert decided.structured_content["title"] == "Keep one ledger row per upload"
    assert corrected.structured_content["correction_id"]
    assert corrected.structured_content["retrieval_caused"] in {"true", "false", "unknown"}


def test_descriptions_hold_no_domain_examples_and_no_cli_advice(ingested: GitRepo) -> None:
    tools, (result,) = _session(("workflow_memory_query", {"task_description": QUESTION, "token_budget": 2000}))
    for tool in tools:
        words = (tool.description or "") + str(tool.input_schema)
        assert "shelling" not in words and "'north'" not in words, tool.name
        assert not re.search(r"(?<![\w-])--[a-z]", words), tool.name  # no command-line flags
        assert "mission-memory " not in words, tool.name
    header = result.content[0].text.split("<<<excerpt", 1)[0]
    assert not re.search(r"(?<![\w-])--[a-z]", header), header


def test_a_correction_never_ranks_above_the_record_it_names_and_says_its_sentence_once(ingested: GitRepo) -> None:
    _, (corrected, result) = _session(
        ("record_correction", {"correction_class": "missed-decision", "category": "data", "outcome": "modified",
                               "summary": SUMMARY, "expected": ["ADR-0002"]}),
        ("workflow_memory_query", {"task_description": "The agent proposed PostgreSQL for the ledger",
                                   "token_budget": 4000}),
    )
    assert not corrected.is_error and not result.is_error
    text = result.content[0].text
    assert text.count(SUMMARY) == 1, text
    assert DECISION_TITLE in text
    assert text.index(DECISION_TITLE) < text.index(SUMMARY), text
