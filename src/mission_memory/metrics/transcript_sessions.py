"""Claude Code sessions on disk: finding transcript files and joining subagent files to their session.

This module owns the layout of ``~/.claude/projects``: a session is its main file
``<project>/<session-id>.jsonl`` plus its subagent files — ``<session-id>/subagents/agent-*.jsonl``
(2.x), top-level ``agent-*.jsonl`` carrying the parent ``sessionId`` (2.0), or inline
``isSidechain`` records (1.x, already inside the main file). Reading one file is
:mod:`mission_memory.metrics.transcripts`' job.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mission_memory.errors import InputError
from mission_memory.metrics.transcripts import ApiCall, TranscriptEvent, TranscriptFile, read_transcript_file

__all__ = ["ReadReport", "SessionTranscript", "find_transcript_files", "read_sessions"]


@dataclass(frozen=True)
class SessionTranscript:
    """A session: its main transcript file and its subagent files.

    Attributes:
        session_id: the main file's ``sessionId`` (Claude Code also names the file by it), or the
            file's name without ``.jsonl`` when no record carries one.
        main: the main file.
        subagents: the session's subagent files, by path.
    """

    session_id: str
    main: TranscriptFile
    subagents: tuple[TranscriptFile, ...] = ()

    @property
    def files(self) -> tuple[TranscriptFile, ...]:
        """The main file followed by the subagent files."""
        return (self.main, *self.subagents)

    @property
    def start(self) -> datetime | None:
        """Earliest timestamp over all files, or None."""
        times = [f.start for f in self.files if f.start is not None]
        return min(times) if times else None

    @property
    def end(self) -> datetime | None:
        """Latest timestamp over all files, or None."""
        times = [f.end for f in self.files if f.end is not None]
        return max(times) if times else None

    def main_events(self) -> tuple[TranscriptEvent, ...]:
        """Events of the main conversation in file order (inline 1.x sidechain events excluded)."""
        return tuple(e for e in self.main.events if not e.sidechain)

    def all_events(self) -> list[TranscriptEvent]:
        """Every event of the session: the main file in order, subagent events merged in by time.

        Each file keeps its own order; files are interleaved by timestamp (events without one keep
        their neighbour's position). API calls that appear in more than one file count once.
        """
        streams = [_timed(f.events) for f in self.files]
        merged = [event for _, _, event in heapq.merge(*streams, key=lambda item: (item[0], item[1]))]
        seen: set[str] = set()
        unique: list[TranscriptEvent] = []
        for event in merged:
            if isinstance(event, ApiCall):
                if event.message_id in seen:
                    continue
                seen.add(event.message_id)
            unique.append(event)
        return unique


@dataclass(frozen=True)
class ReadReport:
    """What reading a set of paths found.

    Attributes:
        files: transcript files read (main and subagent).
        sessions: sessions formed.
        orphan_subagent_files: subagent files whose parent session was not among the inputs
            (skipped: a subagent's first call says nothing about a session's start).
        non_json_lines: sum over files.
        truncated_last_lines: files whose last line was cut off.
        unknown_types: record type -> count, summed over files.
        not_transcripts: files left out because none of their lines is a JSON object (a binary
            file, a text file): such a file is not a session.
    """

    files: int
    sessions: int
    orphan_subagent_files: int
    non_json_lines: int
    truncated_last_lines: int
    unknown_types: Mapping[str, int]
    not_transcripts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "files": self.files,
            "sessions": self.sessions,
            "orphan_subagent_files": self.orphan_subagent_files,
            "non_json_lines": self.non_json_lines,
            "truncated_last_lines": self.truncated_last_lines,
            "unknown_types": dict(sorted(self.unknown_types.items())),
            "not_transcripts": list(self.not_transcripts),
        }


def find_transcript_files(paths: Iterable[Path]) -> list[Path]:
    """Expand files and folders into transcript files.

    Args:
        paths: files (taken as given, whatever their suffix) and folders (searched recursively
            for ``*.jsonl``). A main file given directly brings its ``<stem>/subagents/*.jsonl``.

    Returns:
        Distinct resolved paths, sorted.

    Raises:
        InputError: a path does not exist.
    """
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(p.resolve() for p in path.rglob("*.jsonl") if p.is_file())
        elif path.is_file():
            found.add(path.resolve())
            subagent_dir = path.parent / path.stem / "subagents"
            if subagent_dir.is_dir():
                found.update(p.resolve() for p in subagent_dir.glob("*.jsonl") if p.is_file())
        else:
            raise InputError(f"transcript path {str(path)!r} does not exist")
    return sorted(found)


def read_sessions(paths: Iterable[Path]) -> tuple[list[SessionTranscript], ReadReport]:
    """Read every transcript under ``paths`` and group subagent files with their session.

    A subagent file belongs to the session named by its folder (``<session>/subagents/``) or, for
    2.0's top-level ``agent-*.jsonl``, by its ``sessionId``.

    Args:
        paths: files and folders, as for :func:`find_transcript_files`.

    Returns:
        Sessions ordered by start time (sessions without timestamps last, by path), and a report.

    A file none of whose lines is a JSON object is not a transcript: it forms no session and is
    named in the report (a binary file given by mistake counted as one session "with no read during
    initialization").

    Raises:
        InputError: a path does not exist, or every file read is not a transcript.
    """
    read = [read_transcript_file(p) for p in find_transcript_files(paths)]
    rejected = tuple(str(f.path) for f in read if f.lines and not f.records)
    files = [f for f in read if not (f.lines and not f.records)]
    if rejected and not files:
        shown = ", ".join(rejected[:5]) + (f" and {len(rejected) - 5} more" if len(rejected) > 5 else "")
        raise InputError(f"no Claude Code transcript: none of the lines of {shown} is a JSON object")
    mains = [f for f in files if not f.subagent_file]
    by_key: dict[str, TranscriptFile] = {}
    for main in mains:
        by_key.setdefault(main.path.stem, main)
        if main.session_id:
            by_key.setdefault(main.session_id, main)
    children: dict[Path, list[TranscriptFile]] = {m.path: [] for m in mains}
    orphans = 0
    for sub in (f for f in files if f.subagent_file):
        key = sub.path.parent.parent.name if sub.path.parent.name == "subagents" else sub.session_id
        parent = by_key.get(key) if key else None
        if parent is None:
            orphans += 1
        else:
            children[parent.path].append(sub)
    sessions = [
        SessionTranscript(session_id=m.session_id or m.path.stem, main=m, subagents=tuple(children[m.path]))
        for m in mains
    ]
    sessions.sort(key=lambda s: (s.start is None, s.start or datetime.min, str(s.main.path)))
    unknown: Counter[str] = Counter()
    for f in files:
        unknown.update(f.unknown_types)
    report = ReadReport(
        files=len(files),
        sessions=len(sessions),
        orphan_subagent_files=orphans,
        non_json_lines=sum(f.non_json_lines for f in files),
        truncated_last_lines=sum(f.truncated_last_line for f in files),
        unknown_types=dict(unknown),
        not_transcripts=rejected,
    )
    return sessions, report


def _timed(events: Sequence[TranscriptEvent]) -> Iterator[tuple[float, int, TranscriptEvent]]:
    """Key each event by its time (carrying the last known time forward) and its position."""
    last = float("-inf")
    for position, event in enumerate(events):
        if event.time is not None:
            last = max(last, event.time.timestamp())
        yield last, position, event
