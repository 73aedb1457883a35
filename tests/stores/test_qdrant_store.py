"""The Qdrant backend beyond the shared contract: its filter reading, its term weights, its settings,
and how it fails against a real HTTP peer on loopback (a stand-in for a Qdrant server that errs or
hangs; no Qdrant server binary can be obtained here)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer

from mission_memory.config import Settings
from mission_memory.errors import BackendUnavailable, ConfigError
from mission_memory.records import Record
from mission_memory.stores.filters import SearchFilter, filter_columns, matches
from mission_memory.stores.qdrant import QdrantStore
from mission_memory.stores.qdrant_terms import FTS_TOKENIZE, PRESENCE_INDEX, TermEncoder, raw_frequencies
from mission_memory.stores.registry import open_store
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.stores.sqlite_migrations import MIGRATIONS
from tests.slow_http_servers import slow_http_server
from tests.stores.test_filters_agree import filters, records

SECRET = "qdrant-key-7f3a9c1e5b"


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> QdrantStore:
    store = open_store("qdrant+memory:", tmp_path_factory.mktemp("q"))
    assert isinstance(store, QdrantStore)
    return store


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(records(), min_size=1, max_size=30, unique_by=lambda r: r.source_key), filters())
def test_the_qdrant_reading_of_a_filter_keeps_the_records_the_python_predicate_keeps(
    shared_store: QdrantStore, stored: list[Record], where: SearchFilter
) -> None:
    for mission in ("a", "b", "c"):
        shared_store.delete_mission(mission)
    vectors = np.eye(len(stored), 40, dtype=np.float32)
    shared_store.upsert(stored, vectors, "model-a")
    predicate = {r.id for r in stored if matches(where, filter_columns(r))}
    by_payload = {h.record_id for h in shared_store.most_critical(where, 100)}
    by_vector = {h.record_id for hits in shared_store.dense_search_by_layer(
        np.ones(40, dtype=np.float32) / np.sqrt(40), "model-a", where, 100).values()
        for h in hits}
    assert by_payload == predicate == by_vector


def test_the_term_encoder_tokenises_as_the_sqlite_index_does() -> None:
    schema = " ".join(sql for _, sql in MIGRATIONS)
    assert f"tokenize='{FTS_TOKENIZE}'" in schema
    encoder = TermEncoder()
    [(title, text)] = encoder.tokens([("Retrying Uploads", "the proxy retries café uploads")])
    assert title == ["retri", "upload"]
    assert text == ["the", "proxi", "retri", "cafe", "upload"]
    [terms] = encoder.document_terms([("Retrying", "retries retries")])
    assert terms.vector.indices[0] == PRESENCE_INDEX and len(terms.vector.indices) == 2  # one stem beside presence
    assert terms.tokens == 3
    assert encoder.query_vector(["retrying", "retry"]).indices == terms.vector.indices[1:]
    # the raw frequency (title twice, text once) comes back from the stored weight
    assert raw_frequencies(terms.vector.indices, terms.vector.values, terms.tokens) == {terms.vector.indices[1]: 4.0}


def test_lexical_ranking_equals_sqlite_bm25_on_a_small_corpus(tmp_path: Path) -> None:
    from tests.stores.contract.test_store_contract import ALL, _record

    texts = ["upload proxy retries and backoff", "proxy settings for the upload service",
             "database migrations run at deploy", "retries with jitter avoid a thundering herd",
             "the deploy pipeline uploads artifacts"]
    stored = [_record(f"d{i}.md", text) for i, text in enumerate(texts)]
    sqlite = SqliteStore(tmp_path / "m.db")
    qdrant = open_store("qdrant+memory:", tmp_path)
    for store in (sqlite, qdrant):
        store.upsert_records(stored)
    # FTS5's IDF (a term in half the records or more scores 10^-6), its live average length and its
    # dropping of common terms: the same rows, order and scores (tests/stores/test_qdrant_bm25_equals_fts5.py).
    for terms in (["jitter", "backoff"], ["migrations", "herd"], ["deploy", "database"], ["upload", "proxy", "the"]):
        found = qdrant.bm25_search(terms, ALL, 10)
        expected = sqlite.bm25_search(terms, ALL, 10)
        assert [(h.record_id, round(h.score, 9)) for h in found] == [(h.record_id, round(h.score, 9)) for h in expected]
    assert qdrant.phrase_search(["upload proxy"], ALL, 5) == sqlite.phrase_search(["upload proxy"], ALL, 5)
    sqlite.close()
    qdrant.close()


def test_local_mode_on_disk_keeps_the_memory_across_reopening(tmp_path: Path) -> None:
    from tests.stores.contract.test_store_contract import _record, _unit

    spec = f"qdrant+path://{tmp_path / 'qd'}"
    first = open_store(spec, tmp_path)
    record = _record("a.md", "kept across processes")
    first.upsert([record], _unit(1), "model-a")
    first.set_state("m", "git_head", "abc")
    first.close()
    again = open_store(spec, tmp_path)
    assert again.get([record.id]) == {record.id: record}
    assert again.vector_models() == {"model-a": 1}
    assert again.get_state("m", "git_head") == "abc"
    again.close()


def test_a_qdrant_setting_with_credentials_or_an_unknown_form_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="MISSION_MEMORY_QDRANT_API_KEY"):
        open_store("qdrant+http://user:pw@localhost:6333", tmp_path)
    with pytest.raises(ConfigError, match="qdrant\\+http://host:6333"):
        open_store("qdrant+ftp://localhost", tmp_path)


def test_a_relative_local_mode_folder_is_refused_and_nothing_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``qdrant+path://relative/dir`` would open a different, empty store in every folder the CLI
    or a stdio server starts in (each repository); it is an error naming the form to use."""
    work = tmp_path / "repo"
    work.mkdir()
    monkeypatch.chdir(work)
    for spec in ("qdrant+path://relative/dir", "qdrant+path:relative"):
        with pytest.raises(ConfigError, match=r"absolute.*qdrant\+path:///") as caught:
            open_store(spec, tmp_path / "data")
        assert spec in str(caught.value)
    assert list(work.iterdir()) == [] and not (tmp_path / "data").exists()


def test_a_failing_server_is_backend_unavailable_and_the_key_is_sent_but_never_shown(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    httpserver.expect_request("/collections", headers={"api-key": SECRET}).respond_with_data(
        "overloaded", status=503)
    spec = f"qdrant+http://127.0.0.1:{httpserver.port}"
    with pytest.warns(UserWarning, match="insecure connection"), pytest.raises(BackendUnavailable) as caught:
        open_store(spec, tmp_path, Settings(qdrant_api_key=SECRET))  # type: ignore[arg-type]
    assert f"127.0.0.1:{httpserver.port}" in str(caught.value)
    assert SECRET not in str(caught.value) and SECRET not in repr(caught.value.__cause__)
    assert len(httpserver.log) == 1  # the request reached the server, with the key (matched above)


def test_a_server_that_never_answers_is_given_up_on_at_the_deadline(tmp_path: Path) -> None:
    with slow_http_server("hang") as server:
        started = time.monotonic()
        with pytest.raises(BackendUnavailable, match="did not answer in time"):
            open_store(f"qdrant+{server.url}", tmp_path, Settings(qdrant_deadline_seconds=1))
        assert time.monotonic() - started < 8


def test_opening_on_a_server_creates_replicated_collections_with_an_index_for_every_filter_field(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    """A loopback stand-in for a Qdrant server answers the REST calls of opening a store; the calls
    it receives are the server API: collections with the replication factor and the IDF sparse
    vector, a payload index per filter field, the API key on every request."""
    import json
    import re

    from werkzeug import Request, Response

    from mission_memory.stores.filters import FILTER_FIELDS

    seen: list[tuple[str, str, dict[str, object], str | None]] = []

    def answer(request: Request) -> Response:
        body = json.loads(request.data) if request.data else {}
        seen.append((request.method, request.path, body, request.headers.get("api-key")))
        if request.method == "GET" and request.path == "/collections":
            result: object = {"collections": []}
        elif request.path.endswith("/points/scroll"):
            result = {"points": [], "next_page_offset": None}
        elif request.method == "PUT" and request.path == "/collections/mm_events":  # another replica was first
            return Response(json.dumps({"status": {"error": "Collection `mm_events` already exists!"}, "time": 0.0}),
                            status=409, content_type="application/json")
        elif request.method == "PUT" and request.path.count("/") == 2:
            result = True
        else:
            result = {"operation_id": 1, "status": "completed"}
        return Response(json.dumps({"result": result, "status": "ok", "time": 0.0}), content_type="application/json")

    httpserver.expect_request(re.compile(".*")).respond_with_handler(answer)
    settings = Settings(qdrant_api_key=SECRET, qdrant_replication_factor=2)  # type: ignore[arg-type]
    with pytest.warns(UserWarning, match="insecure connection"):
        store = open_store(f"qdrant+http://127.0.0.1:{httpserver.port}", tmp_path, settings)
    store.set_state("m", "git_head", "abc")
    store.close()
    assert {key for *_, key in seen} == {SECRET}
    created = {path.rsplit("/", 1)[1]: body for method, path, body, _ in seen
               if method == "PUT" and path.count("/") == 2}
    assert set(created) == {"mm_records", "mm_events", "mm_state", "mm_keys", "mm_meta"}
    assert all(body["replication_factor"] == 2 for body in created.values())
    assert created["mm_records"]["sparse_vectors"] == {"bm25": {"modifier": "idf"}}
    indexed = {body["field_name"] for method, path, body, _ in seen if path == "/collections/mm_records/index"}
    assert {spec.column for spec in FILTER_FIELDS} | {"layer", "kind", "source_key"} <= indexed
    assert ("PUT", "/collections/mm_state/points") in {(m, p) for m, p, *_ in seen}


def test_an_upsert_interrupted_before_the_key_map_is_finished_by_the_next_one(tmp_path: Path) -> None:
    """Qdrant has no transactions: a replacement cut short after the new record was written (old
    record and key map untouched) is completed when the same record is upserted again."""
    from qdrant_client import models

    from mission_memory.stores.qdrant import point_id
    from tests.stores.contract.test_store_contract import ALL, _record

    store = open_store("qdrant+memory:", tmp_path)
    assert isinstance(store, QdrantStore)
    old, new = _record("a.md", "the old wording"), _record("a.md", "the new wording")
    store.upsert_records([old])
    store._client.upsert(store._records, [models.PointStruct(  # the first write of the replacement only
        id=point_id(new.id), vector={}, payload=store._payload(new, None))], wait=True)
    assert store.known_ids([old.id, new.id]) == {old.id, new.id}
    outcome = store.upsert_records([new])
    assert outcome.unchanged == [new.id]
    assert store.known_ids([old.id, new.id]) == {new.id}
    assert store.ids_by_source_keys([new.source_key]) == {new.source_key: new.id}
    assert store.delete([new.id]) == 1 and store.ids_by_source_keys([new.source_key]) == {}
    assert store.bm25_search(["wording"], ALL, 5) == []
    store.close()


def test_vector_points_written_before_the_kind_payload_get_it_when_the_store_is_opened(tmp_path: Path) -> None:
    """docs/adr/0050: dense search per record kind filters vector points on ``kind``; a store
    written before had no ``kind`` on them, and opening it adds it from the record points."""
    from qdrant_client import QdrantClient, models

    from mission_memory.records import Layer, RecordKind
    from mission_memory.stores.qdrant import point_id
    from tests.stores.contract.test_store_contract import _record, _unit

    spec = f"qdrant+path://{tmp_path / 'qd'}"
    store = open_store(spec, tmp_path)
    commit = _record("c1", "a commit", kind=RecordKind.COMMIT)
    decision = _record("d1.md", "a decision", kind=RecordKind.DECISION)
    vectors = _unit(2)
    store.upsert([commit, decision], vectors, "model-a")
    store.close()
    client = QdrantClient(path=str(tmp_path / "qd"))  # the layout an older version wrote
    vector_collections = [c.name for c in client.get_collections().collections if c.name.startswith("mm_vectors_")]
    assert len(vector_collections) == 1
    client.delete_payload(vector_collections[0], ["kind"], points=models.Filter(must=[]))
    client.delete_payload("mm_meta", ["vector_kinds"], points=[point_id("layout")])
    old = client.scroll(vector_collections[0], with_payload=True)[0]
    assert all("kind" not in (p.payload or {}) for p in old)
    client.close()

    again = open_store(spec, tmp_path)
    hits = again.dense_search_by_layer(vectors[1], "model-a", SearchFilter((Layer.WORKFLOW,)), 1, per_kind=True)
    assert {h.record_id for h in hits[Layer.WORKFLOW]} == {commit.id, decision.id}
    again.close()
