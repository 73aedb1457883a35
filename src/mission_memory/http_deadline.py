"""Total wall-clock deadlines on outside HTTP calls (trackers, the LLM endpoint): ADR 0019.

httpx's timeouts bound each network operation, not a request: a server that sends its headers and
then one byte every few seconds never trips a 30 s read timeout, and held a refresh pass for
15 minutes. Here a request gets a :class:`Deadline` (a monotonic instant): every httpx timeout of
the request is capped at the time left, the body is streamed and the deadline is checked between
chunks, and a caller's retries and rate-limit waits are checked against the same deadline. When it
passes, :class:`DeadlineExceeded` (a :class:`~mission_memory.errors.BackendUnavailable`) names the
URL, the deadline and the setting that sets it.

Limits: the check runs when a chunk arrives, so a call can end later than its deadline by at most one
gap between two bytes, and that gap is itself bounded by the capped per-read timeout. While the
response *headers* are still arriving only that per-read timeout applies (httpx gives no hook between
header bytes), so a server trickling its headers is bounded per byte, not in total.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from mission_memory.errors import BackendUnavailable

__all__ = ["Deadline", "DeadlineExceeded", "post_json_within", "request_within"]


class DeadlineExceeded(BackendUnavailable):
    """An outside call did not finish within its total deadline (its message names URL and deadline)."""


@dataclass(frozen=True)
class Deadline:
    """A point on a monotonic clock by which an outside call must be done.

    Attributes:
        seconds: the total time allowed, in seconds (for messages).
        expires_at: the instant on ``clock`` at which the time is up.
        setting: what sets ``seconds``, e.g. ``MISSION_MEMORY_TRACKER_DEADLINE_SECONDS`` (for messages).
        clock: monotonic seconds; :func:`time.monotonic` unless a test injects another.
    """

    seconds: float
    expires_at: float
    setting: str
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def start(cls, seconds: float, setting: str, clock: Callable[[], float] = time.monotonic) -> Deadline:
        """A deadline ``seconds`` from now on ``clock``."""
        return cls(seconds=seconds, expires_at=clock() + max(0.0, seconds), setting=setting, clock=clock)

    def remaining(self) -> float:
        """Seconds left, never below 0."""
        return max(0.0, self.expires_at - self.clock())

    @property
    def expired(self) -> bool:
        """True once no time is left."""
        return self.remaining() <= 0.0

    def describe(self) -> str:
        """``"the 30 s deadline (MISSION_MEMORY_...)"``, for error messages."""
        return f"the {self.seconds:g} s deadline ({self.setting})"


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that raises :class:`DeadlineExceeded` between chunks once the deadline passes."""

    def __init__(self, inner: httpx.SyncByteStream, deadline: Deadline, message: str) -> None:
        self._inner = inner
        self._deadline = deadline
        self._message = message

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if self._deadline.expired:
                raise DeadlineExceeded(self._message)
            yield chunk

    def close(self) -> None:
        self._inner.close()


_PHASE = {
    httpx.ConnectTimeout: "connect",
    httpx.ReadTimeout: "read",
    httpx.WriteTimeout: "write",
    httpx.PoolTimeout: "pool",
}


def request_within(
    client: httpx.Client, method: str, url: str, deadline: Deadline, *, service: str, **kwargs: Any
) -> httpx.Response:
    """Send one request and read its whole body before ``deadline``.

    Args:
        client: the httpx client; its timeouts are kept, each capped at the time left.
        method: ``"GET"``, ``"POST"``, ...
        url: absolute URL (``params`` in ``kwargs`` are appended by httpx).
        deadline: when the call must be done.
        service: who is called, for messages ("Plane", "LLM endpoint").
        **kwargs: passed to :meth:`httpx.Client.stream` (``params``, ``json``, ``headers``).

    Returns:
        The response, body read (``.content``, ``.json()`` work), whatever its status.

    Raises:
        DeadlineExceeded: no time is left before sending, the body was still arriving at the deadline,
            or an httpx timeout capped by the deadline fired.
        httpx.HTTPError, httpx.InvalidURL: any other transport failure, for the caller to translate.
    """
    message = f"{service} at {url} did not finish within {deadline.describe()}"
    left = deadline.remaining()
    if left <= 0.0:
        raise DeadlineExceeded(message)
    base = client.timeout
    phases = {"connect": base.connect, "read": base.read, "write": base.write, "pool": base.pool}
    capped = {name: left if value is None else min(value, left) for name, value in phases.items()}
    try:
        with client.stream(method, url, timeout=httpx.Timeout(**capped), **kwargs) as response:
            inner = response.stream
            if isinstance(inner, httpx.SyncByteStream):  # always, on a sync client
                response.stream = _DeadlineStream(inner, deadline, message)
            response.read()
    except httpx.TimeoutException as exc:
        phase = _PHASE.get(type(exc))
        configured = phases.get(phase) if phase else None
        if configured is None or left <= configured:  # the cap, not the client's own timeout, fired
            raise DeadlineExceeded(message) from exc
        raise
    return response


def post_json_within(
    client: httpx.Client | None, url: str, deadline: Deadline, payload: dict[str, Any], *,
    api_key: str | None, service: str, timeout: float,
) -> httpx.Response:
    """POST ``payload`` as JSON with an optional bearer key, body read before ``deadline``.

    Uses ``client`` when given (not closed), else a client of its own with ``timeout`` (seconds),
    closed after the call. See :func:`request_within` for the result and the errors raised.
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    if client is not None:
        return request_within(client, "POST", url, deadline, service=service, json=payload, headers=headers)
    with httpx.Client(timeout=timeout) as own:
        return request_within(own, "POST", url, deadline, service=service, json=payload, headers=headers)
