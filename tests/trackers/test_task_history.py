"""TaskHistory: every task (any label) changed since a moment, with assignees, from each tracker
(local files on disk; GitHub over real HTTP on loopback; Plane's is covered in tests/ingest/test_tracker_items.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pytest_httpserver import HTTPServer

from mission_memory.trackers.github import GitHubTracker
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.trackers.conftest import FIXED_NOW, RecordingSleep

TASK = """---
title: {title}
labels: [{labels}]
{extra}created: 2025-01-10T09:00:00Z
updated: {updated}
---

Body.
"""


def test_local_tasks_of_any_label_since_a_moment_with_assignees(tmp_path: Path) -> None:
    (tmp_path / "OPS-1.md").write_text(TASK.format(title="Old", labels="LONG-TERM", extra="assignee: Олена\n",
                                                   updated="2025-01-11T00:00:00Z"), encoding="utf-8")
    (tmp_path / "OPS-2.md").write_text(TASK.format(title="New", labels="bug", extra="assignees: [taras, olena]\n",
                                                   updated="2025-02-01T00:00:00Z"), encoding="utf-8")
    (tmp_path / "OPS-3.md").write_text("no front matter", encoding="utf-8")
    tracker = LocalFolderTracker(tmp_path)
    every = tracker.list_all_tasks()
    assert [(t.key, t.assignees) for t in every] == [("OPS-1", ("Олена",)), ("OPS-2", ("taras", "olena"))]
    assert [t.key for t in tracker.list_all_tasks(datetime(2025, 2, 1, tzinfo=UTC))] == ["OPS-2"]
    assert [item for item, _ in tracker.unreadable_items()] == ["OPS-3"]
    assert [t.key for t in tracker.list_tasks()] == ["OPS-1"]  # the refresh listing is unchanged
    assert tracker.location == f"local:{tmp_path.resolve()}"


def test_github_lists_every_issue_updated_since_oldest_first_with_assignees(httpserver: HTTPServer) -> None:
    repo = "field-ops/uploader"
    httpserver.expect_request(
        f"/repos/{repo}/issues",
        query_string={"state": "all", "sort": "updated", "direction": "asc", "per_page": "100",
                      "since": "2025-04-01T07:30:00Z"},
    ).respond_with_json([
        {"number": 5, "title": "One assignee", "body": None, "state": "open", "labels": [],
         "html_url": f"https://github.com/{repo}/issues/5", "created_at": "2025-04-01T08:00:00Z",
         "updated_at": "2025-04-02T08:00:00Z", "assignee": {"login": "olena"}},
        {"number": 6, "title": "Two", "body": "", "state": "closed", "labels": [{"name": "bug"}],
         "html_url": f"https://github.com/{repo}/issues/6", "created_at": "2025-04-01T08:00:00Z",
         "updated_at": "2025-04-03T08:00:00Z", "assignees": [{"login": "taras"}, {"login": "olena"}]},
    ])
    tracker = GitHubTracker(repo, None, base_url=httpserver.url_for("/").rstrip("/"), sleep=RecordingSleep(),
                            clock=lambda: FIXED_NOW)
    since = datetime.fromisoformat("2025-04-01T09:30:00+02:00")
    tasks = tracker.list_all_tasks(since)
    assert [(t.key, t.assignees, t.labels) for t in tasks] == [("#5", ("olena",), ()), ("#6", ("taras", "olena"), ("bug",))]
    assert tracker.location.endswith(repo) and tracker.location.startswith("github:")
