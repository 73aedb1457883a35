"""A redirected ingest is not silent: plain progress lines with rate and ETA, the costliest folders at the
end, ``--include``/``--exclude`` on the command line (issue 12 items 4 and 6, ADR 0035)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.cli.progress_lines import ProgressLines, format_eta, observed_eta

runner = CliRunner()


class SteppedClock:
    """A clock the test advances by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_lines_carry_done_total_rate_and_eta() -> None:
    out, clock = io.StringIO(), SteppedClock()
    progress = ProgressLines(out, every_items=100, every_seconds=10, clock=clock)
    progress("embed", 0, 400)
    clock.now += 5
    progress("embed", 50, 400)  # neither 100 items nor 10 s since the last line: quiet
    clock.now += 5
    progress("embed", 100, 400)
    clock.now += 20
    progress("embed", 400, 400)
    assert out.getvalue().splitlines() == [
        "embed records: 0/400 (0%)",
        "embed records: 100/400 (25%) · 10.0/s · ETA 30 s",
        "embed records: 400/400 (100%) · 14.0/s · done in 30 s",  # 350 items in the 25 s after the first batch
    ]


def test_a_one_step_phase_prints_no_rate() -> None:
    """``index`` is one step (``0/1`` then ``1/1``): a rate such as ``4891.3/s`` would be noise."""
    out, clock = io.StringIO(), SteppedClock()
    progress = ProgressLines(out, clock=clock)
    progress("index", 0, 1)
    clock.now += 0.0002
    progress("index", 1, 1)
    clock.now += 7
    progress("other", 0, 1)
    clock.now += 7
    progress("other", 1, 1)
    assert out.getvalue().splitlines() == [
        "prepare search indexes: 0/1 (0%)",
        "prepare search indexes: 1/1 (100%) · done in 0 s",
        "other: 0/1 (0%)",
        "other: 1/1 (100%) · done in 7 s",
    ]


def test_a_slow_phase_still_prints_every_interval() -> None:
    out, clock = io.StringIO(), SteppedClock()
    progress = ProgressLines(out, every_items=1000, every_seconds=10, clock=clock)
    progress("embed", 0, 5000)
    for done in range(1, 4):
        clock.now += 11
        progress("embed", done, 5000)
    lines = out.getvalue().splitlines()
    assert len(lines) == 4
    assert lines[-1] == "embed records: 3/5000 (0%) · 0.1/s · ETA 15 h 16 min"  # 4,997 left at 3 per 33 s


def test_the_eta_comes_from_the_rate_after_the_first_batch_not_the_start_up() -> None:
    """Issue 34: the first batch carries the embedder's start-up (80 s for 64 records here), the rest
    run at 4 records/s. The first estimate counted the start-up and said 22 min 24 s for 7 min 28 s of work."""
    out, clock = io.StringIO(), SteppedClock()
    progress = ProgressLines(out, every_items=64, every_seconds=600, clock=clock)
    progress("embed", 0, 1920)
    clock.now += 80
    progress("embed", 64, 1920)
    clock.now += 16
    progress("embed", 128, 1920)
    clock.now += 16
    progress("embed", 192, 1920)
    assert out.getvalue().splitlines() == [
        "embed records: 0/1920 (0%)",
        "embed records: 64/1920 (3%) · ETA …",  # one batch: no rate to go by yet
        "embed records: 128/1920 (6%) · 4.0/s · ETA 7 min 28 s",  # 1,792 left at 4 per second
        "embed records: 192/1920 (10%) · 4.0/s · ETA 7 min 12 s",
    ]


def test_observed_eta_counts_only_the_batches_after_the_first() -> None:
    assert observed_eta(None, 64, 640, 140.0) is None
    assert observed_eta((64, 140.0), 64, 640, 150.0) is None  # no batch since the first
    assert observed_eta((64, 140.0), 128, 640, 160.0) == (3.2, 160.0)  # 64 in 20 s; 512 left
    assert observed_eta((64, 140.0), 640, 640, 300.0) == (3.6, 0.0)


def test_eta_is_written_in_seconds_minutes_or_hours() -> None:
    assert [format_eta(s) for s in (-3, 42.4, 185, 3720)] == ["0 s", "42 s", "3 min 05 s", "1 h 02 min"]


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    for name, text in {
        "README.md": "# Notes\n\nWhat this is.\n",
        "diary/day1.md": "# Day 1\n\nStarted.\n",
        "diary/day2.md": "# Day 2\n\nContinued.\n",
        "docs/setup.md": "# Setup\n\nInstall it.\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_ingest_into_a_pipe_prints_plain_progress_and_the_costliest_folders(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", str(_folder(tmp_path))])
    assert result.exit_code == 0, result.output
    assert "read files: 3/3 (100%)" in result.stderr or "read files: 4/4 (100%)" in result.stderr
    assert "embed records: 4/4 (100%)" in result.stderr and "done in" in result.stderr
    assert "Costliest folders" in result.stdout
    assert "  diary: 2 records, 2 embedded," in result.stdout


def test_ingest_json_with_include_and_exclude_reports_folders(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["ingest", str(_folder(tmp_path)), "--json", "--include", "*.md", "--exclude", "diary/day2.md"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {row["folder"]: row["records"] for row in data["folders"]} == {"(root)": 1, "diary": 1, "docs": 1}
    assert "embed records: 3/3 (100%)" in result.stderr


def test_a_bad_glob_is_an_error_naming_it(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", str(_folder(tmp_path)), "--exclude", " "])
    assert result.exit_code == 1
    assert "--exclude glob ' ' is empty" in result.stderr


def _interruptible() -> None:
    """In the child before exec: SIGINT back to its default, so Python installs its Ctrl-C handler even
    when this test runs where SIGINT is ignored (a shell's background job ignores it, and its children
    inherit that: the ingest then finished rc 0 after the signal)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_an_ingest_says_how_to_continue_and_a_rerun_finishes(tmp_path: Path) -> None:
    """Ctrl-C while an ingest has embedded its first batch and waits to store it: exit 130, how to
    continue, nothing half-stored, and the same command run again finishes.

    The interrupt lands at a point the test holds, not at a moment it hopes for: another process holds
    the store's write lock, so the ingest, once its first batch is embedded, waits to write it and says
    so on stderr; the test sends SIGINT then, and the ingest acts on it within seconds (SQLite's 30 s busy
    wait held it before). Sending it as soon as ``embed records: 0/48`` appeared
    raced the embedder: on a loaded machine the ingest had finished before the signal arrived (rc 0)."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    from mission_memory.api import Memory
    from mission_memory.config import load_settings

    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(48):
        body = " ".join(f"Shift note {i} line {j}: the relay in sector {j % 7} was checked." for j in range(24))
        (folder / f"note-{i:03}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    data = tmp_path / "data"
    with Memory.open(load_settings(data_dir=data)):
        pass  # the store and its schema exist before the lock is taken
    env = {**os.environ, "MISSION_MEMORY_DATA_DIR": str(data)}
    command = [sys.executable, "-m", "mission_memory", "ingest", str(folder)]
    holder = sqlite3.connect(data / "memory.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=_interruptible)
        assert process.stderr is not None
        seen = []
        for line in process.stderr:  # progress lines and the lock notice go to stderr, plain when piped
            seen.append(line)
            if "waiting for the write lock" in line:
                break
        assert any(line.startswith("embed records: 0/") for line in seen), seen
        process.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        _, rest = process.communicate(timeout=120)
        acted_in = time.monotonic() - interrupted
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    stderr = "".join(seen) + rest
    assert process.returncode == 130, stderr
    assert "Interrupted" in stderr and "re-run the same command" in stderr and "Traceback" not in stderr
    assert acted_in < 10, acted_in  # not the 30 s of one SQLite busy wait
    with Memory.open(load_settings(data_dir=data)) as memory:
        assert memory.status()["records"] == 0  # the batch whose write was interrupted is not half there
    rerun = subprocess.run([*command, "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["mission"] == "notes"
    assert report["added"] >= 48 and report["unchanged"] == 0 and not report["failures"], report


def test_the_terminal_bar_has_an_eta_from_the_second_embedded_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bar's estimate comes from the batches after the first, whose 40 s carry the start-up (issue 34):
    64 records in the next 20 s give 3.2 records/s. rich's own column, which keeps only its last 30 s of
    samples, showed ``ETA -:--:--`` for half an hour (issue 21)."""
    from rich.console import Console

    from mission_memory.cli import progress_lines

    clock = SteppedClock()
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=160, color_system=None, get_time=clock)
    monkeypatch.setattr(progress_lines, "err_console", terminal)
    with progress_lines.progress_display(True) as update:
        update("embed", 0, 640)
        clock.now += 40
        update("embed", 64, 640)
        clock.now += 20
        update("embed", 128, 640)  # 512 left at 64 per 20 s: 2 min 40 s
    frames = screen.getvalue()
    assert "128/640" in frames
    assert "ETA 2 min 40 s" in frames and "ETA 4 min" not in frames  # not 512 at 128 per 60 s
    assert "-:--:--" not in frames
