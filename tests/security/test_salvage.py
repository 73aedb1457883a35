"""``mission-memory salvage``: what a damaged store still holds is copied into a new data dir, nothing replaced.

The refusal of a damaged store advised SQLite's ``.recover``, which Debian's ``sqlite3`` 3.40 cannot
run (``SQL logic error`` on any file: it lacks the ``sqlite_dbpage`` table), and then called the empty
result damaged too.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import RecordKind
from tests.conftest import GitRepo


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mission_memory", *args], capture_output=True, text=True,
                          timeout=300, check=False)


def _counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
                for t in ("records", "vectors", "retrieval_events", "ingest_state", "records_fts")}
    finally:
        conn.close()


@pytest.fixture
def store(make_git_repo: Callable[[str], GitRepo], tmp_path: Path) -> Path:
    """A real store: a repository's records, a decision recorded with ``decide`` (in the store only), queries."""
    repo = make_git_repo("svc")
    for i in range(40):
        repo.commit(f"Change {i} to the upload retry policy", f"2024-03-{1 + i % 28:02d}T10:00:00+00:00",
                    {f"docs/part-{i}.md": f"# Part {i}\n\n" + "Uploads are retried with backoff. " * 40})
    data = tmp_path / "data"
    with Memory(load_settings(data_dir=data)) as memory:
        memory.ingest_repository(repo.root, mission="svc")
        memory.record_decision(title="Keep the ledger in SQLite", decision="The ledger stays in SQLite.",
                               rationale="Offline field teams.", mission="svc")
        for q in ("upload retries", "ledger database"):
            memory.query(q)
    return data / "memory.db"


def test_salvage_of_an_intact_store_copies_every_row_and_answers_alike(store: Path, tmp_path: Path) -> None:
    done = _cli("salvage", str(store), "--to", str(tmp_path / "copy"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["complete"] and report["records_without_vector"] == 0
    assert _counts(tmp_path / "copy" / "memory.db") == _counts(store)
    with Memory(load_settings(data_dir=store.parent)) as before, \
            Memory(load_settings(data_dir=tmp_path / "copy")) as after:
        a = before.query("how often are uploads retried", token_budget=1500, client="api")
        b = after.query("how often are uploads retried", token_budget=1500, client="api")
        decisions = [r.title for batch in after.store.iterate() for r in batch if r.kind is RecordKind.DECISION]
    assert [e.record.id for e in a.entries] == [e.record.id for e in b.entries]
    assert "Keep the ledger in SQLite" in " ".join(decisions)


def test_salvage_of_a_damaged_store_copies_what_can_be_read_and_names_what_cannot(store: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged" / "memory.db"
    damaged.parent.mkdir()
    shutil.copyfile(store, damaged)
    data = bytearray(damaged.read_bytes())
    pages = len(data) // 4096
    for page in (pages // 3, pages // 2, 2 * pages // 3):  # three pages past the schema, mid-file
        data[page * 4096:(page + 1) * 4096] = b"\xff" * 4096
    damaged.write_bytes(bytes(data))
    original = _counts(store)
    with pytest.raises(Exception, match="mission-memory salvage"):  # the refusal names the command
        Memory(load_settings(data_dir=damaged.parent))

    done = _cli("salvage", str(damaged), "--to", str(tmp_path / "saved"), "--json")
    assert done.returncode == 1, done.stderr  # rows were lost: not a clean exit
    report = json.loads(done.stdout)
    assert not report["complete"]
    lost = {t["table"]: t["skipped"] for t in report["tables"] if t["skipped"]}
    assert lost, report
    saved = _counts(tmp_path / "saved" / "memory.db")
    assert 0.5 * original["records"] < saved["records"] <= original["records"]
    assert saved["records_fts"] == saved["records"]  # the full-text index is whole for what was copied
    assert saved["vectors"] <= saved["records"]  # no vector points at a record that was lost
    with Memory(load_settings(data_dir=tmp_path / "saved")) as memory:  # the new store opens and answers
        assert memory.status()["records"] == saved["records"]
        assert memory.query("upload retries", token_budget=1500, client="api").entries
    text = _cli("salvage", str(damaged), "--to", str(tmp_path / "again"))
    assert text.returncode == 1 and "unreadable: rowids" in text.stdout and "Some rows could not be read" in text.stdout


def test_salvage_refuses_a_file_that_is_not_a_store(store: Path, tmp_path: Path) -> None:
    """The stamp file beside the store was "salvaged" into an empty store the user was told to use."""
    stamp = store.with_name("memory.db.checked")
    assert stamp.is_file()
    for source, says in ((stamp, "is not a SQLite database"), (tmp_path / "other.db", "is not a mission-memory store")):
        if source.name == "other.db":
            sqlite3.connect(source).execute("CREATE TABLE t (x)").connection.close()
        done = _cli("salvage", str(source), "--to", str(tmp_path / f"out-{source.name}"))
        assert done.returncode == 1 and says in done.stderr, done.stderr
        assert not (tmp_path / f"out-{source.name}").exists()


def test_salvage_never_writes_over_a_store(store: Path, tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "memory.db").write_bytes(b"precious")
    done = _cli("salvage", str(store), "--to", str(target))
    assert done.returncode == 1 and "already exists" in done.stderr
    assert (target / "memory.db").read_bytes() == b"precious"
    same = _cli("salvage", str(store), "--to", str(store.parent))
    assert same.returncode == 1 and "own folder" in same.stderr


def test_salvage_of_a_truncated_store_copies_the_rows_on_the_pages_it_still_holds(store: Path, tmp_path: Path) -> None:
    """A store cut to 59 % of its pages (a copy stopped part way): the starting code copied 0 rows, for
    SQLite refuses the whole file when its header counts more pages than it holds."""
    damaged = tmp_path / "cut" / "memory.db"
    damaged.parent.mkdir()
    shutil.copyfile(store, damaged)
    pages = damaged.stat().st_size // 4096
    kept = int(pages * 0.59)
    with damaged.open("r+b") as f:
        f.truncate(kept * 4096)
    original = _counts(store)
    conn = sqlite3.connect(store)
    stored = {str(r[0]): (str(r[1]), str(r[2])) for r in conn.execute("SELECT id, title, text FROM records")}
    conn.close()

    done = _cli("salvage", str(damaged), "--to", str(tmp_path / "saved"), "--json")
    assert done.returncode == 1, done.stderr  # rows were lost
    report = json.loads(done.stdout)
    assert not report["complete"] and report["missing_pages"] == pages - kept, report
    saved_db = tmp_path / "saved" / "memory.db"
    saved = _counts(saved_db)
    assert 0.3 * original["records"] <= saved["records"] < original["records"], (saved, original)
    assert saved["records_fts"] == saved["records"] and saved["vectors"] <= saved["records"]
    conn = sqlite3.connect(saved_db)
    copied = {str(r[0]): (str(r[1]), str(r[2])) for r in conn.execute("SELECT id, title, text FROM records")}
    conn.close()
    assert all(stored[i] == row for i, row in copied.items())  # every row copied is the row stored, whole
    with Memory(load_settings(data_dir=tmp_path / "saved")) as memory:
        assert memory.status()["records"] == saved["records"]
    text = _cli("salvage", str(damaged), "--to", str(tmp_path / "again"))
    assert text.returncode == 1 and f"{pages - kept} of its {pages} pages" in text.stdout, text.stdout
