"""Soundness of the SQLite store's file: what is checked when a store is opened, and the refusal.

``memory.db`` is not derived data: beside what ingest can read again from repositories and trackers
it holds decisions recorded with ``decide``/``record_decision``, corrections, handover notes and
archived briefs, domain events and the retrieval log, which no ingest recreates. A damaged file must
therefore be refused by every command, never answered from (an answer from a file with damaged
pages silently misses records) and never replaced by an empty store (docs/adr/0055):

* on every open, without reading the file (:func:`check_file_shape`): a 0-byte file, a file that does
  not start with SQLite's header, a page size SQLite never writes, or a file shorter than the pages
  its header counts (a truncated copy) is refused. The last is decided by SQLite under its own locks,
  for a store another process is checkpointing, or whose checkpoint a full disk stopped, is shorter
  than its header for a while and healthy all along (its ``-wal`` file holds the rest). A new store is never a 0-byte ``memory.db``: it is
  made under a temporary name and linked into place whole (``SqliteStore``), so a 0-byte file is
  always damage (a failed copy, a full disk, a truncation);
* ``PRAGMA quick_check`` (every page of every b-tree, without the index-against-table cross-check of
  ``integrity_check``: 0.4–0.6 s against 1.5 s on a 519 MB store of 100k records) once per version of
  the file (:func:`check_soundness`): a passed check is stamped beside the file (``memory.db.checked``)
  with the file's inode, size, modification and change times, as the snapshot checks are
  (:mod:`~mission_memory.stores.snapshot_integrity`). SQLite writes committed transactions to the
  ``-wal`` file and copies them into ``memory.db`` at checkpoints, so the file itself changes only at a
  checkpoint, and the next open after one checks again. Opens in between (most queries) cost nothing;
* a store closed within a minute of its check stamps the file as its own last checkpoint left it
  (:func:`restamp_own_writes`), so a command's own retrieval event does not cost the next command a
  check;
* a SQLite error saying "malformed" or "not a database" on any later statement is refused the same way.

The refusal (:func:`damage_message`) names what would be lost (the records of each kind no ingest
recreates, counted where the file can still be read) and how to save what is readable: ``mission-memory
salvage`` into a new data dir (:mod:`~mission_memory.stores.sqlite_salvage`; SQLite's ``.recover`` needs a
virtual table distributions' ``sqlite3`` 3.40 builds lack).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
import urllib.parse
from pathlib import Path

from mission_memory.errors import StoreDamaged
from mission_memory.stores.snapshot_integrity import RACY_SECONDS, STAMP_MAX_AGE_SECONDS, write_stamp

__all__ = [
    "RESTAMP_WINDOW_SECONDS",
    "SQLITE_HEADER",
    "UNRECREATABLE_KINDS",
    "check_file_shape",
    "check_soundness",
    "damage_message",
    "restamp_own_writes",
]

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file (sqlite.org/fileformat.html §1.3)."""
UNRECREATABLE_KINDS = ("decision", "correction_pattern", "handover_note", "handover_brief", "domain_event")
"""Record kinds whose records may exist only in the store (a decision ingested from an ADR file can be
read again, one recorded with ``decide`` cannot; the refusal counts them all, as the upper bound)."""
_STAMP_SUFFIX = ".checked"
_HEADER_BYTES = 100


def check_file_shape(path: Path) -> None:
    """Refuse a database file whose shape is wrong, reading its 100-byte header (and, only when its size
    disagrees with the header, asking SQLite under its own locks).

    Checks (sqlite.org/fileformat.html §1.3): the file is not empty; it starts with
    :data:`SQLITE_HEADER`; its page size (offset 16; 1 means 65536) is a power of two from 512 to
    65536; its size is a whole number of pages; and, when the header's page count is valid (offset 28,
    valid when the change counter at offset 24 equals the version-valid-for number at offset 92), the
    file holds at least that many pages. A file that does not exist passes (it is a new store).

    The size checks alone cannot tell a truncated copy from a healthy store: a checkpoint (SQLite copying
    committed pages from ``-wal`` into the file) writes page 1, whose header counts the new pages, before
    the pages that grow the file, so while another process checkpoints, and after a checkpoint that a
    full disk stopped, the file is shorter than its header says and the ``-wal`` file holds the rest.
    A size problem is therefore decided by SQLite (:func:`_wal_covers`): it compares the header's page
    count with the pages it can read (file and ``-wal`` together, in one consistent snapshot under its
    read lock) and reports a store cut short as malformed. A file it reads whole is not refused; the
    next checkpoint (at the latest when the last connection closes) grows it, and one that fails again
    for want of space loses nothing: the pages stay in ``-wal``.

    Raises:
        StoreDamaged: the file fails a check (the message: :func:`damage_message`).
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            header = f.read(_HEADER_BYTES)
    except FileNotFoundError:
        return
    except OSError:
        return  # unreadable: opening it gives SQLite's own error, translated by the store
    problem = _shape_problem(header, size)
    if problem is None:
        return
    if problem.startswith(_SIZE_PROBLEM):
        verdict = _wal_covers(path)
        if verdict is None:
            return
        problem = f"{problem}; SQLite: {verdict}"
    conn = None
    if size:  # count what the damage would cost, where SQLite can still read it
        with contextlib.suppress(sqlite3.Error):
            conn = sqlite3.connect(f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro", uri=True)
    try:
        raise StoreDamaged(damage_message(path, problem, conn))
    finally:
        if conn is not None:
            conn.close()


_SIZE_PROBLEM = "the file's size"
_SQLITE_SAYS_DAMAGED = ("malformed", "not a database", "corrupt")
_RECHECK_BUSY_MS = 5000


def _wal_covers(path: Path) -> str | None:
    """Whether SQLite reads ``path`` whole although its size disagrees with its header: None when it
    does, else SQLite's error.

    SQLite checks the header's page count against the pages it can read when it starts a read
    transaction (``lockBtree``: a larger count is ``SQLITE_CORRUPT``); in WAL mode those pages are the
    file's and the ``-wal`` file's in one snapshot, taken under the WAL read lock, so a checkpoint
    running meanwhile cannot make a healthy file look short. An error that is not about damage (busy,
    unable to open, read-only) is no verdict: the store's own open reports it.
    """
    try:
        writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
        target = str(path) if writable else f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
        conn = sqlite3.connect(target, uri=not writable, timeout=_RECHECK_BUSY_MS / 1000, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        conn.execute(f"PRAGMA busy_timeout = {_RECHECK_BUSY_MS}")
        try:
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            message = str(exc)
            return message if any(word in message.lower() for word in _SQLITE_SAYS_DAMAGED) else None
        return None
    finally:
        conn.close()


def _shape_problem(header: bytes, size: int) -> str | None:
    if size == 0:
        return "the file is empty (0 bytes): a new store is never written that way"
    if len(header) < _HEADER_BYTES or not header.startswith(SQLITE_HEADER):
        return "the file does not start with SQLite's header"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        return f"the header's page size {page_size} is not one SQLite writes"
    if size % page_size:
        return f"{_SIZE_PROBLEM} ({size:,} bytes) is not a whole number of {page_size}-byte pages (a truncated copy?)"
    counted = int.from_bytes(header[28:32], "big")
    valid = header[24:28] == header[92:96]
    if valid and counted and size < counted * page_size:
        return (
            f"{_SIZE_PROBLEM} is {size // page_size:,} pages, its header counts {counted:,} (the file was cut short)"
        )
    return None


RESTAMP_WINDOW_SECONDS = 60.0
"""A store closed within this long after its file was found sound stamps the file as it leaves it."""


def check_soundness(path: Path, conn: sqlite3.Connection) -> int:
    """Run ``PRAGMA quick_check`` on ``conn`` (a connection to ``path``) unless a stamp beside ``path``
    says this version of the file passed it; stamp a pass.

    The stamp holds the file's inode, size, modification and change times (ns) and when it was
    checked; it vouches for :data:`~mission_memory.stores.snapshot_integrity.STAMP_MAX_AGE_SECONDS`
    at most, and a file modified less than
    :data:`~mission_memory.stores.snapshot_integrity.RACY_SECONDS` before the check gets none (git's
    racy rule). A folder that cannot be written only loses the saving: every open checks then.

    Returns:
        When the file was last found sound (ns since the epoch: the stamp's time, or now).

    Raises:
        StoreDamaged: the check finds damage, or SQLite reports the file malformed while checking.
    """
    stamp = path.with_name(path.name + _STAMP_SUFFIX)
    started = time.time_ns()
    try:
        st = path.stat()
    except OSError:
        return started
    key = {"inode": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}
    with contextlib.suppress(OSError, ValueError, TypeError, AttributeError, KeyError):
        held = json.loads(stamp.read_text(encoding="utf-8"))
        when = int(held.pop("checked_at_ns"))
        if held == key and 0 <= started - when < STAMP_MAX_AGE_SECONDS * 1e9:
            return when
    try:
        result = "\n".join(str(row[0]) for row in conn.execute("PRAGMA quick_check(20)"))
    except sqlite3.DatabaseError as exc:
        raise StoreDamaged(damage_message(path, str(exc), conn)) from exc
    if result != "ok":
        with contextlib.suppress(OSError):
            stamp.unlink(missing_ok=True)
        raise StoreDamaged(damage_message(path, f"quick_check: {result[:300]}", conn))
    if started - st.st_mtime_ns >= RACY_SECONDS * 1e9:
        write_stamp(stamp, {**key, "checked_at_ns": started}, mode=st.st_mode & 0o777)
    return started


def restamp_own_writes(path: Path, sound_at_ns: int, opened_at: float) -> None:
    """Stamp ``path`` as a closing store leaves it, when it was found sound at most
    :data:`RESTAMP_WINDOW_SECONDS` ago (``opened_at``: ``time.monotonic()`` then).

    Every query logs a retrieval event, and the last connection's close copies it from the WAL into
    ``memory.db``, so without this each CLI call would make the next one run ``quick_check`` again
    (0.4-0.6 s at 100k records). The pages written since the check are SQLite's own; what this
    vouches for without reading is damage from outside during the window, a minute at most. The
    stamp keeps the time of the real check, so it still expires a day after it.
    """
    if time.monotonic() - opened_at > RESTAMP_WINDOW_SECONDS:
        return
    try:
        st = path.stat()
    except OSError:
        return
    key = {"inode": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}
    write_stamp(path.with_name(path.name + _STAMP_SUFFIX), {**key, "checked_at_ns": sound_at_ns},
                mode=st.st_mode & 0o777)


def damage_message(path: Path, problem: str, conn: sqlite3.Connection | None = None) -> str:
    """The refusal of a damaged store: what is wrong, what would be lost, how to save what is readable.

    ``conn``, when given, is used to count the records of :data:`UNRECREATABLE_KINDS` and the
    retrieval events (best effort: a count the damage prevents is left out).
    """
    lost = _readable_counts(conn) if conn is not None else {}
    held = ", ".join(f"{n:,} {kind.replace('_', ' ')}s" for kind, n in lost.items() if n) or (
        "decisions recorded with `decide`, corrections, handover notes and briefs, domain events and the "
        "retrieval log"
    )
    folder = path.parent
    return (
        f"store {path} is damaged ({problem}); it is refused, not answered from. Do not delete it or re-ingest "
        f"over it: besides what ingest reads again it holds {held}, which no ingest recreates. Save what is "
        f"readable first: `mission-memory salvage {path} --to {folder.with_name(folder.name + '-salvaged')}` copies "
        f"every row that can still be read into a new data dir and lists what could not; then set "
        f"MISSION_MEMORY_DATA_DIR to that folder and re-ingest the repositories with the same "
        f"MISSION_MEMORY_ACCESS_PATHS as before (a re-ingest without it stores restricted files at the "
        f"default level)"
    )


def _readable_counts(conn: sqlite3.Connection) -> dict[str, int]:
    counts: dict[str, int] = {}
    for kind in UNRECREATABLE_KINDS:
        # a decision read from an ADR file is read again by ingest: only the others are counted
        extra = " AND source_kind != 'adr'" if kind == "decision" else ""
        with contextlib.suppress(sqlite3.Error):
            counts[kind] = int(conn.execute(f"SELECT count(*) FROM records WHERE kind = ?{extra}", (kind,)).fetchone()[0])
    with contextlib.suppress(sqlite3.Error):
        counts["retrieval event"] = int(conn.execute("SELECT count(*) FROM retrieval_events").fetchone()[0])
    return counts
