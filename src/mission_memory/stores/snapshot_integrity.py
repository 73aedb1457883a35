"""Integrity of the SQLite store's derived snapshot files: a CRC-32 of their data, computed once per file.

The vector snapshot (``memory.vectors/``, :mod:`~mission_memory.stores.vector_table`) and the BM25 index
(``memory.bm25/``, :mod:`~mission_memory.stores.sqlite_bm25_index`) carry the CRC-32 of their data in
their headers; a file whose data does not match is rebuilt, never searched. Reading 1.9 GB of vectors
to check it costs over a second of CPU at 1M records, and every new process (each CLI call, each MCP
server start) would pay it. Snapshots are written once and replaced by rename, never changed in
place, so a check holds for as long as the file is the same: :func:`data_checked` records a passed
check in a small stamp beside the file, keyed by the file's inode, size, modification time and CRC,
and a later process that finds a matching stamp skips the read. Any change to the file (a new
snapshot renamed over it, bytes written into it, a truncation) changes the key, so the next load
reads and checks it again. The key holds the inode's change time too (``st_ctime_ns``): bytes
written into the file and its modification time then set back (``os.utime``, what a careless copy
or a restore tool does) leave inode, size and modification time as they were, but every write and
every ``utime`` sets the change time, which no call can set back. Damage that bypasses the file
system (a flipped bit on the medium) changes no time at all, so a stamp also expires: one older
than :data:`STAMP_MAX_AGE_SECONDS` vouches for nothing, and the next load reads the data again
(once a day, about a second at 1M vectors, instead of on every open; docs/adr/0055). As in git's
"racy git" rule, a file modified less than :data:`RACY_SECONDS` before its check gets no stamp:
file times advance in clock ticks of a few milliseconds, so a change within the same tick as the
check could otherwise keep the stamp's key.

Snapshot writers write a temporary file beside the snapshot and rename it over; a writer killed
before the rename leaves it behind. :func:`remove_orphaned_temporaries` removes those of dead
writers when a store is opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import time
import zlib
from pathlib import Path
from typing import BinaryIO

from mission_memory.stores.private_files import (
    DATA_FILE_MODE,
    DATA_FOLDER_MODE,
    create_data_file,
    make_data_folder,
    write_private_text,
)

__all__ = [
    "DATA_FILE_MODE",
    "DATA_FOLDER_MODE",
    "ORPHAN_AGE_SECONDS",
    "RACY_SECONDS",
    "STAMP_MAX_AGE_SECONDS",
    "STAMP_SUFFIX",
    "create_data_file",
    "data_checked",
    "data_crc32",
    "data_file_mode",
    "make_data_folder",
    "read_access_problem",
    "remove_orphaned_temporaries",
    "write_private_text",
    "write_stamp",
]

STAMP_SUFFIX = ".checked"
"""A snapshot's stamp is ``<snapshot name>.checked`` in the same folder."""
RACY_SECONDS = 2.0
"""A file modified less than this long before its check is checked again by the next load."""
STAMP_MAX_AGE_SECONDS = 24 * 3600.0
"""A stamp older than this (by the time it records) vouches for nothing: the data is read again."""
ORPHAN_AGE_SECONDS = 3600.0
"""A temporary file unchanged for this long is an orphan even when a process of its writer's id runs
(process ids are reused, and a writer in another container has another process id space)."""
_CHUNK = 1 << 22
_TEMPORARY = re.compile(r"^\..*\.(?P<pid>\d+)(?:\.[0-9a-f]{32})?\.tmp(?:-wal|-shm|-journal)?$|^\.snapshot-(?P<spid>\d+)-[0-9a-f]{32}\.tmp$")
"""Temporary names of the snapshot writers: ``.<name>.<pid>.<hex>.tmp`` (BM25), ``.snapshot-<pid>-<hex>.tmp``
(vectors) and ``<snapshot>.checked.<pid>.tmp`` (stamps, which do not start with a dot)."""
_STAMP_TEMPORARY = re.compile(r"^.+\.checked\.(?P<pid>\d+)\.tmp$")


def data_crc32(f: BinaryIO, start: int) -> int:
    """CRC-32 of the bytes of the open file ``f`` from ``start`` to its end, read in 4 MB chunks
    with plain reads (not through a memory map, so the check adds nothing to the resident set)."""
    f.seek(start)
    crc, buffer = 0, bytearray(_CHUNK)
    while n := f.readinto(buffer):  # type: ignore[attr-defined]
        crc = zlib.crc32(memoryview(buffer)[:n], crc)
    return crc


def data_checked(f: BinaryIO, path: Path, start: int, expected_crc: int) -> bool:
    """True when the data of the open snapshot ``f`` (read from ``path``) from ``start`` has CRC-32 ``expected_crc``.

    A stamp beside ``path`` that matches the open file (inode, size, modification time in ns) and
    ``expected_crc`` answers without reading the data; otherwise the data is read
    (:func:`data_crc32`) and, when it matches, the stamp is written (atomically; a data dir that
    cannot be written only loses the saving). The key is taken from ``f`` itself, so a snapshot
    renamed over ``path`` by another process meanwhile is never vouched for by this file's check.
    """
    st = os.fstat(f.fileno())
    key = {"inode": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
           "crc32": int(expected_crc)}
    stamp = path.with_name(path.name + STAMP_SUFFIX)
    checked_at = time.time_ns()
    with contextlib.suppress(OSError, ValueError, TypeError, AttributeError, KeyError):
        held = json.loads(stamp.read_text(encoding="utf-8"))
        when = held.pop("checked_at_ns")
        if held == key and 0 <= checked_at - int(when) < STAMP_MAX_AGE_SECONDS * 1e9:
            return True
    if data_crc32(f, start) != expected_crc:
        with contextlib.suppress(OSError):
            stamp.unlink(missing_ok=True)
        return False
    if checked_at - st.st_mtime_ns < RACY_SECONDS * 1e9:
        return True
    write_stamp(stamp, {**key, "checked_at_ns": checked_at}, mode=stat.S_IMODE(st.st_mode))
    return True


def write_stamp(stamp: Path, content: dict[str, int], mode: int = 0o600) -> None:
    """Write a stamp atomically (a temporary file renamed over it) with the permission bits ``mode``
    (those of the file it vouches for); a folder that cannot be written only loses the saving."""
    with contextlib.suppress(OSError):
        tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(content))
        os.replace(tmp, stamp)


def remove_orphaned_temporaries(folder: Path, now: float | None = None) -> list[Path]:
    """Remove the temporary files that killed snapshot writers left in ``folder``; return them.

    A temporary file (names: see ``_TEMPORARY``) is an orphan when no process of its writer's id
    runs on this machine, or when it has not changed for :data:`ORPHAN_AGE_SECONDS` (a live writer
    writes its file continuously and renames it within seconds). A folder that is missing or
    cannot be written is left as it is. Other files are never touched.
    """
    removed: list[Path] = []
    moment = time.time() if now is None else now
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _TEMPORARY.match(name) or _STAMP_TEMPORARY.match(name)
        if match is None:
            continue
        pid = int(next(v for v in match.groupdict().values() if v is not None))
        path = folder / name
        try:
            age = moment - path.lstat().st_mtime
            if _process_runs(pid) and age < ORPHAN_AGE_SECONDS:
                continue
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def _process_runs(pid: int) -> bool:
    """True when a process ``pid`` exists here (signal 0 checks without sending anything)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by another user
        return True
    return True


def data_file_mode(database: Path) -> int:
    """The permission bits the files derived from ``database`` get: the database's own (so an owner who
    shares a store with ``chmod`` shares its snapshots too), :data:`DATA_FILE_MODE` when it is missing."""
    try:
        return stat.S_IMODE(database.stat().st_mode)
    except OSError:
        return DATA_FILE_MODE


def read_access_problem(path: Path, what: str = "store") -> str | None:
    """Why this user cannot read the store file or folder ``path``, as a message; None when it can,
    or when ``path`` does not exist (a new store).

    Each check is the real operation (open the file, list the folder), not a guess from the modes,
    so it also holds for root without CAP_DAC_OVERRIDE and for ACLs. A folder that cannot be entered
    on the way (the data dir at ``chmod 000``) is named as the cause, not the file behind it.

    Args:
        path: the store's file (``memory.db``) or folder (Qdrant's local mode).
        what: how the message names ``path``: ``store``, ``Qdrant local store``.
    """
    folder = False
    try:
        folder = path.is_dir()
        if folder:
            os.listdir(path)
            (path / ".").stat()  # entering it needs the search bit, listing it only the read bit
        else:
            with path.open("rb"):
                pass
    except FileNotFoundError:
        return None
    except PermissionError:
        pass
    except OSError:
        return None  # not a permission problem: the store's own open reports it
    else:
        return None
    blocker = next((parent for parent in reversed(path.parents) if not os.access(parent, os.X_OK)), None)
    if blocker is not None:
        return (f"{what} {path} cannot be read: permission denied on the folder {blocker} (this user cannot"
                f" enter it; check its owner and mode with `ls -ld {blocker}`)")
    kind = "folder" if folder else "file"
    return (f"{what} {path} cannot be read: permission denied (this user cannot read the {kind}; check its"
            f" owner and mode with `ls -ld {path}`)")
