"""A decision's one vector sums three views of it (docs/adr/0075); the views decide when a vector is reused.

The curated passage (title, decision, context) alone misses how an ADR is written: a Ukrainian task
often matches the ADR's own opening words better than its decision sentence. The stored vector is
the normalised sum of the vectors of the curated passage, the title with the text as written, and
the text's head; every other kind keeps the vector of its passage alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import DECISION_HEAD_CHARS, Record, RecordKind
from tests.conftest import GitRepo

ADR = "docs/adr/0002-step-functions-for-backend-checks.md"
TEXT = (
    "# 2. Step functions for backend checks\n\nDate: 2023-01-18\n\n## Status\n\nAccepted\n\n## Context\n\n"
    "Once the files are uploaded, we run antivirus, a server side checksum and a file format check, and set "
    "file statuses from their results.\n\n## Decision\n\nThe backend checks run as one AWS Step Functions "
    "state machine instead of lambdas chained by SQS queues.\n\n## Consequences\n\n{consequences}\n"
)
README = "# Transfer service\n\nThe service takes digital records from government departments.\n"


def _stored(memory: Memory, kind: RecordKind) -> list[tuple[Record, np.ndarray]]:
    records = [r for batch in memory.store.iterate() for r in batch if r.kind is kind]
    vectors = memory.store.vectors_for([r.id for r in records], memory.embedder.model_id)
    return [(r, vectors[r.id]) for r in records]


def test_a_decisions_vector_is_the_normalised_sum_of_its_three_views_and_a_document_keeps_its_own(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path
) -> None:
    repo = make_git_repo("transfer")
    repo.commit("ADR 2: backend checks", "2023-01-18T10:00:00+00:00",
                {ADR: TEXT.format(consequences="One state machine shows every check's status."), "README.md": README})
    with Memory.open(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.ingest_repository(repo.root, mission="transfer")
        [(decision, vector)] = _stored(memory, RecordKind.DECISION)
        views = (decision.embedding_text, f"{decision.title}\n{decision.text}", decision.text[:DECISION_HEAD_CHARS])
        assert decision.secondary_passages == views[1:]
        each = memory.embedder.embed_passages(list(views))
        expected = each.sum(axis=0) / np.linalg.norm(each.sum(axis=0))
        assert np.allclose(vector, expected, atol=1e-5)
        assert float(vector @ each[0]) < 0.999  # not the curated passage's vector alone
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
        for chunk, chunk_vector in _stored(memory, RecordKind.DOC_CHUNK):
            assert chunk.secondary_passages == ()
            assert np.allclose(chunk_vector, memory.embedder.embed_passages([chunk.embedding_text])[0], atol=1e-5)


def test_an_adr_edited_outside_its_decision_and_context_gets_a_new_vector(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path
) -> None:
    """The curated passage of both versions is the same; the text as written is not, so the vector
    of the old version is not reused for the new one."""
    repo = make_git_repo("transfer")
    repo.commit("ADR 2: backend checks", "2023-01-18T10:00:00+00:00",
                {ADR: TEXT.format(consequences="One state machine shows every check's status.")})
    with Memory.open(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.ingest_repository(repo.root, mission="transfer")
        [(before, old_vector)] = _stored(memory, RecordKind.DECISION)
        repo.commit("ADR 2: the cost of the state machine", "2023-02-01T10:00:00+00:00",
                    {ADR: TEXT.format(consequences="Each state transition is billed; a month of uploads costs "
                                                   "about four pounds.")})
        memory.ingest_repository(repo.root, mission="transfer")
        [(after, new_vector)] = _stored(memory, RecordKind.DECISION)
    assert after.id != before.id and after.embedding_text == before.embedding_text
    assert not np.allclose(new_vector, old_vector, atol=1e-4)
    views = [after.embedding_text, *after.secondary_passages]
    with Memory.open(load_settings(data_dir=tmp_path / "check")) as fresh:
        each = fresh.embedder.embed_passages(views)
    assert np.allclose(new_vector, each.sum(axis=0) / np.linalg.norm(each.sum(axis=0)), atol=1e-5)
