"""``status`` warns when the data dir or the store's folder lets other users in.

New data folders are 0700 (SQLite since ADR 0055, Qdrant's local mode since it was found 0755), but a
folder made by an earlier version, or by hand, keeps its mode, and the files inside are 0644 under
umask 022: the folder is what keeps restricted records and the query log from other users.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _status(data_dir: Path, *extra: str, store: str = "sqlite") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MISSION_MEMORY_DATA_DIR": str(data_dir), "MISSION_MEMORY_STORE": store, "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "mission_memory", "status", *extra], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def test_a_data_dir_others_may_enter_is_named_with_its_fix(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    assert _status(data_dir).returncode == 0  # a new data dir: private
    assert json.loads(_status(data_dir, "--json").stdout)["exposed"] == []
    data_dir.chmod(0o755)
    report = json.loads(_status(data_dir, "--json").stdout)
    assert report["exposed"] == [{"path": str(data_dir), "mode": "0755", "fix": f"chmod 700 {data_dir}"}]
    text = _status(data_dir).stdout
    assert f"Warning: {data_dir} is mode 0755" in text and f"chmod 700 {data_dir}" in text


def test_a_qdrant_folder_an_earlier_version_made_0755_is_named(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    (data_dir / "qdrant").mkdir(parents=True, mode=0o755)
    (data_dir / "qdrant").chmod(0o755)
    data_dir.chmod(0o700)
    done = _status(data_dir, "--json", store="qdrant")
    assert done.returncode == 0, done.stderr
    assert [e["path"] for e in json.loads(done.stdout)["exposed"]] == [str(data_dir / "qdrant")]
