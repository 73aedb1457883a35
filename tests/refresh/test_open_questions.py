"""Open questions: new TODOs from a real git range, unanswered comment questions, proposed decisions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from mission_memory.errors import InputError
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.refresh.open_questions import (
    OpenQuestion,
    added_todos,
    find_open_questions,
    questions_in_comments,
    render_open_questions,
)
from mission_memory.trackers.base import TaskComment


def _at(day: int, hour: int = 12) -> datetime:
    return datetime(2025, 1, day, hour, tzinfo=UTC)


def _comment(cid: str, author: str | None, day: int, text: str) -> TaskComment:
    return TaskComment(id=cid, author=author, created_at=_at(day), text=text)


def _decision(title: str, status: str, day: int) -> Record:
    return Record.build(
        kind=RecordKind.DECISION,
        title=title,
        text=f"{title}. Context and options.",
        provenance=Provenance(
            kind=SourceKind.ADR, ref=f"docs/adr/{title[:4]}.md", uri="file:///x", mission="m", time=_at(day)
        ),
        attributes={"status": status},
    )


def test_todos_added_in_the_range_are_found_with_path_and_line(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("svc")
    first = repo.commit("init", "2025-01-01T12:00:00+00:00", files={
        "app.py": "def run():\n    # TODO: old todo, already known\n    return 1\n",
    })
    repo.commit("OPS-7: retries", "2025-01-02T12:00:00+00:00", files={
        "app.py": (
            "def run():\n    # TODO: old todo, already known\n    return 1\n\n"
            "def retry():\n    # FIXME: backoff ignores Retry-After\n    pass  # XXX temporary\n"
        ),
        "docs/notes.md": "<!-- TODO: document the retry queue -->\nA todo in lower case is prose.\n",
    })
    last = repo.commit("OPS-7: Ukrainian note", "2025-01-03T12:00:00+00:00", files={
        "uk.py": "x = 1  # TODO: перевірити тайм-аут антивірусу\n",
        "tricky.txt": "++ TODO in a line that starts with two pluses\n",
    })
    found = added_todos(repo.root, first, last)
    assert [(q.ref, q.text) for q in found] == [
        ("app.py:6", "FIXME: backoff ignores Retry-After"),
        ("app.py:7", "XXX temporary"),
        ("docs/notes.md:1", "TODO: document the retry queue"),
        ("tricky.txt:1", "TODO in a line that starts with two pluses"),
        ("uk.py:1", "TODO: перевірити тайм-аут антивірусу"),
    ]
    assert all(q.source_kind == "todo" and q.time is None for q in found)


def test_without_a_since_commit_every_todo_counts(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("svc")
    sha = repo.commit("init", "2025-01-01T12:00:00+00:00", files={"a.py": "# TODO: one\n"})
    assert [q.ref for q in added_todos(repo.root, None, sha)] == ["a.py:1"]
    assert added_todos(repo.root, sha, sha) == []


def test_a_bad_revision_is_an_input_error(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("svc")
    sha = repo.commit("init", "2025-01-01T12:00:00+00:00", files={"a.py": "x = 1\n"})
    with pytest.raises(InputError, match="not a commit"):
        added_todos(repo.root, "deadbeef" * 5, sha)


def test_an_answered_question_is_not_open_and_an_unanswered_one_is() -> None:
    comments = [
        _comment("1", "olena", 1, "Uploads time out on the field laptops. Should we switch the ledger to SQLite?"),
        _comment("2", "taras", 2, "Yes, SQLite in WAL mode works offline."),
        _comment("3", "olena", 3, "What retry limit do we want for the antivirus scan?"),
        _comment("4", "olena", 4, "Also pinging about this again?"),
    ]
    found = questions_in_comments(comments)
    assert [(q.ref, q.text) for q in found] == [
        ("comment:3", "What retry limit do we want for the antivirus scan?"),
        ("comment:4", "Also pinging about this again?"),
    ]
    assert found[0].time == _at(3) and found[0].source_kind == "comment"


def test_a_reply_sharing_the_questions_words_answers_it_but_a_counter_question_does_not() -> None:
    comments = [
        _comment("1", "a", 1, "Which compression level for the archive uploads?"),
        _comment("2", "b", 2, "Is that even needed?"),
        _comment("3", "c", 3, "Archive uploads use compression level 6, measured last week."),
    ]
    open_ = questions_in_comments(comments)
    assert [q.ref for q in open_] == ["comment:2"]


def test_ukrainian_questions_and_answers_are_recognised() -> None:
    comments = [
        _comment("10", "олена", 1, "Чи варто додати чергу повторних спроб для антивірусу"),
        _comment("11", "тарас", 2, "Так, додаймо з експоненційною затримкою."),
        _comment("12", "олена", 3, "Що робити з файлами, які не пройшли перевірку? Поки що лишаю їх у карантині."),
        _comment("13", "олена", 4, "Відкрите питання: хто отримує сповіщення"),
        _comment("14", "олена", 5, "Вирішили: сповіщення отримує черговий оператор."),
    ]
    found = questions_in_comments(comments)
    assert [(q.ref, q.text) for q in found] == [
        ("comment:12", "Що робити з файлами, які не пройшли перевірку?"),
    ]


def test_quoted_lines_are_not_questions() -> None:
    comments = [_comment("1", "a", 1, "> Should we drop the cache?\nDone in abc1234.")]
    assert questions_in_comments(comments) == []


def test_find_open_questions_keeps_only_proposed_decisions_and_orders_the_sources() -> None:
    decisions = [
        _decision("Use SQLite for the ledger", "accepted", 1),
        _decision("Move scans to a queue", "proposed", 3),
        _decision("Drop the thumbnail cache", "Proposed", 2),
    ]
    comments = [_comment("5", "a", 4, "Should we keep the old bucket?")]
    todos = [OpenQuestion("TODO: check quota", "todo", "app.py:3", None)]
    found = find_open_questions(proposed_decisions=decisions, comments=comments, todos=[*todos, *todos])
    assert [(q.source_kind, q.text) for q in found] == [
        ("decision", "Drop the thumbnail cache"),
        ("decision", "Move scans to a queue"),
        ("comment", "Should we keep the old bucket?"),
        ("todo", "TODO: check quota"),
    ]
    assert found[0].ref == "docs/adr/Drop.md"

    text = render_open_questions(found)
    assert "**Proposed decisions awaiting an operator (2)**" in text
    assert "- Drop the thumbnail cache (docs/adr/Drop.md, 2025-01-02)" in text
    assert "**Unanswered questions in comments (1)**\n- Should we keep the old bucket? (comment:5, 2025-01-04)" in text
    assert "**TODO / FIXME added in the period (1)**\n- TODO: check quota (app.py:3)" in text


def test_no_questions_renders_a_plain_sentence() -> None:
    assert render_open_questions([]).startswith("No open questions")


def test_todo_as_a_string_value_or_inside_a_word_is_not_a_marker(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("svc")
    first = repo.commit("init", "2025-01-01T12:00:00+00:00", files={"a.py": "x = 1\n"})
    last = repo.commit("states", "2025-01-02T12:00:00+00:00", files={
        "a.py": 'x = 1\nSTATES = ["TODO", "DONE"]\nSIZE = "XXX-Large"\nTODOS = []\n# TODO(olena) pick a size\n',
    })
    assert [(q.ref, q.text) for q in added_todos(repo.root, first, last)] == [("a.py:5", "TODO(olena) pick a size")]
