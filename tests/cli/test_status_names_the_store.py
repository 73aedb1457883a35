"""``status`` names the store that is open (backend and path, or server URL) and, when that store is
empty while the data dir holds the other backend's store with records, ``status`` and the empty digest
of ``query`` say so and how to move it (export, then import with the other ``MISSION_MEMORY_STORE``).

A user who set ``MISSION_MEMORY_STORE=qdrant`` on a data dir filled by SQLite otherwise saw
``Records: 0`` and "Nothing is ingested yet" beside a memory.db of 1,500 records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mission_memory.stores.registry import open_store
from tests.stores.contract.test_store_contract import _record, _unit

CLI = Path(sys.executable).with_name("mission-memory")


def _cli(*args: str, store: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MISSION_MEMORY_STORE=store, LANG="C.UTF-8", COLUMNS="200")
    done = subprocess.run([str(CLI), *args], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def _fill(spec: str, data_dir: Path, n: int = 3) -> None:
    store = open_store(spec, data_dir)
    try:
        records = [_record(f"doc{i}.md", f"keycloak realm note {i}") for i in range(n)]
        store.upsert(records, _unit(n), "model-a")
    finally:
        store.close()


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_status_names_the_sqlite_store_and_its_file(data_dir: Path) -> None:
    _fill("sqlite", data_dir)
    shown = json.loads(_cli("status", "--json", store="sqlite").stdout)
    assert (shown["store"], shown["backend"], shown["database"]) == ("sqlite", "sqlite", str(data_dir / "memory.db"))
    assert shown["other_store"] is None
    assert f"Store: sqlite · {data_dir / 'memory.db'}" in _flat(_cli("status", store="sqlite").stdout)


def test_status_on_qdrant_names_its_folder_not_the_sqlite_file(data_dir: Path) -> None:
    _fill("qdrant", data_dir)
    folder = data_dir / "qdrant"
    shown = json.loads(_cli("status", "--json", store="qdrant").stdout)
    assert shown["store"] == f"qdrant (local mode, {folder})"
    assert (shown["backend"], shown["database"], shown["records"]) == ("qdrant", str(folder), 3)
    assert "memory.db" not in json.dumps(shown)
    assert f"Store: qdrant (local mode, {folder})" in _flat(_cli("status", store="qdrant").stdout)


def test_an_empty_qdrant_store_beside_a_filled_sqlite_store_says_how_to_move_it(data_dir: Path) -> None:
    _fill("sqlite", data_dir, n=4)
    database = data_dir / "memory.db"

    shown = json.loads(_cli("status", "--json", store="qdrant").stdout)
    assert shown["records"] == 0
    other = shown["other_store"]
    assert (other["store"], other["path"], other["records"]) == ("sqlite", str(database), 4)
    assert "mission-memory export" in other["advice"] and "MISSION_MEMORY_STORE=qdrant mission-memory import" \
        in other["advice"]

    human = _flat(_cli("status", store="qdrant").stdout)
    assert f"SQLite store with 4 records ({database})" in human, human
    assert "MISSION_MEMORY_STORE=sqlite mission-memory export -o memory.jsonl" in human

    digest = _flat(_cli("query", "keycloak", store="qdrant").stdout)
    assert f"SQLite store with 4 records ({database})" in digest, digest
    assert "MISSION_MEMORY_STORE=qdrant mission-memory import memory.jsonl" in digest


def test_a_mission_asked_of_an_empty_store_beside_the_other_backends_says_where_it_is(data_dir: Path) -> None:
    """``query --mission m`` on the empty Qdrant store said "missions: none yet: run ingest"."""
    _fill("sqlite", data_dir, n=4)
    env = dict(os.environ, MISSION_MEMORY_STORE="qdrant", LANG="C.UTF-8", COLUMNS="200")
    done = subprocess.run([str(CLI), "query", "keycloak", "--mission", "m"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1
    said = _flat(done.stderr)
    assert "no mission named 'm' is stored" in said and f"SQLite store with 4 records ({data_dir / 'memory.db'})" in said
    assert "MISSION_MEMORY_STORE=qdrant mission-memory import memory.jsonl" in said


def test_an_empty_sqlite_store_beside_a_filled_qdrant_folder_says_how_to_move_it(data_dir: Path) -> None:
    _fill("qdrant", data_dir, n=2)
    folder = data_dir / "qdrant"

    shown = json.loads(_cli("status", "--json", store="sqlite").stdout)
    assert shown["records"] == 0
    assert (shown["other_store"]["store"], shown["other_store"]["path"]) == ("qdrant", str(folder))
    human = _flat(_cli("status", store="sqlite").stdout)
    assert f"Qdrant local-mode store with 2 records ({folder})" in human, human
    assert "MISSION_MEMORY_STORE=qdrant mission-memory export -o memory.jsonl" in human
    digest = _flat(_cli("query", "keycloak", store="sqlite").stdout)
    assert f"Qdrant local-mode store with 2 records ({folder})" in digest, digest


def test_a_store_that_holds_records_gives_no_hint_about_the_other(data_dir: Path) -> None:
    _fill("sqlite", data_dir)
    _fill("qdrant", data_dir)
    assert json.loads(_cli("status", "--json", store="qdrant").stdout)["other_store"] is None
    assert "also holds" not in _cli("status", store="qdrant").stdout
