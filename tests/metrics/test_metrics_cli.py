"""``mission-memory metrics ...`` through CliRunner, and once through the installed console script."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from transcript_builder import Scenario
from typer.testing import CliRunner

from mission_memory.cli.metrics_commands import app
from mission_memory.corrections.detector import detect_transcript_corrections
from mission_memory.metrics.transcript_sessions import read_sessions

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_sessions_json_has_sessions_and_summary(scenario_2x: Scenario, scenario_1x: Scenario) -> None:
    result = run("sessions", str(scenario_2x.root), str(scenario_1x.root), "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [(s["session_id"], s["T"], s["K"]) for s in payload["sessions"]] == [
        ("sess-2x", 30003, 4),
        ("sess-old", 2500, 2),
    ]
    assert payload["summary"]["N"] == 2
    assert payload["summary"]["T"]["median"] == pytest.approx(16251.5)
    assert payload["summary"]["read"]["truncated_last_lines"] == 1
    assert payload["summary"]["read"]["unknown_types"] == {"agent-telemetry-xyz": 1}
    assert payload["summary"]["options"] == {"init_boundary": "first-edit", "include_subagents": False}


def test_sessions_options_change_the_initialization_boundary_and_scope(scenario_2x: Scenario) -> None:
    result = run(
        "sessions", str(scenario_2x.root), "--json", "--include-subagents", "--init-boundary", "session"
    )
    session = json.loads(result.stdout)["sessions"][0]
    # whole session, subagents included: 4 main init reads + test_client.py + 2 subagent reads
    assert session["K"] == 7


def test_sessions_csv_has_one_row_per_session(scenario_2x: Scenario, scenario_1x: Scenario) -> None:
    result = run("sessions", str(scenario_2x.root), str(scenario_1x.root), "--csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["session_id"], r["T"], r["K"], r["W"]) for r in rows] == [
        ("sess-2x", "30003", "4", str(2 / 3)),
        ("sess-old", "2500", "2", "0.5"),
    ]


def test_sessions_table_shows_t_k_w_and_the_summary(scenario_2x: Scenario) -> None:
    result = run("sessions", str(scenario_2x.root))
    assert result.exit_code == 0, result.output
    assert "30,003" in result.stdout
    assert "67%" in result.stdout
    assert "truncated" in result.stdout


def test_sessions_plot_writes_a_png(scenario_2x: Scenario, scenario_1x: Scenario, tmp_path: Path) -> None:
    target = tmp_path / "tw.png"
    result = run("sessions", str(scenario_2x.root), str(scenario_1x.root), "--plot", str(target), "--json")
    assert result.exit_code == 0, result.output
    assert target.read_bytes().startswith(PNG_MAGIC)


def test_json_and_csv_together_are_refused(scenario_2x: Scenario) -> None:
    result = run("sessions", str(scenario_2x.root), "--json", "--csv")
    assert result.exit_code == 1
    assert "--json and --csv" in result.stderr


def test_a_missing_path_is_reported_as_an_error_naming_it(tmp_path: Path) -> None:
    result = run("sessions", str(tmp_path / "no-such-folder"))
    assert result.exit_code == 1
    assert "Error:" in result.stderr
    assert "no-such-folder" in result.stderr


def test_a_file_that_is_not_a_transcript_is_not_a_session(scenario_2x: Scenario, tmp_path: Path) -> None:
    """A binary file given by mistake was counted as one session with K = 0 ("100 % of sessions with
    no read during initialization"), exit 0."""
    import os

    blob = tmp_path / "blob.bin"
    blob.write_bytes(os.urandom(20_000))
    alone = run("sessions", str(blob))
    assert alone.exit_code == 1
    assert "no Claude Code transcript" in alone.stderr and "blob.bin" in alone.stderr
    mixed = run("sessions", str(scenario_2x.root), str(blob), "--json")
    assert mixed.exit_code == 0, mixed.output
    payload = json.loads(mixed.stdout)
    assert payload["summary"]["N"] == 1
    assert payload["summary"]["read"]["not_transcripts"] == [str(blob.resolve())]
    table = run("sessions", str(scenario_2x.root), str(blob))
    assert "1 files that are not transcripts" in " ".join(table.stdout.split())


def test_an_unknown_initialization_boundary_is_refused(scenario_2x: Scenario) -> None:
    result = run("sessions", str(scenario_2x.root), "--init-boundary", "whenever")
    assert result.exit_code == 1
    assert "whenever" in result.stderr


def test_growth_json_gives_versions_slope_r2_and_sizes(
    make_git_repo: Callable[[str], Any], tmp_path: Path
) -> None:
    repo = make_git_repo("proj")
    repo.commit("a", date="2025-01-01T00:00:00+00:00", files={"CLAUDE.md": "x" * 1000})
    repo.commit("b", date="2025-01-11T00:00:00+00:00", files={"CLAUDE.md": "x" * 3000})
    plot = tmp_path / "growth.png"
    result = run("growth", str(repo.root), "--json", "--plot", str(plot))
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["chars_per_day"] == pytest.approx(200.0)
    assert payload["r2"] == pytest.approx(1.0)
    assert (payload["first_chars"], payload["last_chars"]) == (1000, 3000)
    assert [v["chars"] for v in payload["versions"]] == [1000, 3000]
    assert plot.read_bytes().startswith(PNG_MAGIC)


def test_growth_table_reports_the_slope(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("proj2")
    repo.commit("a", date="2025-01-01T00:00:00+00:00", files={"AGENTS.md": "x" * 10})
    repo.commit("b", date="2025-01-03T00:00:00+00:00", files={"AGENTS.md": "x" * 30})
    result = run("growth", str(repo.root), "--path", "AGENTS.md")
    assert result.exit_code == 0, result.output
    assert "10.0 chars/day" in result.stdout


def test_growth_of_a_folder_outside_git_is_an_error(tmp_path: Path) -> None:
    result = run("growth", str(tmp_path))
    assert result.exit_code == 1
    assert "not a git repository" in result.stderr


def test_compare_reports_every_metric_for_two_groups(scenario_2x: Scenario, scenario_1x: Scenario) -> None:
    result = run(
        "compare",
        "--a",
        str(scenario_2x.root),
        "--b",
        str(scenario_1x.root),
        "--label-a",
        "big",
        "--label-b",
        "small",
        "--json",
        "--resamples",
        "200",
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["a"] == {"label": "big", "N": 1}
    assert payload["metrics"]["T"]["median_difference"]["estimate"] == 30003 - 2500
    assert payload["metrics"]["T"]["hedges_g"] is None  # one session per group: no effect size


def test_compare_table_renders(scenario_2x: Scenario, scenario_1x: Scenario) -> None:
    result = run("compare", "--a", str(scenario_2x.root), "--b", str(scenario_1x.root), "--resamples", "50")
    assert result.exit_code == 0, result.output
    assert "rounds" in result.stdout


def test_corrections_json_lists_structured_events(scenario_corrections: Scenario) -> None:
    result = run("corrections", str(scenario_corrections.root), "--json")
    assert result.exit_code == 0, result.output
    events = json.loads(result.stdout)["corrections"]
    assert [e["kind"] for e in events][:2] == ["tool-rejected", "redirecting-prompt"]
    # the merged detector of `corrections import` (corrections/detector.py): class, category, outcome
    assert set(events[0]) == {"id", "session_id", "time", "kind", "category", "outcome", "tool", "components"}
    assert (events[0]["category"], events[0]["outcome"], events[0]["tool"]) == ("file-edit", "rejected", "Edit")
    sessions, _ = read_sessions([scenario_corrections.root])
    merged = [d for s in sessions for d in detect_transcript_corrections(s, known_component=lambda _: False)]
    assert [e["kind"] for e in events] == [d.correction_class for d in merged]
    assert "SECRET" not in result.stdout


def test_corrections_table_renders(scenario_corrections: Scenario) -> None:
    result = run("corrections", str(scenario_corrections.root))
    assert result.exit_code == 0, result.output
    assert "tool-rejected" in result.stdout


@pytest.mark.skipif(
    shutil.which("mission-memory", path=str(Path(sys.executable).parent)) is None,
    reason="console script not installed in this environment",
)
def test_installed_console_script_measures_sessions(scenario_2x: Scenario) -> None:
    script = shutil.which("mission-memory", path=str(Path(sys.executable).parent))
    assert script is not None
    done = subprocess.run(
        [script, "metrics", "sessions", str(scenario_2x.root), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sessions"][0]["T"] == 30003


def test_sessions_plot_works_when_no_session_has_a_w(scenario_corrections: Scenario, tmp_path: Path) -> None:
    target = tmp_path / "empty-w.png"
    result = run("sessions", str(scenario_corrections.root), "--plot", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_bytes().startswith(PNG_MAGIC)


def test_a_plot_into_a_missing_folder_is_an_error_naming_the_file(
    scenario_2x: Scenario, tmp_path: Path
) -> None:
    result = run("sessions", str(scenario_2x.root), "--plot", str(tmp_path / "missing" / "t.png"))
    assert result.exit_code == 1
    assert "t.png" in result.stderr
