"""The SessionStart hook, run as installed: a bounded digest for the session's repository, or nothing."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.hook import installer, session_start
from tests.hostile_texts import assert_stored_text_is_fenced, hostile_repository
from tests.mcp.test_no_cli_advice import CLI_ADVICE


def run_session_start(data_dir: Path, stdin: bytes, *extra: str) -> subprocess.CompletedProcess[bytes]:
    command = installer.session_start_command(data_dir) + "".join(" " + shlex.quote(a) for a in extra)
    return subprocess.run(command, shell=True, input=stdin, capture_output=True, timeout=120, check=False)


def start_payload(cwd: Path | str) -> bytes:
    return json.dumps(
        {
            "session_id": "s-1",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": str(cwd),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    ).encode()


def test_broken_input_prints_nothing_and_exits_zero(data_dir):
    for stdin in (b"{broken", b"", b"[]"):
        done = run_session_start(data_dir, stdin)
        assert (done.returncode, done.stdout) == (0, b"")


def test_without_a_store_it_prints_nothing_and_creates_nothing(data_dir, tmp_path):
    done = run_session_start(data_dir, start_payload(tmp_path))
    assert (done.returncode, done.stdout) == (0, b"")
    assert not (data_dir / "memory.db").exists()


def test_time_limit_ends_the_hook_with_nothing_printed(data_dir, tmp_path):
    with Memory.open():
        pass  # an (empty) store exists, so the hook gets as far as importing the core
    done = run_session_start(data_dir, start_payload(tmp_path), "--time-limit", "0.001")
    assert (done.returncode, done.stdout) == (0, b"")
    assert "time limit" in (data_dir / "logs" / "session-start-hook.log").read_text(encoding="utf-8")


def test_digest_for_the_sessions_repository_is_injected_within_the_size_limit(data_dir, make_git_repo):
    repo = make_git_repo("upload-proxy")
    repo.commit(
        "Add retries with exponential backoff to the upload proxy",
        "2025-02-01T10:00:00+00:00",
        {
            "docs/adr/0001-retries.md": "# 1. Retry uploads\n\nStatus: accepted\n\n## Context\n\nUploads fail "
            "on flaky links.\n\n## Decision\n\nRetry three times with exponential backoff.\n\n## Consequences\n\n"
            "Slower failures.\n",
            "README.md": "# upload-proxy\n\nA proxy that uploads telemetry with retries.\n",
        },
    )
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
    sub = repo.root / "docs"

    done = run_session_start(data_dir, start_payload(sub), "--time-limit", "100")

    assert done.returncode == 0
    text = done.stdout.decode("utf-8")
    assert text.startswith("# mission-memory: pull digest for upload-proxy")
    assert "Retry" in text or "retries" in text
    assert len(text) <= 10_000


def test_long_digests_are_cut_at_a_line_boundary():
    text = "\n".join(f"line {i} " + "x" * 90 for i in range(500))
    cut = session_start.truncate(text)
    assert len(cut) <= session_start.MAX_OUTPUT_CHARS
    assert cut.endswith("[digest truncated]\n")


def test_a_repository_that_was_never_ingested_gets_no_other_missions_memory(data_dir, make_git_repo):
    ingested = make_git_repo("upload-proxy")
    ingested.commit("Add retries to the upload proxy", "2025-02-01T10:00:00+00:00",
                    {"README.md": "# upload-proxy\n\nRetries uploads.\n"})
    with Memory.open() as memory:
        memory.ingest_repository(ingested.root)
    other = make_git_repo("billing")
    other.commit("Start billing", "2025-02-02T10:00:00+00:00", {"README.md": "# billing\n"})

    done = run_session_start(data_dir, start_payload(other.root), "--time-limit", "100")

    assert done.returncode == 0
    assert done.stdout == b""


def test_injections_in_the_repository_reach_the_session_only_inside_fences(data_dir, make_git_repo):
    repo = hostile_repository(make_git_repo)
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)

    done = run_session_start(data_dir, start_payload(repo.root), "--time-limit", "100")

    assert done.returncode == 0
    text = done.stdout.decode("utf-8")
    assert text.startswith("# mission-memory: pull digest for upload-proxy")
    assert_stored_text_is_fenced(text)


def test_a_cut_never_leaves_an_excerpt_fence_open():
    from datetime import UTC, datetime

    from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
    from mission_memory.retrieval.digest import pack_digest
    from mission_memory.retrieval.ranking import Candidate
    from mission_memory.tokens import TiktokenTokenizer

    candidates = [
        Candidate(record_id=f"r{i}", score=1.0 - i / 100, record=Record.build(
            kind=RecordKind.DOC_CHUNK, title=f"Section {i}", text=f"line {i} of the guide\n" * 40,
            provenance=Provenance(kind=SourceKind.DOC, ref=f"d{i}.md#h", uri=f"file:///d{i}.md#h", mission="m",
                                  time=datetime(2025, 1, 1, tzinfo=UTC))))
        for i in range(8)
    ]
    text = pack_digest("q", "all", candidates, 8000, TiktokenTokenizer(), 400, (Layer.DOMAIN,))[0]
    for limit in range(400, len(text), 97):
        cut = session_start.truncate(text, limit)
        assert len(cut) <= limit and cut.endswith("[digest truncated]\n")
        assert cut.count("<<<excerpt ") == cut.count("<<<end excerpt "), cut


def _alice_worked_on(make_git_repo, monkeypatch):  # type: ignore[no-untyped-def]
    """The shared handover scenario (dated March 2025): alice's notes, corrections and decision are stored."""
    from tests.handover.scenario import alices_shift, build_repository

    repo = build_repository(make_git_repo)
    with Memory.open() as memory:
        alices_shift(memory, repo)
    return repo


def test_an_operator_change_injects_the_rotation_brief(data_dir, make_git_repo, monkeypatch):
    repo = _alice_worked_on(make_git_repo, monkeypatch)
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "bob")

    done = run_session_start(data_dir, start_payload(repo.root), "--time-limit", "100")

    assert done.returncode == 0
    text = done.stdout.decode("utf-8")
    assert text.startswith("# mission-memory: pull digest for uploader\n\nSession start after an operator change")
    assert "# Mission memory handover brief" in text
    assert "Cap upload retries at four" in text and "Component src/" in text
    assert "from: alice\nto: bob" in text
    assert not CLI_ADVICE.search(text), CLI_ADVICE.search(text)  # an agent reads it: no command to run (issue 36)
    assert len(text) <= session_start.MAX_OUTPUT_CHARS
    assert_stored_text_is_fenced(text.split("\n\n", 2)[2])
    with Memory.open() as memory:
        event = memory.retrieval_events(1)[0]
        assert (event.scope, event.operator, event.client) == ("handover", "bob", "hook")
        # the hook leaves the archived brief's vector to the queue (it never loads the embedder for a
        # brief); the next catch-up embeds it
        (archived,) = memory.store.records_of_kind(["handover_brief"], mission="uploader")
        model = memory.embedder.model_id
        assert not memory.store.vectors_for([archived.id], model)
        memory.embed_pending()
        assert memory.store.vectors_for([archived.id], model)


def test_the_same_operator_gets_a_task_focused_digest_not_the_brief(data_dir, make_git_repo, monkeypatch):
    repo = _alice_worked_on(make_git_repo, monkeypatch)
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "bob")
    run_session_start(data_dir, start_payload(repo.root), "--time-limit", "100")  # bob's first session: the brief
    repo.git("checkout", "-q", "-b", "raise-client-timeout")
    payload = json.loads(start_payload(repo.root))
    payload["session_id"] = "s-2"

    done = run_session_start(data_dir, json.dumps(payload).encode(), "--time-limit", "100")

    assert done.returncode == 0
    text = done.stdout.decode("utf-8")
    assert text.startswith("# mission-memory: pull digest for uploader\n\nSession start by the same operator")
    assert "handover brief" not in text
    assert session_start._FOCUS_TASK_LINE in text  # the query built from repository text is not shown
    assert "raise-client-timeout" not in text.split("<<<excerpt 1 ", 1)[0]
    with Memory.open() as memory:
        event = memory.retrieval_events(1)[0]
    assert event.scope == "all" and event.client == "hook" and event.operator == "bob"
    assert "raise-client-timeout" in event.query and "Tune retries" in event.query
    assert "Roll out the SQLite ledger" in event.query  # the task in progress


def test_a_session_of_another_operator_after_bob_is_a_rotation_again(data_dir, make_git_repo, monkeypatch):
    repo = _alice_worked_on(make_git_repo, monkeypatch)
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "bob")
    run_session_start(data_dir, start_payload(repo.root), "--time-limit", "100")
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "carol")
    payload = json.loads(start_payload(repo.root))
    payload["session_id"] = "s-3"
    done = run_session_start(data_dir, json.dumps(payload).encode(), "--time-limit", "100")
    text = done.stdout.decode("utf-8")
    assert "Session start after an operator change" in text
    # bob only read his brief: alice, who worked, is still the one handing over (issue 23, ADR 0060)
    assert "from: alice\nto: carol" in text


def test_an_operator_who_only_read_hands_nothing_over(data_dir, make_git_repo, monkeypatch):
    """A rotation is decided by handover's predecessor rule (ADR 0060: the last operator who *worked*):
    bob only read his brief, so alice coming back gets her task digest, not a brief "from bob"."""
    repo = _alice_worked_on(make_git_repo, monkeypatch)
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "bob")
    run_session_start(data_dir, start_payload(repo.root), "--time-limit", "100")  # bob reads his brief
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice")
    payload = json.loads(start_payload(repo.root))
    payload["session_id"] = "s-alice"

    done = run_session_start(data_dir, json.dumps(payload).encode(), "--time-limit", "100")

    text = done.stdout.decode("utf-8")
    assert text.startswith("# mission-memory: pull digest for uploader\n\nSession start by the same operator"), text[:300]


def test_the_hook_knows_no_fence_marker_text() -> None:
    """Cutting a digest outside its fences is the fence module's rule (ADR 0021), not the hook's."""
    source = Path(session_start.__file__).read_text()
    assert "<<<" not in source and "excerpt " not in source
