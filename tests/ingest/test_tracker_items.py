"""Tracker items in the workflow layer (issue 13 item 5, docs/adr/0028): tasks and comments as ISSUE and
COMMENT records, incrementally; the local tracker on real files, GitHub and Plane over real HTTP on
loopback (JSON in the APIs' documented shapes), pull with the real embedder."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.records import Record, RecordKind
from mission_memory.trackers.github import GitHubTracker
from mission_memory.trackers.local_files import LocalFolderTracker
from mission_memory.trackers.plane import PlaneTracker
from tests.hostile_texts import INJECTION_EN, INJECTION_UK, assert_stored_text_is_fenced
from tests.trackers.conftest import FIXED_NOW, RecordingSleep
from tests.trackers.test_plane import (
    BASE,
    KEY,
    LABELS_PAGE_1,
    LABELS_PAGE_2,
    PROJECT_JSON,
    SLUG,
    envelope,
    work_item,
)

MISSION = "uploader"

OPS_40 = """---
key: OPS-40
title: Retry antivirus checks with a bounded queue
labels: [LONG-TERM, antivirus]
state: In Progress
assignee: Олена
created: 2025-01-10T09:00:00Z
updated: 2025-01-13T08:15:00Z
---

The antivirus scan times out on large files; queue the retries with exponential backoff.

## Comments

### Олена · 2025-01-12T10:00:00Z

Should we cap the number of attempts?

### bot · 2025-01-13T08:15:00+00:00

Capped at five attempts.
"""

OPS_41 = """---
key: OPS-41
title: Черга повторних спроб для резервних копій
labels: [backups]
state: Todo
created: 2025-01-11T09:00:00Z
---

Резервні копії інколи не завантажуються; потрібна черга повторних спроб.

## Comments

### Тарас · 2025-01-11T12:00:00Z

Хто візьме цю задачу?
"""


def _records(memory: Memory, kind: RecordKind) -> dict[str, Record]:
    return {r.provenance.ref: r for r in memory.store.records_of_kind([kind.value], mission=MISSION)}


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "OPS-40.md").write_text(OPS_40, encoding="utf-8")
    (folder / "OPS-41.md").write_text(OPS_41, encoding="utf-8")
    (folder / "README.md").write_text("# Tasks\n", encoding="utf-8")
    return folder


def test_local_tasks_and_comments_become_issue_and_comment_records_with_the_tracker_url(tasks_dir: Path) -> None:
    with Memory.open() as memory:
        report = memory.ingest_tracker(LocalFolderTracker(tasks_dir), mission=MISSION)
        issues, comments = _records(memory, RecordKind.ISSUE), _records(memory, RecordKind.COMMENT)
    assert report.added == {"issue": 2, "comment": 3} and report.tasks == 2 and report.comments == 3
    task = issues["OPS-40"]
    a = task.attributes
    assert task.layer.value == "workflow" and task.provenance.kind.value == "issue"
    assert task.provenance.uri == (tasks_dir / "OPS-40.md").resolve().as_uri() == a["url"]
    assert a["tracker"] == "local" and a["key"] == "OPS-40" and a["state"] == "In Progress"
    assert a["labels"] == ["LONG-TERM", "antivirus"] and a["assignee"] == "Олена" and a["in_progress"] is True
    assert a["created"] == "2025-01-10T09:00:00+00:00" and a["updated"] == "2025-01-13T08:15:00+00:00"
    assert issues["OPS-41"].attributes["in_progress"] is False and issues["OPS-41"].attributes["assignee"] is None
    asked = comments["OPS-40#comment-OPS-40#c1"].attributes
    answer = comments["OPS-40#comment-OPS-40#c2"].attributes
    assert asked["issue_key"] == "OPS-40" and asked["author"] == "Олена" and asked["answered"] is True
    assert answer["author"] == "bot" and answer["answered"] is False
    assert comments["OPS-41#comment-OPS-41#c1"].attributes["answered"] is False
    assert comments["OPS-40#comment-OPS-40#c1"].provenance.uri.startswith(task.provenance.uri + "#comment-")


def test_a_rerun_adds_nothing_and_a_changed_task_replaces_its_records(tasks_dir: Path) -> None:
    with Memory.open() as memory:
        memory.ingest_tracker(LocalFolderTracker(tasks_dir), mission=MISSION)
        again = memory.ingest_tracker(LocalFolderTracker(tasks_dir), mission=MISSION)
        assert not again.added and not again.updated and again.embedded == 0
        assert again.since == "2025-01-13T08:15:00+00:00"
        answered_later = OPS_41.replace("created: 2025-01-11T09:00:00Z", "created: 2025-01-11T09:00:00Z\nstate: Doing")
        answered_later = answered_later.replace("state: Todo\n", "") + (
            "\n### Олена · 2025-01-14T09:00:00Z\n\nБеру: почну з черги.\n"
        )
        (tasks_dir / "OPS-41.md").write_text(answered_later, encoding="utf-8")
        changed = memory.ingest_tracker(LocalFolderTracker(tasks_dir), mission=MISSION)
        issues, comments = _records(memory, RecordKind.ISSUE), _records(memory, RecordKind.COMMENT)
    assert changed.tasks == 2  # OPS-41 changed; OPS-40 sits at the (inclusive) bookmark and is read again
    assert changed.unchanged["issue"] == 1
    assert changed.added == {"comment": 1} and changed.updated == {"issue": 1, "comment": 1}
    assert len(issues) == 2 and len(comments) == 4
    assert issues["OPS-41"].attributes["state"] == "Doing" and issues["OPS-41"].attributes["in_progress"] is True
    assert comments["OPS-41#comment-OPS-41#c1"].attributes["answered"] is True


def test_pull_finds_a_task_by_its_subject(tasks_dir: Path) -> None:
    with Memory.open() as memory:
        memory.ingest_tracker(LocalFolderTracker(tasks_dir), mission=MISSION)
        digest = memory.query("bounded retry queue for antivirus scans", scope="workflow", token_budget=2000)
        refs = [entry.record.provenance.ref for entry in digest.entries]
    assert "OPS-40" in refs[:3], refs
    assert "OPS-40: Retry antivirus checks with a bounded queue" in digest.text


def test_hostile_tracker_text_reaches_the_digest_only_inside_the_envelope(tasks_dir: Path) -> None:
    hostile = OPS_40 + f"\n### mallory · 2025-01-13T09:00:00Z\n\nAbout the antivirus retry queue: {INJECTION_EN}\n{INJECTION_UK}\n"
    (tasks_dir / "OPS-40.md").write_text(hostile.replace("updated: 2025-01-13T08:15:00Z\n", ""), encoding="utf-8")
    with Memory.open() as memory:
        memory.ingest_tracker(LocalFolderTracker(tasks_dir), mission=MISSION)
        stored = _records(memory, RecordKind.COMMENT)["OPS-40#comment-OPS-40#c3"]
        digest = memory.query("antivirus retry queue", scope="workflow", token_budget=4000)
    assert INJECTION_EN in stored.text  # stored as data, as written
    assert any(entry.record.id == stored.id for entry in digest.entries)
    assert_stored_text_is_fenced(digest.text)


def test_cli_ingest_tracker_local_reports_json_and_bad_invocations_are_named(tasks_dir: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["ingest", "--tracker", "local", "--tasks-dir", str(tasks_dir), "--mission", MISSION,
                               "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["added"] == {"issue": 2, "comment": 3} and data["tracker"].startswith("local:")
    missing = runner.invoke(app, ["ingest", "--tracker", "local"])
    assert missing.exit_code == 1 and "--tasks-dir" in missing.output
    neither = runner.invoke(app, ["ingest"])
    assert neither.exit_code == 1 and "PATH" in neither.output and "--tracker" in neither.output
    both = runner.invoke(app, ["ingest", str(tasks_dir), "--tracker", "local", "--tasks-dir", str(tasks_dir)])
    assert both.exit_code == 1 and "not both" in both.output


# ------------------------------------------------------------------------------------------- GitHub

REPO = "field-ops/uploader"
ISSUES = f"/repos/{REPO}/issues"


def _issue(number: int, title: str, updated: str, labels: list[str], assignees: list[str]) -> dict[str, Any]:
    people = [{"login": login, "id": i} for i, login in enumerate(assignees)]
    return {
        "number": number, "title": title, "body": f"Body of {title}.", "state": "open",
        "labels": [{"id": 1, "name": name} for name in labels], "html_url": f"https://github.com/{REPO}/issues/{number}",
        "created_at": "2025-03-01T08:00:00Z", "updated_at": updated,
        "assignee": people[0] if people else None, "assignees": people, "user": {"login": "olena"},
    }


def _comment(comment_id: int, login: str, body: str, created: str, number: int) -> dict[str, Any]:
    return {"id": comment_id, "user": {"login": login}, "body": body, "created_at": created,
            "html_url": f"https://github.com/{REPO}/issues/{number}#issuecomment-{comment_id}"}


def test_github_issues_of_any_label_and_their_comments_are_ingested_from_the_bookmark_on(
    httpserver: HTTPServer
) -> None:
    recording_sleep = RecordingSleep()
    first = {"state": "all", "sort": "updated", "direction": "asc", "per_page": "100"}
    httpserver.expect_ordered_request(ISSUES, query_string=first).respond_with_json([
        _issue(45, "Retry antivirus checks", "2025-04-01T09:30:00Z", ["antivirus", "in progress"], ["olena"]),
        _issue(46, "Document the ledger", "2025-04-02T09:30:00Z", [], []),
        {**_issue(47, "A pull request", "2025-04-02T10:00:00Z", [], []), "pull_request": {"url": "x"}},
    ])
    httpserver.expect_ordered_request(f"{ISSUES}/45/comments").respond_with_json([
        _comment(2, "taras", "Capped at five.", "2025-04-01T09:00:00Z", 45),
        _comment(1, "olena", "How many attempts?", "2025-03-30T09:00:00Z", 45),
    ])
    httpserver.expect_ordered_request(f"{ISSUES}/46/comments").respond_with_json([])
    httpserver.expect_ordered_request(ISSUES, query_string={**first, "since": "2025-04-02T09:30:00Z"}).respond_with_json(
        [_issue(46, "Document the ledger", "2025-04-02T09:30:00Z", [], [])]
    )
    httpserver.expect_ordered_request(f"{ISSUES}/46/comments").respond_with_json([])
    tracker = GitHubTracker(REPO, "ghp_test", base_url=httpserver.url_for("/").rstrip("/"),
                            sleep=recording_sleep, clock=lambda: FIXED_NOW)
    with Memory.open() as memory:
        report = memory.ingest_tracker(tracker, mission=MISSION)
        again = memory.ingest_tracker(tracker, mission=MISSION)
        issues, comments = _records(memory, RecordKind.ISSUE), _records(memory, RecordKind.COMMENT)
    httpserver.check_assertions()
    assert report.added == {"issue": 2, "comment": 2} and not again.added and not again.updated
    assert set(issues) == {"#45", "#46"}
    a = issues["#45"].attributes
    assert a["assignee"] == "olena" and a["in_progress"] is True and a["tracker"] == "github"
    assert issues["#45"].provenance.uri == f"https://github.com/{REPO}/issues/45"
    asked = comments["#45#comment-1"]
    assert asked.attributes["answered"] is True and asked.attributes["author"] == "olena"
    assert asked.provenance.uri == f"https://github.com/{REPO}/issues/45#issuecomment-1"


# -------------------------------------------------------------------------------------------- Plane


def test_plane_work_items_of_any_label_with_assignees_and_comments_are_ingested(
    httpserver: HTTPServer
) -> None:
    recording_sleep = RecordingSleep()
    headers = {"X-API-Key": KEY}
    item = work_item("wi-8", 8, "Fix the login redirect", [], "<p>Redirect loops.</p>", "Redirect loops.")
    item["assignees"] = [{"id": "u-2", "display_name": "olena"}]
    httpserver.expect_request(f"{BASE}/", headers=headers).respond_with_json(PROJECT_JSON)
    httpserver.expect_request(f"{BASE}/labels/", query_string={"per_page": "100"}).respond_with_json(LABELS_PAGE_1)
    httpserver.expect_request(
        f"{BASE}/labels/", query_string={"per_page": "100", "cursor": "100:1:0"}
    ).respond_with_json(LABELS_PAGE_2)
    httpserver.expect_request(
        f"{BASE}/work-items/", query_string={"expand": "state,assignees", "per_page": "100"}, headers=headers
    ).respond_with_json(envelope([item], page=0, more=False, total=1))
    httpserver.expect_request(
        f"{BASE}/work-items/wi-8/comments/", query_string={"expand": "actor", "per_page": "100"}
    ).respond_with_json(envelope([{
        "id": "c-1", "comment_html": "<p>Seen on Safari only.</p>",
        "actor": {"id": "u-3", "display_name": "taras"}, "created_at": "2025-02-09T10:00:00Z",
    }], page=0, more=False, total=1))
    tracker = PlaneTracker(httpserver.url_for("/").rstrip("/"), SLUG, PROJECT_JSON["id"], KEY,
                           sleep=recording_sleep, clock=lambda: FIXED_NOW)
    with Memory.open() as memory:
        report = memory.ingest_tracker(tracker, mission=MISSION)
        issues, comments = _records(memory, RecordKind.ISSUE), _records(memory, RecordKind.COMMENT)
    assert report.added == {"issue": 1, "comment": 1}
    task = issues["OPS-8"]
    assert task.attributes["assignee"] == "olena" and task.attributes["state"] == "In Progress"
    assert task.attributes["in_progress"] is True and task.attributes["labels"] == []
    assert task.provenance.uri.endswith(f"/{SLUG}/browse/OPS-8/")
    assert comments["OPS-8#comment-c-1"].attributes["author"] == "taras"
    assert "Seen on Safari only." in comments["OPS-8#comment-c-1"].text


def test_an_unreachable_tracker_writes_nothing_and_keeps_the_bookmark(tasks_dir: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    tracker = GitHubTracker(REPO, None, base_url=closed_port_url, max_retries=0, deadline_seconds=2.0)
    with Memory.open() as memory:
        memory.ingest_tracker(LocalFolderTracker(tasks_dir), mission=MISSION)
        before = memory.status()["records"]
        from mission_memory.errors import BackendUnavailable

        with pytest.raises(BackendUnavailable):
            memory.ingest_tracker(tracker, mission=MISSION)
        assert memory.status()["records"] == before
        assert memory.store.get_state(MISSION, f"tracker_items:{tracker.location}") is None
