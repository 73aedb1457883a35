"""GET requests to a tracker's REST API with bounded retries on rate limits and server errors, and the
one place where httpx's failures become mission-memory errors (docs/design.md §11.5 "translate a dependency's
exceptions at one boundary per backend").

Used by ``PlaneTracker`` and ``GitHubTracker``. Policy, per request:

* **429** (or whatever the tracker's ``is_rate_limited`` says, e.g. GitHub's 403 with
  ``X-RateLimit-Remaining: 0``): wait ``Retry-After`` seconds (a number or an HTTP date), else until
  ``X-RateLimit-Reset`` (Unix seconds; small values are read as seconds from now), else an exponential
  backoff (1, 2, 4, ... s, capped at 60 s); then retry, at most ``max_retries`` times.
* **5xx**: ``Retry-After`` when sent (503), else exponential backoff, and retry, at most ``max_retries``
  times; then ``BackendUnavailable``.
* **A success with ``X-RateLimit-Remaining: 0``**: the wait until the reset is paid before the *next*
  request, so a paginated walk never trips the limit (Plane allows 60 requests/minute per key).
* Any single wait longer than :data:`MAX_WAIT_SECONDS` raises ``BackendUnavailable`` instead of blocking
  a refresh pass for up to an hour.
* **401/403** -> ``ConfigError`` naming the credential setting; **404** -> ``ConfigError`` naming the
  settings that locate the project; other 4xx -> ``BackendUnavailable`` with the status.
* Connection refused, timeouts and other transport errors -> ``BackendUnavailable`` naming the URL, not
  retried here (the refresher's next pass is the retry).
* **A total deadline per request** (``deadline_seconds``, ``MISSION_MEMORY_TRACKER_DEADLINE_SECONDS``,
  ADR 0019): the attempts, their bodies (streamed, checked between chunks), the retries and every wait
  share one wall-clock deadline; a wait that would pass it, or a body still arriving at it, raises
  :class:`~mission_memory.http_deadline.DeadlineExceeded` naming the URL and the deadline.

Time is injected (``sleep``, ``clock``), so tests never sleep.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx

from mission_memory.errors import BackendUnavailable, ConfigError
from mission_memory.http_deadline import Deadline, DeadlineExceeded, request_within

__all__ = ["DEADLINE_SETTING", "DEFAULT_DEADLINE_SECONDS", "MAX_WAIT_SECONDS", "RateLimitedHttp"]

DEFAULT_DEADLINE_SECONDS = 300.0
"""Default total wall-clock seconds of one request, retries and waits included."""

DEADLINE_SETTING = "MISSION_MEMORY_TRACKER_DEADLINE_SECONDS"

MAX_WAIT_SECONDS = 900.0
"""Longest single wait (seconds) for a rate limit to lift before giving up with BackendUnavailable."""

_BACKOFF_BASE_SECONDS = 1.0
_BACKOFF_CAP_SECONDS = 60.0
_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
_EPOCH_THRESHOLD = 1_000_000_000.0  # a reset value above this is a Unix time, below it a delta in seconds


def _is_429(response: httpx.Response) -> bool:
    return response.status_code == 429


class RateLimitedHttp:
    """Bounded-retry JSON GETs against one tracker API.

    Args:
        service: the tracker's name for messages ("Plane", "GitHub").
        headers: headers sent with every request (credentials, Accept, User-Agent).
        credential_setting: what to fix on 401/403, e.g. ``"MISSION_MEMORY_PLANE_API_KEY"``.
        location_setting: what to fix on 404, e.g. ``"--plane-workspace / --plane-project"``.
        client: an httpx client to use (never closed here); None opens a client per :meth:`session`.
        max_retries: retries after the first attempt for rate limits and 5xx (>= 0).
        sleep: called with seconds to wait.
        clock: current Unix time in seconds.
        is_rate_limited: says whether a non-2xx response is a rate limit; default: status 429.
        deadline_seconds: total wall-clock seconds one :meth:`get_json` may take, retries and
            waits included (> 0).
        monotonic: the clock the deadline is measured on.

    Raises:
        ConfigError: ``max_retries`` < 0 or ``deadline_seconds`` <= 0.
    """

    def __init__(
        self,
        *,
        service: str,
        headers: Mapping[str, str],
        credential_setting: str,
        location_setting: str,
        client: httpx.Client | None,
        max_retries: int,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
        is_rate_limited: Callable[[httpx.Response], bool] = _is_429,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_retries < 0:
            raise ConfigError(f"{service} tracker: max_retries must be >= 0, got {max_retries}")
        if not deadline_seconds > 0:
            raise ConfigError(f"{service} tracker: {DEADLINE_SETTING} must be > 0, got {deadline_seconds}")
        self.deadline_seconds = deadline_seconds
        self._monotonic = monotonic
        self.service = service
        self._headers = dict(headers)
        self._credential_setting = credential_setting
        self._location_setting = location_setting
        self._client = client
        self._max_retries = max_retries
        self._sleep = sleep
        self._clock = clock
        self._is_rate_limited = is_rate_limited
        self._resume_at: float | None = None  # Unix time before which the next request must not go out

    @contextmanager
    def session(self) -> Iterator[httpx.Client]:
        """The injected client, or a fresh one that is closed when the block ends."""
        if self._client is not None:
            yield self._client
            return
        with httpx.Client(timeout=_TIMEOUT, follow_redirects=True) as client:
            yield client

    def get_json(
        self, client: httpx.Client, url: str, params: Mapping[str, str | int] | None = None
    ) -> tuple[Any, httpx.Response]:
        """GET ``url`` and decode its JSON body, applying the retry policy of this module.

        Args:
            client: from :meth:`session`.
            url: absolute URL.
            params: query parameters.

        Returns:
            ``(decoded_json, response)``; the response is kept for its headers (``Link``).

        Raises:
            ConfigError: 401/403 (credentials), 404 (workspace/project/repository), invalid URL.
            BackendUnavailable: unreachable, timeout, 5xx or rate limit after the retries, a wait longer
                than :data:`MAX_WAIT_SECONDS`, other 4xx, a body that is not JSON.
            DeadlineExceeded: (a BackendUnavailable) the request, its retries and waits did not fit in
                ``deadline_seconds``.
        """
        deadline = Deadline.start(self.deadline_seconds, DEADLINE_SETTING, self._monotonic)
        attempt = 0
        while True:
            self._wait_for_pacing(url, deadline)
            response = self._send(client, url, params, deadline)
            status = response.status_code
            if 200 <= status < 300:
                self._note_pacing(response)
                return self._decode(response), response
            if self._is_rate_limited(response):
                delay = self._rate_limit_delay(response, attempt)
                what = f"rate limited (HTTP {status})"
            elif status >= 500:
                hinted = _retry_after_seconds(response.headers.get("Retry-After"), self._clock())
                delay = self._backoff(attempt) if hinted is None else hinted
                what = f"HTTP {status}"
            else:
                raise self._client_error(response)
            if attempt >= self._max_retries:
                raise BackendUnavailable(
                    f"{self.service} at {response.request.url} still {what} after "
                    f"{self._max_retries} retries; try again later"
                )
            self._wait(delay, url, what, deadline)
            attempt += 1

    # ------------------------------------------------------------------------------------------ sending

    def _send(
        self, client: httpx.Client, url: str, params: Mapping[str, str | int] | None, deadline: Deadline
    ) -> httpx.Response:
        try:
            # params=None keeps a query already in the URL (a Link "next" URL); {} would drop it
            return request_within(
                client, "GET", url, deadline, service=self.service,
                params=dict(params) if params else None, headers=self._headers,
            )
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise ConfigError(f"{self.service} URL {url!r} is not usable: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise BackendUnavailable(f"{self.service} at {url} timed out: {exc}") from exc
        except httpx.TransportError as exc:
            raise BackendUnavailable(f"{self.service} at {url} cannot be reached: {exc}") from exc

    def _decode(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise BackendUnavailable(
                f"{self.service} at {response.request.url} answered HTTP {response.status_code} "
                f"with a body that is not JSON"
            ) from exc

    def _client_error(self, response: httpx.Response) -> Exception:
        status = response.status_code
        url = response.request.url
        if status in (401, 403):
            return ConfigError(
                f"{self.service} refused the credentials (HTTP {status}) for GET {url}: "
                f"check {self._credential_setting}"
            )
        if status == 404:
            return ConfigError(
                f"{self.service} has no such resource (HTTP 404) at {url}: check {self._location_setting}"
            )
        detail = response.text[:200].strip()
        return BackendUnavailable(f"{self.service} answered HTTP {status} for GET {url}: {detail}")

    # ------------------------------------------------------------------------------------------ waiting

    def _backoff(self, attempt: int) -> float:
        return float(min(_BACKOFF_CAP_SECONDS, _BACKOFF_BASE_SECONDS * 2**attempt))

    def _rate_limit_delay(self, response: httpx.Response, attempt: int) -> float:
        retry_after = _retry_after_seconds(response.headers.get("Retry-After"), self._clock())
        if retry_after is not None:
            return retry_after
        reset = self._reset_at(response)
        if reset is not None:
            return max(0.0, reset - self._clock())
        return self._backoff(attempt)

    def _reset_at(self, response: httpx.Response) -> float | None:
        """``X-RateLimit-Reset`` as a Unix time, or None when absent or unreadable."""
        raw = response.headers.get("X-RateLimit-Reset")
        if raw is None:
            return None
        try:
            value = float(raw.strip())
        except ValueError:
            return None
        return value if value >= _EPOCH_THRESHOLD else self._clock() + max(0.0, value)

    def _wait(self, seconds: float, url: str, why: str, deadline: Deadline) -> None:
        if seconds > MAX_WAIT_SECONDS:
            raise BackendUnavailable(
                f"{self.service} at {url} is {why} for another {seconds:.0f} s "
                f"(more than {MAX_WAIT_SECONDS:.0f} s); try again later"
            )
        if seconds > 0 and seconds >= deadline.remaining():
            raise DeadlineExceeded(
                f"{self.service} at {url} is {why} for another {seconds:.0f} s, which would pass "
                f"{deadline.describe()} of the request; try again later"
            )
        if seconds > 0:
            self._sleep(seconds)

    def _note_pacing(self, response: httpx.Response) -> None:
        """After a success that used up the quota, hold the next request until the reset."""
        remaining = response.headers.get("X-RateLimit-Remaining")
        if remaining is None or remaining.strip() != "0":
            return
        self._resume_at = self._reset_at(response)

    def _wait_for_pacing(self, url: str, deadline: Deadline) -> None:
        if self._resume_at is None:
            return
        resume_at, self._resume_at = self._resume_at, None
        self._wait(resume_at - self._clock(), url, "out of request quota", deadline)


def _retry_after_seconds(raw: str | None, now: float) -> float | None:
    """``Retry-After`` as seconds from ``now``: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if raw is None:
        return None
    text = raw.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now)
