"""Load on the team server: 20 concurrent operators over streamable HTTP on loopback (issue 11, ADR 0045).

A real ``mission-memory serve --transport http`` subprocess with operator tokens serves a mission
ingested from the shared corpus (its ADRs and docs; or, without the bundle, this repository's own
``docs/``). N clients (default 20), each with its own token (clearances mixed: public, internal,
restricted; one in five a lead) and its own MCP session, make M tool calls in all (default 400),
spread evenly: pull queries over a list of tasks and scopes and, with ``--write-tools``, every
fourth call a ``record_correction`` with a unique summary. Afterwards the corrections stored are
counted against those acknowledged.

Prints p50/p95/max latency per tool (ms, wall clock, as the client sees it), errors, lost writes,
the CPU time the server used, and the machine's load average before and after (the machines are
shared: the figures are indicative only).

Usage::

        nice python benchmarks/bench_team_server.py --write-tools
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.teams.operator_tokens import add_token

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

REPO = Path(__file__).resolve().parent.parent
TASKS = [
    "Why was the document store chosen and what were the alternatives?",
    "How are architecture decisions recorded in this project?",
    "What does the team do about flaky tests?",
    "Which decisions were superseded and by what?",
    "How is authentication handled?",
    "What are the rules for naming records?",
    "How do we deploy a new version?",
    "Що вирішили щодо зберігання даних?",
]
SCOPES = ["all", "workflow", "domain", "all", "practitioner"]
CLEARANCES = ["public", "internal", "restricted", "internal"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prepare(work: Path, operators: int) -> tuple[Path, str, str, list[str]]:
    """Ingest the mission into ``work/data`` and issue one token per operator.

    Returns:
        The data dir, the mission, a stored component, the tokens.
    """
    bundle = corpus_path("tdr-docs.bundle")
    data = work / "data"
    settings = load_settings(data_dir=data)
    with Memory(settings) as memory:
        if bundle.exists():
            clone = work / "tdr-docs"
            subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True)
            memory.ingest_repository(clone, mission="tdr", include=["*.md"])
            mission = "tdr"
        else:
            memory.ingest_repository(REPO / "docs", mission="mission-memory")
            mission = "mission-memory"
        component = next(iter(memory.store.components()), "docs")
    tokens = [
        add_token(data / "team-tokens.toml", operator=f"op{i:02d}", clearance=CLEARANCES[i % len(CLEARANCES)],
                  role="lead" if i % 5 == 0 else "operator").token
        for i in range(operators)
    ]
    return data, mission, component, tokens


async def client_run(
    url: str, token: str, index: int, calls: int, mission: str, component: str, write_tools: bool,
    latencies: dict[str, list[float]], errors: list[str], written: list[str],
) -> None:
    """One operator's session: ``calls`` tool calls in a row, timed one by one."""
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
        McpClient(streamable_http_client(url, http_client=http)) as client,
    ):
        for n in range(calls):
            if write_tools and n % 4 == 3:
                summary = f"bench correction {index:02d}-{n:03d}: the agent skipped the decision record."
                name, arguments = "record_correction", {
                    "correction_class": "missed-decision", "category": "process", "outcome": "modified",
                    "summary": summary, "component": component, "mission": mission,
                }
            else:
                summary = ""
                name, arguments = "workflow_memory_query", {
                    "task_description": TASKS[(index + n) % len(TASKS)], "scope": SCOPES[n % len(SCOPES)],
                    "token_budget": 4000, "filters": {"mission": mission},
                }
            started = time.perf_counter()
            try:
                result = await client.call_tool(name, arguments)
            except Exception as exc:  # noqa: BLE001 - a load test counts every failure, whatever it is
                errors.append(f"{name}: {type(exc).__name__}: {exc}")
                continue
            latencies[name].append((time.perf_counter() - started) * 1000)
            if result.is_error:
                errors.append(f"{name}: {result.content[0].text[:200]}")
            elif summary:
                written.append(summary)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    """Run the load test and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--calls", type=int, default=400, help="tool calls in all, spread over the clients")
    parser.add_argument("--write-tools", action="store_true", help="serve the write tools; every 4th call records a correction")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-team-"))
    try:
        t0 = time.perf_counter()
        data, mission, component, tokens = prepare(work, args.clients)
        print(f"prepared mission {mission!r} in {time.perf_counter() - t0:.1f} s; {args.clients} tokens issued")
        port = _free_port()
        command = [sys.executable, "-m", "mission_memory", "serve", "--transport", "http", "--port", str(port)]
        env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data))
        with subprocess.Popen([*command, *(["--write-tools"] if args.write_tools else [])], env=env,
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True) as server:
            assert server.stderr is not None
            for line in server.stderr:
                if "Uvicorn running on" in line:
                    break
            cpu_before = _cpu_seconds(server.pid)
            load_before = os.getloadavg()
            latencies: dict[str, list[float]] = defaultdict(list)
            errors: list[str] = []
            written: list[str] = []
            per_client = [args.calls // args.clients + (1 if i < args.calls % args.clients else 0) for i in range(args.clients)]

            async def run_all() -> None:
                await asyncio.gather(*(
                    client_run(f"http://127.0.0.1:{port}/mcp", tokens[i], i, per_client[i], mission, component,
                               args.write_tools, latencies, errors, written)
                    for i in range(args.clients)
                ))

            started = time.perf_counter()
            asyncio.run(run_all())
            wall = time.perf_counter() - started
            cpu = _cpu_seconds(server.pid) - cpu_before
            load_after = os.getloadavg()
            server.terminate()
            server.wait(timeout=30)
        with Memory(load_settings(data_dir=data)) as memory:
            stored = {c.summary for c in memory.corrections(mission=mission)}
        lost = [s for s in written if s not in stored]
        calls = sum(len(v) for v in latencies.values())
        print(f"{args.clients} clients, {calls} calls answered of {args.calls} in {wall:.1f} s "
              f"({calls / wall:.1f} calls/s); server CPU {cpu:.1f} s")
        for name, values in sorted(latencies.items()):
            ordered = sorted(values)
            p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
            print(f"  {name:24s} n={len(values):4d}  p50 {statistics.median(values):7.0f} ms  "
                  f"p95 {p95:7.0f} ms  max {ordered[-1]:7.0f} ms")
        print(f"errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
        if args.write_tools:
            print(f"corrections acknowledged {len(written)}, stored {len(written) - len(lost)}, lost {len(lost)}")
        print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} on {os.cpu_count()} CPUs "
              "(shared machine: indicative only)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
