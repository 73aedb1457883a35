"""``feed`` refuses what would mislead: a mission it would start by accident (a defaulted folder
name, a name one typo from a stored one), an empty file or standard input, and text that is neither
JSON nor CSV; it reads a JSON array of events and stamps ``--operator`` on events naming nobody.
Each refusal names the input and stores nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.records import RecordKind
from tests.operations.event_factory import T0, event

runner = CliRunner()


def _jsonl(*events: dict[str, object]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def _missions() -> dict[str, int]:
    with Memory.open() as memory:
        return memory.store.missions()


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text(_jsonl(event(1, T0), event(2, T0)), encoding="utf-8")
    assert runner.invoke(app, ["feed", str(path), "--mission", "shop", "--no-embed"]).exit_code == 0
    return path


def test_a_name_one_typo_from_a_stored_mission_is_refused_unless_new_mission_says_so(shop: Path) -> None:
    result = runner.invoke(app, ["feed", str(shop), "--mission", "shpo", "--no-embed"])
    assert result.exit_code == 1
    assert "no mission named 'shpo' is stored" in result.stderr and "did you mean 'shop'" in result.stderr
    assert "--new-mission" in result.stderr
    assert set(_missions()) == {"shop"}
    started = runner.invoke(app, ["feed", str(shop), "--mission", "shpo", "--new-mission", "--no-embed"])
    assert started.exit_code == 0, started.output
    assert set(_missions()) == {"shop", "shpo"}


@pytest.mark.parametrize("typo", ["opx", "osp", "pos"])
def test_a_short_name_one_edit_from_a_stored_mission_is_refused(tmp_path: Path, typo: str) -> None:
    """``ops`` stored: ``opx`` and ``osp`` were started as missions of their own (difflib's ratio of
    two three-letter names one letter apart is 0.67, under the 0.75 it required)."""
    path = tmp_path / "events.jsonl"
    path.write_text(_jsonl(event(1, T0)), encoding="utf-8")
    assert runner.invoke(app, ["feed", str(path), "--mission", "ops", "--no-embed"]).exit_code == 0
    result = runner.invoke(app, ["feed", str(path), "--mission", typo, "--no-embed"])
    assert result.exit_code == 1, result.output
    assert f"no mission named '{typo}' is stored" in result.stderr
    assert set(_missions()) == {"ops"}


def test_a_defaulted_mission_that_is_not_stored_is_refused(shop: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "some-folder"
    folder.mkdir()
    monkeypatch.chdir(folder)
    result = runner.invoke(app, ["feed", str(shop), "--no-embed"])
    assert result.exit_code == 1
    assert "'some-folder'" in result.stderr and "--mission" in result.stderr
    assert set(_missions()) == {"shop"}


def test_an_explicit_new_name_far_from_the_stored_ones_starts_its_mission(shop: Path) -> None:
    result = runner.invoke(app, ["feed", str(shop), "--mission", "north-centre", "--no-embed"])
    assert result.exit_code == 0, result.output
    assert "Started new mission 'north-centre'" in result.stdout


def test_an_empty_file_and_empty_standard_input_are_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n \n", encoding="utf-8")
    result = runner.invoke(app, ["feed", str(empty), "--mission", "ops"])
    assert result.exit_code == 1 and "empty.jsonl holds no events" in result.stderr
    result = runner.invoke(app, ["feed", "-", "--mission", "ops"], input="")
    assert result.exit_code == 1 and "<stdin> holds no events" in result.stderr
    assert _missions() == {}


def test_plain_text_is_named_as_neither_format_and_a_json_array_is_read(tmp_path: Path) -> None:
    result = runner.invoke(app, ["feed", "-", "--mission", "ops"], input="Pump P-3 stalled at 12:00\n")
    assert result.exit_code == 1
    assert "<stdin> is neither JSON Lines nor CSV" in result.stderr and "--format" in result.stderr
    array = json.dumps([event(1, T0), event(2, T0)], indent=2)
    fed = runner.invoke(app, ["feed", "-", "--mission", "ops", "--no-embed", "--json"], input=array)
    assert fed.exit_code == 0, fed.output
    assert json.loads(fed.stdout)["added"] == 2
    broken = json.dumps([event(1, T0), {**event(2, T0), "criticality": 3}])
    bad = runner.invoke(app, ["feed", "-", "--mission", "ops", "--no-embed"], input=broken)
    assert bad.exit_code == 1 and "<stdin> item 2: criticality" in bad.stderr


def test_operator_is_stamped_on_events_that_name_nobody(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(_jsonl(event(1, T0), event(2, T0, operator="dana")), encoding="utf-8")
    result = runner.invoke(app, ["feed", str(path), "--mission", "ops", "--operator", "alice", "--no-embed"])
    assert result.exit_code == 0, result.output
    with Memory.open() as memory:
        stored = memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="ops", limit=10)
    assert sorted(r.operator or "" for r in stored) == ["alice", "dana"]


def test_the_operator_defaults_to_mission_memory_operator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(_jsonl(event(1, T0)), encoding="utf-8")
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice")
    result = runner.invoke(app, ["feed", str(path), "--mission", "ops", "--no-embed"])
    assert result.exit_code == 0, result.output
    with Memory.open() as memory:
        (stored,) = memory.store.records_of_kind([RecordKind.DOMAIN_EVENT.value], mission="ops", limit=10)
    assert stored.operator == "alice"
