"""LocalFolderTracker over real Markdown task files in a tmp folder, Ukrainian content included."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mission_memory.errors import ConfigError, InputError, NotFound
from mission_memory.trackers.base import Task
from mission_memory.trackers.local_files import LocalFolderTracker, parse_task_file

OPS_7 = """---
key: OPS-7
title: Черга повторних спроб для антивірусу
labels: [LONG-TERM, "antivirus"]
state: In Progress
created: 2025-01-10T09:00:00Z
updated: 2025-02-01T12:30:00+02:00
files: [src/scan.py, docs/adr/0003-retry.md]
---

Перевірка антивірусом іноді падає через тайм-аут.

```markdown
## Comments
### not a comment · inside a code fence
```

## Comments

### Олена · 2025-01-13T10:00:00Z

Чи варто обмежити кількість спроб?

### bot · 2025-01-12T08:15:00+02:00

Started on `scan.py`.

### · 2025-01-14

Anonymous note.
"""

OPS_8 = """---
title: Fix the login redirect
labels:
  - bug
created: 2025-01-11
---
Redirect loops after SSO.
"""

OPS_9 = """\ufeff---
key: OPS-9
title: Rotate keys
labels: long-term, ops
created: 2025-01-12T08:00
---

Rotate every 90 days.

## Коментарі

### Андрій · 2025-03-01T10:00:00Z

Зроблено.
"""


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "OPS-7.md").write_text(OPS_7, encoding="utf-8")
    (folder / "OPS-8.md").write_text(OPS_8, encoding="utf-8")
    (folder / "OPS-9.md").write_text(OPS_9.replace("\n", "\r\n"), encoding="utf-8")
    (folder / "README.md").write_text("# Tasks\n\nOne file per task.\n", encoding="utf-8")
    return folder


def test_lists_labelled_tasks_with_ukrainian_text_utc_times_and_linked_files(tasks_dir: Path) -> None:
    tasks = LocalFolderTracker(tasks_dir).list_tasks()

    assert [task.key for task in tasks] == ["OPS-7", "OPS-9"]
    seven, nine = tasks
    assert seven.title == "Черга повторних спроб для антивірусу"
    assert seven.description.startswith("Перевірка антивірусом іноді падає через тайм-аут.")
    assert "not a comment" in seven.description
    assert seven.labels == ("LONG-TERM", "antivirus")
    assert seven.state == "In Progress"
    assert seven.created_at == datetime(2025, 1, 10, 9, 0, tzinfo=UTC)
    assert seven.updated_at == datetime(2025, 2, 1, 10, 30, tzinfo=UTC)
    assert seven.linked_files == ("src/scan.py", "docs/adr/0003-retry.md")
    assert seven.tracker == "local"
    assert seven.url == (tasks_dir / "OPS-7.md").resolve().as_uri()
    assert nine.labels == ("long-term", "ops")
    assert nine.created_at == datetime(2025, 1, 12, 8, 0, tzinfo=UTC)
    assert nine.updated_at == datetime(2025, 3, 1, 10, 0, tzinfo=UTC)  # latest comment, no 'updated' field
    assert nine.description == "Rotate every 90 days."
    assert nine.state is None


def test_a_task_without_a_key_takes_the_file_name_and_block_lists_are_read(tasks_dir: Path) -> None:
    [eight] = LocalFolderTracker(tasks_dir).list_tasks("BUG")

    assert eight.key == "OPS-8"
    assert eight.labels == ("bug",)
    assert eight.created_at == datetime(2025, 1, 11, tzinfo=UTC)
    assert eight.updated_at == eight.created_at


def test_comments_come_oldest_first_with_authors_times_and_text(tasks_dir: Path) -> None:
    tracker = LocalFolderTracker(tasks_dir)
    seven = tracker.list_tasks()[0]

    comments = tracker.list_comments(seven)

    assert [(c.author, c.text) for c in comments] == [
        ("bot", "Started on `scan.py`."),
        ("Олена", "Чи варто обмежити кількість спроб?"),
        (None, "Anonymous note."),
    ]
    assert comments[0].created_at == datetime(2025, 1, 12, 6, 15, tzinfo=UTC)
    assert {c.id for c in comments} == {"OPS-7#c1", "OPS-7#c2", "OPS-7#c3"}


def test_comments_under_a_ukrainian_heading_are_found_for_a_task_not_listed_first(tasks_dir: Path) -> None:
    task = Task(
        key="OPS-9",
        title="t",
        description="",
        labels=(),
        state=None,
        url="u",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        updated_at=datetime(2025, 1, 1, tzinfo=UTC),
    )

    [done] = LocalFolderTracker(tasks_dir).list_comments(task)

    assert (done.author, done.text) == ("Андрій", "Зроблено.")


def test_a_task_with_no_file_is_not_found(tasks_dir: Path) -> None:
    task = Task(
        key="OPS-404",
        title="t",
        description="",
        labels=(),
        state=None,
        url="u",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        updated_at=datetime(2025, 1, 1, tzinfo=UTC),
    )
    with pytest.raises(NotFound, match="OPS-404"):
        LocalFolderTracker(tasks_dir).list_comments(task)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("Просто нотатка без front matter.\n", "no front matter"),
        ("---\ntitle: Незакрито\ncreated: 2025-01-01\n", "no front matter"),
        ("---\ncreated: 2025-01-01\n---\nБез назви.\n", "no 'title'"),
        ("---\ntitle: Без дати\n---\n", "no 'created'"),
        ("---\ntitle: Погана дата\ncreated: 10 січня\n---\n", "not ISO 8601"),
        ("---\ntitle: Зламаний рядок\nце не поле\ncreated: 2025-01-01\n---\n", "line 3"),
        ("---\ntitle: Список\nlabels: [LONG-TERM\ncreated: 2025-01-01\n---\n", "not closed"),
        (
            "---\ntitle: Коментар\ncreated: 2025-01-01\n---\n\n## Comments\n\n### Олена без часу\n\nТекст.\n",
            "line 8.*### <author> · <ISO time>",
        ),
        (
            "---\ntitle: Коментар\ncreated: 2025-01-01\n---\n## Comments\n### Олена · вчора\n",
            "line 6.*not ISO 8601",
        ),
    ],
)
def test_a_malformed_file_is_skipped_and_reported_naming_the_file_and_the_problem(
    tasks_dir: Path, content: str, problem: str
) -> None:
    (tasks_dir / "OPS-13.md").write_text(content, encoding="utf-8")
    tracker = LocalFolderTracker(tasks_dir)

    keys = [t.key for t in tracker.list_tasks()]
    assert "OPS-13" not in keys and keys  # the well-formed files of the folder are still listed
    [(item, reason)] = tracker.unreadable_items()
    assert item == "OPS-13" and re.search(rf"OPS-13\.md.*{problem}", reason)
    with pytest.raises(InputError, match=rf"OPS-13\.md.*{problem}"):
        parse_task_file(tasks_dir / "OPS-13.md")


def test_a_file_that_is_not_utf8_raises_input_error_naming_it(tasks_dir: Path) -> None:
    (tasks_dir / "OPS-14.md").write_bytes("---\ntitle: caf\xe9\ncreated: 2025-01-01\n---\n".encode("latin-1"))

    with pytest.raises(InputError, match=r"OPS-14\.md.*not UTF-8"):
        parse_task_file(tasks_dir / "OPS-14.md")


def test_a_missing_folder_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        LocalFolderTracker(tmp_path / "nowhere").list_tasks()
