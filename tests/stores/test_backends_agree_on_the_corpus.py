"""A pull over the same content gives the same entries on SQLite and on Qdrant.

The corpus repository (tests/corpora/tdr-docs.bundle: 39 ADRs, 669 commits, its documents) is exported from its SQLite memory and
imported into Qdrant's local mode; then the ADR-topic questions of ``benchmarks/eval/`` run on both.
The Qdrant store's BM25 gives FTS5's rows, order and scores (docs/adr/0043), and the dense side
is the same vectors searched exactly, so every digest has the same entries in the same order.
``benchmarks/bench_backend_agreement.py`` prints the figures.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.stores.registry import open_store
from mission_memory.stores.transfer import export_memory, import_memory
from tests.conftest import IngestedCorpus

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "eval" / "questions-tdr-docs.jsonl"

@pytest.fixture(scope="module")
def on_qdrant(tdr_corpus: IngestedCorpus, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """The corpus memory moved into Qdrant local mode (same embedder, same settings)."""
    folder = tmp_path_factory.mktemp("tdr-qdrant")
    with (folder / "tdr.jsonl").open("w", encoding="utf-8") as out:
        export_memory(tdr_corpus.memory.store, out, mission="tdr")
    store = open_store("qdrant+memory:", folder)
    import_memory(store, folder / "tdr.jsonl")
    memory = Memory(tdr_corpus.memory.settings, embedder=tdr_corpus.memory.embedder, store=store)
    yield memory
    memory.close()


def _top_decisions(memory: Memory, question: str) -> tuple[list[str], list[str]]:
    digest = memory.query(question, token_budget=6000, filters={"mission": "tdr"})
    entries = [e.record for e in digest.entries]
    return [r.id for r in entries], [r.provenance.ref for r in entries if r.kind.value == "decision"][:3]


def test_a_pull_on_qdrant_returns_the_entries_a_pull_on_sqlite_returns_for_the_adr_topic_tasks(
    tdr_corpus: IngestedCorpus, on_qdrant: Memory
) -> None:
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    hits = {"sqlite": 0, "qdrant": 0}
    for item in questions:
        sqlite_ids, sqlite_refs = _top_decisions(tdr_corpus.memory, item["question"])
        qdrant_ids, qdrant_refs = _top_decisions(on_qdrant, item["question"])
        assert qdrant_ids == sqlite_ids, item["id"]
        hits["sqlite"] += any(ref.endswith(item["target"]) for ref in sqlite_refs)
        hits["qdrant"] += any(ref.endswith(item["target"]) for ref in qdrant_refs)
    assert hits["qdrant"] == hits["sqlite"] >= len(questions) - 3, hits
