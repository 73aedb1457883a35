"""A text file that is not UTF-8 (a legacy ADR with one Latin-1 ``é``) is read by the stated fallback
(cp1252, else latin-1), its records say so (``decoded_as``) and the report counts it; a binary file is
still skipped; re-ingesting changes nothing; random bytes give a text or a named skip, never a traceback."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.ingest.file_reading import decode_text
from tests.conftest import GitRepo

runner = CliRunner()

LATIN1_ADR = """# 1. Serve the caf\xe9 menu from the edge cache

Date: 2024-03-01

## Status

Accepted

## Context

The caf\xe9 menu is read by every visitor and changes twice a day.

## Decision

We will serve the caf\xe9 menu from the edge cache, refreshed on every publish.

## Consequences

Menu changes take up to a minute to show.
""".encode("latin-1")


def test_a_latin1_adr_is_kept_marked_and_counted_and_a_binary_file_is_still_skipped(
        make_git_repo: type[GitRepo]) -> None:
    repo = make_git_repo("cafe")
    repo.commit("Record the menu decision", "2024-03-01T10:00:00+00:00", {
        "docs/adr/0001-serve-the-cafe-menu-from-the-edge-cache.md": LATIN1_ADR,
        "docs/logo.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
    })
    result = runner.invoke(app, ["ingest", str(repo.root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["skipped"]["by_reason"] == {"binary": 1}
    assert data["decoded_by_fallback"] == {"count": 1, "files": [
        {"path": "docs/adr/0001-serve-the-cafe-menu-from-the-edge-cache.md", "encoding": "cp1252"}]}
    with Memory.open() as memory:
        records = [r for batch in memory.store.iterate() for r in batch if r.kind.value == "decision"]
    assert len(records) == 1
    assert "caf\u00e9 menu" in records[0].text and records[0].attributes["decoded_as"] == "cp1252"
    again = runner.invoke(app, ["ingest", str(repo.root)])
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert "Read 1 file that is not UTF-8 as cp1252" in said, said
    data = json.loads(runner.invoke(app, ["ingest", str(repo.root), "--json"]).stdout)
    assert sum(data["by_kind"]["added"].values()) == sum(data["by_kind"]["updated"].values()) == 0


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_are_a_text_or_a_named_skip(data: bytes) -> None:
    decoded = decode_text(data)
    assert (decoded.text is None) == (decoded.reason == "binary")
    assert decoded == decode_text(data)  # the same bytes, the same answer
    if decoded.text is not None:
        assert decoded.encoding in ("utf-8", "cp1252", "latin-1")
        if decoded.encoding != "utf-8":
            assert decoded.text.encode(decoded.encoding) == data  # nothing of the file is lost
