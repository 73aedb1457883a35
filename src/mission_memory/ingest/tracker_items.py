"""Tracker items in the workflow layer: a tracker's tasks and their comments as ISSUE and COMMENT
records (docs/design.md §3 "tracker issues and comments"; issue 13 item 5; docs/adr/0028).

Incremental: a bookmark in the state store (``tracker_items:<location>``, the latest ``updated_at``
seen) makes the next run ask only for tasks updated since; every comment of such a task is read
again, because a new comment changes whether the earlier ones are answered. Records are keyed by
tracker and task key (``<mission>:issue:<tracker>:<key>``), so a changed task or comment replaces
its record and an unchanged one is left alone: a re-run adds nothing. Tracker text is untrusted: it
is stored as data and reaches an agent only inside the digest's nonce envelope (docs/adr/0021).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mission_memory.capture.redaction import redacted_cut
from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError
from mission_memory.ingest.access_levels import with_label_access
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.write_path import store_records
from mission_memory.trackers.base import Task, TaskComment, TaskHistory
from mission_memory.utc import as_utc

__all__ = ["IN_PROGRESS_STATES", "TrackerIngestReport", "ingest_tracker", "tracker_item_records"]

IN_PROGRESS_STATES = frozenset(
    {"in progress", "in-progress", "in_progress", "doing", "started", "active", "in review", "review",
     "в роботі", "виконується"}
)
"""State names (case-folded) or labels that mark a task as in progress; GitHub issues have only open
and closed, so there a label such as ``in progress`` says it."""

_BATCH = 64
_TEXT_CAP = 20_000
_ISSUE_CRITICALITY = 0.5
_IN_PROGRESS_CRITICALITY = 0.6
_COMMENT_CRITICALITY = 0.4


@dataclass
class TrackerIngestReport:
    """What one ``ingest --tracker`` run did.

    Attributes:
        mission: the mission the records were filed under.
        tracker: the tracker's location (``github:owner/name``, ...).
        since: the bookmark the run started from (None: the first run read everything).
        bookmark: the bookmark left for the next run.
        tasks, comments: how many were read.
        added, updated, unchanged: record counts by kind (``issue``, ``comment``).
        embedded: vectors computed.
        unreadable: ``(item, reason)`` of items the tracker could not read (local task files).
    """

    mission: str
    tracker: str
    since: str | None = None
    bookmark: str | None = None
    tasks: int = 0
    comments: int = 0
    added: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    embedded: int = 0
    unreadable: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The report as ``mission-memory ingest --tracker ... --json`` prints it."""
        return {
            "mission": self.mission,
            "tracker": self.tracker,
            "since": self.since,
            "bookmark": self.bookmark,
            "tasks": self.tasks,
            "comments": self.comments,
            "added": dict(self.added),
            "updated": dict(self.updated),
            "unchanged": dict(self.unchanged),
            "embedded": self.embedded,
            "unreadable": [{"item": item, "reason": reason} for item, reason in self.unreadable],
        }


def _in_progress(task: Task) -> bool:
    names = [task.state or "", *task.labels]
    return any(" ".join(name.casefold().split()) in IN_PROGRESS_STATES for name in names)


def _capped(text: str) -> str:
    return redacted_cut(text, _TEXT_CAP + 5, "\n\n[…]")  # cut after redaction (issue 35 item 3)


def _task_record(task: Task, tracker: str, mission: str) -> Record:
    details = [f"State: {task.state or 'not stated'}"]
    if task.labels:
        details.append("Labels: " + ", ".join(task.labels))
    details.append("Assignee: " + (", ".join(task.assignees) or "nobody"))
    text = "\n".join([task.title, " · ".join(details), "", task.description]).strip()
    attributes: dict[str, Any] = {
        "tracker": tracker,
        "key": task.key,
        "state": task.state,
        "labels": list(task.labels),
        "assignee": task.assignees[0] if task.assignees else None,
        "assignees": list(task.assignees),
        "created": task.created_at.isoformat(),
        "updated": task.updated_at.isoformat(),
        "url": task.url,
        "in_progress": _in_progress(task),
        "linked_files": list(task.linked_files),
    }
    return Record.build(
        kind=RecordKind.ISSUE,
        title=f"{task.key}: {task.title}" if task.title else task.key,
        text=_capped(text),
        provenance=Provenance(
            kind=SourceKind.ISSUE, ref=task.key, uri=task.url, mission=mission, time=task.updated_at,
        ),
        criticality=_IN_PROGRESS_CRITICALITY if attributes["in_progress"] else _ISSUE_CRITICALITY,
        attributes=attributes,
        slot=f"{tracker}:{task.key}",
    )


def _comment_uri(task: Task, comment: TaskComment) -> str:
    if comment.url:
        return comment.url
    anchor = re.sub(r"[^\w.-]", "-", comment.id)
    return f"{task.url.split('#', 1)[0]}#comment-{anchor}"


def _comment_records(task: Task, comments: Sequence[TaskComment], tracker: str, mission: str) -> list[Record]:
    records = []
    for index, comment in enumerate(comments):
        answered = any(later.author != comment.author for later in comments[index + 1 :])
        attributes: dict[str, Any] = {
            "tracker": tracker,
            "key": comment.id,
            "issue_key": task.key,
            "author": comment.author,
            "answered": answered,
            "created": comment.created_at.isoformat(),
            "url": _comment_uri(task, comment),
        }
        who = comment.author or "someone"
        records.append(
            Record.build(
                kind=RecordKind.COMMENT,
                title=redacted_cut(f"{task.key}: comment by {who} on {task.title}", 300, ""),
                text=_capped(comment.text or "(empty comment)"),
                provenance=Provenance(
                    kind=SourceKind.COMMENT, ref=f"{task.key}#comment-{comment.id}",
                    uri=attributes["url"], mission=mission, time=comment.created_at,
                ),
                criticality=_COMMENT_CRITICALITY,
                attributes=attributes,
                slot=f"{tracker}:{task.key}#comment-{comment.id}",
            )
        )
    return records


def tracker_item_records(
    task: Task, comments: Sequence[TaskComment], tracker: str, mission: str
) -> list[Record]:
    """The ISSUE record of ``task`` and one COMMENT record per comment (oldest first).

    Attributes (the interface the handover brief reads): for both ``tracker`` and ``key``; for the
    task ``state``, ``labels``, ``assignee`` (first assignee or None), ``assignees``, ``created``,
    ``updated``, ``url``, ``in_progress`` (state or a label in :data:`IN_PROGRESS_STATES`); for a
    comment ``issue_key``, ``author``, ``answered`` (a later comment by someone else exists),
    ``created``, ``url``. Provenance: kind ISSUE / COMMENT, the tracker URL as ``uri``. A label
    ``access:LEVEL`` gives the task and its comments that access level (default ``internal``).

    Raises:
        InputError: an ``access:`` label naming an unknown level (the message names the task).
    """
    ordered = sorted(comments, key=lambda comment: comment.created_at)
    records = [_task_record(task, tracker, mission), *_comment_records(task, ordered, tracker, mission)]
    return with_label_access(records, task.labels, f"{tracker} task {task.key}")  # access:LEVEL labels, ADR 0045


def ingest_tracker(
    store: MemoryStore, embedder: Embedder, tracker: TaskHistory, mission: str, now: datetime
) -> TrackerIngestReport:
    """Read the tasks updated since the bookmark and their comments; store them as workflow records.

    Everything is read from the tracker first and written afterwards, in batches of 64 records, each
    one transaction; the bookmark moves only after the last batch, so an interrupted run repeats its
    window and loses nothing. Total deadlines bound every request (the trackers' ``deadline_seconds``,
    docs/adr/0019).

    Args:
        store: where records and the bookmark go.
        embedder: embeds new and changed records.
        tracker: a :class:`~mission_memory.trackers.base.TaskHistory` (Plane, GitHub, local files).
        mission: the mission the records belong to.
        now: the run's clock; only tasks updated after it are not bookmarked past it.

    Returns:
        The counts, the bookmarks and the items the tracker could not read.

    Raises:
        InputError: an empty mission.
        BackendUnavailable, ConfigError: the tracker failed (nothing is written then).
    """
    if not mission.strip():
        raise InputError("ingest --tracker needs a mission name (--mission)")
    key = f"tracker_items:{tracker.location}"
    since_text = store.get_state(mission, key)
    since = datetime.fromisoformat(since_text) if since_text else None
    report = TrackerIngestReport(mission=mission, tracker=tracker.location, since=since_text)
    tasks = tracker.list_all_tasks(since)
    report.unreadable = list(tracker.unreadable_items())
    records: list[Record] = []
    for task in tasks:
        comments = tracker.list_comments(task)
        report.tasks += 1
        report.comments += len(comments)
        records.extend(tracker_item_records(task, comments, tracker.kind, mission))
    _store(store, embedder, records, report)
    clock = as_utc(now)
    latest = max((task.updated_at for task in tasks if task.updated_at <= clock), default=since)
    if latest is not None:
        report.bookmark = latest.isoformat()
        store.set_state(mission, key, report.bookmark)
    return report


def _store(store: MemoryStore, embedder: Embedder, records: list[Record], report: TrackerIngestReport) -> None:
    result = store_records(store, embedder, records, batch=_BATCH)
    report.embedded += result.embedded
    report.added.update(result.added)
    report.updated.update(result.replaced)
    report.unchanged.update(result.unchanged)
