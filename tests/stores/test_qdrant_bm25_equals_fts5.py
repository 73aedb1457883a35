"""The Qdrant store's BM25 is FTS5's: the same rows, in the same order, with the same scores.

Both stores get the same records in the same order (real SQLite file, Qdrant local mode); every
query is asked of both, per layer, with and without filters, before and after deletions and
replacements (which change ``N``, each term's ``n`` and ``avgdl``). Corpora whose mean length is far
from the stored weights' ``avgdl`` of 82 tokens make the candidate search read deeper
(docs/adr/0043).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from qdrant_client import models

from mission_memory.errors import BackendUnavailable
from mission_memory.records import Layer, Record, RecordKind
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.filters import SearchFilter
from mission_memory.stores.qdrant import QdrantStore, point_id
from mission_memory.stores.qdrant_terms import LARGE_FREQUENCY, TermEncoder, raw_frequencies, term_index
from mission_memory.stores.registry import open_store
from mission_memory.stores.sqlite import SqliteStore
from tests.stores.contract.test_store_contract import ALL, _record

WORDS = ("deploy deploys deployment proxy upload uploads retry retries jitter backoff herd database migration "
         "schema cache queue lambda timeout visibility message excel library spreadsheet metadata identity "
         "provider login session token frontend framework react angular build pipeline artifact release "
         "tag branch merge review café naïve").split()
KINDS = (RecordKind.DOC_CHUNK, RecordKind.DECISION, RecordKind.COMMIT, RecordKind.HANDOVER_NOTE)


def _corpus(seed: int, mean_tokens: int, count: int = 90) -> list[Record]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        length = max(1, int(rng.expovariate(1 / mean_tokens)))
        common = ["deploy"] * rng.randint(0, 2)  # "deploy" is in most records: a common term
        text = " ".join(common + [rng.choice(WORDS[: 12 + i % 30]) for _ in range(length)])
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))
        out.append(_record(f"doc{i}.md", text, kind=KINDS[i % len(KINDS)], mission=("m", "n")[i % 3 == 0],
                           component=("api", "web", None)[i % 3]).model_copy(update={"title": title}))
    duplicate = out[5].model_copy(update={"id": "f" * 32, "source_key": "dup"})  # equal scores: ties
    return [*out, duplicate]


QUERIES = [
    ["proxy", "upload"], ["deploy", "jitter", "backoff"], ["retries", "retry", "herd"], ["deploy"],
    ["excel", "library", "spreadsheets", "metadata", "pick"], ["cafe", "naive", "unknownword"],
    ["deploy", "deployment", "deploys"], ["lambda", "timeout", "visibility", "message", "queue", "the"],
]
FILTERS = [
    ALL,
    SearchFilter(tuple(Layer), mission="m"),
    SearchFilter((Layer.WORKFLOW, Layer.DOMAIN), component="api"),
    SearchFilter((Layer.PRACTITIONER,)),
]


def _stores(tmp_path: Path) -> tuple[SqliteStore, MemoryStore]:
    return SqliteStore(tmp_path / "m.db"), open_store("qdrant+memory:", tmp_path)


def _assert_same(sqlite: MemoryStore, qdrant: MemoryStore, limit: int = 7) -> int:
    compared = 0
    for terms in QUERIES:
        for where in FILTERS:
            expected = sqlite.bm25_search_by_layer(terms, where, limit)
            found = qdrant.bm25_search_by_layer(terms, where, limit)
            assert set(found) == set(expected)
            for layer, hits in expected.items():
                assert [h.record_id for h in found[layer]] == [h.record_id for h in hits], (terms, where, layer)
                for mine, theirs in zip(found[layer], hits, strict=True):
                    assert mine.score == pytest.approx(theirs.score, rel=1e-9, abs=0)
                compared += len(hits)
    return compared


@pytest.mark.parametrize("mean_tokens", [6, 82, 400])
def test_bm25_on_qdrant_returns_fts5s_rows_in_fts5s_order_with_fts5s_scores(tmp_path: Path, mean_tokens: int) -> None:
    sqlite, qdrant = _stores(tmp_path)
    corpus = _corpus(mean_tokens, mean_tokens)
    for store in (sqlite, qdrant):
        store.upsert_records(corpus[:50])
        store.upsert_records(corpus[50:])
    assert _assert_same(sqlite, qdrant) > 100
    # Deletions and replacements change N, n and avgdl; the next query follows them.
    replaced = [r.model_copy(update={"id": f"{i:032x}", "text": r.text + " herd herd jitter"})
                for i, r in enumerate(corpus[10:20])]
    for store in (sqlite, qdrant):
        store.delete([r.id for r in corpus[:10]])
        store.upsert_records(replaced)
    assert _assert_same(sqlite, qdrant) > 100
    sqlite.close()
    qdrant.close()


def test_a_frequency_too_large_for_a_stored_weight_is_read_from_the_payload(tmp_path: Path) -> None:
    encoder = TermEncoder()
    [terms] = encoder.document_terms([("flood", " ".join(["flood"] * 9000) + " dry")])
    index = term_index(encoder.term_tokens(["flood"])[0][0])
    assert terms.large == {index: 9002.0} and LARGE_FREQUENCY <= 9002.0
    assert raw_frequencies(terms.vector.indices, terms.vector.values, terms.tokens, {str(index): 9002.0})[index] == 9002.0
    assert {i: f for i, f in raw_frequencies(terms.vector.indices, terms.vector.values, terms.tokens).items()
            if i != index} == {term_index("dry"): 1.0}
    sqlite, qdrant = _stores(tmp_path)
    records = [_record("flood.md", " ".join(["flood"] * 9000) + " dry"), _record("a.md", "flood once, dry"),
               _record("b.md", "dry land"), _record("c.md", "a flood flood of words")]
    for store in (sqlite, qdrant):
        store.upsert_records(records)
    expected, found = sqlite.bm25_search(["flood", "dry"], ALL, 5), qdrant.bm25_search(["flood", "dry"], ALL, 5)
    assert [h.record_id for h in found] == [h.record_id for h in expected]
    assert [h.score for h in found] == pytest.approx([h.score for h in expected], rel=1e-9, abs=0)
    encoder.close()


def test_collections_of_the_first_sparse_layout_are_rewritten_when_opened(tmp_path: Path) -> None:
    """Layout 1 stored no presence term and no token count: opening such a store rewrites its
    record points, after which BM25 is FTS5's again."""
    spec = f"qdrant+path://{tmp_path / 'qd'}"
    store = open_store(spec, tmp_path)
    assert isinstance(store, QdrantStore)
    corpus = _corpus(3, 30, count=40)
    store.upsert_records(corpus)
    old = []
    for point in store._client.scroll(store._records, limit=1000, with_payload=True, with_vectors=True)[0]:
        vector = point.vector["bm25"]  # type: ignore[index]
        payload = {k: v for k, v in (point.payload or {}).items() if not k.startswith("bm25_") and k != "written"}
        old.append(models.PointStruct(id=point.id, payload=payload, vector={"bm25": models.SparseVector(
            indices=vector.indices[1:], values=vector.values[1:])}))  # type: ignore[union-attr]
    store._client.upsert(store._records, old, wait=True)
    store._client.overwrite_payload(store._meta, {"entry": "layout", "version": 5}, points=[point_id("layout")])
    with pytest.raises(BackendUnavailable, match="sparse layout 1"):  # written by an older version meanwhile
        store.bm25_search(["proxy", "upload"], ALL, 10)
    store.close()
    again = open_store(spec, tmp_path)
    sqlite = SqliteStore(tmp_path / "m.db")
    sqlite.upsert_records(corpus)
    expected, found = sqlite.bm25_search(["proxy", "upload"], ALL, 10), again.bm25_search(["proxy", "upload"], ALL, 10)
    assert {h.record_id for h in found} == {h.record_id for h in expected}  # ties: write order was lost
    assert sorted(h.score for h in found) == pytest.approx(sorted(h.score for h in expected), rel=1e-9, abs=0)
    assert isinstance(again, QdrantStore)
    layout = again._client.retrieve(again._meta, [point_id("layout")])[0].payload
    assert layout == {"entry": "layout", "version": 5, "lexical": 2, "vector_kinds": 1}  # both upgrades, once
    again.close()
    sqlite.close()


def test_phrase_search_finds_fts5s_records_in_fts5s_order(tmp_path: Path) -> None:
    sqlite, qdrant = _stores(tmp_path)
    records = [
        _record("ADR 0005 user authentication", "we adopt keycloak; see adr 0005 and adr 0005 again"),
        _record("notes", "adr 0005 is mentioned once in a long text " + "filler " * 40),
        _record("ADR 0007 caching", "supersedes nothing, mentions adr 0005"),
        _record("TDR-1234 fix login", "tdr 1234 tdr 1234", kind=RecordKind.COMMIT),
        _record("other", "tdr 1234", mission="n"),
        _record("unrelated", "0005 adr in the wrong order"),
        # The sparse score of the phrase's tokens ranks this one first (adr seven times); FTS5 counts
        # the phrase: once here, twice in the next.
        _record("a", "adr 0005 adr adr adr adr adr adr"),
        _record("b", "adr 0005 adr 0005 foo bar baz qux"),
    ]
    for store in (sqlite, qdrant):
        store.upsert_records(records)
    for phrases, where, title_only in ((["adr 0005"], ALL, True), (["adr 0005"], ALL, False),
                                       (["TDR-1234", "adr 0005"], ALL, False),
                                       (["TDR-1234"], SearchFilter(tuple(Layer), mission="m"), False),
                                       (["adr 0009", ""], ALL, False)):
        expected = sqlite.phrase_search(phrases, where, 10, title_only)
        assert qdrant.phrase_search(phrases, where, 10, title_only) == expected, (phrases, title_only)
    assert len(sqlite.phrase_search(["adr 0005"], ALL, 10)) == 5
    sqlite.close()
    qdrant.close()
