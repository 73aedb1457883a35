"""Every tracker request has a total wall-clock deadline (ADR 0019): a server that trickles its body
or never answers, and a rate limit that would outlast the deadline, end the request at the deadline
with an error naming the URL and the deadline. Real loopback servers, small deadlines."""

from __future__ import annotations

import pytest
from pytest_httpserver import HTTPServer

from mission_memory.config import Settings
from mission_memory.errors import BackendUnavailable
from mission_memory.http_deadline import DeadlineExceeded
from mission_memory.trackers.github import GitHubTracker
from mission_memory.trackers.plane import PlaneTracker
from mission_memory.trackers.registry import make_tracker
from tests.slow_http_servers import slow_http_server
from tests.trackers.conftest import RecordingSleep

PROJECT = b'{"id": "p-1", "identifier": "OPS", "name": "Ops"}' + b" " * 70  # 120 bytes: ~4.8 s at 40 ms/byte


def _plane(base_url: str, deadline: float, sleep: RecordingSleep | None = None) -> PlaneTracker:
    return PlaneTracker(base_url, "ops", "p-1", "k", deadline_seconds=deadline, sleep=sleep or RecordingSleep())


def test_a_plane_server_trickling_its_body_is_cut_off_at_the_deadline_naming_url_and_deadline() -> None:
    with slow_http_server("trickle", PROJECT, interval=0.04) as server, pytest.raises(DeadlineExceeded) as caught:
        _plane(server.url, deadline=1.0).list_tasks()
    message = str(caught.value)
    assert f"{server.url}/api/v1/workspaces/ops/projects/p-1/" in message
    assert "1 s deadline (MISSION_MEMORY_TRACKER_DEADLINE_SECONDS)" in message
    assert isinstance(caught.value, BackendUnavailable)  # the refresher treats it like any outage


def test_a_plane_server_that_never_answers_is_cut_off_at_the_deadline() -> None:
    with slow_http_server("hang") as server, pytest.raises(DeadlineExceeded) as caught:
        _plane(server.url, deadline=1.0).list_tasks()
    assert f"Plane at {server.url}/api/v1/" in str(caught.value) and "1 s deadline" in str(caught.value)
    assert server.requests == 1  # a timeout is not retried within the request


def test_a_github_server_trickling_its_body_is_cut_off_at_the_deadline() -> None:
    with slow_http_server("trickle", b"[]" + b" " * 118, interval=0.04) as server:
        tracker = GitHubTracker("owner/name", None, base_url=server.url, deadline_seconds=1.5,
                                sleep=RecordingSleep())
        with pytest.raises(DeadlineExceeded) as caught:
            tracker.list_tasks()
    assert f"GitHub at {server.url}/repos/owner/name/issues" in str(caught.value)
    assert "1.5 s deadline" in str(caught.value)


def test_a_rate_limit_wait_longer_than_the_time_left_fails_at_once_instead_of_sleeping(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request("/api/v1/workspaces/ops/projects/p-1/").respond_with_data(
        "slow down", status=429, headers={"Retry-After": "30"}
    )
    with pytest.raises(DeadlineExceeded, match=r"rate limited \(HTTP 429\) for another 30 s") as caught:
        _plane(httpserver.url_for("").rstrip("/"), deadline=5.0, sleep=recording_sleep).list_tasks()
    assert "5 s deadline" in str(caught.value)
    assert recording_sleep.waits == []


class _SleepingClock:
    """A monotonic clock that only the injected ``sleep`` advances: waits are counted, never slept."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def test_retries_and_their_waits_share_the_request_deadline(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/repos/owner/name/issues").respond_with_data(
        "busy", status=503, headers={"Retry-After": "4"}
    )
    clock = _SleepingClock()
    tracker = GitHubTracker("owner/name", None, base_url=httpserver.url_for("").rstrip("/"), deadline_seconds=5.0,
                            sleep=clock.sleep, monotonic=clock.monotonic)
    with pytest.raises(DeadlineExceeded, match="HTTP 503 for another 4 s"):
        tracker.list_tasks()
    assert clock.waits == [4.0]  # each 4 s wait fits in 5 s alone; the second would pass the deadline
    assert len(httpserver.log) == 2


def test_the_registry_gives_the_tracker_the_deadline_and_key_from_the_settings() -> None:
    settings = Settings(plane_api_key="k", tracker_deadline_seconds=1.0)
    with slow_http_server("hang") as server:
        tracker = make_tracker("plane", settings=settings, base_url=server.url, workspace="ops", project_id="p-1")
        with pytest.raises(DeadlineExceeded, match="1 s deadline"):
            tracker.list_tasks()
