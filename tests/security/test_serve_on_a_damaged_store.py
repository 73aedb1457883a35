"""``serve --transport http`` stays up on a damaged store and answers every call with the damage message
(issue 35 item 5; the README promises it).

On the starting code ``serve --mission NAME`` opened the store at start to warn about a mission that
is not stored, and the damaged store ended the server with exit 1 before it listened. A real server
process on loopback; the MCP tools over streamable HTTP and the event route over httpx.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.stores.sqlite import SqliteStore
from tests.mcp_http_server import http_mcp_server


def _truncated_store(data_dir: Path) -> Path:
    db = data_dir / "memory.db"
    store = SqliteStore(db)
    store.upsert_records([Record.build(
        kind=RecordKind.DOC_CHUNK, title=f"doc {i}", text="The upload ledger is kept in SQLite. " * 60,
        provenance=Provenance(kind=SourceKind.DOC, ref=f"d{i}.md", uri=f"file:///d{i}.md", mission="ops",
                              time=datetime(2025, 1, 1, tzinfo=UTC))) for i in range(120)])
    store.close()
    with db.open("r+b") as f:
        f.truncate(db.stat().st_size // 2 // 4096 * 4096)  # a copy stopped half way
    return db


def _calls(url: str) -> list[Any]:
    async def go() -> list[Any]:
        async with (
            create_mcp_http_client() as http,
            McpClient(streamable_http_client(url, http_client=http)) as client,
        ):
            names = sorted(t.name for t in (await client.list_tools()).tools)
            results = [await client.call_tool("workflow_memory_query", {"task_description": "ledger database"}),
                       await client.call_tool("workflow_memory_query", {"task_description": "upload retries"}),
                       await client.call_tool("record_decision", {"title": "Keep the ledger", "decision": "Keep it.",
                                                                  "rationale": "Offline teams."})]
            return [names, *results]

    return anyio.run(go)


def test_the_http_server_stays_up_on_a_damaged_store_and_answers_every_call_with_the_damage(data_dir: Path) -> None:
    db = _truncated_store(data_dir)
    with http_mcp_server(data_dir, "--mission", "ops", "--write-tools") as url:
        names, *results = _calls(url)
        assert "workflow_memory_query" in names and "record_decision" in names
        for result in results:
            text = " ".join(result.content[0].text.split())
            assert result.is_error and str(db) in text and "damaged" in text and "salvage" in text, text
        posted = httpx.post(url.removesuffix("/mcp") + "/events", timeout=30, headers={"Content-Type": "application/json"},
                            content=json.dumps({"sector": "north", "event_type": "outage", "time": "2025-01-01T00:00:00Z"}))
        assert posted.status_code == 503, (posted.status_code, posted.text)
        assert "damaged" in posted.text, posted.text
        again = _calls(url)  # still up, still the same answer
        assert all(r.is_error and "damaged" in r.content[0].text for r in again[1:])
