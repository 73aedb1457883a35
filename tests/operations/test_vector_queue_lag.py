"""How far behind the event vector queue is, said where an operator looks (issue 21 item 3): `status`,
`escalation status` and the digest footer give the events stored without a vector and the age of the
oldest. Real SQLite store, real embedder, the real command line."""

from __future__ import annotations

import json
from datetime import timedelta

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from tests.operations.event_factory import T0, event

runner = CliRunner()


def _flooded(memory: Memory) -> None:
    """30 events embedded, then 12 the queue has not reached, the oldest of them 10 minutes before T0."""
    memory.record_events([event(i, T0 - timedelta(hours=3, minutes=i)) for i in range(30)], now=T0, embed=False)
    memory.embed_pending()
    memory.record_events([event(100 + i, T0 - timedelta(minutes=10 - i * 0.5)) for i in range(12)], now=T0,
                         embed=False)


def test_status_escalation_status_and_the_digest_footer_say_how_far_behind_the_queue_is() -> None:
    with Memory.open(event_mission="ops") as memory:
        _flooded(memory)
        digest = memory.query("relay station heartbeat", scope="domain", filters={"mission": "ops"}, now=T0)
    assert "Event vector queue: 12 events are stored without a vector yet, the oldest from 10 min ago" in digest.text

    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)["without_vectors"]
    assert status["events"] == 12 and status["records"] == 12
    assert status["oldest_event"] == (T0 - timedelta(minutes=10)).isoformat()
    assert "catching up" in status["advice"]

    result = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", T0.isoformat(), "--json"])
    assert result.exit_code == 0, result.output
    queue = json.loads(result.stdout)["vector_queue"]
    assert queue["events"] == 12 and queue["oldest_event_age_s"] == 600.0
    human = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", T0.isoformat()]).stdout
    assert "Event vector queue: 12 events are stored without a vector yet, the oldest from 10 min ago" in human

    with Memory.open(event_mission="ops") as memory:  # once the queue catches up, nothing is said
        assert memory.embed_pending() == 12
        digest = memory.query("relay station heartbeat", scope="domain", filters={"mission": "ops"}, now=T0)
        assert "Event vector queue" not in digest.text
    human = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", T0.isoformat()]).stdout
    assert "Event vector queue: caught up" in human
