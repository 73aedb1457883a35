"""Nothing stale leaks, nothing current is lost (issue 12 item 1, ADR 0030): the suite, then its rules one by one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval.near_duplicates import suppress_near_duplicates
from mission_memory.retrieval.ranking import Candidate
from mission_memory.retrieval.staleness import asks_about_history
from tests.conftest import GitRepo
from tests.retrieval.stale_current_cases import StaleCase, build_suite, score_suite


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, list[StaleCase]]]:
    work = tmp_path_factory.mktemp("stale-suite")
    memory = Memory.open(load_settings(data_dir=work / "data"))
    cases = build_suite(memory, lambda name: GitRepo(work / name), work)
    yield memory, cases
    memory.close()


def test_the_suite_leaks_no_stale_record_and_keeps_every_current_one(
    suite: tuple[Memory, list[StaleCase]], capsys: pytest.CaptureFixture[str]
) -> None:
    memory, cases = suite
    score = score_suite(memory, cases)
    with capsys.disabled():
        print(f"\nstale/current suite: {score.cases} cases, stale leaked {score.stale_leaked}, "
              f"current kept {score.current_kept}/{score.current_total}")
    assert score.failures == []
    assert score.stale_leaked == 0 and score.current_kept == score.current_total


@pytest.mark.parametrize("index", range(13))
def test_each_case(suite: tuple[Memory, list[StaleCase]], index: int) -> None:
    memory, cases = suite
    assert len(cases) == 13, [case.name for case in cases]
    score = score_suite(memory, [cases[index]])
    assert score.failures == [], cases[index].name


def test_the_tool_lineage_case_of_issue_12_returns_the_new_delta_with_the_retired_tool(
    suite: tuple[Memory, list[StaleCase]],
) -> None:
    memory, cases = suite
    case = cases[0]
    digest = memory.query(case.query, token_budget=4000, filters={"mission": "navigator"})
    lineage = [e for e in digest.entries if e.record.attributes.get("artifact") == "tool_lineage"]
    assert [e.record.id for e in lineage] == list(case.current)
    assert "fuel_stops" in lineage[0].text and "max_detour_km" in lineage[0].text


def test_a_superseded_decision_asked_by_name_is_marked_and_its_successor_is_shown(
    suite: tuple[Memory, list[StaleCase]],
) -> None:
    memory, _ = suite
    digest = memory.query("Why did ADR-0001 choose PostgreSQL for the ledger?", token_budget=4000,
                          filters={"mission": "ledger"})
    by_number = {e.record.attributes.get("number"): e for e in digest.entries if e.record.kind is RecordKind.DECISION}
    assert by_number[1].superseded and "[SUPERSEDED]" in by_number[1].block
    assert not by_number[3].superseded
    assert by_number[3].score >= by_number[1].score


def test_a_time_bounded_query_sees_the_artifact_current_at_that_time(suite: tuple[Memory, list[StaleCase]]) -> None:
    memory, cases = suite
    second_pass_delta = cases[0].stale[1]
    digest = memory.query("route planner tool changes", token_budget=4000,
                          filters={"mission": "navigator", "until": "2025-03-15"})
    ids = [e.record.id for e in digest.entries]
    assert second_pass_delta in ids and cases[0].stale[0] not in ids


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("history of the ledger database decisions", True),
        ("Why did we drop PostgreSQL?", True),
        ("which decisions were superseded", True),
        ("what did the previous decision say", True),
        ("Чому ми відмовились від PostgreSQL?", True),
        ("Історія рішень про базу даних", True),
        ("Which database holds the ledger?", False),
        ("Add retries to the upload proxy", False),
        ("Як налаштувати середовище розробки?", False),
    ],
)
def test_history_questions_are_told_from_ordinary_ones(task: str, expected: bool) -> None:
    assert asks_about_history(task) is expected


def _candidate(rid: str, score: float, when: str, text: str, **attributes: object) -> Candidate:
    record = Record.build(
        kind=RecordKind.DECISION if attributes else RecordKind.REFRESH_ARTIFACT, title=rid, text=text,
        provenance=Provenance(kind=SourceKind.PUSH_REFRESH, ref=rid, uri=f"task:{rid}", mission="m",
                              time=f"{when}T00:00:00Z"),  # type: ignore[arg-type]
        attributes=dict(attributes),
    )
    return Candidate(record_id=rid, score=score, record=record)


def test_near_duplicate_suppression_keeps_the_newer_record_at_the_better_place() -> None:
    old = _candidate("old", 0.9, "2025-01-01", "plan_route was modified")
    other = _candidate("other", 0.8, "2025-01-05", "unrelated")
    new = _candidate("new", 0.5, "2025-02-01", "plan_route was modified, reroute added")
    vectors = {"old": np.array([1, 0], np.float32), "other": np.array([0, 1], np.float32),
               "new": np.array([0.999, 0.0447], np.float32)}
    kept, dropped = suppress_near_duplicates([old, other, new], vectors, 0.97)
    assert [c.record_id for c in kept] == ["new", "other"] and dropped == 1
    assert kept[0].score == 0.9


def test_near_duplicate_suppression_keeps_the_current_decision_over_a_newer_dated_superseded_one() -> None:
    superseded = _candidate("0008", 0.9, "2025-06-01", "same text", status="superseded", superseded_by=["0009"])
    current = _candidate("0009", 0.4, "2025-01-01", "same text", status="accepted")
    kept, dropped = suppress_near_duplicates([superseded, current], {}, 0.97)
    assert [c.record_id for c in kept] == ["0009"] and dropped == 1


def test_near_duplicate_suppression_examines_candidates_past_the_limit_for_newer_twins() -> None:
    cands = [_candidate(f"c{i}", 1 - i / 10, "2025-01-01", f"text {i}") for i in range(3)]
    newer_twin = _candidate("twin", 0.1, "2025-03-01", "text 0")
    kept, dropped = suppress_near_duplicates([*cands, newer_twin], {}, 0.97, keep=2)
    assert [c.record_id for c in kept] == ["twin", "c1"] and dropped == 1


def test_equal_age_duplicates_keep_the_more_relevant(tmp_path: Path) -> None:
    a = _candidate("a", 0.9, "2025-01-01", "same")
    b = _candidate("b", 0.5, "2025-01-01", "same")
    kept, dropped = suppress_near_duplicates([a, b], {}, 0.97)
    assert [c.record_id for c in kept] == ["a"] and dropped == 1


def _chunk(rid: str, score: float, when: str, text: str) -> Candidate:
    record = Record.build(
        kind=RecordKind.DOC_CHUNK, title=rid, text=text,
        provenance=Provenance(kind=SourceKind.DOC, ref=f"src/{rid}.md#decision", uri=f"file:///src/{rid}.md",
                              mission="m", time=f"{when}T00:00:00Z"),  # type: ignore[arg-type]
        attributes={"path": f"src/{rid}.md"},
    )
    return Candidate(record_id=rid, score=score, record=record)


def test_near_duplicate_suppression_keeps_a_current_decision_over_a_newer_document_that_repeats_it() -> None:
    # adr-tools' src/init.md (2018) is the template of its ADR 0001 (2016): a copy of the decision
    # must not take the decision's place in the digest
    decision = _candidate("0001", 0.5, "2016-02-12", "We will use Architecture Decision Records", status="accepted")
    template = _chunk("init", 0.6, "2018-06-11", "We will use Architecture Decision Records, as described")
    vectors = {"0001": np.array([1, 0], np.float32), "init": np.array([0.999, 0.0447], np.float32)}
    kept, dropped = suppress_near_duplicates([template, decision], vectors, 0.97)
    assert [c.record_id for c in kept] == ["0001"] and dropped == 1
    assert kept[0].score == 0.6


def test_near_duplicate_suppression_keeps_a_newer_document_over_a_superseded_decision_it_repeats() -> None:
    decision = _candidate("0001", 0.5, "2016-02-12", "same text", status="superseded", superseded_by=["0002"])
    document = _chunk("guide", 0.4, "2018-06-11", "same text")
    kept, dropped = suppress_near_duplicates([decision, document], {}, 0.97)
    assert [c.record_id for c in kept] == ["guide"] and dropped == 1
