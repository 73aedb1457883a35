"""A cascade's span runs to the last event of its kinds, not to the first event of its last kind (trial:
"3 kinds, 1784 events · 00:47:09–00:48:27" while the chain's events ran to 00:56:08)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.operations.crisis_timeline import crisis_report, render_timeline
from mission_memory.tokens import TiktokenTokenizer

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_the_cascade_span_ends_at_the_last_event_of_its_kinds(tmp_path: Path) -> None:
    t0 = NOW - timedelta(minutes=10)
    events = [{"id": "root", "time": t0.isoformat(), "sector": "checkout", "type": "deploy", "criticality": 0.9,
               "source": "ci", "text": "Deploy of checkout-api v2 started"}]
    events += [{"id": f"err-{i}", "time": (t0 + timedelta(minutes=1, seconds=15 * i)).isoformat(), "sector": "checkout",
                "type": "ERROR", "criticality": 0.8, "source": "app", "text": f"upstream timed out after {900 + i} ms"}
               for i in range(33)]  # 00:01:00 to 00:09:00 after the root
    with Memory(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.record_events(events, mission="shop", now=NOW, embed=False)
        report = crisis_report(memory.store, "shop", memory.escalation_status("shop", now=NOW), NOW)
    [cascade] = report.timeline.cascades
    assert cascade.start == t0 and cascade.end == t0 + timedelta(minutes=9), cascade
    text = render_timeline(report, TiktokenTokenizer(), 4000)
    assert "2 kinds, 34 events · 11:50:00–11:59:00" in text, text
