"""An alert's start is its first trigger, wherever it is shown.

On main before this change, a PagerDuty incident acknowledged later (``incident.acknowledged``, its
``created_at`` as the sender gave it 8 minutes after the trigger's) made the digest read "State: firing
since" the acknowledgement's time, while ``events firing`` said since the trigger.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.operations.sources.pagerduty import events_from_pagerduty

PAYLOADS = Path(__file__).parent / "webhook_payloads"


def test_an_acknowledged_incident_is_firing_since_its_trigger_in_the_digest_and_in_events_firing(data_dir: Path) -> None:
    triggered = json.loads((PAYLOADS / "pagerduty_v3_incident_triggered.json").read_text(encoding="utf-8"))
    opened = datetime(2026, 3, 1, 11, 55, tzinfo=UTC)  # the payload's created_at
    acked_at = opened + timedelta(minutes=8)
    acknowledged = copy.deepcopy(triggered)
    acknowledged["event"].update(event_type="incident.acknowledged", occurred_at=acked_at.isoformat())
    acknowledged["event"]["data"].update(status="acknowledged", created_at=acked_at.isoformat())
    now = opened + timedelta(minutes=20)
    with Memory.open() as memory:
        memory.record_events(list(events_from_pagerduty(triggered)), mission="shop", now=opened, embed=False)
        memory.record_events(list(events_from_pagerduty(acknowledged)), mission="shop", now=acked_at, embed=False)
        [alert] = memory.firing_alerts("shop", now=now)
        assert alert.since == opened
        digest = memory.query("checkout 5xx eu-prod-2", filters={"mission": "shop"}, token_budget=1500, now=now)
    assert f"State: firing since {opened.isoformat()}" in digest.text, digest.text
    assert f"firing since {acked_at.isoformat()}" not in digest.text
    listed = CliRunner().invoke(app, ["events", "firing", "--mission", "shop", "--now", now.isoformat()])
    assert listed.exit_code == 0 and "2026-03-01 11:55:00" in listed.output, listed.output
