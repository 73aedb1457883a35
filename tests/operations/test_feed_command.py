"""``mission-memory feed``: JSON Lines and CSV events from files and standard input, with clear errors
naming the line and field, and nothing stored from a bad batch (issue 10 item 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.domain_events import MAX_EVENT_BATCH_BYTES
from mission_memory.records import RecordKind
from tests.operations.event_factory import T0, event

runner = CliRunner()


def _events_stored(mission: str = "ops") -> int:
    with Memory.open() as memory:
        return memory.store.count_kind(mission, RecordKind.DOMAIN_EVENT.value)


def _jsonl(*events: dict[str, object]) -> str:
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)


def test_feed_stores_a_jsonl_file_embeds_it_and_reports_the_escalation(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(_jsonl(event(1, T0, text="Обстріл позицій у секторі Північ", sector="північ"), event(2, T0)), encoding="utf-8")
    result = runner.invoke(app, ["feed", str(path), "--mission", "ops", "--now", T0.isoformat(), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["added"], data["embedded"], data["escalation"]["mode"]) == (2, 2, "normal")
    assert _events_stored() == 2


def test_feed_reads_csv_from_standard_input(tmp_path: Path) -> None:
    rows = "id,time,sector,type,criticality,text,caused_by\n" + "".join(
        f"c{i},{T0.isoformat()},south,ew_jamming,0.7,Придушення GPS-сигналу №{i},c0\n" for i in range(1, 4)
    )
    result = runner.invoke(app, ["feed", "-", "--mission", "ops", "--no-embed"], input=rows)
    assert result.exit_code == 0, result.output
    assert "Stored 3 new" in result.output and "0 records embedded" in result.output
    assert _events_stored() == 3


def test_broken_json_names_the_line_and_stores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(_jsonl(event(1, T0)) + '{"id": "x", "time": \n', encoding="utf-8")
    result = runner.invoke(app, ["feed", str(path), "--mission", "ops"])
    assert result.exit_code == 1
    assert "events.jsonl line 2: not valid JSON" in result.output
    assert _events_stored() == 0


def test_an_unknown_csv_column_and_an_out_of_range_criticality_are_named(tmp_path: Path) -> None:
    unknown = tmp_path / "a.csv"
    unknown.write_text(f"id,time,sector,type,criticality,text,colour\nx,{T0.isoformat()},s,t,0.5,txt,red\n")
    result = runner.invoke(app, ["feed", str(unknown), "--mission", "ops"])
    assert result.exit_code == 1 and "unknown column 'colour'" in result.output
    out_of_range = tmp_path / "b.csv"
    out_of_range.write_text(f"id,time,sector,type,criticality,text\nx,{T0.isoformat()},s,t,0.5,ok\ny,{T0.isoformat()},s,t,7,bad\n")
    result = runner.invoke(app, ["feed", str(out_of_range), "--mission", "ops"])
    assert result.exit_code == 1
    assert "b.csv line 3: criticality: Input should be less than or equal to 1" in result.output
    assert _events_stored() == 0


def test_an_unterminated_quote_in_csv_is_an_error_and_a_folder_is_not_a_file(tmp_path: Path) -> None:
    broken = tmp_path / "c.csv"
    broken.write_text(
        f"id,time,sector,type,criticality,text\nx,{T0.isoformat()},s,t,0.5,\"never closed\n"
        f"y,{T0.isoformat()},s,t,0.5,ok\n"
    )
    result = runner.invoke(app, ["feed", str(broken), "--mission", "ops"])
    assert result.exit_code == 1 and "c.csv line 2: not valid CSV" in " ".join(result.output.split())
    result = runner.invoke(app, ["feed", str(tmp_path), "--mission", "ops"])
    assert result.exit_code == 1 and "is a folder" in result.output
    assert _events_stored() == 0


def test_a_ten_megabyte_file_is_refused_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    line = json.dumps(event(1, T0, text="x" * 10_000)) + "\n"
    path.write_text(line * (10_000_000 // len(line) + 1))
    result = runner.invoke(app, ["feed", str(path), "--mission", "ops"])
    assert result.exit_code == 1
    assert f"larger than the {MAX_EVENT_BATCH_BYTES:,} bytes accepted in one batch" in result.output
    assert _events_stored() == 0


def test_an_oversize_file_is_refused_with_its_real_size_and_a_stream_with_a_lower_bound(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    line = json.dumps(event(1, T0, text="x" * 1_000)) + "\n"
    body = (line * (6_000_120 // len(line) + 1)).encode("utf-8")[:6_000_119] + b"\n"
    path.write_bytes(body)
    assert path.stat().st_size == 6_000_120
    result = runner.invoke(app, ["feed", str(path), "--mission", "ops"])
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert f"{path}: 6,000,120 bytes is larger than the {MAX_EVENT_BATCH_BYTES:,} bytes accepted" in said, said
    # a stream has no size to state: it says it read past the limit, not a size it never read
    result = runner.invoke(app, ["feed", "-", "--mission", "ops"], input=body)
    said = " ".join(result.output.split())
    assert result.exit_code == 1
    assert f"<stdin>: more than {MAX_EVENT_BATCH_BYTES:,} bytes (the most accepted in one batch)" in said, said
    assert _events_stored() == 0


def test_a_missing_file_is_named() -> None:
    result = runner.invoke(app, ["feed", "no-such.jsonl"])
    assert result.exit_code == 1 and "no-such.jsonl: no such file" in result.output


def test_the_console_script_feeds_standard_input(data_dir: Path) -> None:
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    done = subprocess.run(
        [sys.executable, "-m", "mission_memory", "feed", "-", "--mission", "ops", "--no-embed", "--json"],
        input=_jsonl(*(event(i, T0) for i in range(5))), capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["added"] == 5
    assert _events_stored() == 5


def test_the_escalation_line_shows_times_to_the_second(tmp_path: Path) -> None:
    """``since 2026-12-03T14:56:29.895370+00:00`` was printed with microseconds and an offset."""
    from datetime import timedelta

    from tests.operations.event_factory import burst

    path = tmp_path / "flood.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in burst(40, T0, criticality=0.8)), encoding="utf-8")
    result = runner.invoke(app, ["feed", str(path), "--mission", "ops", "--no-embed",
                                 "--now", (T0 + timedelta(seconds=1)).isoformat()])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("Escalation: degraded"))
    assert " · since " in line and line.endswith(" UTC") and "+00:00" not in line, line
