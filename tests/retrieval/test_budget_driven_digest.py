"""A budget-driven digest: the token budget, not the entry cap, decides how many entries it holds (docs/adr/0067)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from tests.conftest import GitRepo

SUBJECTS = [
    "Retry failed uploads with exponential backoff in the ingest worker",
    "Cap upload retries at five attempts before marking the transfer failed",
    "Add jitter to the backoff between upload retries so workers do not retry in lockstep",
    "Log every failed upload attempt with the retry count and the next delay",
    "Resume a failed multipart upload from its last confirmed part instead of starting over",
    "Retry uploads that fail with a throttling error after the delay the server asks for",
    "Stop retrying uploads that fail checksum validation: they will never succeed",
    "Move failed uploads to a dead-letter queue after the last retry",
    "Alert the on-call engineer when upload failures exceed ten per minute",
    "Expose upload retry counts as a Prometheus metric per bucket",
    "Double the upload timeout on each retry up to two minutes",
    "Retry failed uploads of thumbnails separately from the originals",
    "Keep the exponential backoff state across worker restarts in Redis",
    "Document the upload retry policy for operators in the runbook",
    "Test the upload retry loop against a server that fails the first three attempts",
    "Reset the backoff delay after a successful upload",
]
TASK = "retry failed uploads with exponential backoff"


@pytest.fixture
def retry_repo(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    """Sixteen commits retrying failed uploads with backoff, each with its own body, and one unrelated."""
    repo = make_git_repo("uploader")
    repo.commit("Initial README", "2024-01-02T09:00:00+00:00", {"README.md": "# Uploader\n\nMoves files.\n"})
    for day, subject in enumerate(SUBJECTS, start=3):
        repo.commit(f"Retry failed uploads with exponential backoff, part {day - 2}\n\n{subject}.",
                    f"2024-01-{day:02d}T09:00:00+00:00", {f"upload/step_{day}.py": f"STEP = {day}\n"})
    repo.commit("Rename the colour palette of the dashboard", "2024-02-01T09:00:00+00:00",
                {"ui/palette.css": "body { color: teal; }\n"})
    return repo


def test_the_budget_not_a_ten_entry_cap_decides_the_entry_count(retry_repo: GitRepo, tmp_path: Path) -> None:
    with Memory.open(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.ingest_repository(retry_repo.root, mission="uploader")
        roomy = memory.query(TASK, token_budget=8000, filters={"mission": "uploader"})
        tight = memory.query(TASK, token_budget=900, filters={"mission": "uploader"})
    assert len(roomy.entries) > 10  # more of the retry commits than a ten-entry cap held
    assert roomy.tokens_used <= 8000
    assert "cap" not in roomy.text.rsplit("\n", 1)[-1]
    assert len(tight.entries) < len(roomy.entries) and tight.omitted > 0
    assert "omitted to stay within the token budget" in tight.text


def test_the_footer_says_when_the_cap_and_not_the_budget_stopped_the_digest(
    retry_repo: GitRepo, tmp_path: Path
) -> None:
    with Memory.open(load_settings(data_dir=tmp_path / "data", max_digest_entries=5)) as memory:
        memory.ingest_repository(retry_repo.root, mission="uploader")
        capped = memory.query(TASK, token_budget=8000, filters={"mission": "uploader"})
        tight = memory.query(TASK, token_budget=600, filters={"mission": "uploader"})
    assert len(capped.entries) == 5 and capped.omitted == 0
    closing = capped.text.rstrip().rsplit("\n", 1)[-1]
    assert "the 5-entry cap, not the token budget, stopped this digest" in closing
    assert "MISSION_MEMORY_MAX_DIGEST_ENTRIES" in closing
    assert capped.tokens_used <= 8000
    # when the budget is what stops it, the footer says so and names no cap
    assert "cap" not in tight.text.rstrip().rsplit("\n", 1)[-1] and tight.omitted > 0
