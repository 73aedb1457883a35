"""A process that queried an empty store keeps answering after another process writes vectors (issue 9)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import SearchFilter
from mission_memory.stores.sqlite import SqliteStore
from tests.conftest import GitRepo

ALL = SearchFilter(layers=tuple(Layer))


def _record(ref: str, text: str) -> Record:
    from datetime import UTC, datetime

    return Record.build(
        kind=RecordKind.DOC_CHUNK, title=ref, text=text,
        provenance=Provenance(kind=SourceKind.DOC, ref=ref, uri=f"file:///{ref}", mission="m",
                              time=datetime(2025, 1, 1, tzinfo=UTC)),
    )


def test_dense_search_on_an_empty_store_does_not_break_later_searches(tmp_path: Path) -> None:
    reader = SqliteStore(tmp_path / "m.db")
    query = np.ones(8, dtype=np.float32) / np.sqrt(8)
    assert reader.dense_search_by_layer(query, "model-a", ALL, 5) == {layer: [] for layer in Layer}
    writer = SqliteStore(tmp_path / "m.db")  # another connection, as another process would have
    vector = (np.ones((1, 8), dtype=np.float32) / np.sqrt(8))
    writer.upsert([_record("a.md", "alpha")], vector, "model-a")
    hits = reader.dense_search_by_layer(query, "model-a", ALL, 5)
    assert len(hits[Layer.DOMAIN]) == 1 and abs(hits[Layer.DOMAIN][0].score - 1.0) < 1e-5
    writer.close()
    reader.close()


def test_a_stdio_server_started_on_an_empty_data_dir_answers_after_an_ingest_in_another_process(
    mission_repo: GitRepo, data_dir: Path
) -> None:
    env = {"MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": os.environ["HOME"]}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mission_memory", "serve", "--transport", "stdio"], env=env
    )
    task = {"task_description": "Which database holds the upload ledger?", "token_budget": 1500}

    async def go() -> tuple[Any, Any]:
        async with Client(params) as client:
            before = await client.call_tool("workflow_memory_query", task)
            await anyio.to_thread.run_sync(lambda: subprocess.run(
                [sys.executable, "-m", "mission_memory", "ingest", str(mission_repo.root)],
                env=dict(os.environ, **env), check=True, capture_output=True,
            ))
            after = await client.call_tool("workflow_memory_query", task)
            return before, after

    before, after = anyio.run(go)
    assert not before.is_error
    assert not after.is_error, after.content[0].text
    assert "ADR-0002: Use SQLite in WAL mode for the embedded ledger" in after.content[0].text
