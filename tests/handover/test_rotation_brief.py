"""The rotation brief for the incoming operator: A's decisions, zones, open questions and notes, fenced,
within the budget, archived once per shift and acknowledged (docs/design.md §6, ADR 0026)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.errors import BudgetError, InputError
from mission_memory.handover.brief import collect_brief_items, pack_brief
from mission_memory.handover.shift_window import resolve_shift
from mission_memory.records import Layer, RecordKind
from mission_memory.stores.base import SearchFilter
from mission_memory.tokens import TiktokenTokenizer
from tests.conftest import GitRepo
from tests.handover.scenario import MISSION, NOW, at
from tests.hostile_texts import assert_stored_text_is_fenced

Shift = tuple[Memory, GitRepo]


def test_brief_for_the_incoming_operator_carries_the_predecessors_decisions_zones_questions_and_notes(
    shift: Shift,
) -> None:
    memory, repo = shift
    brief = memory.rotation_brief(for_operator="bob", now=NOW, repository=repo.root)
    text = brief.text

    assert (brief.window.from_operator, brief.window.to_operator) == ("alice", "bob")
    assert brief.counts == {"decisions": 2, "corrections": 3, "open_questions": 3, "tasks_in_progress": 1,
                            "open_notes": 3}
    # decisions with rationale and rejected alternatives, each with its provenance
    assert "Cap upload retries at four" in text and "Four attempts cover 99%" in text
    assert "Unlimited retries (they hide outages)" in text and "`decision/cap-upload-retries`" in text
    assert "ADR-0001: Use SQLite in WAL mode" in text and "Keep PostgreSQL" in text
    # the profile: typical corrections by class and category (bob's own correction is not alice's)
    assert "wrong-assumption / retries: 2 (accepted 1, modified 1)" in text
    assert "scope / other-operator" not in text
    # attention zones: src/ first (most corrections and activity), naming its files and commits
    assert text.index("Component src/") < text.index("Component docs/")
    assert "src/ledger/retry.py" in text and "Tune retries" in text
    # open questions: the refresh artifact, the proposed ADR, the unanswered comment
    assert "Should we shard the ledger per field team?" in text
    assert "ADR-0002: Shard the ledger per field team" in text and "Status: proposed" in text
    assert "Should the client timeout be raised to 30 s?" in text
    # what to do first: the warning before the next step before the hypothesis, then the task in progress
    assert text.index("Do not run the migration") < text.index("Next: raise the client timeout") \
        < text.index("Retry storms come from") < text.index("OPS-7 Roll out the SQLite ledger")
    # watch items: the task with activity but no owner
    assert "OPS-9 Investigate upload timeouts" in text.split("## Watch items", 1)[1]
    # sections in the order of ADR 0026
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## Status", "## What to do first", "## Decisions taken in the window",
                        "## The predecessor's profile", "## Open questions", "## Watch items",
                        "## Recently changed files"]
    # recently changed files (ADR 0038): retry.py (two of alice's commits) first, each with its latest commit
    recent = text.split("## Recently changed files", 1)[1]
    assert recent.index("- src/ledger/retry.py: 2 commits (2 by alice)") < recent.index("- src/upload/client.py")
    assert "README.md: 1 commit, latest 2025-01-10" in recent
    assert brief.tokens_used == memory.tokenizer.count(text) <= 4000


def test_repository_tracker_and_note_text_reaches_the_agent_only_inside_fences(shift: Shift) -> None:
    memory, _ = shift
    brief = memory.rotation_brief(for_operator="bob", now=NOW)
    assert_stored_text_is_fenced(brief.text)


def test_the_predecessor_defaults_to_the_latest_other_operator_and_the_window_to_their_stretch(shift: Shift) -> None:
    memory, _ = shift
    window = resolve_shift(memory.store, MISSION, now=NOW, to_operator="bob")
    assert window.from_operator == "alice"
    # alice's latest stretch runs 2025-03-03 .. 03-06 18:00; the window reaches 7 days before her last activity
    assert window.since == at(6, 18) - timedelta(days=7)
    explicit = resolve_shift(memory.store, MISSION, now=NOW, from_operator="alice", since=at(5))
    assert explicit.since == at(5)


def test_a_narrower_window_leaves_earlier_decisions_out(shift: Shift) -> None:
    memory, _ = shift
    brief = memory.rotation_brief(for_operator="bob", since="2025-03-05", now=NOW)
    assert "Cap upload retries at four" in brief.text
    taken = [shown for item, shown in brief.entries if item.label == "decision"]
    assert not any("ADR-0001: Use SQLite in WAL mode" in shown for shown in taken)
    # it is still named, in one line, as a decision linked to the active work (its file changed lately)
    linked = [shown for item, shown in brief.entries if item.label == "decisions linked to the active work"]
    assert "ADR-0001: Use SQLite in WAL mode for the upload ledger · accepted · `docs/adr/0001-use-sqlite-in-wal-mode.md`" in linked[0]
    assert brief.counts["decisions"] == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=120, max_value=3_000))
def test_the_brief_never_exceeds_its_token_budget(shift: Shift, budget: int) -> None:
    memory, _ = shift
    window = resolve_shift(memory.store, MISSION, now=NOW, to_operator="bob")
    items, _, _ = collect_brief_items(memory.store, window)
    tokenizer = TiktokenTokenizer()
    try:
        text, entries, tokens, omitted = pack_brief(items, budget, tokenizer)
    except BudgetError:
        assert budget < 360  # header, status (with who did what) and the notes line
        return
    assert tokens == tokenizer.count(text) <= budget
    # condensed, the open notes share one entry (ADR 0060): it stands for the notes it holds
    shown = sum(len(item.record_ids) if item.label.startswith("open handover notes, condensed") else 1
                for item, _ in entries)
    assert shown + omitted == len(items)
    if entries:
        assert entries[0][0].label.startswith("status")  # the status line is the first thing kept


def test_a_budget_too_small_for_the_header_is_refused_with_the_number(shift: Shift) -> None:
    memory, _ = shift
    with pytest.raises(BudgetError, match="token_budget 20 is too small for the brief's header and status line"):
        memory.rotation_brief(for_operator="bob", now=NOW, token_budget=20)
    with pytest.raises(InputError, match="token_budget 0 is outside"):
        memory.rotation_brief(for_operator="bob", now=NOW, token_budget=0)


def test_bad_since_and_unknown_mission_are_refused_naming_the_input(shift: Shift) -> None:
    memory, _ = shift
    with pytest.raises(InputError, match="since 'last tuesday'"):
        memory.rotation_brief(for_operator="bob", since="last tuesday", now=NOW)
    with pytest.raises(InputError, match="no mission named 'billing'"):
        memory.rotation_brief(mission="billing", for_operator="bob", now=NOW)


def test_the_brief_is_archived_once_per_shift_and_logged_as_a_handover_retrieval_event(shift: Shift) -> None:
    memory, _ = shift
    first = memory.rotation_brief(for_operator="bob", now=NOW)
    second = memory.rotation_brief(for_operator="bob", now=NOW)
    archived = memory.store.records_of_kind([RecordKind.HANDOVER_BRIEF.value], mission=MISSION)
    assert len(archived) == 1 and archived[0].id == second.archived_id
    assert archived[0].operator == "bob" and archived[0].attributes["from_operator"] == "alice"
    assert first.retrieval_event_id != second.retrieval_event_id
    event = memory.retrieval_events(1)[0]
    assert (event.scope, event.operator, event.mission) == ("handover", "bob", MISSION)
    assert event.tokens_used == second.tokens_used


def test_acknowledging_records_the_read_and_shows_on_the_next_build(shift: Shift) -> None:
    memory, _ = shift
    with pytest.raises(InputError, match="no handover brief was built for operator 'bob'"):
        memory.acknowledge_brief(for_operator="bob")
    brief = memory.rotation_brief(for_operator="bob", now=NOW)
    assert brief.acknowledged is None
    ack = memory.acknowledge_brief(for_operator="bob", now=NOW + timedelta(minutes=5))
    assert ack["brief_id"] == brief.archived_id and ack["operator"] == "bob"
    again = memory.acknowledge_brief(for_operator="bob", now=NOW + timedelta(hours=1))
    assert again["time"] == ack["time"]
    rebuilt = memory.rotation_brief(for_operator="bob", now=NOW)
    assert rebuilt.acknowledged is not None and rebuilt.acknowledged["time"] == ack["time"]


def test_scope_handover_in_query_answers_with_the_brief(shift: Shift, monkeypatch: pytest.MonkeyPatch) -> None:
    memory, _ = shift
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "bob")
    digest = memory.query("take over the uploader", scope="handover", token_budget=3000,
                          filters={"mission": MISSION, "since": "2025-02-20"})
    assert digest.scope == "handover" and digest.tokens_used <= 3000
    assert "# Mission memory handover brief" in digest.text and "Cap upload retries at four" in digest.text
    assert digest.extra["brief"]["from"] == "alice" and digest.extra["brief"]["for"] == "bob"


def test_cli_brief_json_and_ack(shift: Shift, monkeypatch: pytest.MonkeyPatch) -> None:
    _, repo = shift
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "bob")
    monkeypatch.chdir(repo.root)
    runner = CliRunner()
    done = runner.invoke(app, ["brief", "--since", "2025-02-20", "--budget", "2500", "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["for"] == "bob" and data["from"] == "alice" and data["tokens_used"] <= 2500
    assert {e["section"] for e in data["entries"]} >= {"Status", "Decisions taken in the window", "Open questions"}
    acked = runner.invoke(app, ["brief", "ack", "--json"])
    assert acked.exit_code == 0, acked.output
    assert json.loads(acked.stdout)["brief_id"] == data["archived_id"]
    bad = runner.invoke(app, ["brief", "--since", "soon"])
    assert bad.exit_code == 1 and "since 'soon'" in bad.stderr
    known = runner.invoke(app, ["brief", "--from", "alice", "--since", "2025-02-20", "--json"])
    assert known.exit_code == 0 and "Warning" not in known.stderr
    typo = runner.invoke(app, ["brief", "--from", "alcie", "--since", "2025-02-20", "--json"])
    assert typo.exit_code == 0 and "memory holds nothing from operator 'alcie'" in " ".join(typo.stderr.split())
    assert json.loads(typo.stdout)["archived_id"] == ""  # nothing for `brief ack` to acknowledge
    assert json.loads(known.stdout)["archived_id"]


def test_the_window_reaches_back_to_the_incoming_operators_last_activity_within_thirty_days(shift: Shift) -> None:
    from mission_memory.handover.shift_window import MAX_CATCH_UP

    memory, _ = shift
    # carol committed the README on 2025-01-10, 55 days before alice's last activity: capped at 30 days
    window = resolve_shift(memory.store, MISSION, now=NOW, from_operator="alice", to_operator="carol")
    assert window.since == at(6, 18) - MAX_CATCH_UP
    # bob's own correction of 2025-03-06 lies inside alice's window already: nothing changes
    assert resolve_shift(memory.store, MISSION, now=NOW, from_operator="alice", to_operator="bob").since \
        == at(6, 18) - timedelta(days=7)


def test_memory_behind_the_repository_is_a_watch_item(shift: Shift, make_git_repo) -> None:  # type: ignore[no-untyped-def]
    memory, repo = shift
    assert "stale source" not in memory.rotation_brief(for_operator="bob", now=NOW, repository=repo.root).text
    repo.commit("Raise the client timeout", "2025-03-09T10:00:00+00:00", {"src/upload/client.py": "TIMEOUT = 30\n"})
    repo.commit("Log retries", "2025-03-09T11:00:00+00:00", {"src/ledger/retry.py": "RETRIES = 4  # logged\n"})
    watch = memory.rotation_brief(for_operator="bob", now=NOW, repository=repo.root).text.split("## Watch items")[1]
    assert "memory is behind the repository: 2 commits" in watch
    other = make_git_repo("billing")
    other.commit("Start billing", "2025-03-01T10:00:00+00:00", {"README.md": "# billing\n"})
    assert "stale source" not in memory.rotation_brief(for_operator="bob", now=NOW, repository=other.root).text


@pytest.mark.parametrize("query", ["handover brief from alice to bob", "what did alice hand over to bob",
                                   "shift handover alice bob"])
def test_an_archived_brief_is_found_by_a_pull_naming_the_shift(shift: Shift, query: str) -> None:
    memory, _ = shift
    brief = memory.rotation_brief(for_operator="bob", now=NOW)
    [archived] = memory.store.records_of_kind([RecordKind.HANDOVER_BRIEF.value], mission=MISSION)
    assert archived.attributes["brief"] == brief.text
    assert archived.text.startswith("Shift handover from alice to bob on mission uploader")
    # BM25 ranks it first for the shift's words
    words = [w for w in query.replace("what did", "").split() if w not in ("from", "to", "over")]
    hits = memory.store.bm25_search(words, SearchFilter((Layer.WORKFLOW,)), 5)
    assert hits[0].record_id == brief.archived_id
    for scope in ("workflow", "all"):
        digest = memory.query(query, scope=scope, filters={"mission": MISSION})
        assert brief.archived_id in [e.record.id for e in digest.entries], scope
    # a pull about something the brief quotes gets the quoted records, not the brief's copy of them: the
    # archived brief (its vector is made when it is archived) holds only the shift's summary, so if a
    # small store's digest has room for it, it comes last, scored as unlikely to be relevant
    other = memory.query("SQLite in WAL mode, write-ahead log", scope="workflow", filters={"mission": MISSION})
    ids = [e.record.id for e in other.entries]
    assert ids and ids[0] != brief.archived_id and other.entries[0].record.kind is RecordKind.DECISION
    if brief.archived_id in ids:
        assert ids[-1] == brief.archived_id and other.entries[-1].score < 0.05
