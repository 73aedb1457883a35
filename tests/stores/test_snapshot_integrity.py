"""A snapshot's CRC-32 is read once per file version (a stamp beside it), and any change is checked again."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest

from mission_memory.stores import snapshot_integrity
from mission_memory.stores.snapshot_integrity import STAMP_SUFFIX, data_checked

START = 16


def _snapshot(path: Path, data: bytes, age_seconds: float = 60.0) -> int:
    path.write_bytes(b"H" * START + data)
    old = path.stat().st_mtime_ns - int(age_seconds * 1e9)
    os.utime(path, ns=(old, old))
    return zlib.crc32(data)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Counts the full reads of snapshot data (the stamp exists to spare them)."""
    seen: list[Path] = []
    real = snapshot_integrity.data_crc32

    def counting(f, start):  # type: ignore[no-untyped-def]
        seen.append(Path(f.name))
        return real(f, start)

    monkeypatch.setattr(snapshot_integrity, "data_crc32", counting)
    return seen


def _check(path: Path, crc: int) -> bool:
    with path.open("rb") as f:
        return data_checked(f, path, START, crc)


def test_a_checked_file_is_not_read_again_until_it_changes(tmp_path: Path, reads: list[Path]) -> None:
    path = tmp_path / "index.snap"
    crc = _snapshot(path, os.urandom(50_000))
    assert _check(path, crc) and len(reads) == 1
    assert (tmp_path / f"index.snap{STAMP_SUFFIX}").is_file()
    assert _check(path, crc) and len(reads) == 1  # the stamp answered

    damaged = bytearray(path.read_bytes())
    damaged[START + 100] ^= 0x01
    path.write_bytes(bytes(damaged))  # same inode and size, new modification time
    assert not _check(path, crc) and len(reads) == 2


def test_a_snapshot_renamed_over_the_path_is_checked_again(tmp_path: Path, reads: list[Path]) -> None:
    path = tmp_path / "index.snap"
    crc = _snapshot(path, b"a" * 4096)
    assert _check(path, crc)
    other = tmp_path / "new.snap"
    _snapshot(other, b"b" * 4096)  # same size and age, another inode
    other.replace(path)
    assert not _check(path, crc) and len(reads) == 2


def test_a_file_changed_just_before_its_check_gets_no_stamp(tmp_path: Path, reads: list[Path]) -> None:
    path = tmp_path / "index.snap"
    crc = _snapshot(path, b"c" * 4096, age_seconds=0)
    assert _check(path, crc) and _check(path, crc)
    assert len(reads) == 2
    assert not (tmp_path / f"index.snap{STAMP_SUFFIX}").exists()


def test_a_stamp_for_another_crc_or_unreadable_vouches_for_nothing(tmp_path: Path, reads: list[Path]) -> None:
    path = tmp_path / "index.snap"
    crc = _snapshot(path, b"d" * 4096)
    assert _check(path, crc)
    assert not _check(path, crc ^ 1) and len(reads) == 2
    (tmp_path / f"index.snap{STAMP_SUFFIX}").write_text("{not json")
    assert _check(path, crc) and len(reads) == 3


def test_a_stamp_of_the_previous_format_is_read_once_and_replaced(tmp_path: Path, reads: list[Path]) -> None:
    """A stamp written before the change time and the check time were in the key vouches for nothing,
    and must not fail the load: the data is read once, then the new stamp answers."""
    import json

    path = tmp_path / "index.snap"
    crc = _snapshot(path, b"e" * 4096)
    st = path.stat()
    old = {"inode": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "crc32": crc}
    (tmp_path / f"index.snap{STAMP_SUFFIX}").write_text(json.dumps(old))
    assert _check(path, crc) and len(reads) == 1
    assert _check(path, crc) and len(reads) == 1
