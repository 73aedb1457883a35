"""Decisions acknowledged while an ingest of the same mission runs are all still stored after it (issue 22
item 1, docs/adr/0056).

Real processes: the ingest is ``mission-memory ingest`` in a subprocess, held in its embedding phase
(after it has read the store, before it deletes) by an embeddings endpoint on loopback that answers its
passage requests only when the test says so; decisions arrive meanwhile through the real CLI
(``mission-memory decide``, some with ``--write-adr``) and through ``record_decision`` of the real MCP
server over streamable HTTP, driven by a real MCP client. Every acknowledged decision is counted
against what the store holds once the ingest has finished.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mission_memory.api import Memory
from mission_memory.records import RecordKind
from tests.conftest import GitRepo
from tests.security.held_embeddings import EmbeddingEndpoint, embedding_endpoint

CLI_DECISIONS = 4
ADR_DECISIONS = 2
MCP_DECISIONS = 46
MCP_CLIENTS = 2


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mission_memory", *args]


def _repository(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_git_repo("uploader")
    repo.commit("OPS-1: start", "2024-01-02T09:00:00+00:00", {
        "README.md": "# Uploader\n\nMoves records to the archive.\n",
        "docs/adr/0001-use-sqlite.md": "# 1. Use SQLite\n\nDate: 2024-01-02\n\n## Status\n\nAccepted\n\n"
                                       "## Context\n\nOne file.\n\n## Decision\n\nSQLite in WAL mode.\n",
    })
    for i in range(30):
        repo.commit(f"OPS-{i + 2}: runbook step {i}", f"2024-02-{i % 28 + 1:02d}T10:00:00+00:00",
                    {f"docs/runbook-{i}.md": f"# Runbook {i}\n\n## Restart\n\nRestart worker {i} nightly.\n"})
    return repo


@contextmanager
def _mcp_server(data_dir: Path, cwd: Path, env: dict[str, str]) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {**os.environ, **env, "MISSION_MEMORY_DATA_DIR": str(data_dir)}
    with subprocess.Popen(
        _cli("serve", "--transport", "http", "--port", str(port), "--write-tools", "--mission", "uploader"),
        cwd=cwd, env=environment, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    ) as server:
        try:
            assert server.stderr is not None
            for line in server.stderr:
                if "Uvicorn running on" in line:
                    break
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.terminate()
            server.wait(timeout=30)


def _decide(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(_cli("decide", *args, "--json"), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["source_key"])


def _mcp_decisions(url: str, first: int, count: int) -> list[str]:
    async def go() -> list[str]:
        keys = []
        async with Client(url) as client:
            for i in range(first, first + count):
                result = await client.call_tool("record_decision", {
                    "title": f"Agent decision {i} on retry budget", "decision": f"Retry {i} times.",
                    "rationale": f"measured failure rate {i}", "rejected": [{"option": "no retry", "why": "loses"}],
                })
                assert not result.is_error, result.content[0].text
                keys.append(str(json.loads(result.content[0].text)["source_key"]))
        return keys

    return anyio.run(go)


def _stored_decision_keys() -> set[str]:
    with Memory.open() as memory:
        return {r.source_key for r in memory.store.records_of_kind([RecordKind.DECISION.value], mission="uploader",
                                                                   limit=10_000)}


def test_no_decision_acknowledged_during_an_ingest_is_deleted_by_it(
    make_git_repo: Callable[[str], GitRepo], data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repository(make_git_repo)
    with embedding_endpoint() as free, embedding_endpoint(held=True) as held:
        for name, value in free.environment().items():
            monkeypatch.setenv(name, value)
        env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
        with Memory.open() as memory:  # ADR 0001 is stored before: one decision supersedes it meanwhile
            memory.ingest_repository(repo.root, mission="uploader")
        repo.commit("OPS-99: more runbooks", "2024-03-01T10:00:00+00:00",
                    {f"docs/later-{i}.md": f"# Later {i}\n\nDrain queue {i} first.\n" for i in range(10)})
        ingest = subprocess.Popen(_cli("ingest", str(repo.root), "--mission", "uploader", "--json"),
                                  env={**env, **held.environment()}, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            assert held.waiting.wait(timeout=60), "the ingest never reached its embedding phase"
            acknowledged = _record_while_held(repo, data_dir, env, held)
            assert ingest.poll() is None, "the ingest finished before the decisions were recorded"
        finally:
            held.released.set()
            out, err = ingest.communicate(timeout=120)
        assert ingest.returncode == 0, err
    report = json.loads(out)
    stored = _stored_decision_keys()
    assert "uploader:decision:docs/adr/0001-use-sqlite.md" in stored
    lost = [key for key in acknowledged if key not in stored]
    assert len(acknowledged) == CLI_DECISIONS + ADR_DECISIONS + MCP_DECISIONS
    assert lost == [], f"{len(lost)} of {len(acknowledged)} acknowledged decisions were deleted by the ingest"
    assert report["by_kind"]["removed"].get("decision", 0) == 0
    with Memory.open() as memory:
        [adr] = [r for r in memory.store.records_of_kind([RecordKind.DECISION.value], mission="uploader")
                 if r.source_key == "uploader:decision:docs/adr/0001-use-sqlite.md"]
    assert adr.attributes["status"] == "superseded", "the supersession recorded during the ingest was undone"
    assert adr.attributes["superseded_by"] == ["decision/operator-decision-0-keep-uploads-0-days"]


def _record_while_held(repo: GitRepo, data_dir: Path, env: dict[str, str], held: EmbeddingEndpoint) -> list[str]:
    cli_args = [
        [f"Operator decision {i}: keep uploads {i} days", "--decision", f"{i} days", "--rationale", "audit asks",
         "--mission", "uploader"]
        for i in range(CLI_DECISIONS)
    ]
    cli_args[0] += ["--supersedes", "0001"]
    acknowledged: list[str] = []
    share = MCP_DECISIONS // MCP_CLIENTS
    with _mcp_server(data_dir, repo.root, env) as url, ThreadPoolExecutor(max_workers=2 + MCP_CLIENTS) as pool:
        agents = [pool.submit(_mcp_decisions, url, c * share, share) for c in range(MCP_CLIENTS)]
        operators = list(pool.map(lambda args: _decide(args, repo.root, env), cli_args))
        for i in range(ADR_DECISIONS):  # one at a time: each takes the next ADR number
            operators.append(_decide(
                [f"Written decision {i}", "--decision", "write it down", "--rationale", "the file is canonical",
                 "--write-adr", str(repo.root / "docs" / "adr")], repo.root, env,
            ))
        acknowledged = operators + [key for agent in agents for key in agent.result(timeout=120)]
    assert not held.released.is_set()
    return acknowledged
