"""Private files: every file the product writes is 0600 and every folder it creates 0700, whatever the
umask (docs/adr/0055). Stores, exports, the prompt repository, logs and operator tokens all create
their files through these functions, so the rule has one home.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO

DATA_FILE_MODE = 0o600
"""Permission bits of a new ``memory.db`` and of every file derived from it or written beside it."""
DATA_FOLDER_MODE = 0o700
"""Permission bits of a data folder this package creates."""

__all__ = ["DATA_FILE_MODE", "DATA_FOLDER_MODE", "create_data_file", "make_data_folder", "write_private_text"]


def create_data_file(path: Path, mode: int = DATA_FILE_MODE) -> BinaryIO:
    """A new file at ``path`` (which must not exist), opened for binary writing, with exactly the
    permission bits ``mode`` whatever the umask (``os.open`` then ``fchmod``).

    Raises:
        FileExistsError: ``path`` exists.
        OSError: it cannot be created.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)
    except OSError:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb")


def write_private_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` with :data:`DATA_FILE_MODE`, whatever the umask: an export of
    prompts or corrections holds what the store holds. An existing file is overwritten and made
    private too.

    Raises:
        OSError: it cannot be written.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, DATA_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        os.fchmod(out.fileno(), DATA_FILE_MODE)
        out.write(text)


def make_data_folder(folder: Path) -> None:
    """Create ``folder`` (and missing parents) with :data:`DATA_FOLDER_MODE` whatever the umask; an
    existing folder is left with its mode (its owner chose it).

    Raises:
        OSError: it cannot be created.
    """
    if folder.is_dir():
        return
    folder.mkdir(mode=DATA_FOLDER_MODE, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(folder, DATA_FOLDER_MODE)
