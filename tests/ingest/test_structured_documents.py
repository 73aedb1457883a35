"""YAML and TOML under documentation folders become documents: one chunk per top-level key or item,
``path#key`` anchors, a bad file skipped with the parser's reason and nothing else lost (issue 12 item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.ingest.structured_documents import (
    StructuredDocumentError,
    is_structured_document,
    split_structured_document,
)
from mission_memory.records import RecordKind
from tests.conftest import GitRepo

STORIES = """\
# User stories for the reader app
- id: US-1
  title: Detect iCloud books
  as: reader
  want: to see which books are stored in iCloud
  acceptance:
    - a cloud badge on each iCloud book
    - samples are marked as samples
- id: US-2
  title: Export highlights
  want: my highlights as Markdown
"""

SPEC_TOML = """\
[sync]
interval_minutes = 15
description = "Sync the library every quarter hour"

[export]
formats = ["markdown", "csv"]
"""

UKRAINIAN_YAML = """\
операції:
  опис: Передача справ між змінами операторів
  відповідальний: черговий офіцер
"""


def test_a_yaml_list_gives_one_chunk_per_item_named_by_its_id() -> None:
    chunks = split_structured_document(STORIES, "docs/stories/reader.yaml")
    assert [c.anchor for c in chunks] == ["us-1", "us-2"]
    first = chunks[0]
    assert first.heading_path == ("US-1",)
    assert first.text.startswith("reader.yaml › US-1\n\n")
    assert "title: Detect iCloud books" in first.text
    assert "  - a cloud badge on each iCloud book" in first.text


def test_a_toml_table_gives_one_chunk_per_top_level_key() -> None:
    chunks = split_structured_document(SPEC_TOML, "spec/app.toml")
    assert [(c.title, c.anchor) for c in chunks] == [("sync", "sync"), ("export", "export")]
    assert "interval_minutes: 15" in chunks[0].text
    assert "- markdown" in chunks[1].text


def test_ukrainian_keys_keep_their_text_and_a_cyrillic_anchor() -> None:
    (chunk,) = split_structured_document(UKRAINIAN_YAML, "docs/операції.yml")
    assert chunk.anchor == "операції"
    assert "опис: Передача справ між змінами операторів" in chunk.text


@pytest.mark.parametrize(
    ("path", "text", "reason"),
    [("docs/bad.yaml", "key: [unclosed\nother: 1\n", "invalid-yaml"), ("docs/bad.toml", "[sync\nx = 1\n", "invalid-toml")],
)
def test_bad_yaml_or_toml_raises_an_error_naming_the_file_and_line(path: str, text: str, reason: str) -> None:
    with pytest.raises(StructuredDocumentError) as caught:
        split_structured_document(text, path)
    assert caught.value.reason == reason
    assert path in str(caught.value) and "line" in caught.value.detail


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("docs/stories/reader.yaml", True), ("product/spec.toml", True), ("Docs/x.yml", True),
        ("config.yaml", False), (".github/workflows/ci.yml", False), ("docs/readme.md", False),
        ("pyproject.toml", False),
    ],
)
def test_only_yaml_and_toml_under_documentation_folders_count(path: str, expected: bool) -> None:
    assert is_structured_document(path) is expected


def test_ingest_reads_user_stories_and_skips_a_broken_spec_with_its_reason(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "reader")
    repo.commit(
        "Add stories and specs", "2025-02-01T10:00:00+00:00",
        {
            "docs/stories/reader.yaml": STORIES,
            "docs/spec.toml": SPEC_TOML,
            "docs/broken.yaml": "key: [unclosed\n",
            "docs/guide.md": "# Guide\n\nOpen the library.\n",
            "ci.yml": "jobs: {}\n",
        },
    )
    with Memory.open() as memory:
        report = memory.ingest_repository(repo.root, mission="reader")
        refs = {r.provenance.ref for batch in memory.store.iterate() for r in batch if r.kind is RecordKind.DOC_CHUNK}
    assert {"docs/stories/reader.yaml#us-1", "docs/stories/reader.yaml#us-2", "docs/spec.toml#sync",
            "docs/spec.toml#export", "docs/guide.md#guide"} <= refs
    assert not any(ref.startswith(("ci.yml", "docs/broken.yaml")) for ref in refs)
    (skip,) = report.skipped
    assert skip["path"] == "docs/broken.yaml" and skip["reason"] == "invalid-yaml"
    assert "line 1" in skip["detail"]
    assert report.to_json()["skipped"]["by_reason"] == {"invalid-yaml": 1}


def test_numbers_in_yaml_keep_the_text_their_author_wrote() -> None:
    chunks = split_structured_document("release:\n  version: 1.10\n  story: 0020\n", "docs/spec/release.yaml")
    assert "version: 1.10" in chunks[0].text
    assert "story: 0020" in chunks[0].text
