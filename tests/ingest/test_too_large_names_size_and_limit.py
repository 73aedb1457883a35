"""A file skipped as too large says how large it is and what the limit is (and which setting sets it).

A user read ``docs/huge.md: too-large`` and could not tell by how much, nor how to let it in. The reason
code stays ``too-large`` (reports count by it); the detail carries the size and the limit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.cli.app import main
from mission_memory.ingest.file_reading import read_inside
from tests.conftest import GitRepo

LIMIT = 4000


def test_the_report_and_the_command_name_the_size_and_the_limit(
        mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    mission_repo.commit("Add a huge page", "2024-11-01T00:00:00+00:00", {"docs/huge.md": "# Huge\n\n" + "x" * 5000})
    monkeypatch.setenv("MISSION_MEMORY_MAX_FILE_BYTES", str(LIMIT))
    with Memory.open() as memory:
        report = memory.ingest_repository(mission_repo.root)
    huge = next(s for s in report.skipped if s["path"] == "docs/huge.md")
    assert huge["reason"] == "too-large"
    assert huge["detail"] == "5,008 bytes; the limit is 4,000 bytes (MISSION_MEMORY_MAX_FILE_BYTES)"
    monkeypatch.setattr(sys, "argv", ["mission-memory", "ingest", str(mission_repo.root)])
    try:
        main()
    except SystemExit as exited:
        assert exited.code in (0, None)
    out = capsys.readouterr().out
    assert "docs/huge.md: too-large (5,008 bytes; the limit is 4,000 bytes (MISSION_MEMORY_MAX_FILE_BYTES))" in out


def test_a_file_whose_size_is_not_known_says_more_than_the_limit(tmp_path: Path) -> None:
    # a FIFO-like source cannot be tested here without blocking; a file growing past what stat said is the
    # same case: the size read, not the size stated, decides, and only the limit + 1 bytes are read
    (tmp_path / "over.md").write_bytes(b"x" * 150)
    read = read_inside(tmp_path, "over.md", 100)
    assert read.reason == "too-large" and read.size == 150
