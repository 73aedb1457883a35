"""``mission-memory correct`` and ``Memory.record_correction``: every field validated with a clear error,
nothing stored on bad input, and the same correction recorded twice stored once."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.records import RecordKind
from tests.conftest import GitRepo

VALID = [
    "correct", "--class", "missed-decision", "--category", "data", "--component", "docs",
    "--outcome", "modified", "--summary", "The ledger stays in SQLite for offline field teams",
    "--time", "2025-10-10T09:00:00+00:00",
]


@pytest.fixture
def ingested(mission_repo: GitRepo) -> GitRepo:
    with Memory.open() as memory:
        memory.ingest_repository(mission_repo.root)
    return mission_repo


def _stored() -> int:
    with Memory.open() as memory:
        return memory.store.count_kind("uploader", RecordKind.CORRECTION_PATTERN.value)


def test_a_recorded_correction_is_stored_once_however_often_it_is_recorded(ingested: GitRepo) -> None:
    runner = CliRunner()
    first = runner.invoke(app, [*VALID, "--expected", "ADR-2", "--session", "s-1", "--json"])
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["mission"] == "uploader" and data["source"] == "explicit" and data["expected"] == ["ADR-2"]
    assert data["label"]["retrieval_caused"] == "unknown"  # nothing was ever queried
    again = runner.invoke(app, [*VALID, "--expected", "ADR-2", "--session", "s-1", "--json"])
    assert json.loads(again.stdout)["correction_id"] == data["correction_id"]
    assert _stored() == 1


def test_an_adr_is_named_as_ADR_N_or_by_its_bare_number_as_decide_supersedes_accepts(ingested: GitRepo) -> None:
    from mission_memory.corrections.signal import resolve_references

    with Memory.open() as memory:
        refs = resolve_references(memory.store, "uploader", ["ADR-2", "0002", "2"])
    assert refs["ADR-2"] == refs["0002"] == refs["2"] and len(refs["2"]) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--class": "Wrong Approach"}, "class: 'Wrong Approach' is not a lower-case slug"),
        ({"--category": ""}, "category: '' is not a lower-case slug"),
        ({"--outcome": "ignored"}, "outcome 'ignored' is not one of: accepted, rejected, modified"),
        ({"--summary": "   "}, "summary: the summary is empty"),
        ({"--summary": "first line\nsecond line"}, "summary: the summary must be one line"),
        ({"--summary": "x" * 301}, "the summary has 301 characters"),
        ({"--component": "frontend"}, "no component named 'frontend' is stored (components, most records first:"),
        ({"--mission": "elsewhere"}, "no mission named 'elsewhere' is stored (missions: uploader)"),
        ({"--time": "yesterday"}, "--time 'yesterday' is not an ISO 8601 time"),
        ({"--expected": "ADR-99"}, "expected 'ADR-99' names no record stored in mission 'uploader'"),
        ({"--session": "a\tb"}, "session: 'a\\tb' must be non-empty printable text on one line"),
    ],
)
def test_bad_input_is_refused_with_a_message_naming_it_and_nothing_is_stored(
    ingested: GitRepo, change: dict[str, str], message: str
) -> None:
    arguments = list(VALID)
    for flag, value in change.items():
        if flag in arguments:
            arguments[arguments.index(flag) + 1] = value
        else:
            arguments += [flag, value]
    result = CliRunner().invoke(app, [*arguments, "--json"])
    assert result.exit_code == 1, result.output
    error = json.loads(result.stderr)
    assert message in error["error"] and error["kind"] == "InputError"
    assert _stored() == 0


def test_a_correction_before_anything_is_ingested_needs_a_mission() -> None:
    result = CliRunner().invoke(app, VALID)
    assert result.exit_code == 1
    assert "no mission is stored yet" in result.output


def test_expected_references_resolve_by_id_path_sha_and_adr_number(ingested: GitRepo) -> None:
    with Memory.open() as memory:
        decisions = memory.store.records_of_kind([RecordKind.DECISION.value], mission="uploader")
        adr2 = next(r for r in decisions if r.attributes.get("number") == 2)
        sha = ingested.git("log", "-1", "--format=%H", "--", "src/ledger.py")
        for ref in (adr2.id, "docs/adr/0002-use-sqlite-in-wal-mode.md", "ADR 0002", sha[:10]):
            correction = memory.record_correction(
                correction_class="missed-decision", category="data", outcome="modified",
                summary="The ledger stays in SQLite", expected=[ref],
            )
            assert correction.expected == (ref,)
