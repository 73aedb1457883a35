"""Corrections imported from the prompt corpus and from Claude Code transcripts: found by the one
detector, stored as practitioner records with stable ids, so a re-run adds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.capture.redaction import redact
from mission_memory.cli.app import app
from mission_memory.corrections.detector import (
    category_of,
    component_of,
    detect_transcript_corrections,
    prompt_fingerprint,
)
from mission_memory.metrics.transcript_sessions import read_sessions
from tests.conftest import GitRepo
from tests.corrections.captured_prompts import capture_prompt
from tests.metrics.transcript_builder import REJECTION, TranscriptWriter, text, tool, usage


@pytest.fixture
def ingested(mission_repo: GitRepo) -> GitRepo:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    return mission_repo


def write_reworking_session(path: Path, root: Path) -> Path:
    """Edit src/ledger.py, a redirecting prompt, the same file edited again; then a refused Bash call."""
    w = TranscriptWriter(path, "sess-rework", cwd=str(root))
    w.prompt("Move the ledger to a new table")
    w.call("m1", [tool("e1", "Edit", file_path=f"{root}/src/ledger.py", old_string="a", new_string="b")], usage(3, 9))
    w.result("e1", "The file has been updated.")
    w.call("m2", [text("Done.")], usage(3, 9))
    w.prompt("no, don't rename the table, keep the old schema")
    w.call("m3", [tool("e2", "Edit", file_path=f"{root}/src/ledger.py", old_string="b", new_string="a")], usage(3, 9))
    w.result("e2", "The file has been updated.")
    w.call("m4", [tool("b1", "Bash", command="rm -rf build")], usage(3, 9))
    w.result("b1", REJECTION, is_error=True, tool_use_result="User rejected tool use")
    return w.write()


def test_the_detector_finds_rejections_redirects_and_reworked_edits_with_fields_only(tmp_path: Path) -> None:
    root = tmp_path / "uploader"
    path = write_reworking_session(tmp_path / "projects" / "x" / "sess-rework.jsonl", root)
    [session] = read_sessions([path])[0]
    found = detect_transcript_corrections(session, known_component=lambda name: name == "src")
    assert [(d.correction_class, d.category, d.outcome, d.components) for d in found] == [
        ("redirecting-prompt", "data", "modified", ("src",)),
        ("tool-rejected", "command", "rejected", ()),
        ("edit-reworked", "file-edit", "modified", ("src",)),
    ]
    assert len({d.anchor for d in found}) == 3


@pytest.mark.parametrize(
    ("words", "category"),
    [
        ("no, revert that change", "revert"),
        ("don't touch the tests", "tests"),
        ("ні, відкоти це", "revert"),
        ("не чіпай цей файл", "scope"),
        ("stop, you broke the database migration", "data"),
        ("no, that's not what I asked", "approach"),
    ],
)
def test_the_category_comes_from_a_closed_keyword_taxonomy(words: str, category: str) -> None:
    assert category_of(words) == category


def test_a_component_is_a_top_level_folder_the_memory_knows_and_nothing_else() -> None:
    def known(name: str) -> bool:
        return name == "src"

    assert component_of("/repo/src/ledger.py", "/repo", known) == "src"
    assert component_of("src/ledger.py", None, known) == "src"
    assert component_of("/repo/secret-name/x.py", "/repo", known) is None
    assert component_of("/elsewhere/src/x.py", "/repo", known) is None
    assert component_of("/repo/README.md", "/repo", known) is None


def test_prompts_and_transcripts_import_once_and_a_rerun_adds_nothing(ingested: GitRepo, tmp_path: Path) -> None:
    hook_dir = tmp_path / "hook-data"
    root = ingested.root
    capture_prompt(hook_dir, "2025-10-10T09:00:00+00:00", "Add retries to the uploader", session="s1", cwd=root)
    capture_prompt(hook_dir, "2025-10-10T09:05:00+00:00", "no, don't change src/ledger.py, revert it",
                   session="s1", cwd=root)
    capture_prompt(hook_dir, "2025-10-10T09:09:00+00:00", "ні, не треба міняти тести", session="s1", cwd=root)
    capture_prompt(hook_dir, "2025-10-10T09:10:00+00:00", "looks good, go ahead", session="s1", cwd=root)
    transcript = write_reworking_session(tmp_path / "projects" / "x" / "sess-rework.jsonl", root)
    runner = CliRunner()
    arguments = ["corrections", "import", "--prompts", str(hook_dir / "prompts.git"),
                 "--transcripts", str(transcript), "--operator", "alice@example.org", "--json"]
    first = runner.invoke(app, arguments)
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert report["sources"]["prompt"]["found"] == report["sources"]["prompt"]["added"] == 2
    assert report["sources"]["transcript"]["found"] == report["sources"]["transcript"]["added"] == 3
    assert report["labels"] == {"unknown": 5}  # no query was ever asked
    second = json.loads(runner.invoke(app, arguments).stdout)
    assert second["sources"]["prompt"]["added"] == second["sources"]["transcript"]["added"] == 0
    assert second["sources"]["prompt"]["unchanged"] == 2 and second["sources"]["transcript"]["unchanged"] == 3
    with Memory.open() as memory:
        corrections = memory.corrections()
    assert len(corrections) == 5
    by_source = {(c.source.value, c.correction_class, c.category, c.component) for c in corrections}
    assert ("prompt", "prompt-correction", "revert", "src") in by_source
    assert ("prompt", "prompt-correction", "tests", None) in by_source
    assert all(c.mission == "uploader" for c in corrections)
    # a captured prompt names its operator (git user.email of its repository); a transcript does not
    assert {c.operator for c in corrections if c.source.value == "prompt"} == {"operator@example.org"}
    assert {c.operator for c in corrections if c.source.value == "transcript"} == {"alice@example.org"}
    assert all(c.summary.startswith("Operator ") for c in corrections)


def test_a_missing_prompt_repository_or_transcript_path_is_a_clear_error(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["corrections", "import", "--prompts", str(tmp_path / "nope.git")])
    assert missing.exit_code == 1 and "prompt repository" in missing.output and "does not exist" in missing.output
    gone = runner.invoke(app, ["corrections", "import", "--transcripts", str(tmp_path / "none")])
    assert gone.exit_code == 1 and "does not exist" in gone.output


def test_the_default_import_reads_the_hooks_prompt_repository_in_the_data_dir(
    ingested: GitRepo, data_dir: Path
) -> None:
    capture_prompt(data_dir, "2025-10-10T09:00:00+00:00", "Refactor the uploader", session="s9", cwd=ingested.root)
    capture_prompt(data_dir, "2025-10-10T09:01:00+00:00", "stop, that's wrong", session="s9", cwd=ingested.root)
    with Memory.open() as memory:
        report = memory.import_corrections()
    assert report.sources["prompt"].added == 1 and "transcript" not in report.sources


def test_a_prompt_captured_by_the_hook_and_present_in_a_transcript_is_one_correction(
    ingested: GitRepo, tmp_path: Path
) -> None:
    root = ingested.root
    hook_dir = tmp_path / "hook-data"
    # the same two prompts the transcript holds, captured by the hook in the same session
    capture_prompt(hook_dir, "2025-10-10T09:00:00+00:00", "Move the ledger to a new table",
                   session="sess-rework", cwd=root)
    capture_prompt(hook_dir, "2025-10-10T09:02:00+00:00", "no, don't rename the table, keep the old schema",
                   session="sess-rework", cwd=root)
    transcript = write_reworking_session(tmp_path / "projects" / "x" / "sess-rework.jsonl", root)
    prompts = str(hook_dir / "prompts.git")
    with Memory.open() as memory:
        # transcripts first: the redirecting prompt is stored from the transcript
        alone = memory.import_corrections(transcripts=[transcript], operator="alice")
        assert alone.sources["transcript"].added == 3
        # then the prompt corpus: the same prompt keeps its id, and the hook's copy replaces the transcript's
        captured = memory.import_corrections(prompts=prompts, operator="alice")
        assert (captured.sources["prompt"].added, captured.sources["prompt"].replaced) == (0, 1)
        # both again: nothing added, nothing replaced, the transcript's copy is left out and counted
        both = memory.import_corrections(prompts=prompts, transcripts=[transcript], operator="alice")
        assert both.sources["transcript"].skipped == {"captured-by-the-prompt-hook": 1}
        assert both.sources["transcript"].added == both.sources["transcript"].replaced == 0
        assert both.sources["prompt"].added == both.sources["prompt"].replaced == 0
        corrections = memory.corrections()
    assert sorted((c.source.value, c.correction_class) for c in corrections) == [
        ("prompt", "prompt-correction"), ("transcript", "edit-reworked"), ("transcript", "tool-rejected")]


def test_the_prompt_fingerprint_survives_the_hooks_redaction_and_whitespace() -> None:
    raw = "no,  use the token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + " from the vault instead"
    redacted, counts = redact(raw)
    assert counts and redacted != raw
    reflowed = " NO, use the token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n from the vault instead"
    assert prompt_fingerprint(raw) == prompt_fingerprint(redacted) == prompt_fingerprint(reflowed)
    assert prompt_fingerprint(raw) != prompt_fingerprint("no, use the other one")
