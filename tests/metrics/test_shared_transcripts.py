"""The reader and metrics on the real Claude Code 2.0 transcripts in tests/corpora/transcripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from mission_memory.metrics.session_metrics import measure_sessions, summarize_sessions
from mission_memory.metrics.transcript_corrections import find_corrections
from mission_memory.metrics.transcript_sessions import read_sessions


@pytest.fixture
def transcripts(corpora: Path) -> Path:
    """The folder of the four real transcripts."""
    return corpora / "transcripts"


def test_real_transcripts_give_t_from_the_first_call_of_each_session(transcripts: Path) -> None:
    sessions, report = read_sessions([transcripts])
    metrics = {Path(m.path).stem: m for m in measure_sessions(sessions)}
    # first assistant record of each file: input + cache creation + cache read
    assert {name: m.T for name, m in metrics.items()} == {
        "compact": 10 + 2128 + 13522,
        "crud": 4 + 8976 + 5302,
        "subagent": 10 + 10348 + 5302,
        "todos": 4 + 699 + 13565,
    }
    assert report.to_dict() == {
        "files": 4,
        "sessions": 4,
        "orphan_subagent_files": 0,
        "non_json_lines": 0,
        "truncated_last_lines": 0,
        "unknown_types": {},
        "not_transcripts": [],
    }


def test_real_transcripts_count_each_repeated_api_call_once_and_only_real_prompts_as_rounds(transcripts: Path) -> None:
    sessions, _ = read_sessions([transcripts])
    metrics = {Path(m.path).stem: m for m in measure_sessions(sessions)}
    crud = metrics["crud"]
    assert crud.api_calls == 10  # 16 assistant records, 10 distinct message ids
    assert crud.init_ended_by_edit is True  # the Write comes before the only Read
    assert (crud.K, crud.W) == (0, None)
    assert crud.files_edited == ("/Users/operator/dev/vibeinsights/fixtures/claudecode/JOKE.md",)
    # /clear, /compact, their output and the compaction summary are not operator rounds
    assert metrics["compact"].rounds == 1
    # the 1.x-style inline subagent: its call counts as a subagent call, its prompt is not a round
    assert (metrics["subagent"].api_calls, metrics["subagent"].subagent_api_calls) == (3, 1)
    assert metrics["subagent"].rounds == 1
    assert metrics["subagent"].session_id == "609efeca-2f51-4118-b077-e91c9fe63f73"


def test_real_transcripts_summarise_and_hold_no_corrections(transcripts: Path) -> None:
    sessions, _ = read_sessions([transcripts])
    summary = summarize_sessions(measure_sessions(sessions))
    assert summary.N == 4
    assert summary.T.median == pytest.approx((14282 + 15660) / 2)
    assert summary.W.n == 0
    assert find_corrections(sessions) == []
