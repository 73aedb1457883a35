"""Splitting documentation into heading-scoped chunks: Markdown, setext, code fences, reStructuredText,
plain text, the size cap, GitHub anchors (duplicates and Cyrillic) and the whole tdr-docs corpus."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mission_memory.ingest.documents import DOCUMENT_SUFFIXES, github_anchor, split_document


@pytest.fixture(scope="session")
def tdr_repo(tmp_path_factory: pytest.TempPathFactory, corpora: Path) -> Path:
    """A fresh clone of the corpus' tdr-docs bundle (39 ADRs, ~100 Markdown files)."""
    target = tmp_path_factory.mktemp("corpus") / "tdr-docs"
    subprocess.run(["git", "clone", "-q", str(corpora / "tdr-docs.bundle"), str(target)], check=True,
                   capture_output=True)
    return target


GUIDE = """\
---
title: Operator guide
tags: [ops]
---
Intro paragraph before any heading.

# Operator guide

## Install

Run the installer.

```bash
# this is a shell comment, not a heading
pip install mission-memory
```

## Configure

### Data directory

Set MISSION_MEMORY_DATA_DIR.
"""


def test_markdown_is_split_on_headings_with_heading_paths_anchors_and_start_lines() -> None:
    chunks = split_document(GUIDE, "docs/guide.md")
    assert [chunk.title for chunk in chunks] == ["guide", "Install", "Data directory"]
    preamble, install, data_dir = chunks
    assert preamble.heading_path == ()
    assert preamble.anchor == ""
    assert preamble.text == "Intro paragraph before any heading."
    assert preamble.start_line == 5
    assert install.heading_path == ("Operator guide", "Install")
    assert install.anchor == "install"
    assert install.start_line == 7  # the empty "# Operator guide" leads this chunk
    assert install.text.startswith("# Operator guide\n\n## Install\n\nRun the installer.")
    assert data_dir.heading_path == ("Operator guide", "Configure", "Data directory")
    assert data_dir.anchor == "data-directory"
    assert data_dir.text.startswith("## Configure\n\n### Data directory")


def test_hash_lines_inside_fenced_code_are_not_headings() -> None:
    chunks = split_document(GUIDE, "docs/guide.md")
    assert not any("shell comment" in chunk.title for chunk in chunks)
    assert "# this is a shell comment, not a heading" in chunks[1].text
    tilde = split_document("# A\n\n~~~\n# no\n## no\n~~~\n\ntext\n", "a.md")
    assert [chunk.title for chunk in tilde] == ["A"]


def test_front_matter_is_not_split_or_emitted() -> None:
    chunks = split_document(GUIDE, "docs/guide.md")
    assert not any("tags:" in chunk.text for chunk in chunks)


def test_setext_headings_are_headings() -> None:
    text = "Title\n=====\n\nIntro.\n\nSection\n-------\n\nBody.\n\nNot a heading after a blank line:\n\n---\n\nmore\n"
    chunks = split_document(text, "readme.markdown")
    assert [(c.title, c.heading_path) for c in chunks] == [
        ("Title", ("Title",)),
        ("Section", ("Title", "Section")),
    ]
    assert chunks[1].text.startswith("Section\n-------\n\nBody.")
    assert chunks[1].text.endswith("more")


def test_restructuredtext_titles_with_underlines_and_overlines_are_sections() -> None:
    text = (
        "=========\nUser docs\n=========\n\nPreface.\n\nInstall\n=======\n\nSteps.\n\nDetails\n-------\n\n"
        "More.\n\nUsage\n=======\n\nRun it::\n\n    mission-memory query\n"
    )
    chunks = split_document(text, "docs/index.rst")
    assert [(c.title, c.heading_path) for c in chunks] == [
        ("User docs", ("User docs",)),
        ("Install", ("User docs", "Install")),
        ("Details", ("User docs", "Install", "Details")),
        ("Usage", ("User docs", "Usage")),
    ]
    assert chunks[3].anchor == "usage"
    assert chunks[3].start_line == 17


def test_plain_text_groups_paragraphs_up_to_the_cap() -> None:
    paragraphs = [f"Paragraph {index} " + "word " * 30 for index in range(10)]
    chunks = split_document("\n\n".join(paragraphs), "NOTES.txt", max_chars=400)
    assert len(chunks) > 1
    assert all(len(chunk.text) <= 400 for chunk in chunks)
    assert chunks[0].title == "NOTES"
    assert chunks[1].title == "NOTES (part 2)"
    assert all(chunk.anchor == "" and chunk.heading_path == () for chunk in chunks)
    assert "".join(chunk.text for chunk in chunks).count("Paragraph") == 10


def test_oversize_sections_split_on_paragraphs_into_parts_sharing_heading_and_anchor() -> None:
    body = "\n\n".join(f"Paragraph {index}: " + "lorem ipsum " * 20 for index in range(8))
    chunks = split_document(f"# Guide\n\n## Big section\n\n{body}\n\n## Small\n\nx\n", "g.md", max_chars=700)
    big = [chunk for chunk in chunks if chunk.anchor == "big-section"]
    assert len(big) > 1
    assert big[0].title == "Big section"
    assert [chunk.title for chunk in big[1:]] == [f"Big section (part {n})" for n in range(2, len(big) + 1)]
    assert all(chunk.heading_path == ("Guide", "Big section") for chunk in big)
    assert all(chunk.text.startswith("## Big section") or chunk is big[0] for chunk in big)
    assert all(len(chunk.text) <= 700 for chunk in chunks)
    assert all(not chunk.text.rstrip().endswith("lorem") or "Paragraph" in chunk.text for chunk in big)
    assert big[1].start_line > big[0].start_line


def test_a_paragraph_longer_than_the_cap_is_hard_split() -> None:
    chunks = split_document("# H\n\n" + "x" * 5000, "h.md", max_chars=1000)
    assert len(chunks) >= 5
    assert all(len(chunk.text) <= 1000 for chunk in chunks)
    assert sum(chunk.text.count("x") for chunk in chunks) == 5000


def test_duplicate_headings_get_github_numbered_anchors() -> None:
    text = "# Notes\n\n## Example\n\na\n\n## Example\n\nb\n\n## Example\n\nc\n"
    anchors = [chunk.anchor for chunk in split_document(text, "n.md")]
    assert anchors == ["example", "example-1", "example-2"]


def test_anchors_follow_github_slugs_and_keep_cyrillic_letters() -> None:
    assert github_anchor("Інструкція з налаштування") == "інструкція-з-налаштування"
    assert github_anchor("What's new in v2.0?") == "whats-new-in-v20"
    assert github_anchor("Use `git` & [GitHub](https://github.com) 🚀") == "use-git--github-"
    assert github_anchor("snake_case_name") == "snake_case_name"
    chunks = split_document("# Контекст\n\nТекст.\n\n# Рішення\n\nТак.\n\n# Рішення\n\nНі.\n", "uk.md")
    assert [chunk.anchor for chunk in chunks] == ["контекст", "рішення", "рішення-1"]


def test_blank_document_gives_no_chunks_and_a_tiny_cap_is_refused() -> None:
    assert split_document("", "empty.md") == []
    assert split_document("\n\n  \n", "blank.txt") == []
    with pytest.raises(ValueError, match="max_chars"):
        split_document("text", "a.md", max_chars=10)


def test_document_suffixes_are_the_ones_split_document_understands() -> None:
    assert DOCUMENT_SUFFIXES == (".md", ".markdown", ".rst", ".txt")


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(["# H\n", "## Sub\n", "Text line\n", "\n", "```\n", "---\n", "===\n", "word " * 30])
        | st.text(max_size=30),
        max_size=60,
    ).map("".join),
    cap=st.integers(min_value=40, max_value=600),
    suffix=st.sampled_from(DOCUMENT_SUFFIXES),
)
def test_every_chunk_respects_the_cap_for_arbitrary_text(text: str, cap: int, suffix: str) -> None:
    for chunk in split_document(text, f"doc{suffix}", max_chars=cap):
        assert len(chunk.text) <= cap
        assert chunk.text.strip()
        assert chunk.start_line >= 1


@pytest.mark.parametrize("cap", [2400, 500])
def test_every_markdown_file_of_the_tdr_corpus_splits_within_the_cap(tdr_repo: Path, cap: int) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=tdr_repo, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert len(tracked) > 90
    for path in tracked:
        text = (tdr_repo / path).read_text(encoding="utf-8")
        chunks = split_document(text, path, max_chars=cap)
        assert chunks, path
        assert all(len(chunk.text) <= cap for chunk in chunks), path
        lines = text.split("\n")
        for chunk in chunks:
            assert 1 <= chunk.start_line <= len(lines), path


def test_a_fence_indented_inside_a_list_item_does_not_swallow_the_next_heading() -> None:
    text = (
        "# Експорт\n\n"
        "## Через консоль\n"
        "1. Відкрийте крок:\n"
        "    ```\n"
        "   {\"ConsignmentId\": \"...\"}\n"
        "   ```\n"
        "2. Запустіть.\n\n"
        "## Через CLI\n"
        "1. Виконайте команду.\n"
    )
    chunks = split_document(text, "docs/export.md")
    assert [chunk.heading_path for chunk in chunks] == [
        ("Експорт", "Через консоль"), ("Експорт", "Через CLI")
    ]


def test_headings_inside_block_quotes_and_lists_do_not_start_sections() -> None:
    text = "# Guide\n\n> # Quoted title\n> quoted text\n\n- # listed\n\nBody.\n"
    chunks = split_document(text, "docs/guide.md")
    assert [chunk.title for chunk in chunks] == ["Guide"]


def test_a_setext_heading_may_span_several_lines() -> None:
    text = "Резервне копіювання\nжурналу\n===\n\nЩоночі о 02:00.\n"
    chunks = split_document(text, "docs/backup.md")
    assert [chunk.title for chunk in chunks] == ["Резервне копіювання журналу"]
    assert chunks[0].anchor == "резервне-копіювання-журналу"
