"""Decisions recorded where they are taken (issue 13 item 4, docs/adr/0028): `mission-memory decide` and
`Memory.record_decision` against real SQLite stores and real git repositories, with the real embedder."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.errors import InputError
from mission_memory.ingest.adr import parse_adr
from mission_memory.ingest.recorded_decisions import (
    check_statement,
    madr_text,
    next_adr_path,
    parse_rejected,
    slugify,
)
from mission_memory.records import Record, RecordKind
from tests.conftest import GitRepo

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def _decisions(memory: Memory, mission: str = "uploader") -> list[Record]:
    return memory.store.records_of_kind([RecordKind.DECISION.value], mission=mission)


def _by_ref(memory: Memory, ref: str, mission: str = "uploader") -> Record:
    [found] = [r for r in _decisions(memory, mission) if r.provenance.ref == ref]
    return found


@pytest.fixture
def ingested(mission_repo: GitRepo) -> GitRepo:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    return mission_repo


def test_decide_write_adr_then_commit_and_ingest_gives_one_decision_record_not_two(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ingested.root)
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "olena@example.org")
    done = CliRunner().invoke(app, [
        "decide", "Compress uploads with zstd", "--decision", "Uploads are compressed with zstd level 3.",
        "--rationale", "it halves transfer time on field links", "--rejected", "gzip: slower and larger",
        "--rejected", "No compression: links are too slow", "--principle", "P1", "--component", "src",
        "--task", "OPS-51", "--session", "sess-42", "--write-adr", "docs/adr", "--json",
    ])
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    written = Path(out["adr_path"])
    assert written.name == "0004-compress-uploads-with-zstd.md" and written.is_file()
    assert out["source_key"] == "uploader:decision:docs/adr/0004-compress-uploads-with-zstd.md"
    with Memory.open() as memory:
        before = len(_decisions(memory))
    ingested.commit("OPS-51: record the compression decision", "2026-03-02T10:00:00+00:00")
    with Memory.open() as memory:
        report = memory.ingest_repository(ingested.root)
        after = _decisions(memory)
        record = _by_ref(memory, "docs/adr/0004-compress-uploads-with-zstd.md")
    assert len(after) == before == 4
    assert report.added.get("decision", 0) == 0 and report.updated.get("decision", 0) == 0
    assert record.id == out["id"]
    a = record.attributes
    assert a["decided_by"] == "olena@example.org" and a["session_id"] == "sess-42" and a["recorded"] is True
    assert a["rejected_alternatives"] == [
        {"option": "gzip", "reason": "slower and larger"},
        {"option": "No compression", "reason": "links are too slow"},
    ]
    assert a["principle_ids"] == ["P1"] and a["task_ids"] == ["OPS-51"] and record.component == "src"


def test_an_edited_recorded_adr_keeps_who_decided_it_when_ingest_replaces_it(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "olena@example.org")
    with Memory.open() as memory:
        outcome = memory.record_decision(
            "Compress uploads with zstd", decision="zstd level 3", rationale="halves transfer time",
            session_id="sess-7", write_adr=ingested.root / "docs" / "adr", now=NOW,
        )
    assert outcome.adr_path is not None
    outcome.adr_path.write_text(outcome.adr_path.read_text() + "\nAmended: level 5 on laptops.\n")
    ingested.commit("Amend the compression decision", "2026-03-03T10:00:00+00:00")
    with Memory.open() as memory:
        report = memory.ingest_repository(ingested.root)
        record = _by_ref(memory, "docs/adr/0004-compress-uploads-with-zstd.md")
    assert report.updated["decision"] == 1
    assert "level 5 on laptops" in record.text
    assert record.attributes["decided_by"] == "olena@example.org" and record.attributes["session_id"] == "sess-7"


def test_a_decision_recorded_without_a_file_survives_a_later_ingest_of_the_repository(
    ingested: GitRepo,
) -> None:
    with Memory.open() as memory:
        memory.record_decision(
            "Keep uploads for 30 days", decision="Uploaded files are kept 30 days.", rationale="audit needs it",
            mission="uploader", session_id="s1", now=NOW,
        )
    ingested.commit("Touch the README", "2026-03-04T10:00:00+00:00", {"README.md": "# Uploader\n\nChanged.\n"})
    with Memory.open() as memory:
        report = memory.ingest_repository(ingested.root)
        kept = _by_ref(memory, "decision/keep-uploads-for-30-days")
    assert report.removed.get("decision", 0) == 0
    assert kept.attributes["recorded"] is True and kept.provenance.kind.value == "decision"


def test_a_recorded_supersession_marks_the_adr_superseded_in_pull_and_survives_reingest(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ingested.root)
    with Memory.open() as memory:
        outcome = memory.record_decision(
            "Retry antivirus checks at most five times", decision="Five retries, then report the file.",
            rationale="an endless queue hid failing scanners", supersedes="ADR-0003", session_id="s2", now=NOW,
        )
        [superseded] = outcome.superseded
        assert superseded.provenance.ref == "docs/adr/0003-cherha-povtornykh-sprob.md"
        assert superseded.attributes["status"] == "superseded"
        assert superseded.attributes["superseded_by"] == ["decision/retry-antivirus-checks-at-most-five-times"]
        assert outcome.record.attributes["supersedes"] == ["0003"]
    ingested.commit("Unrelated change", "2026-03-05T10:00:00+00:00", {"src/other.py": "X = 1\n"})
    with Memory.open() as memory:
        memory.ingest_repository(ingested.root)
        again = _by_ref(memory, "docs/adr/0003-cherha-povtornykh-sprob.md")
        current = memory.query("черга повторних спроб перевірки антивірусом", scope="workflow", token_budget=3000)
        history = memory.query("ADR-0003: черга повторних спроб перевірки антивірусом", scope="workflow",
                               token_budget=3000)
    assert again.attributes["status"] == "superseded"
    refs = [e.record.provenance.ref for e in current.entries]
    # ADR 0030: the successor is served, the superseded decision only when the task names it or asks about history
    assert "decision/retry-antivirus-checks-at-most-five-times" in refs
    assert not any(ref.endswith("0003-cherha-povtornykh-sprob.md") for ref in refs)
    entry = next(e for e in history.entries if e.record.provenance.ref.endswith("0003-cherha-povtornykh-sprob.md"))
    assert entry.superseded
    assert "[SUPERSEDED]" in history.text


def test_a_decision_superseding_a_recorded_one_marks_it_superseded(ingested: GitRepo) -> None:
    with Memory.open() as memory:
        memory.record_decision("Keep uploads 30 days", decision="30 days", rationale="audit", mission="uploader",
                               now=NOW)
        outcome = memory.record_decision("Keep uploads 90 days", decision="90 days", rationale="new audit rule",
                                         mission="uploader", supersedes="keep-uploads-30-days", now=NOW)
        old = _by_ref(memory, "decision/keep-uploads-30-days")
    assert [r.id for r in outcome.superseded] == [old.id]
    assert old.attributes["status"] == "superseded"
    assert old.attributes["superseded_by"] == ["decision/keep-uploads-90-days"]


def test_decided_by_is_the_operator_or_the_agent_and_the_session_is_kept(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ingested.root)
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "taras")
    runner = CliRunner()
    by_operator = runner.invoke(app, ["decide", "Pin the scanner version", "--decision", "Pin 1.4",
                                      "--rationale", "1.5 crashes", "--session", "abc", "--json"])
    by_agent = runner.invoke(app, ["decide", "Cache scanner results", "--decision", "Cache by hash",
                                   "--rationale", "rescans are slow", "--by", "agent", "--status", "proposed",
                                   "--json"])
    assert by_operator.exit_code == 0 and by_agent.exit_code == 0, by_operator.output + by_agent.output
    first, second = json.loads(by_operator.stdout), json.loads(by_agent.stdout)
    assert first["decided_by"] == "taras" and first["session_id"] == "abc" and first["mission"] == "uploader"
    assert second["decided_by"] == "agent" and second["status"] == "proposed" and second["session_id"]
    with Memory.open() as memory:
        record = _by_ref(memory, "decision/pin-the-scanner-version")
    assert record.attributes["decision"] == "Pin 1.4" and record.attributes["rationale"] == "1.5 crashes"


def test_recording_the_same_decision_twice_adds_nothing(ingested: GitRepo) -> None:
    with Memory.open() as memory:
        first = memory.record_decision("Pin the scanner", decision="1.4", rationale="1.5 crashes",
                                       mission="uploader", session_id="s", now=NOW)
        second = memory.record_decision("Pin the scanner", decision="1.4", rationale="1.5 crashes",
                                        mission="uploader", session_id="s", now=NOW)
        assert first.added and not second.added and first.record.id == second.record.id
        assert len(_decisions(memory)) == 4


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["  ", "--decision", "d", "--rationale", "r"], "title is empty"),
        (["T", "--decision", "d", "--rationale", "r", "--rejected", "gzip slower"], "'option: why it was rejected'"),
        (["T", "--decision", "d", "--rationale", "r", "--rejected", ": no option"], "--rejected ': no option'"),
        (["T", "--decision", "", "--rationale", "r"], "--decision is empty"),
        (["T", "--decision", "d", "--rationale", "r", "--supersedes", "0042"], "--supersedes '0042'"),
        (["T", "--decision", "d", "--rationale", "r", "--write-adr", "docs"], "ingest does not read ADRs"),
    ],
)
def test_bad_input_is_named_and_nothing_is_stored_or_written(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch, arguments: list[str], message: str
) -> None:
    monkeypatch.chdir(ingested.root)
    with Memory.open() as memory:
        before = {r.id for r in _decisions(memory)}
    files_before = sorted(p.name for p in (ingested.root / "docs").rglob("*"))
    done = CliRunner().invoke(app, ["decide", *arguments])
    assert done.exit_code == 1
    assert message in done.output
    with Memory.open() as memory:
        assert {r.id for r in _decisions(memory)} == before
    assert sorted(p.name for p in (ingested.root / "docs").rglob("*")) == files_before


def test_unknown_supersedes_lists_the_stored_decisions(ingested: GitRepo) -> None:
    with Memory.open() as memory, pytest.raises(InputError, match=r"stored: 0001, 0002, 0003"):
        memory.record_decision("T", decision="d", rationale="r", mission="uploader", supersedes="ADR-9")


def test_write_adr_outside_a_git_work_tree_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "plain" / "adr"
    folder.mkdir(parents=True)
    with Memory.open() as memory, pytest.raises(InputError, match="not inside a git work tree"):
        memory.record_decision("T", decision="d", rationale="r", write_adr=folder)
    assert list(folder.iterdir()) == []


def test_write_adr_starts_a_new_adr_folder_at_0001(make_git_repo: Callable[[str], GitRepo]) -> None:
    repo = make_git_repo("fresh")
    repo.commit("Initial", "2026-01-01T10:00:00+00:00", {"README.md": "# Fresh\n"})
    with Memory.open() as memory:
        outcome = memory.record_decision("Use Rust", decision="Rust", rationale="memory safety",
                                         write_adr=repo.root / "docs" / "decisions", now=NOW)
    assert outcome.adr_path == repo.root / "docs" / "decisions" / "0001-use-rust.md"
    assert outcome.record.provenance.mission == "fresh"


def test_the_madr_text_parses_back_into_the_stated_fields() -> None:
    statement = check_statement(
        "Черга повторних спроб: не більше п'яти", "П'ять спроб, потім звіт.", "нескінченна черга ховала збої",
        ["Безмежна черга: ховає збої", "Без повторів: файли губляться"], principles=["P2"], component="scanner",
        tasks=["OPS-40"], context="Перевірка антивірусом падає через тайм-аут.",
    )
    text = madr_text(statement, decided_on=NOW.date(), deciders="Олена", supersedes="0003")
    d = parse_adr(text, "docs/adr/0005-cherha.md")
    assert d.format.value == "madr" and d.status is not None and d.status.value == "accepted"
    assert d.title == statement.title and d.decision == statement.decision
    assert d.rationale == statement.rationale and d.context == statement.context
    assert [(a.option, a.reason) for a in d.rejected_alternatives] == [
        ("Безмежна черга", "ховає збої"), ("Без повторів", "файли губляться")
    ]
    assert d.supersedes == ("0003",) and d.deciders == ("Олена",) and d.component == "scanner"
    assert d.principle_ids == ("P2",) and d.task_ids == ("OPS-40",) and d.decided_at == NOW.date()


def test_rejected_options_split_at_the_first_colon() -> None:
    assert parse_rejected("Redis: needs a server: not offline").reason == "needs a server: not offline"
    with pytest.raises(InputError, match="--rejected 'Redis:'"):
        parse_rejected("Redis:")


def test_next_adr_path_follows_the_highest_number_and_slugs_the_title(tmp_path: Path) -> None:
    (tmp_path / "0007-old.md").write_text("x")
    (tmp_path / "README.md").write_text("x")
    assert next_adr_path(tmp_path, "Use SQLite, not Postgres!").name == "0008-use-sqlite-not-postgres.md"
    assert slugify("Черга повторних спроб") == "черга-повторних-спроб"
    assert slugify("!!!") == "decision"


def test_supersedes_in_a_mission_that_is_not_stored_names_the_stored_missions(ingested: GitRepo) -> None:
    with Memory.open() as memory, pytest.raises(
        InputError, match=r"no mission named 'elsewhere' is stored \(missions: uploader"
    ):
        memory.record_decision("T", decision="d", rationale="r", mission="elsewhere", supersedes="0001")


@pytest.mark.parametrize(
    ("mission", "message"),
    [
        ("evil\nmission", "mission 'evil\\nmission' has control characters or format characters (U+000A"),
        ("upl\u200boader", "mission 'upl\\u200boader' has control characters or format characters (U+200B"),
        ("*", "mission '*' is the all-missions wildcard"),
        ("uploadr", "no mission named 'uploadr' is stored (missions: uploader; did you mean 'uploader'?)"),
    ],
)
def test_decide_refuses_a_mission_name_the_next_shift_would_not_see(
    ingested: GitRepo, monkeypatch: pytest.MonkeyPatch, mission: str, message: str
) -> None:
    monkeypatch.chdir(ingested.root)
    with Memory.open() as memory:
        before = {m: len(memory.store.records_of_kind([RecordKind.DECISION.value], mission=m))
                  for m in memory.store.missions()}
    done = CliRunner().invoke(app, ["decide", "Pin 1.4", "--decision", "d", "--rationale", "r", "--mission", mission])
    assert done.exit_code == 1, done.output
    assert message in done.output
    with Memory.open() as memory:
        assert set(memory.store.missions()) == {"uploader"}
        assert len(_decisions(memory)) == before["uploader"]


def test_decide_outside_any_repository_records_into_the_only_stored_mission_as_handover_note_does(
    ingested: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "tmp"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    runner = CliRunner()
    done = runner.invoke(app, ["decide", "Pin the scanner", "--decision", "1.4", "--rationale", "1.5 crashes", "--json"])
    note = runner.invoke(app, ["handover", "note", "Scanner pinned", "--json"])
    assert done.exit_code == 0 and note.exit_code == 0, done.output + note.output
    assert json.loads(done.stdout)["mission"] == json.loads(note.stdout)["mission"] == "uploader"
    with Memory.open() as memory:
        assert set(memory.store.missions()) == {"uploader"}


def test_decide_with_two_missions_stored_and_neither_here_asks_for_one(
    ingested: GitRepo, make_git_repo: Callable[[str], GitRepo], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_git_repo("ledger")
    other.commit("Initial", "2026-01-01T10:00:00+00:00", {"README.md": "# Ledger\n"})
    with Memory.open() as memory:
        memory.ingest_repository(other.root)
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["decide", "T", "--decision", "d", "--rationale", "r"])
    assert done.exit_code == 1
    assert "name the mission with --mission (missions: ledger, uploader)" in done.output


def test_a_written_adr_superseding_a_recorded_decision_keeps_that_link_through_ingest(ingested: GitRepo) -> None:
    with Memory.open() as memory:
        memory.record_decision("Keep uploads 30 days", decision="30 days", rationale="audit", mission="uploader",
                               now=NOW)
        outcome = memory.record_decision(
            "Keep uploads 90 days", decision="90 days", rationale="new audit rule", supersedes="decision/keep-uploads-30-days",
            write_adr=ingested.root / "docs" / "adr", now=NOW,
        )
    assert outcome.adr_path is not None and "supersedes:" not in outcome.adr_path.read_text()
    ingested.commit("Record the retention decision", "2026-03-06T10:00:00+00:00")
    with Memory.open() as memory:
        report = memory.ingest_repository(ingested.root)
        written = _by_ref(memory, "docs/adr/0004-keep-uploads-90-days.md")
        old = _by_ref(memory, "decision/keep-uploads-30-days")
        others = [r for r in _decisions(memory) if r.attributes.get("status") == "superseded"]
    assert report.updated.get("decision", 0) == 0 and written.id == outcome.record.id
    assert written.attributes["supersedes"] == ["decision/keep-uploads-30-days"]
    assert old.attributes["superseded_by"] == ["0004"] and old.attributes["status"] == "superseded"
    assert {r.provenance.ref for r in others} == {"decision/keep-uploads-30-days", "docs/adr/0001-use-postgresql-for-the-upload-ledger.md"}
