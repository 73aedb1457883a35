"""A data dir the user cannot write (an archived mission, a mounted backup) can still be read (issue 9).

We run as root, which ignores file permissions, so the CLI runs in a subprocess without the
capabilities that let root ignore them (``setpriv --bounding-set=-all``: still uid 0, so it can reach
the virtual environment wherever the checkout lies, but file modes now apply to it as to any owner),
or else as the unprivileged user ``nobody`` (``runuser``), against a data dir made by ingest and then
made read-only: files 0444, folders 0555.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mission_memory.api import Memory
from tests.conftest import GitRepo

CLI = Path(sys.executable).with_name("mission-memory")
NOBODY = 65534


def _as_nobody() -> list[str] | None:
    """The command prefix that runs a program subject to file permissions, or None when there is none."""
    if os.geteuid() != 0:
        return []  # already unprivileged: permissions apply
    if shutil.which("setpriv"):
        return ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--"]
    if shutil.which("runuser"):
        return ["runuser", "-u", "nobody", "--"]
    return None


def _make_read_only(folder: Path) -> None:
    for current, dirs, files in os.walk(folder):
        for name in files:
            (Path(current) / name).chmod(0o444)
        for name in dirs:
            (Path(current) / name).chmod(0o555)
    folder.chmod(0o555)


def _run(prefix: list[str], data_dir: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "MISSION_MEMORY_DATA_DIR": str(data_dir),
           "LANG": "C.UTF-8"}
    return subprocess.run([*prefix, str(CLI), *args], env=env, capture_output=True, text=True, timeout=300,
                          cwd=home)


def _ingest(data_dir: Path, repo: GitRepo, crash: bool) -> None:
    """Ingest ``repo`` into ``data_dir``; with ``crash``, exit without closing (leaving -wal and -shm)."""
    script = (
        "import os, sys\n"
        "from mission_memory.api import Memory\n"
        "m = Memory.open()\n"
        "m.ingest_repository(sys.argv[1])\n"
        "m.query('Which database holds the upload ledger?')\n"
        + ("os._exit(0)\n" if crash else "m.close()\n")
    )
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    subprocess.run([sys.executable, "-c", script, str(repo.root)], env=env, check=True, capture_output=True)


@pytest.mark.parametrize("crash", [False, True], ids=["clean-close-no-wal", "crashed-writer-wal-and-shm"])
def test_an_unprivileged_user_can_query_a_read_only_data_dir_but_not_write_it(
    mission_repo: GitRepo, shared_root: Path, crash: bool
) -> None:
    prefix = _as_nobody()
    if prefix is None:
        assert os.environ.get("CI") != "true", "CI must be able to run as an unprivileged user"
        pytest.skip("no unprivileged user and no setpriv/runuser to switch to one")
    data_dir = shared_root / "data"
    home = shared_root / "home"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    repo_copy = shared_root / "repo"
    shutil.copytree(mission_repo.root, repo_copy)
    _ingest(data_dir, mission_repo, crash)
    wal = data_dir / "memory.db-wal"
    assert (wal.exists() and wal.stat().st_size > 0) is crash
    _make_read_only(data_dir)

    status = _run(prefix, data_dir, home, "status", "--json")
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["read_only"] is True and shown["records"] > 0 and shown["retrieval_events"] == 1

    query = _run(prefix, data_dir, home, "query", "Which database holds the upload ledger?", "--json")
    assert query.returncode == 0, query.stderr
    digest = json.loads(query.stdout)
    assert "ADR-0002: Use SQLite in WAL mode for the embedded ledger" in digest["digest"]
    assert digest["retrieval_event_id"] == ""  # nothing could be logged

    events = _run(prefix, data_dir, home, "events", "--json")
    assert events.returncode == 0, events.stderr
    assert [e["query"] for e in json.loads(events.stdout)] == ["Which database holds the upload ledger?"]

    refresh = _run(prefix, data_dir, home, "refresh", "status", "--json")
    assert refresh.returncode == 0, refresh.stderr

    ingest = _run(prefix, data_dir, home, "ingest", str(repo_copy), "--json")
    assert ingest.returncode == 1
    assert "not writable" in ingest.stderr and "Traceback" not in ingest.stderr

    for current, dirs, _ in os.walk(data_dir):
        for name in dirs:
            (Path(current) / name).chmod(0o755)
    data_dir.chmod(0o755)
    with Memory.open(data_dir=data_dir) as memory:  # nothing stored before was lost
        assert memory.status()["records"] == shown["records"]
