"""``record_correction`` over a real stdio MCP connection (``serve --write-tools``) carries the session of
that connection's queries, so it links to the query before it (ADR 0082)."""

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
from mission_memory.records import RecordKind
from tests.conftest import GitRepo


@pytest.fixture
def ingested(mission_repo: GitRepo) -> GitRepo:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    return mission_repo


def _stdio(data_dir: Path, cwd: Path, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """The calls' results over one connection to ``mission-memory serve --write-tools`` on stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mission_memory", "serve", "--transport", "stdio", "--write-tools"],
        env={"MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": os.environ["HOME"],
             "MISSION_MEMORY_OPERATOR": "alice@example.org",
             "MISSION_MEMORY_EMBEDDER_CACHE_DIR": os.environ["MISSION_MEMORY_EMBEDDER_CACHE_DIR"]},
        cwd=str(cwd),
    )

    async def go() -> list[Any]:
        async with Client(params) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(go)


CORRECTION = {
    "correction_class": "missed-decision", "category": "data", "outcome": "modified",
    "summary": "Offline field teams keep it in SQLite", "expected": ["ADR-2"],
}


def test_a_correction_over_stdio_carries_the_connections_session_and_links_to_its_query(
    ingested: GitRepo, data_dir: Path
) -> None:
    queried, recorded = _stdio(
        data_dir, ingested.root,
        ("workflow_memory_query", {"task_description": "How are the nightly backups copied?", "scope": "domain"}),
        ("record_correction", CORRECTION),
    )
    assert not queried.is_error and not recorded.is_error, recorded.content[0].text
    with Memory.open() as memory:
        [event] = memory.retrieval_events()
        [correction] = memory.corrections()
        decisions = memory.store.records_of_kind([RecordKind.DECISION.value], mission="uploader")
    adr2 = next(r.id for r in decisions if r.attributes.get("number") == 2)
    assert event.session_id is not None and correction.session_id == event.session_id
    assert correction.label.retrieval_event_id == event.id
    assert (correction.label.retrieval_caused.value, correction.label.missed_record_ids) == ("true", (adr2,))


def test_two_stdio_connections_are_two_sessions(ingested: GitRepo, data_dir: Path) -> None:
    query = {"task_description": "Which database holds the upload ledger?"}
    _stdio(data_dir, ingested.root, ("workflow_memory_query", query), ("workflow_memory_query", query))
    [recorded] = _stdio(data_dir, ingested.root, ("record_correction", CORRECTION))
    assert not recorded.is_error, recorded.content[0].text
    with Memory.open() as memory:
        second, first = memory.retrieval_events()
        [correction] = memory.corrections()
    assert first.session_id == second.session_id  # one connection, one session
    # a later connection is another session: it asked nothing, so the correction links to nothing
    assert correction.session_id not in (None, first.session_id)
    assert correction.label.retrieval_caused.value == "unknown"
