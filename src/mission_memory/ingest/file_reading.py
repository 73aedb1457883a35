"""Reading a repository's files without leaving it: only regular files under the root, at most a cap of bytes.

A repository an ingest reads may be a third party's clone, so its content is untrusted input and so are
its symbolic links (git tracks a link as its target text; checking it out makes the link). Before this
module, ingest opened whatever a tracked path named: a link to ``~/.ssh/id_ed25519`` or ``/etc/hostname``
was stored and served, one to ``/dev/stdin`` blocked the ingest forever, one to ``/dev/zero`` read until
``MemoryError`` (issue 22 item 5). The rules (docs/adr/0056):

* the path is resolved (every link followed, ``..`` folded) and must stay under the resolved root:
  a link to another file of the repository is read, one leading outside is not (``outside-repository``);
* what it resolves to must be a regular file: a folder, FIFO, socket or device is not opened
  (``not-a-regular-file``). The file is opened with ``O_NONBLOCK`` (a FIFO swapped in meanwhile cannot
  block the open) and ``O_NOFOLLOW`` (a link swapped in meanwhile is refused), and checked again with
  ``fstat`` on the open descriptor;
* at most ``max_bytes + 1`` bytes are read, whatever ``stat`` said: a file that grows while it is read,
  or that reports a size of 0 (``/proc`` files), still stops at the cap (``too-large``).

The same reader serves a git work tree and a plain folder, and the ``.gitignore`` /
``.mission-memory-ignore`` files ingest reads for patterns.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TEXT_FALLBACK", "DecodedText", "FileRead", "decode_text", "read_inside"]

TEXT_FALLBACK = "cp1252"
"""How a text file that is not UTF-8 is read: Windows-1252 (Latin-1 with the typographic quotes and
dashes of 0x80-0x9F), else ISO 8859-1 for a file with one of the five bytes cp1252 leaves undefined.
A legacy ADR with one ``é`` written as ``0xE9`` is kept, not dropped; its records say so."""
_CONTROL_SHARE = 0.1
"""A file that is not UTF-8 and whose first 8 KiB are more than this share of control bytes (not tab,
newline, carriage return or form feed) is binary, not legacy text."""


@dataclass(frozen=True)
class DecodedText:
    """What :func:`decode_text` made of a file's bytes.

    Attributes:
        text: the text, or None when the bytes are not text.
        encoding: ``utf-8``, or the fallback it was read with (``cp1252``, ``latin-1``); None with no text.
        reason: why there is no text (``binary``), or None.
    """

    text: str | None
    encoding: str | None = None
    reason: str | None = None

    @property
    def fallback(self) -> bool:
        """Whether the text was read with the fallback, not as UTF-8."""
        return self.encoding not in (None, "utf-8")


def decode_text(data: bytes) -> DecodedText:
    """A file's bytes as text: UTF-8 (a byte-order mark dropped), else by :data:`TEXT_FALLBACK`
    (``cp1252``, or ``latin-1`` when a byte is undefined in cp1252), or not at all for a binary file: a
    NUL byte in the first 8 KiB, or mostly control bytes there. Never raises; the same bytes always
    give the same answer."""
    head = data[:8192]
    if b"\0" in head:
        return DecodedText(None, reason="binary")
    try:
        return DecodedText(data.decode("utf-8-sig"), "utf-8")
    except UnicodeDecodeError:
        pass
    controls = sum(1 for b in head if (b < 0x20 and b not in (0x09, 0x0A, 0x0C, 0x0D)) or b == 0x7F)
    if controls > _CONTROL_SHARE * len(head):
        return DecodedText(None, reason="binary")
    try:
        return DecodedText(data.decode(TEXT_FALLBACK), TEXT_FALLBACK)
    except UnicodeDecodeError:
        return DecodedText(data.decode("latin-1"), "latin-1")


_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


@dataclass(frozen=True)
class FileRead:
    """What :func:`read_inside` found.

    Attributes:
        data: the file's bytes (at most the cap), or None when it was not read.
        reason: why it was not read, or None: ``outside-repository`` (a link leads out of the root),
            ``not-a-regular-file`` (folder, FIFO, socket, device), ``too-large`` (more than the cap),
            ``unreadable`` (missing, a link loop, permission denied, an I/O error).
        size: with ``too-large``, the file's size in bytes as the file system states it, or None when
            it states no more than the cap (a ``/proc`` file, a file that grew while read).
    """

    data: bytes | None
    reason: str | None = None
    size: int | None = None

    def too_large_detail(self, limit: int, setting: str) -> str:
        """How a ``too-large`` file compares with the cap, for the skip report:
        ``5,008 bytes; the limit is 4,000 bytes (MISSION_MEMORY_MAX_FILE_BYTES)`` (``more than 4,000 bytes``
        when the size is not known). ``limit`` is the cap in bytes, ``setting`` what sets it."""
        size = f"{self.size:,} bytes" if self.size is not None else f"more than {limit:,} bytes"
        return f"{size}; the limit is {limit:,} bytes ({setting})"


def read_inside(root: Path, relative: str, max_bytes: int) -> FileRead:
    """The bytes of the regular file ``relative`` names under ``root``, or why it is not read.

    Args:
        root: the repository (or folder) root; it is resolved here, so a root reached through a link
            is fine.
        relative: a root-relative path (POSIX separators), as git or the folder walk lists it.
        max_bytes: the cap: a file holding more is ``too-large`` (only ``max_bytes + 1`` are read to know).

    Returns:
        A :class:`FileRead`; never raises for what the file is or holds.
    """
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, relative))
    if os.path.commonpath([base, target]) != base:
        return FileRead(None, "outside-repository")
    try:
        if not stat.S_ISREG(os.stat(target).st_mode):
            return FileRead(None, "not-a-regular-file")
        descriptor = os.open(target, _OPEN_FLAGS)
    except OSError:
        return FileRead(None, "unreadable")
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return FileRead(None, "not-a-regular-file")
        os.set_blocking(descriptor, True)
        chunks: list[bytes] = []
        remaining = max_bytes + 1
        while remaining > 0:
            chunk = os.read(descriptor, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError:
        return FileRead(None, "unreadable")
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        return FileRead(None, "too-large", status.st_size if status.st_size > max_bytes else None)
    return FileRead(data)
