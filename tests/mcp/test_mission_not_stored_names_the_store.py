"""A server whose store lacks the mission asked for says so, and names the data dir and store it opened.

The trap a user fell into: an MCP client starts the stdio server with only HOME and PATH, so
MISSION_MEMORY_DATA_DIR set in the user's shell never reaches it; the server opened the default data dir,
empty, and answered "Nothing is ingested yet", not that mission 'adyen' is not stored nor where it looked.
Real stdio subprocess started in a folder named after the mission, a real (empty) SQLite store.
"""

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
from mission_memory.config import load_settings
from mission_memory.fence import quote_name
from tests.conftest import GitRepo


def _ask(data: Path, cwd: Path, arguments: dict[str, Any]) -> str:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mission_memory", "serve", "--transport", "stdio"],
                                   env={"MISSION_MEMORY_DATA_DIR": str(data), "HOME": os.environ["HOME"]}, cwd=str(cwd))

    async def go() -> Any:
        async with Client(params) as client:
            return await client.call_tool("workflow_memory_query", arguments)

    result = anyio.run(go)
    return str(result.content[0].text)


def test_an_empty_store_names_the_mission_the_data_dir_and_the_store(tmp_path: Path) -> None:
    project = tmp_path / "adyen"
    project.mkdir()
    data = tmp_path / "default data"
    text = _ask(data, project, {"task_description": "How are refunds retried?", "token_budget": 2000})
    assert "mission 'adyen' is not stored" in text, text
    assert f"data dir {quote_name(str(data), limit=400)}" in text, text
    assert "sqlite" in text and "memory.db" in text
    assert "MISSION_MEMORY_DATA_DIR" in text  # how to point the server at the right store


def test_a_mission_asked_by_name_that_is_not_stored_names_the_data_dir(
        tmp_path: Path, mission_repo: GitRepo, data_dir: Path) -> None:
    with Memory(load_settings()) as memory:
        memory.ingest_repository(mission_repo.root)
    text = _ask(data_dir, tmp_path, {"task_description": "How are refunds retried?", "token_budget": 2000,
                                     "filters": {"mission": "ad\u202eyen"}})
    assert "no mission named 'ad\\u202eyen' is stored" in text, text  # the name escaped, never raw
    assert f"data dir {quote_name(str(data_dir), limit=400)}" in text, text


def test_the_cli_says_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "adyen"
    project.mkdir()
    monkeypatch.chdir(project)
    with Memory(load_settings()) as memory:
        text = memory.query("How are refunds retried?", client="cli", default_mission="adyen").text
    assert "mission 'adyen' is not stored" in text and "data dir" in text and "mission-memory ingest" in text


def test_the_mcp_guide_shows_how_to_pass_the_data_dir_to_the_server() -> None:
    from tests.docs_runner import shell_blocks

    guide = Path(__file__).resolve().parents[2] / "docs" / "coding-agents.md"
    registering = [b.code for b in shell_blocks(guide.read_text(encoding="utf-8")) if "claude mcp add" in b.code
                   and " serve" in b.code]
    assert registering and all("-e MISSION_MEMORY_DATA_DIR=" in code for code in registering), registering
