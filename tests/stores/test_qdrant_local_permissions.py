"""Qdrant's local mode keeps its data as private as the SQLite store does: a new data dir and its
``qdrant`` folder are 0700 whatever the umask, so the files the Qdrant client writes in them (0644
under umask 022: restricted records, the query log) cannot be read by another user (docs/adr/0055).

Modes are checked on the folders; that another user really cannot read the collection file is
checked by reading it as ``nobody`` (``setpriv --reuid``), which needs root.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mission_memory.stores.registry import open_store
from tests.stores.contract.test_store_contract import _record, _unit

NOBODY = 65534


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which new folders are 0755 and new files 0644 unless made otherwise."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _fill(spec: str, data_dir: Path) -> None:
    """Open the store, write a restricted record with its vector and an event, close it."""
    store = open_store(spec, data_dir)
    try:
        store.upsert([_record("secret.md", "the restricted plan")], _unit(1), "model-a")
    finally:
        store.close()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _readable_by_nobody(path: Path) -> bool:
    """Whether the unprivileged user ``nobody`` can read ``path`` (a real ``cat`` as that user)."""
    done = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "cat", str(path)],
        capture_output=True, timeout=30,
    )
    return done.returncode == 0


def test_a_new_local_mode_data_dir_and_its_qdrant_folder_are_private(shared_root: Path, umask_022: None) -> None:
    data_dir = shared_root / "ddq"
    _fill("qdrant", data_dir)
    folder = data_dir / "qdrant"
    collection = folder / "collection" / "mm_records" / "storage.sqlite"
    assert collection.is_file()
    assert (oct(_mode(data_dir)), oct(_mode(folder))) == (oct(0o700), oct(0o700))
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("reading the collection file as another user needs root and setpriv")
    assert not _readable_by_nobody(collection), f"{collection} is readable by another user"


def test_a_new_local_mode_folder_named_by_path_is_private(shared_root: Path, umask_022: None) -> None:
    folder = shared_root / "elsewhere" / "q"
    _fill(f"qdrant+path://{folder}", shared_root / "dd")
    assert oct(_mode(folder)) == oct(0o700)


def test_an_existing_folder_keeps_the_mode_its_owner_chose(shared_root: Path, umask_022: None) -> None:
    data_dir = shared_root / "shared-dd"
    (data_dir / "qdrant").mkdir(parents=True)
    data_dir.chmod(0o750)
    (data_dir / "qdrant").chmod(0o750)
    _fill("qdrant", data_dir)
    assert (oct(_mode(data_dir)), oct(_mode(data_dir / "qdrant"))) == (oct(0o750), oct(0o750))
