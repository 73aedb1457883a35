"""The MCP server answers from the mission of the directory it is started in (ADR 0029), with a real client."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mission_memory.mcp.server import build_server
from tests.cli.test_mission_scoping import QUESTION
from tests.conftest import GitRepo

ARCHIVE_TITLE = "Keep the upload ledger in MongoDB"
UPLOADER_TITLE = "Use SQLite in WAL mode for the embedded ledger"


def _stdio(args: list[str], cwd: Path, data_dir: Path, calls: list[dict[str, Any]]) -> tuple[Any, list[Any]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mission_memory", "serve", "--transport", "stdio", *args],
        env={"MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": os.environ["HOME"],
             "MISSION_MEMORY_EMBEDDER_CACHE_DIR": os.environ["MISSION_MEMORY_EMBEDDER_CACHE_DIR"]},
        cwd=str(cwd),
    )

    async def go() -> tuple[Any, list[Any]]:
        async with Client(params) as client:
            tools = await client.list_tools()
            results = [await client.call_tool("workflow_memory_query", arguments) for arguments in calls]
            return tools, results

    return anyio.run(go)


def test_the_stdio_server_started_in_a_repository_answers_from_its_mission_and_names_it(
    two_missions: tuple[GitRepo, GitRepo], data_dir: Path
) -> None:
    _, archive = two_missions
    tools, (default, widened) = _stdio([], archive.root / "src" / "ledger", data_dir, [
        {"task_description": QUESTION, "token_budget": 3000},
        {"task_description": QUESTION, "token_budget": 3000, "filters": {"mission": "*"}},
    ])
    description = tools.tools[0].description
    assert "Default mission: 'archive'" in description
    assert "2 missions are stored" in description and "'*'" in description
    assert "uploader" not in description  # no stored name beyond the default (ADR 0054)

    assert not default.is_error
    text = default.content[0].text
    assert ARCHIVE_TITLE in text and UPLOADER_TITLE not in text
    assert "Mission: 'archive' (the repository asked from; widen with filters.mission \"*\")" in text

    assert not widened.is_error
    assert ARCHIVE_TITLE in widened.content[0].text and UPLOADER_TITLE in widened.content[0].text
    assert "Missions: all (widened on purpose)" in widened.content[0].text


def test_serve_mission_overrides_the_directory(two_missions: tuple[GitRepo, GitRepo], data_dir: Path) -> None:
    _, archive = two_missions
    tools, (result,) = _stdio(["--mission", "uploader"], archive.root, data_dir,
                              [{"task_description": QUESTION, "token_budget": 3000}])
    assert "Default mission: 'uploader'" in tools.tools[0].description
    assert UPLOADER_TITLE in result.content[0].text and ARCHIVE_TITLE not in result.content[0].text


def _in_process(default_mission: str | None, arguments: dict[str, Any]) -> tuple[str, Any]:
    async def go() -> tuple[str, Any]:
        async with Client(build_server(default_mission=default_mission)) as client:
            tools = await client.list_tools()
            return tools.tools[0].description or "", await client.call_tool("workflow_memory_query", arguments)

    return anyio.run(go)


def test_a_default_mission_that_is_not_stored_answers_from_all_and_says_so(
    two_missions: tuple[GitRepo, GitRepo],
) -> None:
    description, result = _in_process("never-ingested", {"task_description": QUESTION, "token_budget": 3000})
    assert "No mission 'never-ingested' is stored" in description
    text = result.content[0].text
    assert "Missions: all (the default mission 'never-ingested' is not stored" in text
    assert ARCHIVE_TITLE in text and UPLOADER_TITLE in text


def test_an_unknown_mission_in_filters_is_a_tool_error_listing_the_stored_ones(
    two_missions: tuple[GitRepo, GitRepo],
) -> None:
    _, result = _in_process("archive", {"task_description": QUESTION, "filters": {"mission": "nope"}})
    assert result.is_error
    assert "'nope'" in result.content[0].text and "archive, uploader" in result.content[0].text


def test_a_store_that_does_not_open_still_gives_a_server_whose_description_says_so(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "memory.db").write_bytes(b"this is not a database" * 100)
    description, result = _in_process("archive", {"task_description": QUESTION})
    assert "could not be read" in description
    assert result.is_error


def test_serve_with_a_mission_that_is_not_stored_warns_at_start_and_lists_the_stored_ones(
    two_missions: tuple[GitRepo, GitRepo], data_dir: Path
) -> None:
    import subprocess

    env = {"MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": os.environ["HOME"], "PATH": os.environ["PATH"]}
    done = subprocess.run(
        [sys.executable, "-m", "mission_memory", "serve", "--mission", "uploadr"],
        input="", env=env, capture_output=True, text=True, timeout=120,  # stdin at EOF: the stdio server ends
    )
    warning = " ".join(done.stderr.split())
    assert "Warning: no mission named 'uploadr' is stored (missions: archive, uploader; did you mean 'uploader'?)" in warning
