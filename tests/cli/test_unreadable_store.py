"""A data dir or store file the user cannot read is reported as such: ``Error: …`` naming the path and
that it cannot be read (or entered), exit code 1, no traceback; never the hint that the folder is not
writable, which sends the user after the wrong permission.

Root ignores file modes, so the CLI runs in a subprocess without the capabilities that let it
(:func:`tests.file_modes.without_file_capabilities`): still uid 0, the owner of the data dir, so the
modes apply to it as to any owner.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mission_memory.stores.registry import open_store
from tests.file_modes import without_file_capabilities
from tests.stores.contract.test_store_contract import _record, _unit

CLI = Path(sys.executable).with_name("mission-memory")


def _without_file_capabilities() -> list[str]:
    prefix = without_file_capabilities()
    if prefix is None:
        pytest.skip("running as root without setpriv: file modes cannot be made to apply to the CLI")
    return prefix


@pytest.fixture
def filled(data_dir: Path) -> Iterator[Path]:
    """A SQLite data dir holding one record; its modes are restored afterwards so it can be removed."""
    store = open_store("sqlite", data_dir)
    store.upsert([_record("plan.md", "the plan")], _unit(1), "model-a")
    store.close()
    yield data_dir
    data_dir.chmod(0o700)
    for path in data_dir.iterdir():
        path.chmod(0o700 if path.is_dir() else 0o600)


def _cli(data_dir: Path, *args: str, store: str = "sqlite") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir), MISSION_MEMORY_STORE=store, LANG="C.UTF-8")
    return subprocess.run([*_without_file_capabilities(), str(CLI), *args], env=env, capture_output=True,
                          text=True, timeout=120, cwd=data_dir.parent)


def _reported(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert done.stderr.startswith("Error: "), done.stderr
    return " ".join(done.stderr.split())


@pytest.mark.parametrize("command", [["status"], ["status", "--json"], ["events"]])
def test_a_data_dir_that_cannot_be_entered_is_named_with_the_cause(filled: Path, command: list[str]) -> None:
    filled.chmod(0o000)
    done = _cli(filled, *command)
    if command[-1] == "--json":
        assert "Traceback" not in done.stderr and done.returncode == 1, done.stderr
        error = json.loads(done.stderr)
        assert error["kind"] == "BackendUnavailable"
        message = error["error"]
    else:
        message = _reported(done)
    assert f"permission denied on the folder {filled}" in message and "cannot be read" in message, message
    assert "writable" not in message


def test_a_store_file_that_cannot_be_read_is_named_and_not_blamed_on_writing(filled: Path) -> None:
    database = filled / "memory.db"
    database.chmod(0o000)
    message = _reported(_cli(filled, "status"))
    assert f"{database} cannot be read" in message, message
    assert "writable" not in message, message


def test_a_qdrant_data_dir_that_cannot_be_entered_is_named_with_the_cause(data_dir: Path) -> None:
    store = open_store("qdrant", data_dir)
    store.close()
    data_dir.chmod(0o000)
    try:
        message = _reported(_cli(data_dir, "status", store="qdrant"))
    finally:
        data_dir.chmod(0o700)
    assert str(data_dir) in message and "cannot be read" in message, message
