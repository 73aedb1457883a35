"""The Qdrant backend's compare-and-set (``replace_state``) is atomic only within one process (its lock); in
local mode that is enough because one process holds the folder: the client locks it, so a second process
cannot open the store at all and is told so (a clear error, not a traceback), and opens it once the first
has closed it. Real processes on a real folder (docs/adr/0091)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mission_memory.errors import BackendUnavailable
from mission_memory.stores.registry import open_store

HOLDER = """
import sys
from mission_memory.stores.registry import open_store
store = open_store(sys.argv[1], sys.argv[2])
store.replace_state("m", "k", None, "first")
print("open", flush=True)
sys.stdin.readline()  # hold the folder until told to close
store.close()
"""


# qdrant-client's local mode leaves its lock file open when the lock is refused (its object is dropped
# half-built); the process is told the store cannot be opened either way.
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_second_process_cannot_open_a_local_qdrant_folder_while_one_holds_it(tmp_path: Path) -> None:
    spec = f"qdrant+path://{tmp_path / 'qd'}"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, spec, str(tmp_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open", holder.stderr
        with pytest.raises(BackendUnavailable, match=r"cannot be opened: .*already accessed by another instance"):
            open_store(spec, tmp_path)
    finally:
        _, err = holder.communicate("close\n", timeout=60)
    assert holder.returncode == 0, err
    store = open_store(spec, tmp_path)  # closed: the next process opens it and sees the first one's value
    try:
        assert store.get_state("m", "k") == "first"
        assert store.replace_state("m", "k", "first", "second") and not store.replace_state("m", "k", "first", "x")
    finally:
        store.close()
