"""Export and import move a whole memory between backends, record by record, vectors and all."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.errors import InputError
from mission_memory.records import AccessLevel, RecordKind
from mission_memory.retrieval_events import Client, NewRetrievalEvent
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.registry import open_store
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.stores.transfer import export_memory, import_memory
from tests.stores.contract.test_store_contract import _record, _unit

runner = CliRunner()


def _filled(store: MemoryStore) -> None:
    """Two missions, records of three access levels, vectors of two models, events and state."""
    docs = [_record(f"d{i}.md", f"document {i} about uploads", mission="m",
                    access=[AccessLevel.PUBLIC, AccessLevel.INTERNAL, AccessLevel.SECRET][i % 3],
                    when=datetime(2025, 1, 1 + i, tzinfo=UTC), component="api" if i % 2 else None)
            for i in range(7)]
    other = [_record(f"o{i}.md", f"other mission {i}", mission="n", kind=RecordKind.DECISION) for i in range(3)]
    plain = _record("plain.md", "a record with no vector", mission="m")
    store.upsert(docs, _unit(len(docs), dim=8), "model-a")
    store.upsert(other, _unit(len(other), dim=4, seed=2), "model-b")
    store.upsert_records([plain])
    for i, (mission, ids) in enumerate((("m", (docs[0].id,)), ("m", (docs[2].id, docs[1].id)), ("n", (other[0].id,)))):
        store.log_retrieval_event(NewRetrievalEvent(
            query=f"question {i}", scope="all", filters={"component": "api"}, token_budget=800, tokens_used=100 + i,
            record_ids=ids, scores=tuple(0.5 for _ in ids), model_id="model-a", session_id=f"s{i}",
            operator="alice", mission=mission, client=Client.MCP,
        ))
    store.set_state("m", "git_head", "abc123")
    store.set_state("n", "git_head", "def456")


def _snapshot(store: MemoryStore) -> dict[str, object]:
    """Everything a memory holds, comparable across backends."""
    records = {r.id: r for batch in store.iterate() for r in batch}
    vectors = {model: {rid: v.tolist() for rid, v in store.vectors_for(list(records), model).items()}
               for model in store.vector_models()}
    return {
        "records": records, "vectors": vectors,
        "events": [e.model_dump() for e in store.retrieval_events(1000)],
        "state": store.state_items(),
    }


def _export(store: MemoryStore, path: Path, **options: object) -> None:
    with path.open("w", encoding="utf-8") as out:
        export_memory(store, out, **options)  # type: ignore[arg-type]


def test_a_memory_goes_from_sqlite_to_qdrant_and_back_unchanged(tmp_path: Path) -> None:
    source = SqliteStore(tmp_path / "a.db")
    _filled(source)
    expected = _snapshot(source)
    assert len(expected["records"]) == 11 and set(expected["vectors"]) == {"model-a", "model-b"}  # type: ignore[arg-type]

    _export(source, tmp_path / "one.jsonl")
    qdrant = open_store(f"qdrant+path://{tmp_path / 'q'}", tmp_path)
    first = import_memory(qdrant, tmp_path / "one.jsonl")
    assert (first.records, first.vectors, first.events, first.state, first.added) == (11, 10, 3, 2, 11)
    assert _snapshot(qdrant) == expected

    _export(qdrant, tmp_path / "two.jsonl")
    back = SqliteStore(tmp_path / "b.db")
    import_memory(back, tmp_path / "two.jsonl")
    assert _snapshot(back) == expected
    again = import_memory(back, tmp_path / "two.jsonl")  # idempotent
    assert (again.added, again.events_added) == (0, 0)
    assert _snapshot(back) == expected
    for store in (source, qdrant, back):
        store.close()


def test_mission_narrows_and_the_access_level_leaves_out_records_and_every_retrieval_event(
    tmp_path: Path
) -> None:
    source = SqliteStore(tmp_path / "a.db")
    _filled(source)
    _export(source, tmp_path / "m.jsonl", mission="m", max_access_level=AccessLevel.INTERNAL)
    lines = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["version"] == 1 and lines[0]["max_access_level"] == "internal"
    records = [line["record"] for line in lines if line["type"] == "record"]
    assert {r["provenance"]["mission"] for r in records} == {"m"}
    assert all(r["access_level"] in ("public", "internal") for r in records) and len(records) == 6
    events = [line["event"]["query"] for line in lines if line["type"] == "event"]
    assert events == []  # a query's text has no access level: a limited export holds none (docs/adr/0055)
    assert [(line["mission"], line["key"]) for line in lines if line["type"] == "state"] == [("m", "git_head")]
    assert lines[-1] == {"type": "end", "records": 6, "vectors": 5, "events": 0, "state": 1}
    source.close()


def test_a_bad_line_is_named_by_its_number_and_nothing_is_imported(tmp_path: Path) -> None:
    source = SqliteStore(tmp_path / "a.db")
    _filled(source)
    _export(source, tmp_path / "good.jsonl")
    lines = (tmp_path / "good.jsonl").read_text(encoding="utf-8").splitlines()
    target = SqliteStore(tmp_path / "t.db")

    broken = json.loads(lines[5])
    broken["record"]["criticality"] = 7
    cases = {
        "invalid record line: record.criticality": [*lines[:5], json.dumps(broken), *lines[6:]],
        "line 4: not JSON": [*lines[:3], "{oops", *lines[4:]],
        "no end line: the file is truncated": lines[:-1],
        "line 1: the first line must be the header": lines[1:],
    }
    vector = json.loads(lines[2])
    vector["vector"]["f32le"] = vector["vector"]["f32le"][:-8]
    cases["line 3: invalid record line: vector"] = [*lines[:2], json.dumps(vector), *lines[3:]]
    for message, content in cases.items():
        path = tmp_path / "bad.jsonl"
        path.write_text("\n".join(content) + "\n", encoding="utf-8")
        with pytest.raises(InputError, match=message.replace("(", r"\(")):
            import_memory(target, path)
        assert target.missions() == {} and target.count_retrieval_events() == 0 and target.state_items() == []
    source.close()
    target.close()


def test_the_cli_exports_to_a_file_and_imports_it_into_another_store_with_json_summaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path
) -> None:
    source = SqliteStore(data_dir / "memory.db")
    _filled(source)
    source.close()
    exported = runner.invoke(app, ["export", "-o", str(tmp_path / "x.jsonl"), "--json"])
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout) == {"records": 11, "vectors": 10, "events": 3, "state": 2, "added": 0,
                                           "events_added": 0, "left_out": 0, "vector_models": {},
                                           "file": str(tmp_path / "x.jsonl")}
    monkeypatch.setenv("MISSION_MEMORY_STORE", f"qdrant+path://{tmp_path / 'q'}")
    imported = runner.invoke(app, ["import", str(tmp_path / "x.jsonl"), "--mission", "n", "--json"])
    assert imported.exit_code == 0, imported.output
    summary = json.loads(imported.stdout)
    assert (summary["records"], summary["added"], summary["events"], summary["state"]) == (3, 3, 1, 1)
    assert summary["vector_models"] == {"model-b": 3}
    assert "imported vectors of another embedding model (3 of model-b)" in " ".join(imported.stderr.split())
    missing = runner.invoke(app, ["import", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 1 and "cannot read export file" in missing.output
    to_stdout = runner.invoke(app, ["export", "--mission", "n"])
    assert to_stdout.exit_code == 0
    assert json.loads(to_stdout.stdout.splitlines()[0])["type"] == "header"
    assert not list(tmp_path.glob(".x.jsonl.*.part"))


def test_vectors_survive_bit_for_bit(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "a.db")
    record = _record("v.md", "vector")
    vector = np.array([[0.1, 0.2, 0.3, np.sqrt(1 - 0.14)]], dtype=np.float32)
    store.upsert([record], vector, "model-a")
    out = io.StringIO()
    export_memory(store, out)
    (tmp_path / "v.jsonl").write_text(out.getvalue(), encoding="utf-8")
    target = SqliteStore(tmp_path / "b.db")
    import_memory(target, tmp_path / "v.jsonl")
    assert target.vectors_for([record.id], "model-a")[record.id].tobytes() == vector[0].tobytes()
    store.close()
    target.close()
