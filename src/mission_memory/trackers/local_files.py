"""``LocalFolderTracker``: tasks kept as Markdown files in a folder, so push refresh works with no tracker
server at all (docs/design.md §5, the embedded default). The files are canonical; nothing here writes them.

One file per task, ``<folder>/<KEY>.md``, UTF-8 (a BOM is fine)::

    ---
    key: OPS-7
    title: Черга повторних спроб для антивірусу
    labels: [LONG-TERM, antivirus]
    state: In Progress
    created: 2025-01-10T09:00:00Z
    updated: 2025-02-01T12:30:00+02:00
    files: [src/scan.py, docs/adr/0003-retry.md]
    assignee: Олена
    ---

    The description, free Markdown, up to the comments heading.

    ## Comments

    ### Олена · 2025-01-12T10:00:00Z

    Чи варто обмежити кількість спроб?

    ### bot · 2025-01-13T08:15:00+00:00

    Limited to five attempts.

Front matter: ``key: value`` lines; lists as ``[a, b]`` or as ``- item`` lines under an empty
``key:``; values may be quoted; ``#`` lines are comments; unknown keys are ignored. ``title`` and
``created`` are required; ``key`` defaults to the file name without ``.md``; ``labels``, ``files`` and
``assignee`` (or ``assignees``) default to empty, ``state`` to None, ``updated`` to the latest of
``created`` and the comment times.
Times are ISO 8601 (``2025-01-10``, ``2025-01-10T09:00``, ``...Z``, ``...+02:00``); a time without an
offset is UTC. The comments section starts at a ``## Comments`` (or ``## Коментарі``) heading outside
code fences and runs to the end of the file; each ``### <author> · <time>`` heading opens one comment (an
empty author is None). ``README.md`` and dot-files are not tasks. A file that breaks these rules raises
``InputError`` naming the file, the line and what is wrong.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path

from mission_memory.errors import ConfigError, InputError, NotFound
from mission_memory.front_matter import split_front_matter
from mission_memory.trackers.base import DEFAULT_LABEL, Task, TaskComment
from mission_memory.utc import as_utc

__all__ = ["LocalFolderTracker", "parse_task_file"]

_COMMENTS_HEADING = re.compile(r"^##\s+(?:comments|коментарі)\s*#*\s*$", re.IGNORECASE)
_COMMENT_HEADING = re.compile(r"^###\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_FIELD = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_LIST_ITEM = re.compile(r"^\s*-\s+(.*)$")
_NOT_TASKS = frozenset({"readme.md"})


class LocalFolderTracker:
    """Reads tasks from ``<folder>/*.md`` files in the format of this module's docstring.

    Args:
        folder: the tasks folder.
    """

    kind = "local"

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._paths: dict[str, Path] = {}  # task key -> file, filled by list_tasks
        self._unreadable: list[tuple[str, str]] = []

    def list_tasks(self, label: str = DEFAULT_LABEL) -> list[Task]:
        """Tasks whose ``labels`` include ``label`` (case-insensitive), ordered by file name.

        A malformed task file is skipped and kept for :meth:`unreadable_items` (the message names
        the file and what is wrong), so one bad file does not stop the others being refreshed.

        Raises:
            ConfigError: the folder does not exist or is not a directory.
        """
        wanted = label.casefold()
        return [task for task in self._read_tasks() if any(name.casefold() == wanted for name in task.labels)]

    @property
    def location(self) -> str:
        """``local:<the folder, resolved>``."""
        return f"local:{self.folder.resolve()}"

    def list_all_tasks(self, updated_since: datetime | None = None) -> list[Task]:
        """Every task file's task (any label) updated at or after ``updated_since``, ordered by file name.

        Malformed files are skipped and kept for :meth:`unreadable_items`, as in :meth:`list_tasks`.

        Raises:
            ConfigError: the folder does not exist or is not a directory.
        """
        since = as_utc(updated_since) if updated_since is not None else None
        return [task for task in self._read_tasks() if since is None or task.updated_at >= since]

    def _read_tasks(self) -> list[Task]:
        """Every readable task file's task, ordered by file name; malformed files go to
        :meth:`unreadable_items` and each task key's file is remembered for :meth:`list_comments`.

        Raises:
            ConfigError: the folder does not exist or is not a directory.
        """
        tasks: list[Task] = []
        self._unreadable = []
        for path in self._task_files():
            try:
                task, _ = parse_task_file(path)
            except InputError as exc:
                self._unreadable.append((path.stem, str(exc)))
                continue
            self._paths[task.key] = path
            tasks.append(task)
        return tasks

    def unreadable_items(self) -> list[tuple[str, str]]:
        """``(file stem, reason)`` of each task file the last :meth:`list_tasks` could not read."""
        return list(self._unreadable)

    def list_comments(self, task: Task) -> list[TaskComment]:
        """The comments of ``task``'s file, oldest first.

        Raises:
            ConfigError: the folder does not exist.
            NotFound: no file in the folder holds the task.
            InputError: the file is malformed.
        """
        path = self._paths.get(task.key)
        if path is None or not path.is_file():
            path = self._find(task.key)
        _, comments = parse_task_file(path)
        return sorted(comments, key=lambda comment: comment.created_at)

    def _task_files(self) -> list[Path]:
        if not self.folder.is_dir():
            raise ConfigError(
                f"tasks folder {self.folder} does not exist or is not a directory (--tasks-dir)"
            )
        return sorted(
            path
            for path in self.folder.glob("*.md")
            if path.is_file() and not path.name.startswith(".") and path.name.lower() not in _NOT_TASKS
        )

    def _find(self, key: str) -> Path:
        direct = self.folder / f"{key}.md"
        if direct.is_file():
            return direct
        for path in self._task_files():
            task, _ = parse_task_file(path)
            self._paths[task.key] = path
            if task.key == key:
                return path
        raise NotFound(f"no task file for {key} in {self.folder}")


def parse_task_file(path: Path) -> tuple[Task, list[TaskComment]]:
    """Parse one task file.

    Args:
        path: a ``.md`` file in the format of this module's docstring.

    Returns:
        ``(task, comments)``; comments in file order, ids ``<KEY>#c<n>`` (1-based).

    Raises:
        InputError: unreadable, not UTF-8, no front matter, a malformed line, a missing ``title`` or
            ``created``, a bad time, or a bad comment heading; the message names the file and line.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"task file {path} is not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise InputError(f"task file {path} cannot be read: {exc}") from exc
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    body, consumed = split_front_matter(text)
    if body is None:
        raise InputError(f"task file {path}: no front matter block ('---' lines) at the top")
    fields = _read_fields(path, body)
    key = _scalar(fields.get("key")) or path.stem
    title = _scalar(fields.get("title"))
    if not title:
        raise InputError(f"task file {path}: front matter has no 'title'")
    created_raw = _scalar(fields.get("created"))
    if not created_raw:
        raise InputError(f"task file {path}: front matter has no 'created' time")
    created = _parse_time(created_raw, path, "created")
    lines = text.split("\n")
    description, comments = _split_comments(path, key, lines, consumed)
    updated_raw = _scalar(fields.get("updated"))
    updated = (
        _parse_time(updated_raw, path, "updated")
        if updated_raw
        else max([created, *(comment.created_at for comment in comments)])
    )
    task = Task(
        key=key,
        title=title,
        description=description,
        labels=_as_list(fields.get("labels")),
        state=_scalar(fields.get("state")) or None,
        url=path.resolve().as_uri(),
        created_at=created,
        updated_at=updated,
        linked_files=_as_list(fields.get("files")),
        tracker=LocalFolderTracker.kind,
        assignees=_as_list(fields.get("assignees") or fields.get("assignee")),
    )
    return task, comments


# ------------------------------------------------------------------------------------------- front matter


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _read_fields(path: Path, body: str) -> dict[str, str | list[str]]:
    """``key: value`` lines and ``- item`` lists of the front matter (line numbers count the ``---``)."""
    fields: dict[str, str | list[str]] = {}
    current: str | None = None  # the key an indented ``- item`` list belongs to
    for number, line in enumerate(body.split("\n"), start=2):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        item = _LIST_ITEM.match(line)
        if item is not None and current is not None:
            existing = fields.get(current)
            items = existing if isinstance(existing, list) else []
            items.append(_unquote(item.group(1)))
            fields[current] = items
            continue
        match = _FIELD.match(stripped)
        if match is None:
            raise InputError(
                f"task file {path}, line {number}: expected 'key: value' in the front matter, "
                f"got {stripped!r}"
            )
        name, value = match.group(1).lower(), match.group(2).strip()
        if value.startswith("["):
            if not value.endswith("]"):
                raise InputError(f"task file {path}, line {number}: list for {name!r} is not closed with ']'")
            fields[name] = [_unquote(part) for part in value[1:-1].split(",") if part.strip()]
            current = None
        elif value:
            fields[name] = _unquote(value)
            current = None
        else:
            fields[name] = []
            current = name
    return fields


def _scalar(value: str | list[str] | None) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(value).strip()
    return value.strip()


def _as_list(value: str | list[str] | None) -> tuple[str, ...]:
    """A list field; a plain ``a, b`` string is split on commas too."""
    if value is None:
        return ()
    items = value if isinstance(value, list) else value.split(",")
    return tuple(item.strip() for item in items if item.strip())


def _parse_time(raw: str, path: Path, what: str, line: int | None = None) -> datetime:
    where = f"task file {path}" + (f", line {line}" if line is not None else "")
    text = raw.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise InputError(f"{where}: {what} time {raw!r} is not ISO 8601 (e.g. 2025-01-10T09:00:00Z)") from exc
    return as_utc(parsed)


# ---------------------------------------------------------------------------------------------- body


def _split_comments(path: Path, key: str, lines: list[str], start: int) -> tuple[str, list[TaskComment]]:
    """The description (text before ``## Comments``) and the comments after it."""
    in_fence = False
    heading_at: int | None = None
    for index in range(start, len(lines)):
        if _FENCE.match(lines[index]):
            in_fence = not in_fence
        elif not in_fence and _COMMENTS_HEADING.match(lines[index].strip()):
            heading_at = index
            break
    if heading_at is None:
        return "\n".join(lines[start:]).strip(), []
    description = "\n".join(lines[start:heading_at]).strip()
    comments: list[TaskComment] = []
    author: str | None = None
    created: datetime | None = None
    body: list[str] = []

    def close() -> None:
        if created is not None:
            comments.append(
                TaskComment(
                    id=f"{key}#c{len(comments) + 1}",
                    author=author,
                    created_at=created,
                    text="\n".join(body).strip(),
                )
            )

    in_fence = False
    for index in range(heading_at + 1, len(lines)):
        line = lines[index]
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _COMMENT_HEADING.match(line.strip())
        if heading is None:
            body.append(line)
            continue
        close()
        author, created = _comment_heading(path, heading.group(1), index + 1)
        body = []
    close()
    return description, comments


def _comment_heading(path: Path, text: str, line: int) -> tuple[str | None, datetime]:
    """``<author> · <ISO time>`` -> ``(author or None, UTC time)``."""
    if "·" not in text:
        raise InputError(
            f"task file {path}, line {line}: comment heading {text!r} must read '### <author> · <ISO time>'"
        )
    author, _, when = text.rpartition("·")
    return (author.strip() or None), _parse_time(when, path, "comment", line)
