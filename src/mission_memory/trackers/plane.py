"""``PlaneTracker``: tasks and comments from one Plane project through the REST API v1 (docs/design.md §5).

Endpoints (all under ``{base_url}/api/v1/workspaces/{slug}/``, header ``X-API-Key``):

* ``projects/{project_id}/`` -> ``{"id", "identifier": "OPS", "name", ...}``; ``identifier`` plus a work
  item's ``sequence_id`` is the task key (``OPS-7``), the key people write in commit messages.
* ``projects/{project_id}/labels/`` -> paginated ``{"id", "name", ...}``; work items carry label *ids*,
  mapped to names here.
* ``projects/{project_id}/work-items/?expand=state`` -> paginated work items ``{"id", "name",
  "description_html", "description_stripped", "sequence_id", "labels": [ids], "state": {"name", ...}
  (an id when not expanded), "created_at", "updated_at"}``.
* ``projects/{project_id}/work-items/{id}/comments/?expand=actor`` -> paginated ``{"id",
  "comment_html", "comment_stripped", "actor" (an id, or ``{"display_name", ...}`` when expanded),
  "actor_detail", "created_by", "created_at"}``.
* ``work-items/{IDENT}-{seq}/`` (by identifier) -> one work item, used by :meth:`list_comments` when the
  task did not come from this tracker's own :meth:`list_tasks`.

Pagination is Plane's cursor envelope ``{"results", "next_cursor", "prev_cursor", "next_page_results",
"prev_page_results", "total_results", "total_pages", "count", ...}``: send ``cursor`` and ``per_page``
(<= 100) and loop while ``next_page_results`` is true (Plane's ``BasePaginator``). Plane throttles an API
key to 60 requests/minute (``ApiKeyRateThrottle``, answering 429 with ``Retry-After`` and sending
``X-RateLimit-Remaining`` / ``X-RateLimit-Reset`` on successes): see ``rate_limited_http``.

Plain httpx rather than the official ``plane-sdk``: we need four GET endpoints, and owning the requests
keeps the 429 backoff, the pacing on ``X-RateLimit-Remaining`` and the translation of failures into
``ConfigError`` / ``BackendUnavailable`` in one place we test against a loopback server; the SDK would add
a dependency tree (pydantic models per Plane release) and its own retry and exception behaviour to wrap.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote

import httpx

from mission_memory.errors import BackendUnavailable, ConfigError
from mission_memory.trackers.base import DEFAULT_LABEL, Task, TaskComment, parse_api_time
from mission_memory.trackers.rate_limited_http import DEFAULT_DEADLINE_SECONDS, RateLimitedHttp
from mission_memory.utc import as_utc

__all__ = ["PER_PAGE", "PlaneTracker", "html_to_text"]

PER_PAGE = 100
"""Items per page requested from Plane (its API accepts at most 100 on these endpoints)."""

_MAX_PAGES = 10_000  # a server that keeps saying "next_page_results" forever must not loop forever


class PlaneTracker:
    """Reads LONG-TERM work items and their comments from one Plane project.

    Args:
        base_url: the Plane API origin, e.g. ``https://api.plane.so`` or a self-hosted
            ``https://plane.example.org``.
        workspace: the workspace slug.
        project_id: the project's UUID.
        api_key: a Plane API token (``MISSION_MEMORY_PLANE_API_KEY``).
        client: an httpx client to reuse (not closed by the tracker); None opens one per call.
        max_retries: retries after a 429 or 5xx before giving up.
        sleep: called with seconds to wait (inject a recorder in tests).
        clock: current Unix time in seconds, for ``X-RateLimit-Reset``.
        deadline_seconds: total wall-clock seconds of one request, its retries and rate-limit waits
            included (``MISSION_MEMORY_TRACKER_DEADLINE_SECONDS``, ADR 0019).
        monotonic: the clock the deadline is measured on (inject one that ``sleep`` advances in tests).

    Raises:
        ConfigError: empty API key, workspace or project, or a base URL that is not http(s).
    """

    kind = "plane"

    def __init__(
        self,
        base_url: str,
        workspace: str,
        project_id: str,
        api_key: str,
        *,
        client: httpx.Client | None = None,
        max_retries: int = 5,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if not api_key:
            raise ConfigError("Plane API key is not set: set MISSION_MEMORY_PLANE_API_KEY")
        if not workspace or not project_id:
            raise ConfigError(
                "Plane tracker needs a workspace slug and a project id (--plane-workspace, --plane-project)"
            )
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"Plane URL {base_url!r} must start with http:// or https:// (--plane-url)")
        self.base_url = base_url.rstrip("/")
        self.workspace = workspace
        self.project_id = project_id
        self._http = RateLimitedHttp(
            service="Plane",
            headers={"X-API-Key": api_key, "Accept": "application/json"},
            credential_setting="MISSION_MEMORY_PLANE_API_KEY",
            location_setting=(
                f"--plane-url, --plane-workspace ({workspace!r}) and --plane-project ({project_id!r})"
            ),
            client=client,
            max_retries=max_retries,
            sleep=sleep,
            clock=clock,
            deadline_seconds=deadline_seconds,
            monotonic=monotonic,
        )
        self._work_item_ids: dict[str, str] = {}  # task key -> work item id, filled by list_tasks

    # --------------------------------------------------------------------------------------- protocol

    def unreadable_items(self) -> list[tuple[str, str]]:
        """Always empty: an item the API returns in a shape it cannot read fails the listing instead."""
        return []

    def list_tasks(self, label: str = DEFAULT_LABEL) -> list[Task]:
        """All work items of the project carrying ``label`` (case-insensitive), in the API's order.

        Returns:
            Tasks with keys ``<identifier>-<sequence_id>``, label names, plain-text descriptions, UTC times.

        Raises:
            ConfigError: 401/403 (API key) or 404 (workspace / project).
            BackendUnavailable: unreachable, timeout, 5xx or 429 after the retries, malformed answers.
        """
        wanted = label.casefold()
        return [
            task
            for task, _ in self._work_items({"expand": "state"})
            if any(name.casefold() == wanted for name in task.labels)
        ]

    @property
    def location(self) -> str:
        """``plane:<base url>/<workspace>/<project id>``."""
        return f"plane:{self.base_url}/{self.workspace}/{self.project_id}"

    def list_all_tasks(self, updated_since: datetime | None = None) -> list[Task]:
        """Every work item of the project (any label) updated at or after ``updated_since``, with
        assignees (``expand=state,assignees``: display names; bare ids when the server does not expand).

        Plane's v1 list has no "updated since" filter, so the whole list is read and filtered here.

        Raises:
            ConfigError, BackendUnavailable: as for :meth:`list_tasks`.
        """
        since = as_utc(updated_since) if updated_since is not None else None
        return [
            replace(task, assignees=_assignee_names(item.get("assignees")))
            for task, item in self._work_items({"expand": "state,assignees"})
            if since is None or task.updated_at >= since
        ]

    def _work_items(self, query: dict[str, str]) -> list[tuple[Task, Mapping[str, Any]]]:
        """Every work item of the project as ``(task, raw item)``, in the API's order; remembers each
        task key's work item id for :meth:`list_comments`.

        Raises:
            ConfigError, BackendUnavailable: as for :meth:`list_tasks`; also an item without ``id`` or
                ``sequence_id``, or a project without an identifier.
        """
        with self._http.session() as client:
            project = self._get_object(client, self._project_url("/"))
            identifier = str(project.get("identifier") or "").strip()
            if not identifier:
                raise BackendUnavailable(f"Plane project {self.project_id} has no identifier in its answer")
            label_names = {
                str(item["id"]): str(item.get("name") or "")
                for item in self._paginate(client, self._project_url("/labels/"))
                if "id" in item
            }
            items: list[tuple[Task, Mapping[str, Any]]] = []
            for item in self._paginate(client, self._project_url("/work-items/"), query):
                if item.get("id") is None or item.get("sequence_id") is None:
                    raise BackendUnavailable(
                        f"Plane listed a work item without id or sequence_id: {item!r:.200}"
                    )
                names = _label_names(item.get("labels", item.get("label_ids")), label_names)
                task = self._task(item, identifier, names)
                self._work_item_ids[task.key] = str(item["id"])
                items.append((task, item))
        return items

    def list_comments(self, task: Task) -> list[TaskComment]:
        """All comments on ``task``, oldest first.

        Args:
            task: a task of this project (its key ``OPS-7`` is resolved to the work item id, from the
                last :meth:`list_tasks` or through the by-identifier endpoint).

        Raises:
            ConfigError, BackendUnavailable: as for :meth:`list_tasks`.
        """
        with self._http.session() as client:
            work_item_id = self._work_item_ids.get(task.key) or self._resolve_key(client, task.key)
            url = self._project_url(f"/work-items/{quote(work_item_id, safe='')}/comments/")
            comments = [self._comment(item) for item in self._paginate(client, url, {"expand": "actor"})]
        comments.sort(key=lambda comment: comment.created_at)
        return comments

    # ---------------------------------------------------------------------------------------- requests

    def _workspace_url(self, path: str) -> str:
        return f"{self.base_url}/api/v1/workspaces/{quote(self.workspace, safe='')}{path}"

    def _project_url(self, path: str) -> str:
        return self._workspace_url(f"/projects/{quote(self.project_id, safe='')}{path}")

    def _get_object(self, client: httpx.Client, url: str) -> Mapping[str, Any]:
        data, _ = self._http.get_json(client, url)
        if not isinstance(data, dict):
            raise BackendUnavailable(
                f"Plane at {url} answered with {type(data).__name__}, expected an object"
            )
        return data

    def _paginate(
        self, client: httpx.Client, url: str, params: Mapping[str, str] | None = None
    ) -> Iterator[Mapping[str, Any]]:
        """Yield the ``results`` of every page, following ``next_cursor`` while ``next_page_results``."""
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            query: dict[str, str | int] = {**(params or {}), "per_page": PER_PAGE}
            if cursor is not None:
                query["cursor"] = cursor
            data, _ = self._http.get_json(client, url, query)
            if isinstance(data, list):  # an older server without the envelope: one unpaginated list
                yield from (item for item in data if isinstance(item, dict))
                return
            if not isinstance(data, dict) or not isinstance(data.get("results"), list):
                raise BackendUnavailable(f"Plane at {url} answered without a 'results' list")
            yield from (item for item in data["results"] if isinstance(item, dict))
            next_cursor = data.get("next_cursor")
            if not data.get("next_page_results") or not next_cursor or next_cursor == cursor:
                return
            cursor = str(next_cursor)
        raise BackendUnavailable(f"Plane at {url} kept announcing more pages after {_MAX_PAGES} pages")

    def _resolve_key(self, client: httpx.Client, key: str) -> str:
        """The work item id of ``OPS-7`` through ``GET /workspaces/{slug}/work-items/OPS-7/``."""
        data = self._get_object(client, self._workspace_url(f"/work-items/{quote(key, safe='')}/"))
        if "id" not in data:
            raise BackendUnavailable(f"Plane answered without an id for work item {key}")
        self._work_item_ids[key] = str(data["id"])
        return self._work_item_ids[key]

    # ---------------------------------------------------------------------------------------- mapping

    def _task(self, item: Mapping[str, Any], identifier: str, labels: tuple[str, ...]) -> Task:
        key = f"{identifier}-{item.get('sequence_id')}"
        created = parse_api_time(item.get("created_at"), f"work item {key} created_at", "Plane")
        updated = parse_api_time(item.get("updated_at") or item.get("created_at"), f"work item {key} updated_at", "Plane")
        description = html_to_text(str(item.get("description_html") or ""))
        if not description:
            description = str(item.get("description_stripped") or "").strip()
        return Task(
            key=key,
            title=str(item.get("name") or "").strip(),
            description=description,
            labels=labels,
            state=_state_name(item.get("state")),
            url=f"{self.base_url}/{quote(self.workspace, safe='')}/browse/{quote(key, safe='')}/",
            created_at=created,
            updated_at=updated,
            tracker=self.kind,
        )

    def _comment(self, item: Mapping[str, Any]) -> TaskComment:
        comment_id = str(item.get("id") or "")
        text = html_to_text(str(item.get("comment_html") or ""))
        if not text:
            text = str(item.get("comment_stripped") or "").strip()
        return TaskComment(
            id=comment_id,
            author=_author(item),
            created_at=parse_api_time(item.get("created_at"), f"comment {comment_id} created_at", "Plane"),
            text=text,
        )


def _label_names(raw: Any, names_by_id: Mapping[str, str]) -> tuple[str, ...]:
    """Label names of a work item whose ``labels`` are ids (or objects, when expanded)."""
    if not isinstance(raw, list):
        return ()
    names: list[str] = []
    for entry in raw:
        if isinstance(entry, dict):
            name = str(entry.get("name") or names_by_id.get(str(entry.get("id")), ""))
        else:
            name = names_by_id.get(str(entry), "")
        if name:
            names.append(name)
    return tuple(names)


def _assignee_names(raw: Any) -> tuple[str, ...]:
    """Display names of expanded assignees (``{"display_name", ...}``), else the ids as given."""
    if not isinstance(raw, list):
        return ()
    names: list[str] = []
    for entry in raw:
        if isinstance(entry, dict):
            name = entry.get("display_name") or " ".join(
                part for part in (entry.get("first_name"), entry.get("last_name")) if part
            ) or entry.get("id")
        else:
            name = entry
        if name:
            names.append(str(name))
    return tuple(dict.fromkeys(names))


def _state_name(raw: Any) -> str | None:
    """The state's name when expanded (``{"name": ...}``); a bare id says nothing readable, so None."""
    if isinstance(raw, dict) and raw.get("name"):
        return str(raw["name"])
    return None


def _author(item: Mapping[str, Any]) -> str | None:
    """A display name from ``actor_detail`` / an expanded ``actor``, else the actor's id, else None."""
    for field in ("actor_detail", "actor", "created_by_detail"):
        detail = item.get(field)
        if isinstance(detail, dict):
            name = detail.get("display_name") or " ".join(
                part for part in (detail.get("first_name"), detail.get("last_name")) if part
            )
            if name:
                return str(name)
    for field in ("actor", "created_by"):
        value = item.get(field)
        if isinstance(value, str) and value:
            return value
    return None



# --------------------------------------------------------------------------------------------- HTML

_BLOCK_TAGS = frozenset(
    {
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "blockquote",
        "pre",
        "tr",
        "table",
        "hr",
    }
)
_SKIPPED_TAGS = frozenset({"script", "style"})
_SPACES = re.compile(r"[ \t\f\v\u00a0]+")
_BLANK_LINES = re.compile(r"\n{3,}")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")
            if tag == "li":
                self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping = max(0, self._skipping - 1)
        elif tag in _BLOCK_TAGS and tag not in ("li", "br"):
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """Plain text of Plane's rich-text HTML: tags dropped, entities decoded, block elements on their
    own lines, list items as ``- `` lines, runs of spaces and blank lines collapsed.

    Args:
        markup: an HTML fragment such as ``<p>Retry <strong>3</strong> times</p>``.

    Returns:
        The text, stripped; ``""`` for empty or tag-only markup (e.g. Plane's ``<p></p>``).
    """
    if "<" not in markup:
        return html.unescape(markup).strip()
    collector = _TextCollector()
    collector.feed(markup)
    collector.close()
    lines = [_SPACES.sub(" ", line).strip() for line in "".join(collector.parts).split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
