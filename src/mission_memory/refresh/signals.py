"""Activity signals of one task since its last refresh (docs/design.md §5, step 2).

Pure functions over values the orchestrator has already read: the commits since the task's last
refresh commit, the task's comments and the latest retrieval events. The three signals feed
:func:`mission_memory.refresh.schedule.refresh_interval`:

* commits touching the task: its key in the commit message (``OPS-7``, ``#45``), or a change to a
  file linked to it (a linked folder covers the files under it);
* comments on the task created after the last one already covered;
* hours since the last pull (retrieval event) that returned one of the task's records.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from mission_memory.ingest.git_history import Commit
from mission_memory.refresh.schedule import ActivitySignals
from mission_memory.retrieval_events import RetrievalEvent
from mission_memory.trackers.base import Task, TaskComment

__all__ = ["TaskActivity", "activity_signals", "commit_touches_task", "hours_since_last_pull"]


@dataclass(frozen=True)
class TaskActivity:
    """What happened on a task since its last refresh.

    Attributes:
        signals: the schedule's input.
        commits: the commits touching the task, oldest first (committed at or before ``now``).
        comments: the new comments, oldest first (created at or before ``now``).
    """

    signals: ActivitySignals
    commits: tuple[Commit, ...]
    comments: tuple[TaskComment, ...]


@functools.lru_cache(maxsize=1024)
def _key_pattern(key: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w&/-]){re.escape(key)}(?![\w-])", re.IGNORECASE)


def commit_touches_task(commit: Commit, task: Task) -> bool:
    """True when ``commit`` changes a file (or a file under a folder) linked to the task, or names its key.

    The key is matched as a whole word, case-insensitively (``OPS-7`` and ``ops-7``, not ``OPS-70``;
    ``#45``, not ``#456``), so keys that are not tracker-shaped (a local file's name) work too.
    """
    if _key_pattern(task.key).search(f"{commit.subject}\n{commit.body}"):
        return True
    linked = [p.strip("/") for p in task.linked_files if p.strip("/")]
    return any(f == p or f.startswith(p + "/") for f in commit.files for p in linked)


def hours_since_last_pull(
    events: Iterable[RetrievalEvent], task_record_ids: Collection[str], now: datetime
) -> float | None:
    """Hours from the newest retrieval event that returned one of ``task_record_ids`` to ``now``.

    Args:
        events: retrieval events (:meth:`Memory.retrieval_events`).
        task_record_ids: ids of the task's records (its refresh artifacts, its commits).
        now: the pass's clock (timezone-aware).

    Returns:
        Hours (≥ 0), or None when no event (up to ``now``) returned a record of the task.
    """
    wanted = set(task_record_ids)
    latest: datetime | None = None
    for event in events:
        when = event.time
        if when > now or not wanted.intersection(event.record_ids):
            continue
        if latest is None or when > latest:
            latest = when
    return None if latest is None else max(0.0, (now - latest).total_seconds() / 3600)


def activity_signals(
    task: Task,
    *,
    commits: Sequence[Commit],
    comments: Sequence[TaskComment],
    comments_since: datetime | None,
    retrieval_events: Iterable[RetrievalEvent],
    task_record_ids: Collection[str],
    now: datetime,
) -> TaskActivity:
    """The activity of ``task`` since its last refresh.

    Args:
        task: the task.
        commits: the repository's commits after the task's last refresh commit (all of them when it
            was never refreshed), oldest first; those committed after ``now`` are ignored.
        comments: every comment on the task.
        comments_since: comments created at or before this time were covered by a refresh already
            (None: none were).
        retrieval_events: the latest retrieval events.
        task_record_ids: ids of the task's stored records.
        now: the pass's clock.
    """
    touching = tuple(c for c in commits if c.committed_at <= now and commit_touches_task(c, task))
    fresh = tuple(
        sorted(
            (c for c in comments if c.created_at <= now and (comments_since is None or c.created_at > comments_since)),
            key=lambda c: c.created_at,
        )
    )
    signals = ActivitySignals(
        commits=len(touching),
        comments=len(fresh),
        hours_since_last_pull=hours_since_last_pull(retrieval_events, task_record_ids, now),
    )
    return TaskActivity(signals=signals, commits=touching, comments=fresh)
