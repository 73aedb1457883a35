"""T, K, W per session, worked out by hand from the fixtures in conftest.py, and their aggregates."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_builder import Scenario, TranscriptWriter, tool, usage

from mission_memory.metrics.session_metrics import (
    InitBoundary,
    MetricsOptions,
    SessionMetrics,
    measure_session,
    measure_sessions,
    summarize_sessions,
)
from mission_memory.metrics.transcript_sessions import read_sessions


def measure_one(path: Path, options: MetricsOptions | None = None) -> SessionMetrics:
    sessions, _ = read_sessions([path])
    assert len(sessions) == 1
    return measure_session(sessions[0], options)


def test_t_is_the_first_main_call_input_plus_cache_creation_plus_cache_read(scenario_2x: Scenario) -> None:
    # msg_A1: input 3 + cache creation 12,000 + cache read 18,000 (repeated on 3 records, counted once)
    assert measure_one(scenario_2x.root).T == 3 + 12_000 + 18_000


def test_k_counts_read_calls_before_the_first_file_modifying_call(scenario_2x: Scenario) -> None:
    # main: A1 reads README + client.py, A2 reads notes.md + client.py again; A4's Edit ends init;
    # A5's read of test_client.py is after it. The subagent's reads are not the main conversation's.
    metrics = measure_one(scenario_2x.root)
    assert metrics.K == 4
    assert metrics.init_ended_by_edit is True
    assert metrics.init_files_read == ("/repo/README.md", "/repo/src/client.py", "/repo/docs/notes.md")


def test_w_is_the_share_of_distinct_init_files_never_edited_or_written(scenario_2x: Scenario) -> None:
    # distinct init files: README.md, client.py, notes.md; client.py is edited later -> 2 of 3 unused
    assert pytest.approx(2 / 3) == measure_one(scenario_2x.root).W


def test_subagent_reads_count_when_asked(scenario_2x: Scenario) -> None:
    # + subagent's retry.py and README.md (both before A4): K = 6; distinct 4, unused README, notes, retry
    metrics = measure_one(scenario_2x.root, MetricsOptions(include_subagents=True))
    assert metrics.K == 6
    assert pytest.approx(3 / 4) == metrics.W


def test_session_counts_include_subagent_calls_once_each(scenario_2x: Scenario) -> None:
    metrics = measure_one(scenario_2x.root)
    assert metrics.api_calls == 8  # A1..A6 + S1, S2; the truncated msg_A7 is not a call
    assert metrics.subagent_api_calls == 2
    main_inputs = [30003, 5 + 500 + 30003, 4 + 300 + 30508, 2 + 200 + 30800, 2 + 150 + 31000, 1 + 100 + 31200]
    sub_inputs = [4 + 9000, 6 + 400 + 9000]
    assert metrics.input_tokens == sum(main_inputs) + sum(sub_inputs)
    assert metrics.output_tokens == 120 + 80 + 40 + 90 + 70 + 30 + 50 + 20
    assert metrics.rounds == 2  # the prompt to the subagent is not an operator round
    assert metrics.tools_used == {"Bash": 2, "Edit": 1, "Read": 7, "Task": 1, "Write": 1}
    assert metrics.files_edited == ("/repo/src/client.py", "/repo/tests/test_client.py")
    assert metrics.start is not None and metrics.end is not None
    assert metrics.start.isoformat() == "2025-10-10T09:00:01+00:00"


def test_older_record_shapes_give_the_same_metrics(scenario_1x: Scenario) -> None:
    # msg_B1 (legacy usage): T = 2,500. Init reads guide.md, docs/index.md (inline sidechain read of
    # a.py excluded); guide.md is edited by msg_B3 -> W = 1/2.
    metrics = measure_one(scenario_1x.root)
    assert (metrics.T, metrics.K, metrics.W) == (2500, 2, 0.5)
    assert metrics.rounds == 2
    assert metrics.api_calls == 4  # B1, B2 (inline sidechain), B3, W1 (top-level agent file)
    assert metrics.subagent_api_calls == 2
    assert metrics.session_id == "sess-old"


def test_w_is_null_when_nothing_was_read_during_initialization(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s")
    writer.prompt("write a file")
    writer.call("m1", [tool("w", "Write", file_path="/repo/a.md", content="x")], usage(1, 2, 3))
    writer.call("m2", [tool("r", "Read", file_path="/repo/a.md")], usage(1, 2, 3))
    metrics = measure_one(writer.write())
    assert (metrics.K, metrics.W) == (0, None)


def test_without_any_edit_initialization_runs_to_the_end_and_every_read_is_unused(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s")
    writer.prompt("explain the code")
    writer.call(
        "m1",
        [tool("r1", "Read", file_path="/repo/a.py"), tool("r2", "Read", file_path="/repo/b.py")],
        usage(10, 20, 30),
    )
    writer.prompt("and c.py?")
    writer.call("m2", [tool("r3", "Read", file_path="/repo/c.py")], usage(1, 2, 3))
    metrics = measure_one(writer.write())
    assert (metrics.K, metrics.W, metrics.init_ended_by_edit) == (3, 1.0, False)
    first_round = measure_one(writer.path, MetricsOptions(init_boundary=InitBoundary.FIRST_ROUND))
    assert first_round.K == 2
    assert measure_one(writer.path, MetricsOptions(init_boundary=InitBoundary.SESSION)).K == 3


def test_a_session_without_model_calls_has_no_t(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s")
    writer.prompt("hello")
    metrics = measure_one(writer.write())
    assert (metrics.T, metrics.api_calls) == (None, 0)


def test_the_set_of_modifying_tools_is_an_option(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s")
    writer.prompt("go")
    writer.call(
        "m1",
        [
            tool("r1", "Read", file_path="/repo/a.py"),
            tool("b", "Bash", command="sed -i s/x/y/ a.py"),
            tool("r2", "Read", file_path="/repo/b.py"),
        ],
        usage(1),
    )
    path = writer.write()
    assert measure_one(path).K == 2
    assert measure_one(path, MetricsOptions(modifying_tools=frozenset({"Bash"}))).K == 1


def test_summary_reports_n_median_mean_sd_and_percentiles(
    scenario_2x: Scenario, scenario_1x: Scenario
) -> None:
    sessions, _ = read_sessions([scenario_2x.root, scenario_1x.root])
    summary = summarize_sessions(measure_sessions(sessions))
    assert summary.N == 2
    assert summary.T.median == pytest.approx((30003 + 2500) / 2)
    assert summary.T.sd == pytest.approx(abs(30003 - 2500) / 2**0.5)
    assert summary.T.p10 == pytest.approx(2500 + 0.1 * (30003 - 2500))
    assert summary.W.mean == pytest.approx((2 / 3 + 0.5) / 2)
    assert summary.K_zero_share == 0.0
    assert summary.W_over_half_share == 0.5
    assert set(summary.to_dict()) == {"N", "T", "K", "W", "rounds", "K_zero_share", "W_over_half_share"}


def test_summary_of_no_sessions_is_empty_not_an_error() -> None:
    summary = summarize_sessions([])
    assert summary.N == 0
    assert summary.T.median is None
    assert summary.K_zero_share is None


def test_session_json_uses_the_papers_metric_names(scenario_2x: Scenario) -> None:
    payload = measure_one(scenario_2x.root).to_dict()
    assert {
        "session_id",
        "path",
        "start",
        "end",
        "T",
        "K",
        "W",
        "api_calls",
        "input_tokens",
        "output_tokens",
        "rounds",
        "files_read",
        "files_edited",
        "tools_used",
    } <= set(payload)
