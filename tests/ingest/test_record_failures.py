"""One bad record never stops an ingest (issue 34 item 1, docs/adr/0085): it is left out, named with
its stage and reason in the report and a warning, the rest is stored, and the exit status says partial."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from mission_memory.api import Memory
from mission_memory.ingest.record_failures import PARTIAL_EXIT_CODE, REASON_CHARS, STAGES, failure_of
from mission_memory.records import RecordKind
from tests.conftest import GitRepo

# An embedding server that refuses an over-long input the way text-embeddings-inference does when it
# is run without truncation: HTTP 413 naming the limit, for the whole request.
LIMIT_CHARS = 2000
DIM = 8


def _embeddings(request: Request) -> Response:
    inputs = json.loads(request.get_data())["input"]
    if any(len(text) > LIMIT_CHARS for text in inputs):
        return Response(json.dumps({"error": "Input validation error: `inputs` must have less than 512 tokens",
                                    "error_type": "Validation"}), status=413, content_type="application/json")
    data = []
    for index, text in enumerate(inputs):
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        data.append({"index": index, "embedding": [b / 255 + 0.01 for b in digest[:DIM]]})
    return Response(json.dumps({"data": data}), content_type="application/json")


@pytest.fixture
def embedding_server(httpserver: HTTPServer) -> HTTPServer:
    httpserver.expect_request("/v1/embeddings", method="POST").respond_with_handler(_embeddings)
    return httpserver


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mission_memory", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=180, check=False)


def _long_section() -> str:
    sentence = "The upload proxy retries each antivirus check three times before it marks the file failed. "
    return "## Retries\n\n" + sentence * (LIMIT_CHARS // len(sentence) + 2)


def _repository(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_git_repo("uploads")
    repo.commit("OPS-1: describe the upload proxy", "2025-02-01T10:00:00+00:00", {
        "README.md": "# Uploads\n\nThe upload proxy takes files from users.\n",
        "docs/retries.md": "# Retry policy\n\nShort intro.\n\n" + _long_section(),
        "docs/adr/0001-use-an-upload-proxy.md": "# 1. Use an upload proxy\n\n## Status\n\nAccepted\n\n"
                                                "## Decision\n\nAll uploads go through the proxy.\n",
    })
    repo.commit("OPS-2: note the scanner", "2025-02-02T10:00:00+00:00", {
        "docs/scanner.md": "# Scanner\n\nThe scanner runs ClamAV.\n",
    })
    return repo


def test_an_embedder_refusing_one_record_leaves_it_out_named_and_the_cli_exits_partial(
    make_git_repo: Callable[[str], GitRepo], embedding_server: HTTPServer, data_dir: Path
) -> None:
    repo = _repository(make_git_repo)
    env = {"MISSION_MEMORY_EMBEDDER": "openai", "MISSION_MEMORY_EMBEDDINGS_URL": embedding_server.url_for("/v1"),
           "MISSION_MEMORY_EMBEDDINGS_MODEL": "tei-test", "MISSION_MEMORY_DATA_DIR": str(data_dir)}
    done = _cli(["ingest", str(repo.root), "--json"], env)

    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == PARTIAL_EXIT_CODE, (done.returncode, done.stderr)
    report = json.loads(done.stdout)
    assert report["partial"] is True
    assert report["failures"] == [{"source": "docs/retries.md#retries", "stage": "embed", "reason": report[
        "failures"][0]["reason"]}]
    assert "HTTP 413" in report["failures"][0]["reason"] and "512 tokens" in report["failures"][0]["reason"]
    assert any(w.startswith("docs/retries.md#retries: left out, embed failed") for w in report["warnings"])
    # everything else of the run is stored: both commits, the decision, the other sections
    assert report["by_kind"]["added"] == {"commit": 2, "decision": 1, "doc_chunk": 3}

    text = _cli(["ingest", str(repo.root)], env)  # the same run without --json: named, no traceback
    assert text.returncode == PARTIAL_EXIT_CODE and "Traceback" not in text.stderr
    assert "docs/retries.md#retries: left out, embed failed" in text.stdout
    assert "Partial ingest: 1 left out" in text.stdout


def test_a_commit_listing_a_credentials_file_beside_another_never_stops_the_ingest(
    make_git_repo: Callable[[str], GitRepo],
) -> None:
    """The shape that crashed a real repository's first ingest with a KeyError (issue 34): the commit is
    stored, or named as left out; either way the ingest finishes and stores every ADR."""
    repo = make_git_repo("platform-manual")
    adr = "# {n}. {title}\n\n## Status\n\nAccepted\n\n## Decision\n\n{decision}\n"
    repo.commit("Add ADRs 3 to 5", "2025-03-01T10:00:00+00:00", {
        "docs/adr/ADR003-AWS-credentials.md": adr.format(n=3, title="AWS credentials", decision="Use IAM roles."),
        "docs/adr/ADR004-domain-naming-scheme.md": adr.format(n=4, title="Domain naming", decision="Use env names."),
        "docs/adr/ADR005-logging.md": adr.format(n=5, title="Logging", decision="Ship logs to one place."),
    })
    with Memory.open() as memory:
        report = memory.ingest_repository(repo.root)
        stored = [r for batch in memory.store.iterate() for r in batch]

    sha = repo.git("rev-parse", "HEAD").strip()
    assert sum(1 for r in stored if r.kind is RecordKind.DECISION) == 3
    commit_stored = any(r.kind is RecordKind.COMMIT and r.provenance.ref == sha for r in stored)
    assert commit_stored or [f.source for f in report.failures] == [sha]
    for failure in report.failures:
        assert failure.stage in STAGES and failure.reason


def test_a_commit_message_holding_gits_separator_characters_is_ingested_whole(
    make_git_repo: Callable[[str], GitRepo],
) -> None:
    """Found by the property below: a message with \\x1e (git log's record separator here) was split in two
    and the commit silently lost; \\x1f and \\x1d cut its fields."""
    repo = make_git_repo("separators")
    repo.commit("first", "2025-04-01T10:00:00+00:00", {"README.md": "# A\n\nText.\n"})
    message = "OPS-9: parse the \x1e record, \x1f unit and \x1d group separators\n\nBody \x1e still here."
    repo.commit(message, "2025-04-02T10:00:00+00:00", {"docs/b.md": "# B\n\nMore.\n"})
    with Memory.open() as memory:
        report = memory.ingest_repository(repo.root)
        commits = [r for batch in memory.store.iterate() for r in batch if r.kind is RecordKind.COMMIT]
    assert report.failures == [] and len(commits) == 2
    second = next(r for r in commits if r.attributes["tracker_keys"])
    assert second.title == "OPS-9: parse the \x1e record, \x1f unit and \x1d group separators"
    assert "Body \x1e still here." in second.text and second.attributes["files"] == ["docs/b.md"]


@pytest.fixture(scope="module")
def shared_memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    from mission_memory.config import load_settings

    with Memory.open(load_settings(data_dir=tmp_path_factory.mktemp("property-data"))) as memory:
        yield memory


_names = st.text(st.characters(codec="utf-8", exclude_characters="/\\\0", exclude_categories=("Cs",)),
                 min_size=1, max_size=24).filter(lambda n: n not in {".", ".."} and not n.startswith(".git"))
_texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=600)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(folder=st.sampled_from(["docs", "docs/adr", "architecture-decision-records", "", "docs/principles"]),
       name=_names, suffix=st.sampled_from([".md", ".rst", ".txt", ".yaml", ".toml", ".markdown"]),
       text=_texts, message=st.text(st.characters(codec="utf-8", exclude_characters="\0",
                                                   exclude_categories=("Cs",)), min_size=1, max_size=300))
def test_no_exception_escapes_an_ingest_of_arbitrary_files_and_commit_messages(
    shared_memory: Memory, tmp_path_factory: pytest.TempPathFactory, folder: str, name: str, suffix: str,
    text: str, message: str,
) -> None:
    repo = GitRepo(tmp_path_factory.mktemp("arbitrary") / "repo")
    path = f"{folder}/{name}{suffix}" if folder else f"{name}{suffix}"
    (repo.root / path).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / path).write_bytes(text.encode("utf-8"))
    repo.git("add", "-A")
    if not message.strip():
        message = "(empty)"
    repo.git("commit", "-q", "--allow-empty", "-m", message)
    mission = "p" + uuid.uuid4().hex[:12]  # hypothesis runs an example again when it shrinks: a new mission each time

    report = shared_memory.ingest_repository(repo.root, mission=mission)

    assert report.added.get(RecordKind.COMMIT.value, 0) + len(report.failures) >= 1
    for failure in report.failures:
        assert failure.stage in STAGES and len(failure.reason) <= REASON_CHARS
        assert failure.warning() in report.warnings


@settings(deadline=None)  # a loaded machine is no failure of this property
@given(source=st.text(max_size=80), stage=st.sampled_from(STAGES), message=st.text(max_size=1000))
def test_a_failure_names_any_input_on_one_printable_line(source: str, stage: str, message: str) -> None:
    try:
        raise ValueError(message)
    except ValueError as exc:
        failure = failure_of(source, stage, exc)
    assert failure.stage == stage
    assert len(failure.reason) <= REASON_CHARS and failure.reason.startswith("ValueError")
    assert all(c.isprintable() for c in failure.source + failure.reason + failure.warning())


def test_a_failure_building_a_record_is_named_as_the_redact_stage_whatever_phase_the_caller_was_in() -> None:
    from datetime import UTC, datetime

    from mission_memory.records import Provenance, Record, SourceKind

    provenance = Provenance(kind=SourceKind.DOC, ref="docs/a.md", uri="file:///a", mission="m",
                            time=datetime(2025, 1, 1, tzinfo=UTC))
    with pytest.raises(Exception) as raised:  # noqa: PT011 - pydantic's error class is not ours to name
        Record.build(kind=RecordKind.DOC_CHUNK, title="a", text="b", provenance=provenance,
                     criticality="not a number")  # type: ignore[arg-type]
    assert failure_of("docs/a.md", "parse", raised.value).stage == "redact"
