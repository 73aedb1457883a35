"""Rotation in the metrics: sessions right after an operator change against same-operator sessions."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from transcript_builder import TranscriptWriter, text, usage
from typer.testing import CliRunner

from mission_memory.cli.metrics_commands import app
from mission_memory.errors import InputError
from mission_memory.metrics.rotation import (
    compare_rotation,
    load_operator_mapping,
    operators_from_prompts,
    split_by_rotation,
)
from mission_memory.metrics.session_metrics import SessionMetrics

DAY0 = datetime(2025, 10, 1, 9, 0, tzinfo=UTC)
BASE = SessionMetrics(
    session_id="s", path="/x/s.jsonl", subagent_paths=(), start=None, end=None, T=0, K=0, W=None,
    init_ended_by_edit=True, api_calls=1, subagent_api_calls=0, input_tokens=0, cache_read_input_tokens=0,
    output_tokens=0, rounds=0, init_files_read=(), files_read=(), files_edited=(),
)


def session(sid: str, day: int, rounds: int) -> SessionMetrics:
    return replace(BASE, session_id=sid, start=DAY0 + timedelta(days=day), rounds=rounds)


def test_a_session_counts_as_after_rotation_only_when_the_previous_operator_on_its_mission_differs() -> None:
    sessions = [session("a1", 0, 3), session("a2", 1, 4), session("b1", 2, 9), session("b2", 3, 5),
                session("x1", 0, 2), session("x2", 5, 2)]
    operators = {"a1": "alice", "a2": "alice", "b1": "bob", "b2": "bob", "x1": "bob", "x2": "bob"}
    missions = {"a1": "/repo", "a2": "/repo", "b1": "/repo", "b2": "/repo", "x1": "/other", "x2": "/other"}

    split = split_by_rotation(sessions, operators, missions)

    assert [s.session_id for s in split.after_rotation] == ["b1"]
    assert sorted(s.session_id for s in split.same_operator) == ["a2", "b2", "x2"]
    assert sorted(split.first_of_mission) == ["a1", "x1"]
    assert split.rotations == (("/repo", "alice", "bob", "b1"),)


def test_sessions_without_an_operator_or_a_time_are_left_out_and_counted() -> None:
    sessions = [session("a1", 0, 3), session("u1", 1, 3), replace(BASE, session_id="t0")]
    split = split_by_rotation(sessions, {"a1": "alice", "t0": "alice"}, {})
    assert split.unknown_operator == ("u1",)
    assert split.no_start == ("t0",)
    assert split.after_rotation == () and split.same_operator == ()


def test_comparing_reports_the_rounds_cost_of_rotation() -> None:
    sessions = [session(f"s{i}", i, r) for i, r in enumerate([3, 9, 4, 3, 10, 4, 3, 8])]
    operators = dict(zip([s.session_id for s in sessions], ["a", "b", "b", "b", "a", "a", "a", "b"], strict=True))
    split = split_by_rotation(sessions, operators, {})
    comparison = compare_rotation(split, n_resamples=200)
    rounds = {m.metric: m for m in comparison.metrics}["rounds"]
    assert (comparison.n_a, comparison.n_b) == (3, 4)
    assert rounds.a.median == 9.0 and rounds.b.median == 3.5
    assert rounds.median_change == pytest.approx(9.0 / 3.5 - 1)


def test_comparing_without_a_rotation_says_how_many_sessions_each_side_had() -> None:
    split = split_by_rotation([session("a", 0, 1), session("b", 1, 1)], {"a": "x", "b": "x"}, {})
    with pytest.raises(InputError, match="0 right after an operator change, 1 with the same operator"):
        compare_rotation(split)


def test_operator_mapping_reads_json_csv_and_tsv_and_names_a_bad_line(tmp_path: Path) -> None:
    as_json = tmp_path / "ops.json"
    as_json.write_text(json.dumps({"s1": "alice", "s2": "богдан"}), encoding="utf-8")
    assert load_operator_mapping(as_json) == {"s1": "alice", "s2": "богдан"}
    as_csv = tmp_path / "ops.csv"
    as_csv.write_text("session_id,operator\ns1,alice\n\ns2,bob\n", encoding="utf-8")
    assert load_operator_mapping(as_csv) == {"s1": "alice", "s2": "bob"}
    as_tsv = tmp_path / "ops.tsv"
    as_tsv.write_text("s1\talice\n", encoding="utf-8")
    assert load_operator_mapping(as_tsv) == {"s1": "alice"}
    bad = tmp_path / "bad.csv"
    bad.write_text("s1,alice\ns2\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 2"):
        load_operator_mapping(bad)


def test_operators_from_prompts_take_each_sessions_most_frequent_operator() -> None:
    class Prompt:
        def __init__(self, session_id: str | None, operator: str | None) -> None:
            self.session_id, self.operator = session_id, operator

    prompts = [Prompt("s1", "alice"), Prompt("s1", "alice"), Prompt("s1", "bob"), Prompt(None, "x"), Prompt("s2", None)]
    assert operators_from_prompts(prompts) == {"s1": "alice"}


def write_session(root: Path, sid: str, start: datetime, prompts: int) -> None:
    writer = TranscriptWriter(root / f"{sid}.jsonl", sid, start=start)
    for i in range(prompts):
        writer.prompt(f"step {i}")
        writer.call(f"msg_{sid}_{i}", [text("ok")], usage(10, 100, 1000))
    writer.write()


def test_metrics_rotation_command_compares_real_transcripts_with_an_operator_file(tmp_path: Path) -> None:
    root = tmp_path / "projects" / "-repo"
    plan = [("s0", "alice", 2), ("s1", "alice", 2), ("s2", "bob", 6), ("s3", "bob", 3), ("s4", "alice", 7),
            ("s5", "alice", 2)]
    for day, (sid, _, prompts) in enumerate(plan):
        write_session(root, sid, DAY0 + timedelta(days=day), prompts)
    mapping = tmp_path / "operators.csv"
    mapping.write_text("".join(f"{sid},{op}\n" for sid, op, _ in plan), encoding="utf-8")

    result = CliRunner().invoke(app, ["rotation", str(tmp_path / "projects"), "--operators", str(mapping),
                                      "--json", "--resamples", "200"])

    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["split"]["after_rotation"] == 2
    assert payload["split"]["same_operator"] == 3
    assert [r["session_id"] for r in payload["split"]["rotations"]] == ["s2", "s4"]
    assert payload["comparison"]["metrics"]["rounds"]["a"]["median"] == 6.5
    assert payload["comparison"]["metrics"]["rounds"]["b"]["median"] == 2.0


def test_metrics_rotation_without_any_operator_source_says_how_to_give_one(tmp_path: Path) -> None:
    root = tmp_path / "projects" / "-repo"
    write_session(root, "s0", DAY0, 1)
    result = CliRunner().invoke(app, ["rotation", str(root)])
    assert result.exit_code == 1
    assert "--operators" in result.output
