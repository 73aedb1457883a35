"""Non-finite and out-of-range numbers are refused with a clear error, in every option and setting.

On 6adcb71 ``prune --older-than-days nan|inf|1e12``, ``--kind heartbeat=inf`` and
``MISSION_MEMORY_EVENT_RETENTION_KINDS='{"heartbeat": 1e400}'`` (the setting the server's hourly prune
reads) ended in tracebacks (``OverflowError``, ``ValueError: cannot convert float NaN to integer``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.config import load_settings
from mission_memory.errors import ConfigError, InputError
from tests.operations.event_factory import event

runner = CliRunner()
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def stored(data_dir: Path) -> Path:
    with Memory.open() as memory:
        memory.record_events([event(1, NOW, type_="heartbeat")], "ops", embed=False, now=NOW)
    return data_dir


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e12", "-1"])
def test_prune_refuses_a_retention_that_is_not_a_finite_number_of_days_in_range(stored: Path, value: str) -> None:
    done = runner.invoke(app, ["prune", "--older-than-days", value])
    assert done.exit_code in (1, 2), done.output
    assert done.exception is None or isinstance(done.exception, SystemExit), repr(done.exception)
    assert "--older-than-days" in done.output and "Traceback" not in done.output
    assert "a finite number" in done.output or "between 0 and 36525" in done.output, done.output


@pytest.mark.parametrize("value", ["nan", "inf", "1e400", "1e12"])
def test_prune_refuses_a_kind_retention_that_is_not_finite_or_in_range(stored: Path, value: str) -> None:
    done = runner.invoke(app, ["prune", "--kind", f"heartbeat={value}"])
    assert done.exit_code in (1, 2), done.output
    assert done.exception is None or isinstance(done.exception, SystemExit), repr(done.exception)
    assert "--kind" in done.output and "heartbeat" in done.output, done.output


@pytest.mark.parametrize("text", ['{"heartbeat": 1e400}', '{"heartbeat": NaN}', '{"heartbeat": 1e12}'])
def test_the_retention_setting_refuses_a_number_out_of_range(stored: Path, text: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISSION_MEMORY_EVENT_RETENTION_KINDS", text)
    with pytest.raises(ConfigError, match="event_retention_kinds"):
        load_settings()
    done = runner.invoke(app, ["prune"])
    assert done.exit_code in (1, 2) and "MISSION_MEMORY_EVENT_RETENTION_KINDS" in done.output, done.output


@pytest.mark.parametrize("name", ["ESCALATION_FLOOD_START", "EVENT_RETENTION_DAYS", "ESCALATION_WINDOW_MINUTES"])
def test_every_number_setting_refuses_infinity(name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(f"MISSION_MEMORY_{name}", "inf")
    with pytest.raises(ConfigError, match=f"MISSION_MEMORY_{name}"):
        load_settings(data_dir=tmp_path)


def test_the_api_refuses_a_non_finite_retention(stored: Path) -> None:
    with Memory.open() as memory:
        for days in (float("nan"), float("inf"), 1e12):
            with pytest.raises(InputError, match="finite number of days"):
                memory.prune_events(max_age_days=days, now=NOW)
        with pytest.raises(InputError, match="heartbeat"):
            memory.prune_events(per_type_days={"heartbeat": float("inf")}, now=NOW)


def test_a_number_option_elsewhere_refuses_nan(stored: Path) -> None:
    done = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--plot", "x.png", "--hours", "nan"])
    assert done.exit_code in (1, 2) and "--hours" in done.output and "Traceback" not in done.output, done.output
