"""A captured prompt that names a record (ADR 0009, ADR-0009, its file) expects that record: the label
says whether the digest it follows served it, and lists no unrelated record as missed (ADR 0082)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.records import RecordKind
from tests.conftest import GitRepo
from tests.corrections.captured_prompts import capture_prompt


@pytest.fixture
def ingested(mission_repo: GitRepo) -> GitRepo:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    return mission_repo


def _adr_id(memory: Memory, number: int) -> str:
    decisions = memory.store.records_of_kind([RecordKind.DECISION.value], mission="uploader")
    return next(r.id for r in decisions if r.attributes.get("number") == number)


def _at(minutes: int) -> str:
    return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat()


def _import(hook_dir: Path) -> None:
    done = CliRunner().invoke(app, ["corrections", "import", "--prompts", str(hook_dir / "prompts.git"),
                                    "--mission", "uploader", "--json"])
    assert done.exit_code == 0, done.output


def test_a_prompt_naming_an_adr_the_digest_served_is_not_a_miss(ingested: GitRepo, tmp_path: Path) -> None:
    hook_dir = tmp_path / "hook-data"
    capture_prompt(hook_dir, _at(-2), "Which database should the upload ledger use?", session="sess-p",
                   cwd=ingested.root)
    with Memory.open() as memory:
        digest = memory.query("Why does the upload ledger use SQLite in WAL mode?", token_budget=400,
                              session_id="sess-p")
        adr2 = _adr_id(memory, 2)
    assert [e.record.id for e in digest.entries] == [adr2]  # at rank 1, and alone: a small budget
    capture_prompt(hook_dir, _at(1), "No, stop, that is wrong: the ledger lives in SQLite per ADR 0002, keep it",
                   session="sess-p", cwd=ingested.root)

    _import(hook_dir)

    with Memory.open() as memory:
        [correction] = memory.corrections()
    assert correction.label.retrieval_event_id == digest.retrieval_event_id
    assert (correction.label.retrieval_caused.value, correction.label.missed_record_ids) == ("false", ())
    assert correction.expected == ("ADR-0002",)


def test_a_prompt_naming_an_adrs_file_the_digest_left_out_misses_that_record_only(
    ingested: GitRepo, tmp_path: Path
) -> None:
    hook_dir = tmp_path / "hook-data"
    capture_prompt(hook_dir, _at(-2), "Back up the ledger every night", session="sess-q", cwd=ingested.root)
    with Memory.open() as memory:
        digest = memory.query("How are the nightly backups of the ledger copied?", scope="domain",
                              session_id="sess-q")
        adr2 = _adr_id(memory, 2)
    assert adr2 not in [e.record.id for e in digest.entries]
    capture_prompt(hook_dir, _at(1), "no, that's wrong: read docs/adr/0002-use-sqlite-in-wal-mode.md first",
                   session="sess-q", cwd=ingested.root)

    _import(hook_dir)

    with Memory.open() as memory:
        [correction] = memory.corrections()
    assert correction.label.retrieval_event_id == digest.retrieval_event_id
    assert (correction.label.retrieval_caused.value, correction.label.missed_record_ids) == ("true", (adr2,))
    assert correction.expected == ("docs/adr/0002-use-sqlite-in-wal-mode.md",)


def test_a_prompt_naming_no_stored_record_keeps_no_reference(ingested: GitRepo, tmp_path: Path) -> None:
    hook_dir = tmp_path / "hook-data"
    capture_prompt(hook_dir, _at(-2), "Tidy the uploader", session="sess-r", cwd=ingested.root)
    capture_prompt(hook_dir, _at(1), "no, that's wrong: ADR 0042 and docs/secret-plan.md say otherwise",
                   session="sess-r", cwd=ingested.root)

    _import(hook_dir)

    with Memory.open() as memory:
        [correction] = memory.corrections()
    assert correction.expected == ()  # nothing the memory does not hold reaches the record (ADR 0025)
