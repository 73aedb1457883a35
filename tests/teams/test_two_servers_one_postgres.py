"""A team on PostgreSQL: two ``serve --transport http`` processes and CLI writers on one database at once.

Each server runs from a data dir of its own (two machines), both with the same operator tokens;
while an ingest re-reads the mission's repository, the servers take alerts, events and decisions
(MCP ``record_decision``) under bearer tokens and CLI processes feed events, record decisions and
leave a handover note. Afterwards every acknowledged write is stored, of every kind, and no
recorded decision was deleted by the concurrent ingest (docs/adr/0056, docs/adr/0084).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mission_memory.records import RecordKind
from mission_memory.stores.registry import open_store
from mission_memory.teams.operator_tokens import add_token
from tests.conftest import GitRepo
from tests.stores.contract.test_store_contract import _record
from tests.teams.scenario import team_server

MISSION = "shop"
JSONL = {"Content-Type": "application/x-ndjson"}


def _decisions(url: str, token: str, titles: list[str]) -> list[Any]:
    async def go() -> list[Any]:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
            McpClient(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
        ):
            return [await client.call_tool("record_decision", {
                "title": title, "decision": f"{title}: done this way", "rationale": "it was measured"})
                for title in titles]

    return anyio.run(go)


def _alerts(i: int) -> dict[str, Any]:
    return {"version": "4", "status": "firing", "alerts": [{
        "status": "firing", "labels": {"alertname": f"Alert{i}", "severity": "critical", "service": f"svc{j}"},
        "annotations": {"summary": f"alert {i} on svc{j}"}, "startsAt": "2026-03-01T11:58:00Z",
        "fingerprint": f"a-{i}-{j}"} for j in range(2)]}


def _events(prefix: str, count: int) -> str:
    return "".join(json.dumps({"id": f"{prefix}-{n}", "time": "2026-03-01T12:00:00Z", "sector": "north",
                               "type": "alarm", "text": f"event {prefix} {n}", "criticality": 0.5}) + "\n"
                   for n in range(count))


def test_two_servers_and_cli_writers_on_one_postgres_database_store_every_acknowledged_write(
    postgres_url: str, tmp_path: Path, make_git_repo: Callable[[str], GitRepo]
) -> None:
    repo = make_git_repo("shop-repo")
    repo.commit("SHOP-1: start", "2026-01-01T00:00:00+00:00", {"README.md": "# Shop\n\nThe shop sells tea.\n"})
    tokens = tmp_path / "team-tokens.toml"
    alice = add_token(tokens, operator="alice", clearance="secret", role="lead").token
    bob = add_token(tokens, operator="bob", clearance="internal").token
    shared = {"MISSION_MEMORY_STORE": postgres_url, "MISSION_MEMORY_TEAM_TOKEN_FILE": str(tokens)}

    def env(name: str) -> dict[str, str]:
        return dict(os.environ, **shared, MISSION_MEMORY_DATA_DIR=str(tmp_path / name))

    def cli(name: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mission_memory", *args], env=env(name), input=stdin,
                              capture_output=True, text=True, timeout=600, check=False)

    repo.commit("SHOP-2: runbook", "2026-02-01T00:00:00+00:00", {"docs/runbook.md": "# Runbook\n\nRestart the till.\n"})
    seeded = open_store(postgres_url, tmp_path / "seed")  # the mission exists before its writers start
    seeded.upsert_records([_record("seed.md", "the shop's first note", mission=MISSION)])
    seeded.close()

    with (
        team_server({**shared, "MISSION_MEMORY_DATA_DIR": str(tmp_path / "server-a")},
                    "--write-tools", "--mission", MISSION) as a,
        team_server({**shared, "MISSION_MEMORY_DATA_DIR": str(tmp_path / "server-b")},
                    "--write-tools", "--mission", MISSION) as b,
        ThreadPoolExecutor(8) as pool,
    ):
        def post(url: str, path: str, token: str, **body: Any) -> int:
            headers = {"Authorization": f"Bearer {token}", **body.pop("headers", {})}
            answer = httpx.post(f"{url}{path}?mission={MISSION}", headers=headers, timeout=120, **body)
            assert answer.status_code == 200, answer.text
            return int(answer.json()["added"])

        jobs = [
            pool.submit(cli, "cli-1", "ingest", str(repo.root), "--mission", MISSION, "--json"),
            pool.submit(_decisions, a, alice, [f"Server A decision {n}" for n in range(3)]),
            pool.submit(_decisions, b, bob, [f"Server B decision {n}" for n in range(3)]),
            *[pool.submit(post, a, "/alerts/alertmanager", alice, json=_alerts(i)) for i in range(4)],
            *[pool.submit(post, b, "/events", bob, content=_events(f"b{i}", 3), headers=JSONL) for i in range(4)],
            pool.submit(cli, "cli-2", "feed", "-", "--mission", MISSION, "--no-embed", stdin=_events("cli", 10)),
            *[pool.submit(cli, f"cli-{3 + n}", "decide", f"CLI decision {n}", "--decision", "keep it",
                          "--rationale", "measured", "--mission", MISSION) for n in range(2)],
            pool.submit(cli, "cli-5", "handover", "note", "the till restarts slowly", "--mission", MISSION),
        ]
        results = [job.result(timeout=600) for job in jobs]

    for result in results:
        if isinstance(result, subprocess.CompletedProcess):
            assert result.returncode == 0, (result.args, result.stderr)
        elif isinstance(result, list):
            assert not any(call.is_error for call in result), [c.content[0].text for c in result]
    assert sum(r for r in results if isinstance(r, int)) == 4 * 2 + 4 * 3

    store = open_store(postgres_url, tmp_path / "check")
    try:
        assert store.count_kind(MISSION, RecordKind.DOMAIN_EVENT.value) == 4 * 2 + 4 * 3 + 10
        titles = {r.title for r in store.records_of_kind([RecordKind.DECISION.value], mission=MISSION)}
        wanted = {f"Server {s} decision {n}" for s in "AB" for n in range(3)} | {f"CLI decision {n}" for n in range(2)}
        assert wanted <= titles, wanted - titles  # the concurrent ingest deleted none of them
        notes = store.records_of_kind([RecordKind.HANDOVER_NOTE.value], mission=MISSION)
        assert [n.text for n in notes] == ["the till restarts slowly"]
        assert store.count_kind(MISSION, RecordKind.COMMIT.value) == 2
        assert all(r.attributes.get("recorded") for r in store.records_of_kind([RecordKind.DECISION.value],
                                                                                mission=MISSION) if r.title in wanted)
    finally:
        store.close()
