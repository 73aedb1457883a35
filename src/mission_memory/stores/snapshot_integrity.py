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
reads and checks it again. As in git's "racy git" rule, a file modified less than
:data:`RACY_SECONDS` before its check gets no stamp: file times advance in clock ticks of a few
milliseconds, so a change within the same tick as the check could otherwise keep the stamp's key.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import zlib
from pathlib import Path
from typing import BinaryIO

__all__ = ["RACY_SECONDS", "STAMP_SUFFIX", "data_checked", "data_crc32"]

STAMP_SUFFIX = ".checked"
"""A snapshot's stamp is ``<snapshot name>.checked`` in the same folder."""
RACY_SECONDS = 2.0
"""A file modified less than this long before its check is checked again by the next load."""
_CHUNK = 1 << 22


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
    key = {"inode": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "crc32": int(expected_crc)}
    stamp = path.with_name(path.name + STAMP_SUFFIX)
    with contextlib.suppress(OSError, ValueError):
        if json.loads(stamp.read_text(encoding="utf-8")) == key:
            return True
    checked_at = time.time_ns()
    if data_crc32(f, start) != expected_crc:
        return False
    if checked_at - st.st_mtime_ns < RACY_SECONDS * 1e9:
        return True
    with contextlib.suppress(OSError):
        tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(key), encoding="utf-8")
        os.replace(tmp, stamp)
    return True
