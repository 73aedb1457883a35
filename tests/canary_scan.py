"""Scan every byte mission-memory wrote for canary strings (docs/design.md §3: practitioner records hold no
raw content; issue 13 item 2).

A canary is a unique string planted in operator content (prompts, transcript text, tool inputs, diffs).
:func:`find_canaries` reads every file under the given roots — the SQLite file with its FTS shadow
tables, the WAL and shared-memory files, vector snapshots, logs, exports, archived briefs — as raw
bytes, case-insensitively (FTS keeps lower-cased tokens), in UTF-8 and UTF-16; and dumps every SQLite
database it finds (``iterdump`` of all tables, shadow tables included) so text stored in any encoding
SQLite uses is seen as well. Later areas (the handover brief) add their outputs by passing more roots.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CanaryHit", "assert_no_canary", "find_canaries", "make_canaries"]

SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class CanaryHit:
    """One canary found: where, and how it was seen (``bytes``, ``utf-16`` or ``sqlite-dump``)."""

    path: Path
    canary: str
    how: str


def make_canaries(*names: str) -> dict[str, str]:
    """Unique canary strings by name (``{"prompt": "cnry-prompt-7f3a…"}``), unlikely to occur by chance."""
    import uuid

    return {name: f"cnry{name.replace('_', '')}{uuid.uuid4().hex[:12]}" for name in names}


def _files(roots: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
        elif root.is_dir():
            found.extend(p for p in sorted(root.rglob("*")) if p.is_file())
    return found


def _sqlite_dump(path: Path) -> str:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return "\n".join(connection.iterdump())
    finally:
        connection.close()


def find_canaries(roots: Sequence[Path], canaries: Iterable[str]) -> list[CanaryHit]:
    """Every occurrence of a canary under ``roots`` (files or folders, searched recursively).

    Returns:
        The hits; empty when no canary is anywhere.
    """
    wanted = [c.lower() for c in canaries]
    hits: list[CanaryHit] = []
    for path in _files(roots):
        data = path.read_bytes()
        lowered = data.lower()
        for canary in wanted:
            if canary.encode("utf-8") in lowered:
                hits.append(CanaryHit(path, canary, "bytes"))
            elif canary.encode("utf-16-le") in lowered or canary.encode("utf-16-be") in lowered:
                hits.append(CanaryHit(path, canary, "utf-16"))
        if data.startswith(SQLITE_MAGIC):
            dump = _sqlite_dump(path).lower()
            hits.extend(CanaryHit(path, c, "sqlite-dump") for c in wanted if c in dump)
    return hits


def assert_no_canary(roots: Sequence[Path], canaries: Iterable[str], *, scanned_at_least: int = 1) -> int:
    """Fail with the hits when a canary is found; return how many files were scanned.

    Args:
        scanned_at_least: the scan must have read at least this many files (a scan of nothing proves nothing).
    """
    files = _files(roots)
    assert len(files) >= scanned_at_least, f"only {len(files)} files to scan under {roots}"
    hits = find_canaries(roots, canaries)
    assert not hits, "canaries on disk:\n" + "\n".join(f"{h.path} ({h.how}): {h.canary}" for h in hits)
    return len(files)
