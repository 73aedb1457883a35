"""PlaneTracker against a real HTTP server on loopback serving Plane API v1's documented JSON shapes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from pytest_httpserver import HTTPServer

from mission_memory.errors import BackendUnavailable, ConfigError
from mission_memory.trackers.base import Task
from mission_memory.trackers.plane import PlaneTracker, html_to_text
from mission_memory.trackers.rate_limited_http import MAX_WAIT_SECONDS
from tests.trackers.conftest import FIXED_NOW, RecordingSleep

SLUG = "field-ops"
PROJECT = "4af68566-94a4-4eb3-94aa-50dc9427067b"
KEY = "plane_api_0123456789abcdef"
BASE = f"/api/v1/workspaces/{SLUG}/projects/{PROJECT}"
LONG_TERM = "6c7e4a52-1b7e-4d1a-9a61-6b1f1e9f0a01"
BUG = "6c7e4a52-1b7e-4d1a-9a61-6b1f1e9f0a02"
ITEM_7 = "8f4c2b1e-0d3a-4f7b-9c21-6e5a8b7d4f07"
ITEM_8 = "8f4c2b1e-0d3a-4f7b-9c21-6e5a8b7d4f08"
ITEM_9 = "8f4c2b1e-0d3a-4f7b-9c21-6e5a8b7d4f09"


def envelope(results: list[dict[str, Any]], *, page: int, more: bool, total: int) -> dict[str, Any]:
    """Plane's cursor pagination envelope (plane/utils/paginator.py ``BasePaginator.paginate``)."""
    return {
        "grouped_by": None,
        "sub_grouped_by": None,
        "total_count": total,
        "next_cursor": f"100:{page + 1}:0",
        "prev_cursor": f"100:{page - 1}:1",
        "next_page_results": more,
        "prev_page_results": page > 0,
        "count": len(results),
        "total_pages": 2,
        "total_results": total,
        "extra_stats": None,
        "results": results,
    }


def work_item(
    item_id: str, sequence_id: int, name: str, labels: list[str], html: str, stripped: str
) -> dict[str, Any]:
    return {
        "id": item_id,
        "name": name,
        "description_html": html,
        "description_stripped": stripped,
        "sequence_id": sequence_id,
        "priority": "high",
        "state": {
            "id": "f960d3c2-8524-4a41-b8eb-055ce4be2a7f",
            "name": "In Progress",
            "color": "#f59e0b",
            "group": "started",
        },
        "labels": labels,
        "assignees": [],
        "parent": None,
        "estimate_point": None,
        "start_date": None,
        "target_date": None,
        "is_draft": False,
        "archived_at": None,
        "created_at": f"2025-01-{sequence_id:02d}T09:00:00.123456Z",
        "updated_at": f"2025-02-{sequence_id:02d}T10:30:00+02:00",
        "created_by": "16c61a3a-512a-48ac-b0be-b6b46fe6f430",
        "project": PROJECT,
        "workspace": "b1c2d3e4-0000-4000-8000-000000000000",
    }


PROJECT_JSON = {
    "id": PROJECT,
    "identifier": "OPS",
    "name": "Field operations",
    "description": "",
    "network": 2,
    "created_at": "2024-06-01T08:00:00Z",
}

LABELS_PAGE_1 = envelope(
    [{"id": LONG_TERM, "name": "LONG-TERM", "color": "#000000", "project": PROJECT, "parent": None}],
    page=0,
    more=True,
    total=2,
)
LABELS_PAGE_2 = envelope(
    [{"id": BUG, "name": "bug", "color": "#ff0000", "project": PROJECT, "parent": None}],
    page=1,
    more=False,
    total=2,
)
ITEMS_PAGE_1 = envelope(
    [
        work_item(
            ITEM_7,
            7,
            "Retry antivirus checks",
            [LONG_TERM],
            "<p>Retry <strong>three</strong> times &amp; log.</p>",
            "Retry three times & log.",
        ),
        work_item(ITEM_8, 8, "Fix the login redirect", [BUG], "<p>Redirect loops.</p>", "Redirect loops."),
    ],
    page=0,
    more=True,
    total=3,
)
ITEMS_PAGE_2 = envelope(
    [
        work_item(
            ITEM_9,
            9,
            "Черга повторних спроб",
            [BUG, LONG_TERM],
            "<p>Перевірка файлів</p><ul><li>раз</li><li>два</li></ul>",
            "Перевірка файлів раз два",
        )
    ],
    page=1,
    more=False,
    total=3,
)
COMMENTS = envelope(
    [
        {
            "id": "c-2",
            "comment_html": "<p>Чи варто обмежити кількість спроб?</p>",
            "actor": {"id": "u-2", "first_name": "Олена", "last_name": "Коваль", "display_name": "olena"},
            "created_by": "u-2",
            "created_at": "2025-01-12T10:00:00Z",
            "access": "INTERNAL",
        },
        {
            "id": "c-1",
            "comment_html": "<p>Started on <code>scan.py</code>.</p>",
            "actor": "u-1",
            "created_by": "u-1",
            "created_at": "2025-01-11T08:00:00+02:00",
            "access": "INTERNAL",
        },
    ],
    page=0,
    more=False,
    total=2,
)


def serve_project(server: HTTPServer) -> None:
    headers = {"X-API-Key": KEY}
    server.expect_request(f"{BASE}/", headers=headers).respond_with_json(PROJECT_JSON)
    server.expect_request(
        f"{BASE}/labels/", query_string={"per_page": "100"}, headers=headers
    ).respond_with_json(LABELS_PAGE_1)
    server.expect_request(
        f"{BASE}/labels/", query_string={"per_page": "100", "cursor": "100:1:0"}, headers=headers
    ).respond_with_json(LABELS_PAGE_2)
    server.expect_request(
        f"{BASE}/work-items/", query_string={"expand": "state", "per_page": "100"}, headers=headers
    ).respond_with_json(ITEMS_PAGE_1)
    server.expect_request(
        f"{BASE}/work-items/",
        query_string={"expand": "state", "per_page": "100", "cursor": "100:1:0"},
        headers=headers,
    ).respond_with_json(ITEMS_PAGE_2)


def tracker(server_or_url: HTTPServer | str, sleep: RecordingSleep, **kwargs: Any) -> PlaneTracker:
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.url_for("/").rstrip("/")
    return PlaneTracker(url, SLUG, PROJECT, KEY, sleep=sleep, clock=lambda: FIXED_NOW, **kwargs)


@pytest.fixture
def served(httpserver: HTTPServer) -> Iterator[HTTPServer]:
    serve_project(httpserver)
    yield httpserver
    httpserver.check_assertions()


def test_lists_long_term_work_items_from_both_pages_with_keys_and_label_names(
    served: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    tasks = tracker(served, recording_sleep).list_tasks()

    assert [task.key for task in tasks] == ["OPS-7", "OPS-9"]
    seven, nine = tasks
    assert seven.title == "Retry antivirus checks"
    assert seven.description == "Retry three times & log."
    assert seven.labels == ("LONG-TERM",)
    assert seven.state == "In Progress"
    assert seven.tracker == "plane"
    assert seven.created_at == datetime(2025, 1, 7, 9, 0, 0, 123456, tzinfo=UTC)
    assert seven.updated_at == datetime(2025, 2, 7, 8, 30, tzinfo=UTC)
    assert seven.url.endswith(f"/{SLUG}/browse/OPS-7/")
    assert nine.title == "Черга повторних спроб"
    assert nine.labels == ("bug", "LONG-TERM")
    assert nine.description == "Перевірка файлів\n\n- раз\n- два"
    assert recording_sleep.waits == []


def test_label_matching_ignores_case(served: HTTPServer, recording_sleep: RecordingSleep) -> None:
    assert [task.key for task in tracker(served, recording_sleep).list_tasks("Bug")] == ["OPS-8", "OPS-9"]


def test_comments_come_oldest_first_as_plain_text_with_author_names(
    served: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    served.expect_request(
        f"{BASE}/work-items/{ITEM_9}/comments/", query_string={"expand": "actor", "per_page": "100"}
    ).respond_with_json(COMMENTS)
    plane = tracker(served, recording_sleep)
    nine = plane.list_tasks()[1]

    comments = plane.list_comments(nine)

    assert [comment.id for comment in comments] == ["c-1", "c-2"]
    assert comments[0].text == "Started on scan.py."
    assert comments[0].author == "u-1"
    assert comments[0].created_at == datetime(2025, 1, 11, 6, 0, tzinfo=UTC)
    assert comments[1].text == "Чи варто обмежити кількість спроб?"
    assert comments[1].author == "olena"


def test_comments_of_a_task_it_did_not_list_resolve_the_work_item_by_identifier(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(f"/api/v1/workspaces/{SLUG}/work-items/OPS-9/").respond_with_json(
        work_item(ITEM_9, 9, "Черга", [LONG_TERM], "", "")
    )
    httpserver.expect_request(f"{BASE}/work-items/{ITEM_9}/comments/").respond_with_json(COMMENTS)
    task = Task(
        key="OPS-9",
        title="Черга",
        description="",
        labels=("LONG-TERM",),
        state=None,
        url="u",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        updated_at=datetime(2025, 1, 1, tzinfo=UTC),
    )

    comments = tracker(httpserver, recording_sleep).list_comments(task)

    assert len(comments) == 2
    httpserver.check_assertions()


def test_a_rejected_api_key_raises_config_error_naming_the_setting(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(f"{BASE}/").respond_with_json(
        {"detail": "Authentication credentials were not provided."}, status=401
    )

    with pytest.raises(ConfigError, match="MISSION_MEMORY_PLANE_API_KEY"):
        tracker(httpserver, recording_sleep).list_tasks()
    assert recording_sleep.waits == []


def test_an_unknown_project_raises_config_error_naming_the_project(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(f"{BASE}/").respond_with_json({"error": "Project not found"}, status=404)

    with pytest.raises(ConfigError, match=PROJECT):
        tracker(httpserver, recording_sleep).list_tasks()


def test_a_429_waits_for_retry_after_then_succeeds(
    served: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    served.expect_oneshot_request(f"{BASE}/labels/", query_string={"per_page": "100"}).respond_with_json(
        {"detail": "Request was throttled. Expected available in 7 seconds."},
        status=429,
        headers={"Retry-After": "7"},
    )

    tasks = tracker(served, recording_sleep).list_tasks()

    assert [task.key for task in tasks] == ["OPS-7", "OPS-9"]
    assert recording_sleep.waits == [7.0]


def test_a_429_without_retry_after_waits_until_the_rate_limit_reset(
    served: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    served.expect_oneshot_request(f"{BASE}/").respond_with_json(
        {"detail": "throttled"}, status=429, headers={"X-RateLimit-Reset": str(int(FIXED_NOW) + 42)}
    )

    tracker(served, recording_sleep).list_tasks()

    assert recording_sleep.waits == [42.0]


def test_a_429_with_no_hint_backs_off_exponentially_and_gives_up_after_the_retries(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(f"{BASE}/").respond_with_json({"detail": "throttled"}, status=429)

    with pytest.raises(BackendUnavailable, match="rate limited"):
        tracker(httpserver, recording_sleep, max_retries=3).list_tasks()
    assert recording_sleep.waits == [1.0, 2.0, 4.0]
    assert len(httpserver.log) == 4


def test_a_rate_limit_that_lifts_too_late_raises_instead_of_blocking(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(f"{BASE}/").respond_with_json(
        {"detail": "throttled"}, status=429, headers={"Retry-After": str(int(MAX_WAIT_SECONDS) + 1)}
    )

    with pytest.raises(BackendUnavailable, match="try again later"):
        tracker(httpserver, recording_sleep).list_tasks()
    assert recording_sleep.waits == []


def test_a_used_up_quota_holds_the_next_request_until_the_reset(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    serve_project(httpserver)
    httpserver.clear_all_handlers()
    quota = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(FIXED_NOW) + 60)}
    httpserver.expect_request(f"{BASE}/").respond_with_json(PROJECT_JSON, headers=quota)
    httpserver.expect_request(f"{BASE}/labels/").respond_with_json(envelope([], page=0, more=False, total=0))
    httpserver.expect_request(f"{BASE}/work-items/").respond_with_json(
        envelope([], page=0, more=False, total=0)
    )

    assert tracker(httpserver, recording_sleep).list_tasks() == []
    assert recording_sleep.waits == [60.0]


def test_a_500_is_retried_then_raises_backend_unavailable_naming_the_url(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(f"{BASE}/").respond_with_data("upstream exploded", status=500)

    with pytest.raises(BackendUnavailable, match=rf"{httpserver.host}:{httpserver.port}.*HTTP 500"):
        tracker(httpserver, recording_sleep, max_retries=2).list_tasks()
    assert recording_sleep.waits == [1.0, 2.0]
    assert len(httpserver.log) == 3


def test_a_passing_500_is_retried_and_the_listing_completes(
    served: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    served.expect_oneshot_request(
        f"{BASE}/work-items/", query_string={"expand": "state", "per_page": "100", "cursor": "100:1:0"}
    ).respond_with_data("bad gateway", status=502)

    assert [task.key for task in tracker(served, recording_sleep).list_tasks()] == ["OPS-7", "OPS-9"]
    assert recording_sleep.waits == [1.0]


def test_a_closed_port_raises_backend_unavailable_naming_the_url(
    closed_port_url: str, recording_sleep: RecordingSleep
) -> None:
    with pytest.raises(BackendUnavailable, match=closed_port_url.replace(".", r"\.")):
        tracker(closed_port_url, recording_sleep).list_tasks()


def test_an_injected_client_is_used_and_left_open(
    served: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    with httpx.Client() as client:
        tracker(served, recording_sleep, client=client).list_tasks()
        assert not client.is_closed


def test_a_missing_api_key_or_bad_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="MISSION_MEMORY_PLANE_API_KEY"):
        PlaneTracker("https://api.plane.so", SLUG, PROJECT, "")
    with pytest.raises(ConfigError, match="--plane-url"):
        PlaneTracker("api.plane.so", SLUG, PROJECT, KEY)


def test_html_to_text_keeps_paragraphs_and_list_items_and_drops_tags() -> None:
    assert html_to_text("<p></p>") == ""
    assert html_to_text("plain &amp; simple") == "plain & simple"
    assert (
        html_to_text("<h2>План</h2><p>Крок&nbsp;1<br/>Крок 2</p><script>x()</script>")
        == "План\n\nКрок 1\nКрок 2"
    )
