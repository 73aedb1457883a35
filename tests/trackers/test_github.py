"""GitHubTracker against a real HTTP server on loopback serving GitHub REST's documented JSON shapes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from mission_memory.errors import BackendUnavailable, ConfigError, InputError
from mission_memory.trackers.base import Task
from mission_memory.trackers.github import GitHubTracker
from tests.trackers.conftest import FIXED_NOW, RecordingSleep

REPO = "field-ops/uploader"
TOKEN = "ghp_test_0123456789"
ISSUES = f"/repos/{REPO}/issues"
FIRST_QUERY = {"labels": "LONG-TERM", "state": "all", "per_page": "100"}


def issue(
    number: int, title: str, body: str | None, labels: list[str], *, pull: bool = False
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "url": f"https://api.github.com/repos/{REPO}/issues/{number}",
        "html_url": f"https://github.com/{REPO}/issues/{number}",
        "id": 1000 + number,
        "node_id": f"I_kw{number}",
        "number": number,
        "title": title,
        "user": {"login": "olena", "id": 7},
        "labels": [
            {"id": 90 + i, "name": name, "color": "ededed", "default": False} for i, name in enumerate(labels)
        ],
        "state": "open" if number % 2 else "closed",
        "locked": False,
        "comments": 2,
        "created_at": f"2025-03-{number % 28 + 1:02d}T08:00:00Z",
        "updated_at": f"2025-04-{number % 28 + 1:02d}T09:30:00+02:00",
        "closed_at": None,
        "body": body,
    }
    if pull:
        item["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"}
    return item


def comment(comment_id: int, login: str, body: str, created: str) -> dict[str, Any]:
    return {
        "id": comment_id,
        "html_url": f"https://github.com/{REPO}/issues/45#issuecomment-{comment_id}",
        "user": {"login": login, "id": 3},
        "body": body,
        "created_at": created,
        "updated_at": created,
        "author_association": "MEMBER",
    }


def tracker(
    server_or_url: HTTPServer | str, sleep: RecordingSleep, token: str | None = TOKEN, **kwargs: Any
) -> GitHubTracker:
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.url_for("/").rstrip("/")
    return GitHubTracker(REPO, token, base_url=url, sleep=sleep, clock=lambda: FIXED_NOW, **kwargs)


def serve_issues(server: HTTPServer) -> None:
    next_link = (
        f'<{server.url_for(ISSUES)}?labels=LONG-TERM&state=all&per_page=100&page=2>; rel="next", '
        f'<{server.url_for(ISSUES)}?labels=LONG-TERM&state=all&per_page=100&page=2>; rel="last"'
    )
    server.expect_request(
        ISSUES, query_string=FIRST_QUERY, headers={"Authorization": f"Bearer {TOKEN}"}
    ).respond_with_json(
        [
            issue(45, "Retry antivirus checks", "Retry **three** times.", ["LONG-TERM", "antivirus"]),
            issue(46, "Bump deps", "", ["LONG-TERM"], pull=True),
        ],
        headers={"Link": next_link},
    )
    server.expect_request(ISSUES, query_string={**FIRST_QUERY, "page": "2"}).respond_with_json(
        [issue(12, "Черга повторних спроб", None, ["long-term"])],
        headers={
            "Link": f'<{server.url_for(ISSUES)}?labels=LONG-TERM&state=all&per_page=100&page=1>; rel="prev"'
        },
    )


def test_lists_labelled_issues_across_link_pages_and_skips_pull_requests(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    serve_issues(httpserver)

    tasks = tracker(httpserver, recording_sleep).list_tasks()

    assert [task.key for task in tasks] == ["#45", "#12"]
    first, second = tasks
    assert first.title == "Retry antivirus checks"
    assert first.description == "Retry **three** times."
    assert first.labels == ("LONG-TERM", "antivirus")
    assert first.state == "open"
    assert first.url == f"https://github.com/{REPO}/issues/45"
    assert first.created_at == datetime(2025, 3, 18, 8, 0, tzinfo=UTC)
    assert first.updated_at == datetime(2025, 4, 18, 7, 30, tzinfo=UTC)
    assert first.tracker == "github"
    assert second.title == "Черга повторних спроб"
    assert second.description == ""
    assert second.state == "closed"
    assert recording_sleep.waits == []
    httpserver.check_assertions()


def test_comments_follow_pagination_and_come_oldest_first(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    comments_path = f"{ISSUES}/45/comments"
    httpserver.expect_request(comments_path, query_string={"per_page": "100"}).respond_with_json(
        [comment(2, "olena", "Чи варто обмежити кількість спроб?", "2025-03-02T10:00:00Z")],
        headers={"Link": f'<{httpserver.url_for(comments_path)}?per_page=100&page=2>; rel="next"'},
    )
    httpserver.expect_request(comments_path, query_string={"per_page": "100", "page": "2"}).respond_with_json(
        [comment(1, "bot", "Started.", "2025-03-01T10:00:00Z")]
    )
    task = Task(
        key="#45",
        title="t",
        description="",
        labels=(),
        state="open",
        url="u",
        created_at=datetime(2025, 3, 1, tzinfo=UTC),
        updated_at=datetime(2025, 3, 1, tzinfo=UTC),
    )

    comments = tracker(httpserver, recording_sleep).list_comments(task)

    assert [(c.id, c.author, c.text) for c in comments] == [
        ("1", "bot", "Started."),
        ("2", "olena", "Чи варто обмежити кількість спроб?"),
    ]
    assert comments[0].created_at == datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
    assert comments[1].url is not None and comments[1].url.endswith("#issuecomment-2")


def test_a_task_key_that_is_not_an_issue_number_is_an_input_error(recording_sleep: RecordingSleep) -> None:
    task = Task(
        key="OPS-7",
        title="t",
        description="",
        labels=(),
        state=None,
        url="u",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        updated_at=datetime(2025, 1, 1, tzinfo=UTC),
    )
    with pytest.raises(InputError, match="OPS-7"):
        tracker("http://127.0.0.1:9", recording_sleep).list_comments(task)


def test_a_bad_token_raises_config_error_naming_the_setting(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(ISSUES).respond_with_json(
        {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}, status=401
    )

    with pytest.raises(ConfigError, match="MISSION_MEMORY_GITHUB_TOKEN"):
        tracker(httpserver, recording_sleep).list_tasks()


def test_a_403_without_rate_limit_headers_is_a_config_error(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(ISSUES).respond_with_json(
        {"message": "Resource not accessible by personal access token"},
        status=403,
        headers={"X-RateLimit-Remaining": "4999"},
    )

    with pytest.raises(ConfigError, match="MISSION_MEMORY_GITHUB_TOKEN"):
        tracker(httpserver, recording_sleep).list_tasks()
    assert recording_sleep.waits == []


def test_an_unknown_repository_raises_config_error_naming_it(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(ISSUES).respond_with_json({"message": "Not Found"}, status=404)

    with pytest.raises(ConfigError, match=REPO):
        tracker(httpserver, recording_sleep).list_tasks()


def test_a_primary_rate_limit_403_waits_until_the_reset_then_succeeds(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    serve_issues(httpserver)
    httpserver.expect_oneshot_request(ISSUES, query_string=FIRST_QUERY).respond_with_json(
        {"message": "API rate limit exceeded"},
        status=403,
        headers={
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int(FIXED_NOW) + 120),
        },
    )

    assert [task.key for task in tracker(httpserver, recording_sleep).list_tasks()] == ["#45", "#12"]
    assert recording_sleep.waits == [120.0]


def test_a_secondary_rate_limit_waits_for_retry_after(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    serve_issues(httpserver)
    httpserver.expect_oneshot_request(ISSUES, query_string={**FIRST_QUERY, "page": "2"}).respond_with_json(
        {"message": "You have exceeded a secondary rate limit."}, status=403, headers={"Retry-After": "30"}
    )

    assert len(tracker(httpserver, recording_sleep).list_tasks()) == 2
    assert recording_sleep.waits == [30.0]


def test_a_429_then_success_retries_once(httpserver: HTTPServer, recording_sleep: RecordingSleep) -> None:
    serve_issues(httpserver)
    httpserver.expect_oneshot_request(ISSUES, query_string=FIRST_QUERY).respond_with_json(
        {"message": "Too many requests"}, status=429, headers={"Retry-After": "5"}
    )

    assert len(tracker(httpserver, recording_sleep).list_tasks()) == 2
    assert recording_sleep.waits == [5.0]


def test_a_lasting_500_raises_backend_unavailable_after_bounded_retries(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(ISSUES).respond_with_data("oops", status=500)

    with pytest.raises(BackendUnavailable, match=r"HTTP 500 after 5 retries"):
        tracker(httpserver, recording_sleep).list_tasks()
    assert recording_sleep.waits == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert len(httpserver.log) == 6


def test_a_closed_port_raises_backend_unavailable_naming_the_url(
    closed_port_url: str, recording_sleep: RecordingSleep
) -> None:
    with pytest.raises(BackendUnavailable, match=closed_port_url.replace(".", r"\.")):
        tracker(closed_port_url, recording_sleep).list_tasks()


def test_without_a_token_no_authorization_header_is_sent(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    httpserver.expect_request(ISSUES).respond_with_json([])

    assert tracker(httpserver, recording_sleep, token=None).list_tasks() == []
    request, _ = httpserver.log[0]
    assert "Authorization" not in request.headers
    assert request.headers["Accept"] == "application/vnd.github+json"


def test_a_repository_that_is_not_owner_slash_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="owner/name"):
        GitHubTracker("just-a-name", None)


def test_a_secondary_rate_limit_without_headers_is_retried_not_taken_for_bad_credentials(
    httpserver: HTTPServer, recording_sleep: RecordingSleep
) -> None:
    serve_issues(httpserver)
    httpserver.expect_oneshot_request(ISSUES, query_string=FIRST_QUERY).respond_with_json(
        {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}, status=403
    )

    assert len(tracker(httpserver, recording_sleep).list_tasks()) == 2
    assert recording_sleep.waits == [1.0]
