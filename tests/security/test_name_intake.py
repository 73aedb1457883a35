"""Names with invisible or lookalike runs, or holding a secret, are refused at every intake, by one rule
(issue 35 items 3 and 4): CLI, MCP and HTTP alike, with a clear error naming the input and never
repeating the secret; a name read from repository content that breaks the rule is left out, and the
run goes on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from mission_memory.api import Memory
from mission_memory.errors import InputError
from mission_memory.fence import check_name, name_problem
from mission_memory.records import RecordKind
from tests.conftest import GitRepo
from tests.mcp_http_server import http_mcp_server

BRAILLE = "\u2800\u2800\u2800"
TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
BAD_NAMES = {
    "braille blanks only": BRAILLE,
    "a braille blank inside": "ops\u2800north",
    "zero-width space only": "\u200b",
    "zero-width joiner inside": "o\u200dps",
    "bidi override": "\u202eops",
    "bidi isolate": "ops\u2066x\u2069",
    "one character worth three angles": "ops \u22d8",
    "white triangles": "ops \u25c1\u25c1\u25c1",
    "Canadian syllabics": "\u140a\u140a\u140a",
    "vertical presentation forms": "\ufe3f\ufe3f\ufe3f",
    "a token": TOKEN,
    "a password assignment": "password=hunter2-Xq9",
}
GOOD_NAMES = ["ops", "Північ", "upload-proxy", "operator@example.org", "north sector", "c7a5b2f1e0d94a31",
              "550e8400-e29b-41d4-a716-446655440000", "a << b", "«Проксі»", "◀ back"]
JSONL = {"content-type": "application/x-ndjson"}


@pytest.mark.parametrize("case", sorted(BAD_NAMES))
def test_the_one_name_rule_refuses_invisible_lookalike_and_secret_names(case: str) -> None:
    name = BAD_NAMES[case]
    assert name_problem(name) is not None
    with pytest.raises(InputError) as caught:
        check_name(name, "sector")
    message = str(caught.value)
    assert message.startswith("sector '"), message
    assert TOKEN not in message and "hunter2" not in message, message
    assert all(c.isprintable() and c not in "\u2800\u200b\u200d\u202e\u2066" for c in message), repr(message)


def test_ordinary_names_pass() -> None:
    for name in GOOD_NAMES:
        assert name_problem(name) is None, name


def _events(count: int, **change: str) -> list[dict[str, Any]]:
    now = datetime.now(UTC)
    return [{"id": f"e-{i}", "time": (now - timedelta(seconds=10 * i)).isoformat(), "sector": "north",
             "type": "shelling", "criticality": 0.5, "source": "post-7", "text": f"Shelling, report {i}"} | change
            for i in range(count)]


def _jsonl(events: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def _stored() -> tuple[dict[str, int], int, str]:
    """The stored missions, the number of domain events, and every stored text joined (to look for a secret)."""
    with Memory.open() as memory:
        missions = memory.store.missions()
        events = sum(memory.store.count_kind(m, RecordKind.DOMAIN_EVENT.value) for m in missions)
    database = (Path(os.environ["MISSION_MEMORY_DATA_DIR"]) / "memory.db").read_bytes()
    return missions, events, database.decode("utf-8", "replace")


def test_http_intake_refuses_bad_missions_sectors_and_operators_and_creates_nothing(data_dir: Path) -> None:
    with http_mcp_server(data_dir) as url, httpx.Client(base_url=url.removesuffix("/mcp"), timeout=60) as http:
        assert http.post("/events", params={"mission": "ops"}, content=_jsonl(_events(2)), headers=JSONL).status_code == 200
        for name in (BRAILLE, "ops\u2800", "ops \u22d8", TOKEN):
            refused = http.post("/events", params={"mission": name}, content=_jsonl(_events(2)), headers=JSONL)
            assert refused.status_code == 400, refused.text
            error = refused.json()["error"]
            assert error.startswith("mission '") and TOKEN not in error, error
        for field, value in (("sector", TOKEN), ("operator", TOKEN), ("sector", BRAILLE), ("unit", "\u140a\u140a\u140a")):
            refused = http.post("/events", params={"mission": "ops"}, content=_jsonl(_events(1, **{field: value})),
                                headers=JSONL)
            assert refused.status_code == 400 and field in refused.json()["error"], refused.text
            assert TOKEN not in refused.text
        alert = {"version": "4", "status": "firing", "receiver": "mm", "alerts": [{
            "status": "firing", "labels": {"alertname": "Down", "service": "shop", "sector": TOKEN},
            "annotations": {}, "startsAt": datetime.now(UTC).isoformat(), "fingerprint": "f1"}]}
        by_alert = http.post("/alerts/alertmanager", params={"mission": BRAILLE}, json=alert)
        assert by_alert.status_code == 400 and "mission" in by_alert.json()["error"], by_alert.text
    missions, events, database = _stored()
    assert list(missions) == ["ops"] and events == 2
    assert TOKEN not in database


def test_a_server_whose_default_mission_breaks_the_rule_creates_no_mission_over_http(data_dir: Path) -> None:
    with http_mcp_server(data_dir, "--mission", BRAILLE) as url, \
            httpx.Client(base_url=url.removesuffix("/mcp"), timeout=60) as http:
        refused = http.post("/events", content=_jsonl(_events(2)), headers=JSONL)
        assert refused.status_code == 400 and refused.json()["error"].startswith("mission '\\u2800"), refused.text
    missions, events, _ = _stored()
    assert not missions and events == 0


def test_mcp_write_tools_refuse_bad_component_names(data_dir: Path) -> None:
    with Memory.open() as memory:
        memory.record_events(_events(1), "ops", embed=False)

    async def go(url: str) -> dict[str, Any]:
        out = {}
        async with Client(url) as client:
            for label, arguments in {
                "component": {"component": "core\u2800"},
                "lookalike component": {"component": "core \u25c1\u25c1\u25c1"},
                "secret component": {"component": TOKEN},
            }.items():
                out[label] = await client.call_tool("record_decision", {
                    "title": "Retry uploads", "decision": "Retry three times", "rationale": "Flaky links",
                    **arguments})
        return out

    with http_mcp_server(data_dir, "--write-tools") as url:
        results = anyio.run(go, url)
    for label, result in results.items():
        text = result.content[0].text
        assert result.is_error, f"{label}: {text}"
        assert "component '" in text, f"{label}: {text}"
        assert TOKEN not in text
    with Memory.open() as memory:
        assert memory.store.count_kind("ops", RecordKind.DECISION.value) == 0


def test_cli_intake_refuses_bad_names_with_the_input_named(data_dir: Path) -> None:
    with Memory.open() as memory:
        memory.record_events(_events(1), "ops", embed=False)
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mission_memory", *args], input=stdin, env=env,
                              capture_output=True, text=True, timeout=300)

    fed = run("feed", "-", "--mission", BRAILLE, "--new-mission", "--no-embed", stdin=_jsonl(_events(2)).decode())
    assert fed.returncode == 1 and "mission '\\u2800\\u2800\\u2800'" in fed.stderr, fed.stderr
    by_operator = run("feed", "-", "--mission", "ops", "--operator", TOKEN, "--no-embed", stdin=_jsonl(_events(2)).decode())
    assert by_operator.returncode == 1 and "--operator" in by_operator.stderr, by_operator.stderr
    assert TOKEN not in by_operator.stderr
    decided = run("decide", "Retry uploads", "--decision", "Retry three times", "--rationale", "Flaky links",
                  "--mission", "ops", "--component", "core\u200b")
    assert decided.returncode == 1 and "component 'core\\u200b'" in decided.stderr, decided.stderr
    assert "Traceback" not in fed.stderr + by_operator.stderr + decided.stderr
    missions, events, database = _stored()
    assert list(missions) == ["ops"] and events == 1 and TOKEN not in database


def test_a_folder_whose_name_breaks_the_rule_is_not_stored_as_a_component(
    make_git_repo: Any,
) -> None:
    repo: GitRepo = make_git_repo("proxy")
    repo.commit("Add the uploader", "2025-02-01T10:00:00+00:00", {
        "core\u200b/upload.py": "RETRIES = 3\n", f"{BRAILLE}/notes.md": "# Notes\n\nRetry uploads.\n",
        "docs/adr/0001-retry.md": "---\ncomponent: \"core \u25c1\u25c1\u25c1\"\n---\n# 1. Retry uploads\n\n## Status\n\n"
                                  "Accepted\n\n## Decision\n\nRetry three times.\n",
        "src/main.py": "print('ok')\n",
    })
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        components = memory.store.components(limit=100)
    assert components, "the ingest stored nothing"
    assert all(name_problem(c) is None for c in components), components
