"""The crisis timeline's cascades link kinds of events over the whole period, not the newest 2,000 events
(docs/adr/0095): a chain holds at most as many links as there are distinct kinds, and a root cause logged
before a long flood of repeats is still its root."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mission_memory.api import Memory
from mission_memory.operations.crisis_timeline import crisis_report, render_timeline


def _ev(i: str, when: datetime, type_: str, criticality: float, text: str) -> dict[str, Any]:
    return {"id": i, "time": when.isoformat(), "type": type_, "sector": "storage", "criticality": criticality,
            "source": "kernel", "text": text}


def test_a_root_cause_before_2600_alternating_repeats_roots_one_chain_of_three_kinds() -> None:
    """On 6adcb71 and 2d65343 the repeats chained each other (every line linked to the one before it of
    the other type: a chain of about 2,000 lines) and the disk failure, older than the newest 2,000, was
    in no chain."""
    now = datetime.now(UTC)
    start = now - timedelta(minutes=8)
    events = [_ev("disk-failed", start, "disk_failure", 0.9, "Disk sdc failed: medium error")]
    step = timedelta(minutes=7) / 2600
    for n in range(2600):  # a minute later: I/O errors and retries, interleaved
        when = start + timedelta(minutes=1) + n * step
        if n % 2 == 0:
            events.append(_ev(f"io-{n}", when, "io_error", 0.8, f"I/O error, dev sdc, sector {n * 8}"))
        else:
            events.append(_ev(f"retry-{n}", when, "retry", 0.6, f"Retrying write of block {n} (attempt {n % 7})"))
    with Memory.open(event_mission="kernel") as memory:
        state = None
        for first in range(0, len(events), 500):
            state = memory.record_events(events[first:first + 500], embed=False, now=now).escalation
        assert state is not None
        report = crisis_report(memory.store, "kernel", state, now)
        text = render_timeline(report, memory.tokenizer, 4000)
    cascades = report.timeline.cascades
    assert len(cascades) == 1 and max(len(c.event_ids) for c in cascades) <= 3
    chain = cascades[0]
    assert chain.root_id == "disk-failed"
    assert [report.events[e].type for e in chain.event_ids] == ["disk_failure", "io_error", "retry"]
    links = {(link.cause_id, report.events[link.effect_id].type, link.basis) for link in report.timeline.links}
    assert ("disk-failed", "io_error", "sector+time") in links
    # every event of the chain counted, the repeats of each kind cited from the oldest to the newest
    assert "from event:disk-failed · 3 kinds, 2601 events" in text
    assert "×1300 to" in text and "the 1300 from event:io-0 to event:io-2598" in text
    assert "newest 2000" not in text
