"""How far behind the event vector queue is, said where an operator looks (issue 21 item 3): `status`,
`escalation status` and the digest footer give the events stored without a vector and the age of the
oldest. Real SQLite store, real embedder, the real command line."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from tests.operations.event_factory import T0, event

runner = CliRunner()


def _flooded(memory: Memory) -> datetime:
    """30 events embedded, then 12 the queue has not reached; returns a clock 10 minutes after they were stored."""
    memory.record_events([event(i, T0 - timedelta(hours=3, minutes=i)) for i in range(30)], now=T0, embed=False)
    memory.embed_pending()
    memory.record_events([event(100 + i, T0 - timedelta(minutes=10 - i * 0.5)) for i in range(12)], now=T0,
                         embed=False)
    return datetime.now(UTC) + timedelta(minutes=10, seconds=20)


def test_status_escalation_status_and_the_digest_footer_say_how_far_behind_the_queue_is() -> None:
    with Memory.open(event_mission="ops") as memory:
        later = _flooded(memory)
        digest = memory.query("relay station heartbeat", scope="domain", filters={"mission": "ops"}, now=later)
    assert "Event vector queue: 12 events are stored without a vector yet, the oldest from 10 min ago" in digest.text

    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)["without_vectors"]
    assert status["events"] == 12 and status["records"] == 12
    assert abs(datetime.fromisoformat(status["oldest_event"]) - (later - timedelta(minutes=10, seconds=20))) < timedelta(
        minutes=1)
    assert "catching up" in status["advice"]

    result = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", later.isoformat(), "--json"])
    assert result.exit_code == 0, result.output
    queue = json.loads(result.stdout)["vector_queue"]
    assert queue["events"] == 12 and 600 <= queue["oldest_event_age_s"] < 660
    human = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", later.isoformat()]).stdout
    assert "Event vector queue: 12 events are stored without a vector yet, the oldest from 10 min ago" in human

    with Memory.open(event_mission="ops") as memory:  # once the queue catches up, nothing is said
        assert memory.embed_pending() == 12
        digest = memory.query("relay station heartbeat", scope="domain", filters={"mission": "ops"}, now=later)
        assert "Event vector queue" not in digest.text
    human = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", later.isoformat()]).stdout
    assert "Event vector queue: caught up" in human


def test_the_queue_age_is_counted_from_when_the_oldest_waiting_event_was_stored() -> None:
    """Issue 37: loghub lines from 2015 replayed minutes ago read "2625 d ago" in `status` (the event's
    own time) while the footer said minutes. Every place that dates the queue counts from the store."""
    long_ago = datetime(2015, 7, 29, 17, 41, tzinfo=UTC)
    with Memory.open(event_mission="ops") as memory:
        memory.record_events([event(i, long_ago + timedelta(seconds=i)) for i in range(5)],
                             now=long_ago + timedelta(minutes=1), embed=False)
        stored = datetime.now(UTC)
        digest = memory.query("relay station heartbeat", scope="domain", filters={"mission": "ops"},
                              now=stored + timedelta(minutes=10, seconds=30))
    assert "Event vector queue: 5 events are stored without a vector yet, the oldest from 10 min ago" in digest.text

    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)["without_vectors"]
    assert status["events"] == 5 and 0 <= status["oldest_event_age_s"] < 60
    assert abs(datetime.fromisoformat(status["oldest_event"]) - stored) < timedelta(minutes=1)
    human = runner.invoke(app, ["status"]).stdout
    assert "the oldest from under a minute ago" in human and " d " not in human.split("Event vector queue")[1]

    later = (stored + timedelta(hours=2, minutes=5, seconds=30)).isoformat()
    result = runner.invoke(app, ["escalation", "status", "--mission", "ops", "--now", later, "--json"])
    assert result.exit_code == 0, result.output
    assert 2 * 3600 + 5 * 60 <= json.loads(result.stdout)["vector_queue"]["oldest_event_age_s"] < 2 * 3600 + 7 * 60
