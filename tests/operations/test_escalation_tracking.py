"""Escalation on stored events: a flood switches degraded mode on, a quiet period off, with hysteresis
(ISA-18.2 defaults: above 10 per 10 minutes per operator, ends below 5); the state is persisted so every
process reads the same one. Explicit ``now=`` clocks, no sleeps."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.errors import ConfigError, InputError
from mission_memory.operations.escalation import EscalationMode
from tests.operations.event_factory import T0, burst, event

runner = CliRunner()


def test_a_flood_switches_degraded_mode_on_and_a_quiet_period_off_with_hysteresis() -> None:
    with Memory.open(event_mission="ops") as memory:
        # 11 events over five minutes, one every 30 s: above the capacity of 10 per 10 minutes.
        report = memory.record_events(burst(11, T0, spread=timedelta(minutes=5, seconds=30)), now=T0, embed=False)
        assert report.added == 11
        assert report.escalation.mode is EscalationMode.DEGRADED
        assert report.escalation.since == T0
        assert report.escalation.alpha == pytest.approx(1 - 10 / 11)
        # Seven minutes on, 6 events are still in the window: below the start level, not below the end level.
        held = memory.escalation_status(now=T0 + timedelta(minutes=7))
        assert (held.mode, held.rate, held.alpha) == (EscalationMode.DEGRADED, 6, 0.0)
        assert held.since == T0
        # Nine minutes on, 2 events remain: below 5, the flood is over.
        quiet = memory.escalation_status(now=T0 + timedelta(minutes=9))
        assert (quiet.mode, quiet.rate) == (EscalationMode.NORMAL, 2)
        assert quiet.since == T0 + timedelta(minutes=9)


def test_without_a_previous_flood_six_events_are_normal() -> None:
    with Memory.open(event_mission="ops") as memory:
        state = memory.record_events(burst(6, T0), now=T0, embed=False).escalation
    assert state.mode is EscalationMode.NORMAL and state.alpha == 0.0


def test_more_operators_on_duty_raise_the_capacity() -> None:
    with Memory.open(event_mission="ops", operators_on_duty=2) as memory:
        state = memory.record_events(burst(15, T0), now=T0, embed=False).escalation
    assert state.mode is EscalationMode.NORMAL  # capacity 20
    with Memory.open(event_mission="ops2", operators_on_duty=2) as memory:
        state = memory.record_events(burst(25, T0), now=T0, embed=False).escalation
    assert state.mode is EscalationMode.DEGRADED and state.alpha == pytest.approx(1 - 20 / 25)


def test_a_sector_floods_on_its_own_rate_and_is_named() -> None:
    with Memory.open(event_mission="ops", operators_on_duty=3) as memory:
        events = burst(12, T0, sector="north") + burst(3, T0, sector="south", start_index=100)
        state = memory.record_events(events, now=T0, embed=False).escalation
    assert state.mode is EscalationMode.NORMAL  # 15 < capacity 30
    assert dict(state.escalating_sectors) == {"north": 12}


def test_the_state_is_persisted_so_another_process_reads_the_same_mode(data_dir: Path) -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events(burst(14, T0), now=T0, embed=False)
    result = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", T0.isoformat(), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["mode"] == "degraded" and data["rate"] == 14 and data["capacity"] == 10
    assert data["since"] == T0.isoformat() and data["window_s"] == 600
    text = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", (T0 + timedelta(minutes=20)).isoformat()])
    assert text.exit_code == 0, text.output
    assert "Escalation: normal" in text.output


def test_a_bad_clock_or_threshold_setting_is_refused_clearly() -> None:
    with Memory.open(event_mission="ops") as memory, pytest.raises(InputError, match="has no timezone"):
        memory.escalation_status(now=T0.replace(tzinfo=None))
    with pytest.raises(ConfigError, match="escalation_flood_end"):
        Memory.open(escalation_flood_start=5, escalation_flood_end=8)
    result = runner.invoke(app, ["escalation", "status", "--now", "yesterday"])
    assert result.exit_code == 1 and "--now 'yesterday' is not an ISO 8601 time" in result.output


def test_replayed_events_outside_the_window_do_not_count() -> None:
    with Memory.open(event_mission="ops") as memory:
        old = [event(i, T0 - timedelta(hours=2, minutes=i)) for i in range(30)]
        state = memory.record_events(old, now=T0, embed=False).escalation
    assert state.rate == 0 and state.mode is EscalationMode.NORMAL


def test_status_of_a_mission_that_holds_nothing_is_an_error_not_an_all_clear(data_dir: Path) -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events(burst(14, T0), now=T0, embed=False)
    result = runner.invoke(app, ["escalation", "status", "--mission", "opz", "--now", T0.isoformat()])
    assert result.exit_code == 1
    assert "no mission named 'opz' is stored" in result.output and "missions: ops" in result.output
    assert "Escalation: normal" not in result.output
