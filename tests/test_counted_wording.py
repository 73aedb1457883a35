"""A count of one reads as one: "1 alert open", "1 kind, 60 events", never "payments-db (1 events)", "1 chain".

A user read "1 alerts open", "1 kinds", "(1 events)" and "1 chains" in the firing list, the brief's incident
block and the crisis timeline. One helper words every count (:func:`mission_memory.wording.counted`); the
check runs the real commands and the real brief on a real store.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mission_memory.api import Memory
from mission_memory.cli.app import main
from mission_memory.config import load_settings
from mission_memory.errors import counted

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ONE_WITH_A_PLURAL = re.compile(r"(?<![\d.,])1 (alerts|kinds|events|chains|entries|records|files|sectors)\b")


@given(st.integers(min_value=0, max_value=10**9))
def test_counted_uses_the_singular_for_one_only(n: int) -> None:
    assert counted(n, "alert") == (f"{n} alert" if n == 1 else f"{n} alerts")
    assert counted(n, "entry", "entries") == (f"{n} entry" if n == 1 else f"{n} entries")


def _events(alert_sector: str) -> list[dict[str, Any]]:
    start = NOW - timedelta(minutes=9)
    events: list[dict[str, Any]] = [
        {"id": f"log-{i}", "time": (start + timedelta(seconds=3 * i)).isoformat(), "sector": "checkout",
         "type": "ERROR", "criticality": 0.8, "source": "app-log", "text": f"upstream timed out {i}"}
        for i in range(150)]
    events.append({"id": "alert-1", "time": (NOW - timedelta(minutes=5)).isoformat(), "sector": alert_sector,
                   "type": "HighLatency", "criticality": 0.9, "source": "alertmanager",
                   "text": f"{alert_sector} p99 high", "fingerprint": "fp-1", "labels": {"status": "firing"}})
    return events


def _flooded(data: Path, alert_sector: str) -> Path:
    with Memory(load_settings(data_dir=data)) as memory:
        memory.record_events(_events(alert_sector), mission="shop", now=NOW, embed=False)
    return data


def _crisis_block(data: Path) -> tuple[str, str]:
    with Memory(load_settings(data_dir=data)) as memory:
        brief = memory.rotation_brief(mission="shop", now=NOW, token_budget=4000, archive=False,
                                      embed_archived=False)
    return brief.text, next(shown for item, shown in brief.entries if item.section.name == "CRISIS")


def _cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setattr(sys, "argv", ["mission-memory", *argv])
    try:
        main()
    except SystemExit as exited:
        assert exited.code in (0, None), capsys.readouterr().err
    return capsys.readouterr().out


def test_firing_list_timeline_and_brief_say_one_in_the_singular(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    flooded = _flooded(tmp_path / "data", "checkout")
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(flooded))
    clock = NOW.isoformat()
    firing = _cli(["events", "firing", "--mission", "shop", "--now", clock], monkeypatch, capsys)
    assert firing.startswith("1 alert open: 1 firing, 0 silenced"), firing
    timeline = _cli(["query", "what is failing in checkout", "--mission", "shop", "--timeline", "--now", clock],
                    monkeypatch, capsys)
    assert "Firing now: 1 alert open (1 critical)" in timeline
    assert "What cascades (1 chain;" in timeline
    brief, block = _crisis_block(flooded)
    assert re.search(r"1 alert open\b", block), block
    recurring = next(line for line in block.splitlines() if line.startswith("Recurring log events"))
    assert re.search(r": 1 kind, 150 events;", recurring), recurring
    for text in (firing, timeline, brief, json.dumps(block)):
        assert not ONE_WITH_A_PLURAL.search(text), ONE_WITH_A_PLURAL.search(text)


def test_a_sector_with_one_event_says_one_event(tmp_path: Path) -> None:
    brief, block = _crisis_block(_flooded(tmp_path / "data", "payments-db"))
    affected = next(line for line in block.splitlines() if line.startswith("Affected"))
    assert re.search(r"payments-db \(1( event)?\)", affected), affected  # never "(1 events)"
    assert not ONE_WITH_A_PLURAL.search(brief), ONE_WITH_A_PLURAL.search(brief)
