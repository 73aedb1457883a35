"""Every client logs who asked and from where: session, operator, mission and client (issue 8 item 3).

One test per shell, each run the way it runs for real: the CLI through CliRunner and as the installed
console script, the MCP server over stdio and over streamable HTTP with the SDK's client, and the
SessionStart hook as a subprocess fed Claude Code's stdin JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client as McpClient
from mcp.client.stdio import StdioServerParameters
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.hook import installer
from mission_memory.retrieval_events import Client, RetrievalEvent
from tests.conftest import GitRepo
from tests.mcp_http_server import http_mcp_server

CLI = Path(sys.executable).with_name("mission-memory")
TASK = "Which database holds the upload ledger?"


@pytest.fixture
def ingested(mission_repo: GitRepo) -> GitRepo:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    return mission_repo


def _latest() -> RetrievalEvent:
    with Memory.open() as memory:
        return memory.retrieval_events(1)[0]


def test_the_cli_logs_the_operator_from_the_environment_and_events_json_shows_the_origin(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice")
    runner = CliRunner()
    done = runner.invoke(app, ["query", TASK, "--json"])
    assert done.exit_code == 0, done.output
    listed = runner.invoke(app, ["events", "--json"])
    assert listed.exit_code == 0, listed.output
    event = json.loads(listed.stdout)[0]
    assert event["operator"] == "alice" and event["client"] == "cli"
    assert event["mission"] == "uploader" and event["session_id"]
    assert event["query"] == TASK


def test_the_installed_cli_takes_the_operator_from_git_user_email_of_the_working_repository(
    ingested: GitRepo, data_dir: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MISSION_MEMORY_OPERATOR"}
    env["MISSION_MEMORY_DATA_DIR"] = str(data_dir)
    done = subprocess.run([str(CLI), "query", TASK, "--mission", "uploader", "--json"], cwd=ingested.root,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    event = _latest()
    assert event.operator == "operator@example.org"  # git config user.email of the mission repository
    assert event.client is Client.CLI and event.mission == "uploader"
    assert event.id == json.loads(done.stdout)["retrieval_event_id"]


def test_the_stdio_mcp_server_logs_client_mcp_with_one_session_per_server_process(
    ingested: GitRepo, data_dir: Path
) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mission_memory", "serve", "--transport", "stdio"],
        env={"MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": os.environ["HOME"], "MISSION_MEMORY_OPERATOR": "bob",
             "MISSION_MEMORY_EMBEDDER_CACHE_DIR": os.environ["MISSION_MEMORY_EMBEDDER_CACHE_DIR"]},
    )

    async def go() -> None:
        async with McpClient(params) as client:
            for _ in range(2):
                result = await client.call_tool("workflow_memory_query", {"task_description": TASK})
                assert not result.is_error

    anyio.run(go)
    with Memory.open() as memory:
        events = memory.retrieval_events(2)
    assert {e.client for e in events} == {Client.MCP}
    assert {e.operator for e in events} == {"bob"}
    assert len({e.session_id for e in events}) == 1 and events[0].session_id


def test_the_http_mcp_server_logs_the_streamable_http_session_id(ingested: GitRepo, data_dir: Path) -> None:
    with http_mcp_server(data_dir, MISSION_MEMORY_OPERATOR="carol") as url:

        async def go() -> Any:
            async with McpClient(url) as client:
                first = await client.call_tool("workflow_memory_query", {"task_description": TASK})
                second = await client.call_tool("workflow_memory_query", {"task_description": TASK})
                return first, second

        first, second = anyio.run(go)
    assert not first.is_error and not second.is_error
    with Memory.open() as memory:
        events = memory.retrieval_events(2)
    assert {e.client for e in events} == {Client.MCP} and {e.operator for e in events} == {"carol"}
    session_ids = {e.session_id for e in events}
    assert len(session_ids) == 1
    (session_id,) = session_ids
    assert session_id and len(session_id) >= 16  # the transport's Mcp-Session-Id, one per connection


def test_the_session_start_hook_logs_claude_codes_session_id(ingested: GitRepo, data_dir: Path) -> None:
    payload = json.dumps({"session_id": "claude-session-42", "cwd": str(ingested.root),
                          "hook_event_name": "SessionStart", "source": "startup"}).encode()
    done = subprocess.run(installer.session_start_command(data_dir), shell=True, input=payload,
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout
    event = _latest()
    assert event.client is Client.HOOK and event.session_id == "claude-session-42"
    assert event.mission == "uploader" and event.operator


def test_direct_api_use_defaults_to_client_api_and_rejects_an_unknown_client(ingested: GitRepo) -> None:
    from mission_memory.errors import InputError

    with Memory.open() as memory:
        digest = memory.query(TASK, session_id="s-9")
        event = memory.retrieval_events(1)[0]
        assert event.id == digest.retrieval_event_id
        assert event.client is Client.API and event.session_id == "s-9"
        with pytest.raises(InputError, match="client 'robot'"):
            memory.query(TASK, client="robot")


def test_the_event_names_one_mission_or_none_when_the_answer_spans_several(
    ingested: GitRepo, make_git_repo: Callable[[str], GitRepo]
) -> None:
    other = make_git_repo("archive")
    other.commit("Archive ledger exports nightly", "2024-05-01T10:00:00+00:00",
                 {"README.md": "# Archive\n\nThe upload ledger database is exported every night.\n"})
    with Memory.open() as memory:
        memory.ingest_repository(other.root)
        spanning = memory.query("upload ledger database")
        assert {e.record.provenance.mission for e in spanning.entries} == {"uploader", "archive"}
        assert memory.retrieval_events(1)[0].mission is None
        memory.query("upload ledger database", filters={"mission": "archive"})
        assert memory.retrieval_events(1)[0].mission == "archive"
