"""A full disk is a clear error, not damage: the store is usable once space returns and keeps every
acknowledged write (issue 35 item 5).

On the starting code the checkpoint the full disk stopped left ``memory.db`` shorter than its header
(the pages in ``-wal``), and every command refused the healthy store as "cut short", even after space
was freed. The scenario runs on a real 12 MiB tmpfs in a private mount namespace
(:mod:`tests.security.disk_full_store`; the tests run as root, as CI does).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_store_whose_disk_filled_is_usable_again_once_space_returns(tmp_path: Path) -> None:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", sys.executable, "-m", "tests.security.disk_full_store",
         str(mount)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    # the scenario happened: a checkpoint stopped by the full disk left the file short, pages in -wal
    shape = seen["shape_when_full"]
    assert shape["file_pages"] < shape["header_pages"] and shape["wal_bytes"] > 0, seen
    assert seen["acknowledged"] > 0
    # a clear error for the write that did not fit, naming the full disk; not "damaged"
    assert "is full" in seen["write_error"] and "damaged" not in seen["write_error"], seen["write_error"]
    assert "was not stored" in seen["write_error"], seen["write_error"]
    # still readable while the disk is full, every acknowledged record there
    assert seen["open_when_full"] == "ok", seen["open_when_full"]
    assert seen["readable_when_full"] == seen["acknowledged"]
    # space returns: the real CLI answers, a checkpoint made the file whole, nothing acknowledged lost
    assert seen["status_after"]["exit"] == 0, seen["status_after"]
    assert json.loads(seen["status_after"]["out"])["records"] == seen["acknowledged"]
    assert seen["shape_after"]["file_pages"] == seen["shape_after"]["header_pages"], seen["shape_after"]
    assert seen["open_after"] == "ok" and seen["readable_after"] == seen["acknowledged"]
    assert seen["write_after"] == "ok" and seen["quick_check_after"] == "ok", seen
