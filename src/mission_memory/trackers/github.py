"""``GitHubTracker``: issues and their comments from one GitHub repository through the REST API
(docs/design.md §5).

Endpoints (``Authorization: Bearer <token>`` when a token is given, ``Accept: application/vnd.github+json``,
``X-GitHub-Api-Version: 2022-11-28``):

* ``GET /repos/{owner}/{repo}/issues?labels=<label>&state=all&per_page=100`` -> a JSON list of issues
  ``{"number", "title", "body" (Markdown or null), "state", "labels": [{"name", ...}], "html_url",
  "created_at", "updated_at", "pull_request" (present on pull requests only)}``. Pull requests are
  skipped: the issues endpoint lists them too.
* ``GET /repos/{owner}/{repo}/issues/{number}/comments?per_page=100`` -> ``{"id", "user": {"login"},
  "body", "created_at", "html_url"}``, oldest first.

Pagination follows the ``Link: <...>; rel="next"`` header to the end. Rate limits: a 429, or a 403 with
``X-RateLimit-Remaining: 0`` (primary limit) or with ``Retry-After`` or a "rate limit" message (secondary
limit), waits for ``Retry-After`` or until ``X-RateLimit-Reset`` (Unix seconds) and retries, bounded; a
success that leaves ``X-RateLimit-Remaining: 0`` holds the next request until the reset (see
``rate_limited_http``). Any other 403, and 401, is a credentials problem (``MISSION_MEMORY_GITHUB_TOKEN``);
404 means the repository is wrong or private without a token. Issue bodies are Markdown and kept as they are.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from mission_memory.errors import BackendUnavailable, ConfigError, InputError
from mission_memory.trackers.base import DEFAULT_LABEL, Task, TaskComment, parse_api_time
from mission_memory.trackers.rate_limited_http import DEFAULT_DEADLINE_SECONDS, RateLimitedHttp
from mission_memory.utc import as_utc

__all__ = ["GITHUB_API_URL", "GitHubTracker"]

GITHUB_API_URL = "https://api.github.com"

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_ISSUE_KEY = re.compile(r"^#(\d+)$")
_MAX_PAGES = 10_000


def _is_rate_limited(response: httpx.Response) -> bool:
    """GitHub rate limits: 429, or 403 with ``X-RateLimit-Remaining: 0``, ``Retry-After`` or a message
    saying "rate limit" (a secondary limit may come with neither header)."""
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    return (
        response.headers.get("X-RateLimit-Remaining", "").strip() == "0"
        or "Retry-After" in response.headers
        or "rate limit" in response.text.lower()
    )


class GitHubTracker:
    """Reads LONG-TERM issues and their comments from one GitHub repository.

    Args:
        repo: ``"owner/name"``.
        token: a GitHub token (``MISSION_MEMORY_GITHUB_TOKEN``), or None for anonymous access to a
            public repository (60 requests/hour).
        base_url: the API root; ``https://<host>/api/v3`` for GitHub Enterprise Server.
        client: an httpx client to reuse (not closed by the tracker); None opens one per call.
        max_retries: retries after a rate limit or 5xx before giving up.
        sleep: called with seconds to wait (inject a recorder in tests).
        clock: current Unix time in seconds, for ``X-RateLimit-Reset``.
        deadline_seconds: total wall-clock seconds of one request, its retries and rate-limit waits
            included (``MISSION_MEMORY_TRACKER_DEADLINE_SECONDS``, ADR 0019).
        monotonic: the clock the deadline is measured on (inject one that ``sleep`` advances in tests).

    Raises:
        ConfigError: ``repo`` is not ``owner/name``, or ``base_url`` is not http(s).
    """

    kind = "github"

    def __init__(
        self,
        repo: str,
        token: str | None,
        *,
        base_url: str = GITHUB_API_URL,
        client: httpx.Client | None = None,
        max_retries: int = 5,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if not _REPO.match(repo or ""):
            raise ConfigError(f"GitHub repository {repo!r} must be 'owner/name' (--github-repo)")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"GitHub API URL {base_url!r} must start with http:// or https://")
        self.repo = repo
        self.base_url = base_url.rstrip("/")
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "mission-memory",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = RateLimitedHttp(
            service="GitHub",
            headers=headers,
            credential_setting="MISSION_MEMORY_GITHUB_TOKEN",
            location_setting=(
                f"--github-repo ({repo!r}); a private repository also needs MISSION_MEMORY_GITHUB_TOKEN"
            ),
            client=client,
            max_retries=max_retries,
            sleep=sleep,
            clock=clock,
            deadline_seconds=deadline_seconds,
            monotonic=monotonic,
            is_rate_limited=_is_rate_limited,
        )

    # --------------------------------------------------------------------------------------- protocol

    def unreadable_items(self) -> list[tuple[str, str]]:
        """Always empty: an item the API returns in a shape it cannot read fails the listing instead."""
        return []

    def list_tasks(self, label: str = DEFAULT_LABEL) -> list[Task]:
        """All issues (open and closed, no pull requests) carrying ``label`` (case-insensitive).

        Returns:
            Tasks keyed ``#<number>``, newest first as GitHub lists them.

        Raises:
            ConfigError: 401/403 (token) or 404 (repository).
            BackendUnavailable: unreachable, timeout, 5xx or rate limit after the retries, malformed answers.
        """
        wanted = label.casefold()
        url = f"{self._repo_url()}/issues"
        params: dict[str, str | int] = {"labels": label, "state": "all", "per_page": 100}
        tasks: list[Task] = []
        with self._http.session() as client:
            for item in self._paginate(client, url, params):
                if "pull_request" in item:
                    continue
                task = self._task(item)
                if any(name.casefold() == wanted for name in task.labels):
                    tasks.append(task)
        return tasks

    @property
    def location(self) -> str:
        """``github:<owner>/<name>`` (with the API root when it is not api.github.com)."""
        host = "" if self.base_url == GITHUB_API_URL else f"{self.base_url}/"
        return f"github:{host}{self.repo}"

    def list_all_tasks(self, updated_since: datetime | None = None) -> list[Task]:
        """Every issue (any label, open and closed, no pull requests) updated at or after ``updated_since``,
        oldest update first, with assignees (``GET /issues?state=all&sort=updated&direction=asc&since=``).

        Raises:
            ConfigError, BackendUnavailable: as for :meth:`list_tasks`.
        """
        url = f"{self._repo_url()}/issues"
        params: dict[str, str | int] = {"state": "all", "sort": "updated", "direction": "asc", "per_page": 100}
        if updated_since is not None:
            params["since"] = as_utc(updated_since).strftime("%Y-%m-%dT%H:%M:%SZ")
        with self._http.session() as client:
            return [self._task(item) for item in self._paginate(client, url, params) if "pull_request" not in item]

    def list_comments(self, task: Task) -> list[TaskComment]:
        """All comments on the issue ``task``, oldest first.

        Args:
            task: a task keyed ``#<number>``.

        Raises:
            InputError: the task's key is not ``#<number>``.
            ConfigError, BackendUnavailable: as for :meth:`list_tasks`.
        """
        match = _ISSUE_KEY.match(task.key)
        if match is None:
            raise InputError(f"GitHub task key {task.key!r} is not '#<issue number>'")
        url = f"{self._repo_url()}/issues/{match.group(1)}/comments"
        with self._http.session() as client:
            comments = [self._comment(item) for item in self._paginate(client, url, {"per_page": 100})]
        comments.sort(key=lambda comment: comment.created_at)
        return comments

    # ---------------------------------------------------------------------------------------- requests

    def _repo_url(self) -> str:
        owner, name = self.repo.split("/", 1)
        return f"{self.base_url}/repos/{quote(owner, safe='')}/{quote(name, safe='')}"

    def _paginate(
        self, client: httpx.Client, url: str, params: Mapping[str, str | int]
    ) -> Iterator[Mapping[str, Any]]:
        """Yield every item of a list endpoint, following ``Link: rel="next"`` (which carries the query)."""
        next_url: str | None = url
        query: Mapping[str, str | int] | None = params
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            if next_url is None:
                return
            data, response = self._http.get_json(client, next_url, query)
            if not isinstance(data, list):
                raise BackendUnavailable(f"GitHub at {response.request.url} answered without a JSON list")
            yield from (item for item in data if isinstance(item, dict))
            seen.add(str(response.request.url))
            following = response.links.get("next", {}).get("url")
            next_url = following if following and following not in seen else None
            query = None
        raise BackendUnavailable(f"GitHub at {url} kept announcing more pages after {_MAX_PAGES} pages")

    # ---------------------------------------------------------------------------------------- mapping

    def _task(self, item: Mapping[str, Any]) -> Task:
        number = item.get("number")
        key = f"#{number}"
        labels = tuple(
            str(entry.get("name") if isinstance(entry, dict) else entry)
            for entry in item.get("labels") or ()
            if (entry.get("name") if isinstance(entry, dict) else entry)
        )
        created = parse_api_time(item.get("created_at"), f"issue {key} created_at", "GitHub")
        return Task(
            key=key,
            title=str(item.get("title") or "").strip(),
            description=str(item.get("body") or "").strip(),
            labels=labels,
            state=str(item["state"]) if item.get("state") else None,
            url=str(item.get("html_url") or f"https://github.com/{self.repo}/issues/{number}"),
            created_at=created,
            updated_at=parse_api_time(item.get("updated_at"), f"issue {key} updated_at", "GitHub")
            if item.get("updated_at")
            else created,
            tracker=self.kind,
            assignees=_assignees(item),
        )

    def _comment(self, item: Mapping[str, Any]) -> TaskComment:
        comment_id = str(item.get("id") or "")
        user = item.get("user")
        author = str(user["login"]) if isinstance(user, dict) and user.get("login") else None
        return TaskComment(
            id=comment_id,
            author=author,
            created_at=parse_api_time(item.get("created_at"), f"comment {comment_id} created_at", "GitHub"),
            text=str(item.get("body") or "").strip(),
            url=str(item["html_url"]) if item.get("html_url") else None,
        )


def _assignees(item: Mapping[str, Any]) -> tuple[str, ...]:
    """Logins of an issue's ``assignees`` (or its single ``assignee``), in the API's order."""
    people = item.get("assignees") or ([item["assignee"]] if isinstance(item.get("assignee"), dict) else [])
    logins = (str(person["login"]) for person in people if isinstance(person, dict) and person.get("login"))
    return tuple(dict.fromkeys(logins))
