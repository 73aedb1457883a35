"""Running a program as root with file modes applying to it, for tests of unreadable and read-only data dirs.

The tests run as root (as CI does), and root ignores file modes. ``setpriv`` without the
capabilities that let it (``--bounding-set=-all``) keeps uid 0, the owner of the test's files, so
the program can still reach the virtual environment while the modes of the data dir apply to it.
"""

from __future__ import annotations

import os
import shutil

__all__ = ["without_file_capabilities"]


def without_file_capabilities() -> list[str] | None:
    """The command prefix under which file modes apply: ``[]`` when not root, the ``setpriv`` prefix as
    root, None as root without ``setpriv`` (the caller skips, and says why)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    return ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--"]
