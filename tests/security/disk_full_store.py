"""A store on a full disk, run in a private mount namespace: ``unshare --mount --propagation private
python -m tests.security.disk_full_store <folder>`` (as root).

Mounts a 12 MiB tmpfs on ``<folder>``, keeps 4 MiB of it in a ballast file, and stores records with
4 KiB vectors through the store's write path, 300 a transaction, until a write fails. SQLite reuses
its ``-wal`` file after each checkpoint, so the disk fills while a checkpoint grows ``memory.db``: the
checkpoint has written page 1 (counting the new pages) and stops, the file is shorter than its header
says, and the pages stay in ``-wal``. Then the ballast is deleted (space returns) and the real CLI
(``mission-memory status``) and the store are asked again. Prints one JSON object with what happened;
``tests/security/test_disk_full.py`` judges it. The mount goes away with the namespace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

_TMPFS = "12m"
_BALLAST_BYTES = 4 * 1024 * 1024
_BATCH = 300
_DIM = 1024


def _records(start: int, n: int) -> list[Any]:
    from mission_memory.records import Provenance, Record, RecordKind, SourceKind

    return [Record.build(kind=RecordKind.DOC_CHUNK, title=f"doc {i}", text=f"upload ledger note number {i}",
                         provenance=Provenance(kind=SourceKind.DOC, ref=f"d{i}.md", uri=f"file:///d{i}.md",
                                               mission="m", time=datetime(2025, 1, 1, tzinfo=UTC)))
            for i in range(start, start + n)]


def _vectors(n: int, seed: int) -> Any:
    v = np.random.default_rng(seed).normal(size=(n, _DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _shape(db: Path) -> dict[str, int]:
    with db.open("rb") as f:
        header = f.read(100)
    page = int.from_bytes(header[16:18], "big")
    wal = Path(f"{db}-wal")
    return {"file_pages": db.stat().st_size // page, "header_pages": int.from_bytes(header[28:32], "big"),
            "wal_bytes": wal.stat().st_size if wal.exists() else 0}


def _cli(args: list[str], data: Path) -> dict[str, Any]:
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data))
    done = subprocess.run([sys.executable, "-m", "mission_memory", *args], env=env, capture_output=True, text=True,
                          timeout=300)
    return {"exit": done.returncode, "out": done.stdout[-2000:], "err": done.stderr[-2000:]}


def _try_open(db: Path) -> tuple[Any, str]:
    from mission_memory.errors import MissionMemoryError
    from mission_memory.stores.sqlite import SqliteStore

    try:
        return SqliteStore(db), ""
    except MissionMemoryError as exc:
        return None, f"{type(exc).__name__}: {exc}"


def main(folder: Path) -> dict[str, Any]:
    """Run the scenario on a tmpfs mounted on ``folder``; what happened, as a JSON-ready dict."""
    from mission_memory.errors import MissionMemoryError
    from mission_memory.stores.sqlite import SqliteStore

    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={_TMPFS},mode=0700", "tmpfs", str(folder)], check=True)
    ballast = folder / "ballast"
    ballast.write_bytes(b"\0" * _BALLAST_BYTES)
    data = folder / "data"
    db = data / "memory.db"
    result: dict[str, Any] = {}
    acknowledged: list[str] = []
    store = SqliteStore(db)
    n = 0
    try:
        while n < 100_000:
            batch = _records(n, _BATCH)
            try:
                store.upsert(batch, _vectors(_BATCH, n), "model-a")
            except MissionMemoryError as exc:
                result["write_error"] = f"{type(exc).__name__}: {exc}"
                break
            acknowledged += [r.id for r in batch]
            n += _BATCH
    finally:
        store.close()
    result["acknowledged"] = len(acknowledged)
    result["shape_when_full"] = _shape(db)
    opened, refusal = _try_open(db)  # the disk is still full
    result["open_when_full"] = refusal or "ok"
    if opened is not None:
        result["readable_when_full"] = len(opened.known_ids(acknowledged))
        opened.close()
    ballast.unlink()  # space returns
    result["status_after"] = _cli(["status", "--json"], data)
    result["shape_after"] = _shape(db)
    opened, refusal = _try_open(db)
    result["open_after"] = refusal or "ok"
    if opened is not None:
        result["readable_after"] = len(opened.known_ids(acknowledged))
        more = _records(n, 10)
        try:
            opened.upsert(more, _vectors(10, n), "model-a")
            result["write_after"] = "ok"
        except MissionMemoryError as exc:
            result["write_after"] = f"{type(exc).__name__}: {exc}"
        result["quick_check_after"] = str(opened._conn().execute("PRAGMA quick_check").fetchone()[0])
        opened.close()
    return result


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
