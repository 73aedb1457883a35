"""End to end on a real git repository and the real embedder: operator A queries, corrections follow,
and the labels come out true, false and unknown on cases built to be each; rate and pairs report them."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.corrections.practitioner_records import Correction
from mission_memory.records import Layer, RecordKind, SourceKind
from tests.conftest import GUIDE, MADR_ADR, NYGARD_ADR, GitRepo
from tests.metrics.transcript_builder import REJECTION, TranscriptWriter, tool, usage

LEDGER_SUMMARY = "The upload ledger stays in SQLite in WAL mode for offline field teams, not PostgreSQL"


@pytest.fixture
def uploader(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    """A mission whose ledger decision was superseded: ADR-0001 (PostgreSQL) by ADR-0002 (SQLite)."""
    repo = make_git_repo("uploader")
    repo.commit("Initial README", "2024-01-10T09:00:00+00:00", {"README.md": "# Uploader\n\nMoves records.\n"})
    repo.commit("Record the ledger decision", "2024-02-01T10:00:00+00:00", {
        "docs/adr/0001-use-postgresql-for-the-upload-ledger.md": NYGARD_ADR,
    })
    repo.commit("Add operations guide", "2024-03-05T11:00:00+00:00", {"docs/guide.md": GUIDE})
    repo.commit("Move the ledger to SQLite for offline field use", "2024-09-15T12:00:00+00:00", {
        "docs/adr/0002-use-sqlite-in-wal-mode.md": MADR_ADR,
        "src/ledger.py": "LEDGER = 'sqlite'\n",
    })
    return repo


def _adr_id(memory: Memory, number: int) -> str:
    decisions = memory.store.records_of_kind([RecordKind.DECISION.value], mission="uploader")
    return next(r.id for r in decisions if r.attributes.get("number") == number)


def test_labels_come_out_true_false_and_unknown_and_rate_and_pairs_report_them(
    uploader: GitRepo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice@example.org")
    with Memory.open() as memory:
        memory.ingest_repository(uploader.root)
        adr1, adr2 = _adr_id(memory, 1), _adr_id(memory, 2)
        # session a: the digest is asked for the guide's layer only, so it leaves the ledger decision out
        missed_digest = memory.query("How is the ledger file backed up?", scope="domain", session_id="sess-a")
        assert adr2 not in [e.record.id for e in missed_digest.entries]
        # session b: the digest serves the current ledger decision
        served_digest = memory.query("Which database holds the upload ledger?", session_id="sess-b")
        assert adr2 in [e.record.id for e in served_digest.entries]
        # session c: the digest is asked about the past and serves only the superseded decision
        stale_digest = memory.query(
            "Which database holds the upload ledger?", scope="workflow", session_id="sess-c",
            filters={"until": "2024-06-01"},
        )
        stale_ids = [e.record.id for e in stale_digest.entries]
        assert adr1 in stale_ids and adr2 not in stale_ids

        def correct(**fields: object) -> Correction:
            base = {"correction_class": "missed-decision", "category": "data", "outcome": "modified"}
            return memory.record_correction(**{**base, **fields})  # type: ignore[arg-type]

        named_missed = correct(summary=LEDGER_SUMMARY, expected=["ADR-2"], session_id="sess-a")
        topic_missed = correct(summary=LEDGER_SUMMARY, component="docs", session_id="sess-a")
        stale_only = correct(summary=LEDGER_SUMMARY, expected=["ADR-1"], session_id="sess-c")
        named_served = correct(summary=LEDGER_SUMMARY, expected=["docs/adr/0002-use-sqlite-in-wal-mode.md"],
                               session_id="sess-b")
        nothing_held = correct(
            correction_class="wrong-approach", category="style",
            summary="Indent the Makefile recipes with tabs rather than spaces", session_id="sess-b",
        )
        no_event = correct(summary=LEDGER_SUMMARY, expected=["ADR-2"], operator="bob@example.org")
        before_any_event = correct(
            summary=LEDGER_SUMMARY, expected=["ADR-2"], session_id="sess-a",
            time=datetime.now(UTC) - timedelta(days=3),
        )
        events = {e.session_id: e.id for e in memory.retrieval_events()}

    assert (named_missed.label.retrieval_caused.value, named_missed.label.missed_record_ids) == ("true", (adr2,))
    assert named_missed.label.retrieval_event_id == events["sess-a"]
    assert named_missed.label.served_record_ids == tuple(e.record.id for e in missed_digest.entries)
    assert topic_missed.label.retrieval_caused.value == "true" and adr2 in topic_missed.label.missed_record_ids
    assert adr1 not in topic_missed.label.missed_record_ids  # superseded: not the context that was missed
    assert (stale_only.label.retrieval_caused.value, stale_only.label.missed_record_ids) == ("true", (adr1,))
    assert named_served.label.retrieval_caused.value == "false"
    assert named_served.label.retrieval_event_id == events["sess-b"]
    # a Makefile correction after a ledger query is not about that query's task: not linked (issue 23, ADR 0062)
    assert nothing_held.label.retrieval_caused.value == "unknown" and nothing_held.label.missed_record_ids == ()
    assert no_event.label.retrieval_caused.value == "unknown" and no_event.label.retrieval_event_id is None
    assert before_any_event.label.retrieval_caused.value == "unknown"

    # the practitioner record has the shape the handover brief reads
    with Memory.open() as memory:
        records = memory.store.records_of_kind([RecordKind.CORRECTION_PATTERN.value], mission="uploader")
    record = next(r for r in records if r.attributes["correction_id"] == named_missed.correction_id)
    assert record.layer is Layer.PRACTITIONER and record.operator == "alice@example.org"
    assert record.provenance.kind is SourceKind.CORRECTION
    assert record.provenance.ref == f"correction/{named_missed.correction_id}"
    assert record.provenance.uri == f"mission-memory://correction/{named_missed.correction_id}"
    assert record.title == record.text == LEDGER_SUMMARY
    assert record.attributes["retrieval_caused"] == "true" and record.attributes["expected"] == ["ADR-2"]
    assert record.attributes["source"] == "explicit" and record.attributes["session_id"] == "sess-a"

    runner = CliRunner()
    rate = runner.invoke(app, ["corrections", "rate", "--by", "day", "--json", "--plot", str(tmp_path / "rate.png")])
    assert rate.exit_code == 0, rate.output
    data = json.loads(rate.stdout)
    total = data["total"]
    assert (total["true"], total["false"], total["unknown"]) == (3, 1, 3)
    assert total["share"] == pytest.approx(3 / 4)
    assert 0 < total["low"] < 3 / 4 < total["high"] < 1
    assert [p["unknown"] for p in data["periods"]] == [1, 2]  # three days ago, and today
    assert (tmp_path / "rate.png").read_bytes().startswith(b"\x89PNG")
    only_bob = json.loads(runner.invoke(app, ["corrections", "rate", "--operator", "bob@example.org", "--json"]).stdout)
    assert (only_bob["total"]["true"], only_bob["total"]["unknown"]) == (0, 1)

    out = tmp_path / "pairs.jsonl"
    pairs_run = runner.invoke(app, ["corrections", "pairs", "-o", str(out)])
    assert pairs_run.exit_code == 0, pairs_run.output
    pairs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(pairs) == 3
    first = next(p for p in pairs if p["correction_id"] == named_missed.correction_id)
    assert first == {
        "correction_id": named_missed.correction_id,
        "event_id": events["sess-a"],
        "time": named_missed.time.isoformat(),
        "mission": "uploader",
        "query": "How is the ledger file backed up?",
        "retrieved": [e.record.id for e in missed_digest.entries],
        "missed": [adr2],
        "correction_class": "missed-decision",
        "category": "data",
        "retrieved_records": [{"id": e.record.id, "kind": e.record.kind.value, "title": e.record.title,
                               "ref": e.record.provenance.ref} for e in missed_digest.entries],
        "missed_records": [{"id": adr2, "kind": "decision", "title": first["missed_records"][0]["title"],
                            "ref": "docs/adr/0002-use-sqlite-in-wal-mode.md"}],
    }
    assert first["missed_records"][0]["title"].startswith("ADR-0002")
    stdout_pairs = runner.invoke(app, ["corrections", "pairs", "-o", "-"])
    assert stdout_pairs.stdout == out.read_text(encoding="utf-8")


def test_a_transcript_correction_links_to_the_query_of_its_session(
    uploader: GitRepo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice@example.org")
    with Memory.open() as memory:
        memory.ingest_repository(uploader.root)
        memory.query("How is the ledger file backed up?", scope="domain", session_id="sess-t")
        event_id = memory.retrieval_events(1)[0].id
        writer = TranscriptWriter(
            tmp_path / "projects" / "uploader" / "sess-t.jsonl", "sess-t", cwd=str(uploader.root),
            start=datetime.now(UTC) + timedelta(minutes=1),
        )
        writer.prompt("Move the ledger")
        writer.call("m1", [tool("e1", "Edit", file_path=f"{uploader.root}/src/ledger.py", old_string="a",
                                new_string="b")], usage(3, 10))
        writer.result("e1", REJECTION, is_error=True, tool_use_result="User rejected tool use")
        report = memory.import_corrections(transcripts=[writer.write()], mission="uploader")
        [correction] = memory.corrections(mission="uploader")
    assert report.sources["transcript"].added == 1
    assert correction.correction_class == "tool-rejected" and correction.component == "src"
    assert correction.operator == "alice@example.org" and correction.session_id == "sess-t"
    assert correction.label.retrieval_event_id == event_id
    assert correction.label.retrieval_caused.value in ("true", "false")


def test_relabelling_keeps_the_correction_id_and_replaces_the_record(
    uploader: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice@example.org")
    with Memory.open() as memory:
        memory.ingest_repository(uploader.root)
        moment = datetime.now(UTC) + timedelta(hours=1)
        first = memory.record_correction(
            correction_class="missed-decision", category="data", outcome="modified", summary=LEDGER_SUMMARY,
            expected=["ADR-2"], session_id="sess-r", time=moment,
        )
        assert first.label.retrieval_caused.value == "unknown"
        memory.query("How is the ledger file backed up?", scope="domain", session_id="sess-r")
        assert memory.label_corrections() == {"true": 1, "false": 0, "unknown": 0, "changed": 1}
        assert memory.label_corrections()["changed"] == 0
        [again] = memory.corrections()
        count = memory.store.count_kind("uploader", RecordKind.CORRECTION_PATTERN.value)
    assert again.correction_id == first.correction_id and again.label.retrieval_caused.value == "true"
    assert count == 1
