"""A Markdown heading inside an excerpt reads as the quoted heading it is (``§ Exceptions``), not as
``\\### Exceptions``, and still cannot pass for a heading of the digest: no quoted line starts with
``#`` (ADR 0089, fence.py)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from mission_memory.api import Memory
from mission_memory.fence import fenced, neutralise_headings
from tests.conftest import GitRepo


def test_a_heading_in_an_excerpt_reads_without_a_backslash() -> None:
    text = fenced(1, "123", "# Title\n\n#\n### Exceptions\n   ## Indented\nnot # a heading\n#hashtag")
    lines = text.splitlines()[1:-1]
    assert lines == ["§ Title", "", "§", "§ Exceptions", "   § Indented", "not # a heading", "#hashtag"], lines
    assert "\\#" not in text


def test_in_a_digest_a_quoted_heading_is_readable_and_forges_no_entry(make_git_repo: Callable[[str], GitRepo]) -> None:
    repo = make_git_repo("exceptions")
    repo.commit("Add the error guide", "2024-05-02T10:00:00+00:00", {"docs/errors.md": (
        "# Error handling in the upload service\n\n### Exceptions\n\nEvery upload exception is logged with "
        "the upload id and retried twice before the upload is marked failed.\n")})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root, mission="exceptions")
        digest = memory.query("How are upload exceptions retried?", token_budget=2000, filters={"mission": "exceptions"})
    assert "§ Exceptions" in digest.text and "\\#" not in digest.text, digest.text


_HEADINGISH = st.text(alphabet=st.sampled_from(["#", " ", "\t", "\n", "a", "§", "\\", "1", "."]), max_size=60)


@settings(max_examples=300, deadline=None)
@given(_HEADINGISH)
def test_neutralising_is_idempotent_and_leaves_no_heading(text: str) -> None:
    once = neutralise_headings(text)
    assert neutralise_headings(once) == once
    for line in once.split("\n"):
        stripped = line.lstrip(" ")
        is_heading = len(line) - len(stripped) <= 3 and stripped.startswith("#") and (
            stripped.lstrip("#")[:1] in ("", " ", "\t") and len(stripped) - len(stripped.lstrip("#")) <= 6)
        assert not is_heading, repr(line)
