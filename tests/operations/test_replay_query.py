"""A replay you can ask (issue 24 item 3): after ``feed --now T`` replays a flood, ``query --now T`` (the CLI),
``Memory.query(now=T)`` and the MCP tool's ``now`` answer at T, in degraded mode with its critical events;
a query at the real clock answers normal and does not overwrite the replayed state."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.mcp.server import build_server
from mission_memory.operations.escalation_state import load_state
from tests.operations.event_factory import T0, burst, event

runner = CliRunner()
CRITICAL = "Shelling of position 3 in sector north, casualties reported"


def _replay(tmp_path: Path) -> None:
    flood = [*burst(30, T0, spread=timedelta(minutes=6), start_index=10),
             event(999, T0 - timedelta(minutes=3), sector="north", type_="shelling", criticality=0.95, text=CRITICAL)]
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in flood), encoding="utf-8")
    fed = runner.invoke(app, ["feed", str(path), "--mission", "ops", "--now", T0.isoformat(), "--no-embed", "--json"])
    assert fed.exit_code == 0, fed.output
    assert json.loads(fed.output)["escalation"]["mode"] == "degraded"


def _stored_mode() -> tuple[str, Any]:
    with Memory.open() as memory:
        state, _ = load_state(memory.store, "ops")
    return state.mode.value, state.assessed_at


def test_query_now_answers_a_replayed_flood_at_its_time_and_a_query_now_does_not_overwrite_it(tmp_path: Path) -> None:
    _replay(tmp_path)
    at_t = runner.invoke(app, ["query", "relay station heartbeat", "--mission", "ops", "--now", T0.isoformat()])
    assert at_t.exit_code == 0, at_t.output
    assert "Mode: degraded in mission ops" in at_t.output
    assert "event:ev-999" in at_t.output
    assert "(today)" in at_t.output  # ages are counted from T, not from the real clock

    real = runner.invoke(app, ["query", "relay station heartbeat", "--mission", "ops"])
    assert real.exit_code == 0, real.output
    assert "Mode: degraded" not in real.output
    assert _stored_mode() == ("degraded", T0)  # the replay's state is not overwritten by the query

    again = runner.invoke(app, ["query", "relay station heartbeat", "--mission", "ops", "--now", T0.isoformat()])
    assert "Mode: degraded in mission ops" in again.output
    bad = runner.invoke(app, ["query", "relay station heartbeat", "--mission", "ops", "--now", "yesterday"])
    assert bad.exit_code == 1 and "now 'yesterday' is not an ISO 8601 time" in bad.output


def test_the_api_and_the_mcp_tool_take_now(tmp_path: Path) -> None:
    _replay(tmp_path)
    with Memory.open() as memory:
        digest = memory.query("relay station heartbeat", filters={"mission": "ops"}, now=T0 + timedelta(minutes=1))
    assert "Mode: degraded in mission ops" in digest.text and "event:ev-999" in digest.text

    async def call(arguments: dict[str, Any]) -> Any:
        async with Client(build_server()) as client:
            return await client.call_tool("workflow_memory_query", arguments)

    result = anyio.run(call, {"task_description": "relay station heartbeat", "filters": {"mission": "ops"},
                              "now": T0.isoformat()})
    assert not result.is_error
    assert "Mode: degraded in mission ops" in result.content[0].text
    assert _stored_mode() == ("degraded", T0)
