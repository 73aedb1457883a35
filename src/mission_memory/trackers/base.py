"""The ``Tracker`` protocol and the task types every tracker returns (docs/design.md §5).

A tracker lists tasks carrying a label (``LONG-TERM`` by default) and the comments on one task.
Implementations: ``PlaneTracker`` (Plane REST v1), ``GitHubTracker`` (GitHub issues REST) and
``LocalFolderTracker`` (one Markdown file per task, for the embedded default). Each translates its
transport's failures at its own boundary into :class:`~mission_memory.errors.BackendUnavailable`
(unreachable, 5xx, rate limit not lifting) or :class:`~mission_memory.errors.ConfigError`
(401/403, missing key, bad URL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from mission_memory.config import DEFAULT_LABEL
from mission_memory.errors import BackendUnavailable
from mission_memory.utc import as_utc

__all__ = ["DEFAULT_LABEL", "Task", "TaskComment", "TaskHistory", "Tracker", "parse_api_time"]



@dataclass(frozen=True)
class TaskComment:
    """One comment on a task.

    Attributes:
        id: the tracker's id of the comment.
        author: display name or login, or None.
        created_at: timezone-aware UTC datetime.
        text: the comment as plain text (HTML stripped).
        url: a URL that opens the comment, or None.
    """

    id: str
    author: str | None
    created_at: datetime
    text: str
    url: str | None = None


@dataclass(frozen=True)
class Task:
    """One tracker task (issue, work item).

    Attributes:
        key: the human key used in commit messages: ``OPS-7`` (Plane identifier + sequence id),
            ``#45`` (GitHub issue number), or the local file's key.
        title: the task title.
        description: plain text (HTML stripped), may be empty.
        labels: label names (not ids).
        state: the tracker's state name ("open", "In Progress", ...), or None.
        url: a URL that opens the task.
        created_at, updated_at: timezone-aware UTC datetimes.
        linked_files: repository-relative paths linked to the task (local tracker; empty elsewhere).
        tracker: the tracker kind that produced it ("plane", "github", "local").
        assignees: who the task is assigned to (logins, display names, or ids when the tracker
            gives no name); filled by :meth:`TaskHistory.list_all_tasks`, empty from ``list_tasks``.
    """

    key: str
    title: str
    description: str
    labels: tuple[str, ...]
    state: str | None
    url: str
    created_at: datetime
    updated_at: datetime
    linked_files: tuple[str, ...] = field(default_factory=tuple)
    tracker: str = ""
    assignees: tuple[str, ...] = field(default_factory=tuple)


class Tracker(Protocol):
    """Reads tasks and their comments from one project of one tracker."""

    kind: str

    def list_tasks(self, label: str = DEFAULT_LABEL) -> list[Task]:
        """All tasks carrying ``label`` (case-insensitive), following pagination to the end.

        Raises:
            BackendUnavailable: the tracker cannot be reached or keeps failing.
            ConfigError: credentials or settings are wrong (401/403/404 on the project).
        """
        ...

    def list_comments(self, task: Task) -> list[TaskComment]:
        """All comments on ``task``, oldest first, following pagination to the end.

        Raises:
            BackendUnavailable, ConfigError: as for :meth:`list_tasks`.
        """
        ...

    def unreadable_items(self) -> list[tuple[str, str]]:
        """``(item, reason)`` for each item the last :meth:`list_tasks` skipped because it could not
        be read (a malformed task file); the refresher reports them as failed and goes on."""
        ...


class TaskHistory(Tracker, Protocol):
    """A tracker that also lists every task, whatever its labels, changed since a moment: what
    ``mission-memory ingest --tracker`` reads to keep tasks and comments in the workflow layer
    (issue 13 item 5). The three shipped trackers implement it.

    Attributes:
        location: names the tracked project stably (``github:owner/name``, ``plane:<url>/<workspace>/<project>``,
            ``local:<folder>``); the incremental bookmark is kept under it.
    """

    @property
    def location(self) -> str:
        """The tracked project, stably named (see the class docstring)."""
        ...

    def list_all_tasks(self, updated_since: datetime | None = None) -> list[Task]:
        """Every task (any label, open or closed) updated at or after ``updated_since`` (all when None),
        with its assignees, following pagination to the end.

        Raises:
            BackendUnavailable, ConfigError: as for :meth:`Tracker.list_tasks`.
        """
        ...


def parse_api_time(raw: Any, what: str, service: str) -> datetime:
    """An ISO 8601 timestamp from a tracker API (``2024-05-01T10:00:00Z``) as an aware UTC datetime.

    Args:
        raw: the JSON value; naive times are taken as UTC.
        what: which field it is, for the message (``issue OPS-7 created_at``).
        service: who answered, for the message (``GitHub``, ``Plane``).

    Raises:
        BackendUnavailable: the value is missing or not ISO 8601 (the API answered something unusable).
    """
    if not isinstance(raw, str) or not raw:
        raise BackendUnavailable(f"{service} answered without a usable {what}: {raw!r}")
    try:
        parsed = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise BackendUnavailable(f"{service} answered an unreadable {what}: {raw!r}") from exc
    return as_utc(parsed)
