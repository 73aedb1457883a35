"""Issue 13 end to end, on a real git repository, the real embedder and the real SessionStart hook:
operator A (alice) queries, makes corrections from all three sources and records decisions; operator
B (bob) starts a session and the hook hands him a brief with A's decisions, attention zones and open
questions. The labels come out true, false and unknown on cases built to be each, ``corrections
rate`` and ``corrections pairs`` report them, and no canary planted in prompts, transcripts or tool
inputs is anywhere on disk that mission-memory wrote (docs/design.md §3, §6)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.records import RecordKind
from tests.canary_scan import assert_no_canary, find_canaries, make_canaries
from tests.conftest import GitRepo
from tests.corrections.captured_prompts import capture_prompt
from tests.hook.test_session_start import run_session_start, start_payload
from tests.metrics.transcript_builder import REJECTION, TranscriptWriter, text, tool, usage

ALICE, BOB = "alice@example.org", "bob@example.org"
CANARIES = make_canaries("prompt", "prompt_uk", "user_text", "edit_old", "edit_new", "bash", "write")
SHARDING_QUESTION = "Shard the upload ledger per field team"
TRANSCRIPT_STEP = timedelta(milliseconds=250)
"""The transcript's records are this far apart, and its eleven records end within 3 s of its start: the
session-start hook must run after the last of them (the brief covers up to now), and the test waits on
the real clock for that moment."""


def _run(runner: CliRunner, *args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def _adr_id(memory: Memory, number: int) -> str:
    decisions = memory.store.records_of_kind([RecordKind.DECISION.value], mission="uploader")
    return next(r.id for r in decisions if r.attributes.get("number") == number)


def _transcript(path: Path, root: Path, start: datetime, redirect: str) -> Path:
    """Session sess-t: an edit of src/ledger.py, the operator's redirect, the edit redone, a refused command."""
    c = CANARIES
    w = TranscriptWriter(path, "sess-t", cwd=str(root), start=start, step=TRANSCRIPT_STEP)
    w.prompt(f"Make the ledger writes faster {c['user_text']}")
    w.call("m1", [tool("e1", "Edit", file_path=f"{root}/src/ledger.py", old_string=c["edit_old"],
                       new_string=c["edit_new"])], usage(3, 10))
    w.result("e1", "The file has been updated.")
    w.call("m2", [text("Done.")], usage(3, 10))
    w.prompt(redirect)  # the same prompt the hook captured
    w.call("m3", [tool("e2", "Edit", file_path=f"{root}/src/ledger.py", old_string=c["edit_new"],
                       new_string=c["edit_old"])], usage(3, 10))
    w.result("e2", "The file has been updated.")
    w.call("m4", [tool("b1", "Bash", command=f"rm -rf build/{c['bash']}")], usage(3, 10))
    w.result("b1", REJECTION, is_error=True, tool_use_result="User rejected tool use")
    w.call("m5", [tool("w1", "Write", file_path=f"{root}/src/notes.md", content=c["write"])], usage(3, 10))
    w.result("w1", REJECTION, is_error=True, tool_use_result="User rejected tool use")
    return w.write()


def test_operator_a_works_and_corrects_then_operator_b_starts_with_the_handover_brief(
    mission_repo: GitRepo, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = mission_repo.root
    mission_repo.git("config", "user.email", ALICE)  # the prompt hook names the operator by git user.email
    mission_repo.git("config", "user.name", "alice")
    mission_repo.commit("Tune the ledger's write batching", "2024-10-01T09:00:00+00:00",
                        {"src/ledger.py": "LEDGER = 'sqlite'\nBATCH = 64\n"})
    exports = tmp_path / "exports"
    exports.mkdir()
    runner = CliRunner()
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", ALICE)
    _run(runner, "ingest", str(root), "--json")

    # -- operator A queries (retrieval events) ------------------------------------------------------
    with Memory.open() as memory:
        adr1, adr2 = _adr_id(memory, 1), _adr_id(memory, 2)
        missed = memory.query("How is the ledger file backed up?", scope="domain", session_id="sess-a")
        assert adr2 not in [e.record.id for e in missed.entries]
        served = memory.query("Which database holds the upload ledger?", session_id="sess-b")
        assert adr2 in [e.record.id for e in served.entries]
        memory.query("Where are ledger writes batched?", session_id="sess-t")
        assert adr1 != adr2
        asked = memory.retrieval_events(1)[0].time  # sess-t's query: the prompts and the transcript follow it
    now = datetime.now(UTC)

    # -- corrections from the three sources ---------------------------------------------------------
    # explicit, through the CLI: one built to be retrieval-caused, one built not to be
    caused = json.loads(_run(runner, "correct", "--class", "missed-decision", "--category", "data",
                             "--component", "docs", "--outcome", "modified", "--summary",
                             "The ledger stays in SQLite in WAL mode for offline field teams",
                             "--expected", "ADR-2", "--session", "sess-a", "--json"))
    not_caused = json.loads(_run(runner, "correct", "--class", "missed-decision", "--category", "data",
                                 "--outcome", "modified", "--summary",
                                 "The ledger stays in SQLite in WAL mode for offline field teams",
                                 "--expected", "docs/adr/0002-use-sqlite-in-wal-mode.md", "--session", "sess-b",
                                 "--json"))
    # ... and one with no retrieval event before it
    with Memory.open() as memory:
        unlinked = memory.record_correction(
            correction_class="wrong-approach", category="style", outcome="rejected",
            summary="Keep the ledger module's public names", session_id="sess-old", time=now - timedelta(days=3),
        )
    # the prompt corpus: prompts captured through the hook's own capture code
    hook_dir = tmp_path / "hook-data"
    redirect = f"no, don't change src/ledger.py, revert it {CANARIES['prompt']}"
    first = asked + timedelta(seconds=1)
    capture_prompt(hook_dir, first.isoformat(), f"Make the ledger writes faster {CANARIES['user_text']}",
                   session="sess-t", cwd=root)
    capture_prompt(hook_dir, (first + timedelta(seconds=1)).isoformat(), redirect, session="sess-t", cwd=root)
    capture_prompt(hook_dir, (first + timedelta(seconds=2)).isoformat(), f"ні, не чіпай тести {CANARIES['prompt_uk']}",
                   session="sess-u", cwd=root)
    # a Claude Code transcript of the same session
    transcript = _transcript(tmp_path / "projects" / "uploader" / "sess-t.jsonl", root, first, redirect)
    report = json.loads(_run(runner, "corrections", "import", "--prompts", str(hook_dir / "prompts.git"),
                             "--transcripts", str(transcript), "--json"))
    assert report["sources"]["prompt"]["added"] == 2
    # two refused calls and a reworked edit; the redirect is the hook's prompt, kept once
    assert report["sources"]["transcript"]["added"] == 3
    assert report["sources"]["transcript"]["skipped"] == {"captured-by-the-prompt-hook": 1}

    # -- decisions recorded where they are taken, and a handover note ---------------------------------
    _run(runner, "decide", "Batch ledger writes by 64", "--decision", "Write the ledger in batches of 64 rows.",
         "--rationale", "Batches of 64 keep a field laptop's write latency under 50 ms.",
         "--rejected", "Row-by-row writes: too slow on field laptops", "--component", "src", "--mission", "uploader",
         "--session", "sess-t", "--json")
    _run(runner, "decide", SHARDING_QUESTION, "--decision", "We might shard the ledger per field team.",
         "--rationale", "One ledger file grows past 2 GB on large teams.", "--status", "proposed",
         "--mission", "uploader", "--json")
    _run(runner, "handover", "note", "Watch the ledger's write latency after the batching change", "--kind",
         "warning", "--mission", "uploader")

    # -- the labels ---------------------------------------------------------------------------------
    with Memory.open() as memory:
        corrections = {c.correction_id: c for c in memory.corrections()}
        events = {e.session_id: e.id for e in memory.retrieval_events()}
    assert caused["label"]["retrieval_caused"] == "true" and caused["label"]["missed_record_ids"] == [adr2]
    assert not_caused["label"]["retrieval_caused"] == "false"
    assert unlinked.label.retrieval_caused.value == "unknown" and unlinked.label.retrieval_event_id is None
    sources = sorted(c.source.value for c in corrections.values())
    assert sources == ["explicit"] * 3 + ["prompt"] * 2 + ["transcript"] * 3
    linked = [c for c in corrections.values() if c.session_id == "sess-t"]
    assert linked and all(c.label.retrieval_event_id == events["sess-t"] for c in linked)

    # -- corrections rate and pairs report them -------------------------------------------------------
    rate = json.loads(_run(runner, "corrections", "rate", "--by", "day", "--json"))
    expected = {v: sum(1 for c in corrections.values() if c.label.retrieval_caused.value == v)
                for v in ("true", "false", "unknown")}
    assert {v: rate["total"][v] for v in expected} == expected
    assert min(expected.values()) >= 1
    (exports / "rate.json").write_text(json.dumps(rate), encoding="utf-8")
    pairs_file = exports / "pairs.jsonl"
    _run(runner, "corrections", "pairs", "-o", str(pairs_file))
    pairs = [json.loads(line) for line in pairs_file.read_text(encoding="utf-8").splitlines()]
    assert len(pairs) == expected["true"]
    pair = next(p for p in pairs if p["correction_id"] == caused["correction_id"])
    assert (pair["query"], pair["missed"], pair["event_id"]) == ("How is the ledger file backed up?", [adr2],
                                                                  events["sess-a"])

    # -- operator B starts a session through the real SessionStart hook ------------------------------------
    # (not before the transcript's last record, a few seconds after sess-t's query: the brief covers up to now)
    time.sleep(max(0.0, (first + timedelta(seconds=4) - datetime.now(UTC)).total_seconds()))
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", BOB)
    done = run_session_start(data_dir, start_payload(root), "--time-limit", "100")
    assert done.returncode == 0, done.stderr
    brief = done.stdout.decode("utf-8")
    (exports / "session-start.txt").write_text(brief, encoding="utf-8")
    assert "Session start after an operator change" in brief and "# Mission memory handover brief" in brief
    assert f"from: {ALICE}\nto: {BOB}" in brief
    # A's decision, with its rationale and rejected alternative
    assert "Batch ledger writes by 64" in brief and "Row-by-row writes" in brief
    # A's profile: typical corrections from all three sources, and the attention zones, src/ first
    # (the transcript's and the prompt's corrections concern src/ledger.py; one explicit one docs/)
    profile = brief.split("## The predecessor's profile", 1)[1].split("## Open questions", 1)[0]
    assert "missed-decision / data: 2" in profile and "prompt-correction / revert: 1" in profile
    assert "tool-rejected / command: 1" in profile and "edit-reworked / file-edit: 1" in profile
    assert profile.index("Component src/") < profile.index("Component docs/")
    assert "src/ledger.py" in profile and "Tune the ledger's write batching" in profile
    # the open question: the proposed decision; and A's warning first thing
    assert SHARDING_QUESTION in brief.split("## Open questions", 1)[1]
    assert "Watch the ledger's write latency" in brief.split("## What to do first", 1)[1]
    with Memory.open() as memory:
        event = memory.retrieval_events(1)[0]
        archived = memory.store.records_of_kind([RecordKind.HANDOVER_BRIEF.value], mission="uploader")
    assert (event.scope, event.operator, event.client) == ("handover", BOB, "hook")
    assert len(archived) == 1 and archived[0].attributes["from_operator"] == ALICE

    # -- no canary anywhere mission-memory wrote ----------------------------------------------------------
    assert {h.canary for h in find_canaries([hook_dir, transcript], CANARIES.values())} == set(CANARIES.values())
    assert_no_canary([data_dir, exports], CANARIES.values(), scanned_at_least=4)
