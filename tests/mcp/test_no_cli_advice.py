"""No command-line advice reaches an agent (issue 36 item 4): what the MCP server answers, on real calls
by a real MCP client against the real server, names the tool's own parameters, never a ``mission-memory``
command or a command-line flag. The CLI keeps its advice (its flags, its commands) for its own output."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.mcp.server import build_server
from tests.conftest import GitRepo

CLI_ADVICE = re.compile(r"mission-memory [a-z]|(?<![\w-])--[a-z]")
"""A ``mission-memory`` command or a command-line flag (``--mission``), as an agent must never be told."""

QUESTION = "Which database holds the upload ledger?"
DECIDE = {"title": "Keep one ledger row per upload", "decision": "One row per upload.",
          "rationale": "Audits read the ledger whole."}
CORRECT = {"correction_class": "missed-decision", "category": "data", "outcome": "modified",
           "summary": "The agent proposed PostgreSQL for the ledger; the operator pointed to the SQLite decision."}


def _answers(*calls: tuple[str, dict[str, Any]]) -> list[str]:
    """Every text the server gives: each tool's description and input schema, then each call's content
    and structured content (tool errors included), one string per item."""
    async def go() -> list[str]:
        async with Client(build_server(write_tools=True)) as client:
            texts = [f"{t.name}: {t.description} {t.input_schema}" for t in (await client.list_tools()).tools]
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                texts += [f"{name} {arguments} -> {'error' if result.is_error else 'answer'}: {c.text}"
                          for c in result.content]
                texts.append(f"{name} {arguments} -> structured: {result.structured_content}")
            return texts

    return anyio.run(go)


def _advice(texts: list[str]) -> list[str]:
    return [t for t in texts if CLI_ADVICE.search(t)]


def test_an_empty_store_tells_an_agent_no_cli_step() -> None:
    texts = _answers(("workflow_memory_query", {"task_description": QUESTION}),
                     ("record_decision", DECIDE),
                     ("record_correction", {**CORRECT, "mission": "nosuch"}))
    assert any("Nothing is ingested yet" in t for t in texts)
    assert _advice(texts) == []


def test_bad_arguments_are_named_as_the_tool_names_them(mission_repo: GitRepo) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    texts = _answers(
        ("record_decision", {**DECIDE, "rejected": ["PostgreSQL"]}),
        ("record_decision", {**DECIDE, "supersedes": "ADR-0099"}),
        ("record_decision", {**DECIDE, "mission": "nosuch"}),
        ("record_correction", {**CORRECT, "mission": "nosuch"}),
        ("record_correction", {**CORRECT, "expected": ["ADR-0099"]}),
        ("workflow_memory_query", {"task_description": QUESTION, "filters": {"mission": "nosuch"}}),
        ("workflow_memory_query", {"task_description": QUESTION, "token_budget": 2000}),
        ("workflow_memory_query", {"task_description": QUESTION, "scope": "handover", "token_budget": 1000}),
    )
    errors = [t for t in texts if "-> error" in t]
    assert len(errors) >= 5, texts  # the calls above that must fail did, so their messages were scanned
    assert any("supersedes" in t for t in errors)
    assert _advice(texts) == []


def test_the_cli_keeps_its_advice(data_dir: Path) -> None:
    done = CliRunner().invoke(app, ["query", QUESTION])
    assert "mission-memory ingest" in done.output


def test_the_agent_wording_names_the_tool_s_parameters() -> None:
    from mission_memory.mcp.agent_words import for_agent

    said = for_agent("give --mission or --all-missions; --principle 'x' is empty; --since or --write-adr; "
                     "run `mission-memory ingest PATH` first", ("mission", "principles"), ("mission", "since"))
    assert said == ('give mission or filters.mission "*"; principles \'x\' is empty; filters.since or the write_adr'
                    " (not a parameter of this tool: an operator sets it); ask an operator to ingest the mission's"
                    " repository first")
