"""Reading the captured corpus back, and forgetting prompts for real."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

import pytest

from mission_memory.errors import NotFound
from mission_memory.prompts.corpus import PromptCorpus


def objects_in(repo) -> set[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(repo), "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    return set(out.split())


def test_missing_repository_is_an_empty_corpus(tmp_path):
    assert PromptCorpus(tmp_path / "nothing.git").prompts() == []


def test_prompts_read_back_in_time_order_with_their_fields(capture, corpus):
    capture("2025-03-04T10:00:05+00:00", "друге", session="b")
    capture("2025-03-04T10:00:00+00:00", "перше", session="a", cwd="/work/beta")
    first, second = corpus.prompts()
    assert (first.prompt, second.prompt) == ("перше", "друге")
    assert first.timestamp == datetime(2025, 3, 4, 10, 0, 0, tzinfo=UTC)
    assert first.repository_name == "beta" and first.session_id == "a"
    assert first.ref == f"refs/prompts/{first.prompt_id}" and len(first.commit) == 40


def test_forget_session_deletes_refs_and_prunes_objects(capture, corpus):
    for i in range(3):
        capture(f"2025-03-04T10:0{i}:00+00:00", f"secret plan {i}", session="doomed")
    capture("2025-03-04T11:00:00+00:00", "keep me", session="kept")
    doomed = [p for p in corpus.prompts() if p.session_id == "doomed"]
    before = objects_in(corpus.repo)
    assert {p.commit for p in doomed} <= before

    forgotten = corpus.forget(sessions=["doomed"])

    assert sorted(forgotten) == sorted(p.prompt_id for p in doomed)
    assert [p.prompt for p in corpus.prompts()] == ["keep me"]
    after = objects_in(corpus.repo)
    assert not {p.commit for p in doomed} & after
    assert len(before) - len(after) == 9  # commit, tree and blob of each
    dump = subprocess.run(
        ["git", "--git-dir", str(corpus.repo), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    ).stdout
    assert b"secret plan" not in dump
    subprocess.run(
        ["git", "--git-dir", str(corpus.repo), "fsck", "--strict"], check=True, capture_output=True
    )


def test_forget_by_prompt_id_and_commit_prefix(capture, corpus):
    capture("2025-03-04T10:00:00+00:00", "one")
    capture("2025-03-04T10:01:00+00:00", "two")
    capture("2025-03-04T10:02:00+00:00", "three")
    one, two, _ = corpus.prompts()
    corpus.forget(prompt_ids=[one.prompt_id, two.commit[:10]])
    assert [p.prompt for p in corpus.prompts()] == ["three"]


def test_hook_keeps_writing_after_a_forget_packed_the_repository(capture, corpus):
    capture("2025-03-04T10:00:00+00:00", "old", session="x")
    capture("2025-03-04T10:01:00+00:00", "kept")
    corpus.forget(sessions=["x"])
    capture("2025-03-04T10:02:00+00:00", "new")
    assert [p.prompt for p in corpus.prompts()] == ["kept", "new"]


def test_forgetting_something_unknown_raises_and_deletes_nothing(capture, corpus):
    capture("2025-03-04T10:00:00+00:00", "stay")
    with pytest.raises(NotFound, match="no-such-session"):
        corpus.forget(sessions=["no-such-session"])
    with pytest.raises(NotFound):
        corpus.forget(prompt_ids=["s-1/123-456"])
    assert len(corpus.prompts()) == 1
