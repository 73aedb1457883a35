"""Activity signals of a task: commits by key or linked file, new comments, hours since the last pull."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mission_memory.ingest.git_history import Commit
from mission_memory.refresh.signals import activity_signals, commit_touches_task, hours_since_last_pull
from mission_memory.retrieval_events import RetrievalEvent
from mission_memory.trackers.base import Task, TaskComment

NOW = datetime(2025, 1, 13, 12, 0, tzinfo=UTC)

TASK = Task(
    key="OPS-7", title="Черга повторних спроб", description="", labels=("LONG-TERM",), state=None,
    url="file:///tasks/OPS-7.md", created_at=datetime(2025, 1, 2, tzinfo=UTC),
    updated_at=datetime(2025, 1, 2, tzinfo=UTC), linked_files=("src/scan/", "docs/retry.md"), tracker="local",
)


def _commit(sha: str, subject: str, files: tuple[str, ...], when: datetime) -> Commit:
    return Commit(sha=sha * 40, parents=(), author="a", authored_at=when, committed_at=when, subject=subject,
                  body="", files=files)


def _comment(cid: str, when: datetime) -> TaskComment:
    return TaskComment(id=cid, author="Олена", created_at=when, text="Чи варто обмежити спроби?")


def test_a_commit_touches_a_task_by_its_key_or_a_linked_file_or_folder() -> None:
    day = datetime(2025, 1, 5, tzinfo=UTC)
    assert commit_touches_task(_commit("a", "ops-7: lower-case key still counts", ("x.py",), day), TASK)
    assert commit_touches_task(_commit("b", "Refactor", ("src/scan/queue.py",), day), TASK)
    assert commit_touches_task(_commit("c", "Docs", ("docs/retry.md",), day), TASK)
    assert not commit_touches_task(_commit("d", "OPS-70: another task", ("src/scanner.py",), day), TASK)


def test_signals_count_touching_commits_and_new_comments_up_to_now() -> None:
    commits = [
        _commit("a", "OPS-7: queue", ("src/q.py",), NOW - timedelta(days=3)),
        _commit("b", "Unrelated", ("README.md",), NOW - timedelta(days=2)),
        _commit("c", "OPS-7: later than now", ("src/q.py",), NOW + timedelta(days=1)),
    ]
    comments = [_comment("1", NOW - timedelta(days=9)), _comment("2", NOW - timedelta(days=1)),
                _comment("3", NOW + timedelta(hours=1))]
    activity = activity_signals(TASK, commits=commits, comments=comments, comments_since=NOW - timedelta(days=8),
                                retrieval_events=[], task_record_ids=[], now=NOW)
    assert activity.signals.commits == 1 and activity.signals.comments == 1
    assert [c.id for c in activity.comments] == ["2"] and activity.commits[0].sha == "a" * 40
    assert activity.signals.hours_since_last_pull is None


def test_hours_since_last_pull_uses_the_newest_event_that_returned_a_record_of_the_task() -> None:
    def event(when: datetime, record_ids: list[str]) -> RetrievalEvent:
        return RetrievalEvent(id="e", time=when, query="q", scope="all", token_budget=1, tokens_used=0,
                              record_ids=tuple(record_ids), model_id="m")

    events = [
        event(NOW - timedelta(hours=2), ["other"]),
        event(NOW - timedelta(hours=5), ["r1", "other"]),
        event(NOW - timedelta(hours=30), ["r2"]),
        event(NOW + timedelta(hours=1), ["r1"]),  # after the pass's clock
    ]
    assert hours_since_last_pull(events, {"r1", "r2"}, NOW) == 5.0
    assert hours_since_last_pull(events, {"r2"}, NOW) == 30.0
    assert hours_since_last_pull(events, {"nothing"}, NOW) is None
