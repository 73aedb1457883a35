"""Refresh pass time against a hanging LLM endpoint, before and after the pass budget (ADR 0019).

A loopback server accepts each connection, reads the request and never answers. A local task folder
holds ``--tasks`` LONG-TERM tasks, each with one comment, so every task asks the LLM twice (summary and
open questions). The script times one ``refresh once`` pass:

* **after** (this tree): ``MISSION_MEMORY_LLM_DEADLINE_SECONDS=--deadline`` and
  ``MISSION_MEMORY_REFRESH_PASS_BUDGET_SECONDS=--budget``;
* **before** (optional, ``--before-src DIR``): the code of an older tree, e.g.
  ``git archive d8d6e70 src | tar -x -C /tmp/mm-before``, run in a subprocess with the LLM summarizer's
  per-read ``timeout=--before-timeout`` (its default was 60 s, which would take 2 x tasks x 60 s).

Run::

    python benchmarks/bench_refresh_deadline.py --tasks 10 --deadline 5 --budget 10 \\
        --before-src /tmp/mm-before/src --before-timeout 5

It prints one line per configuration (wall seconds, tasks refreshed, summarizers, budget fields) and
the projection of the old default (2 calls x tasks x 60 s).
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
import textwrap
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

PASS_AT = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
OLD_DEFAULT_TIMEOUT = 60.0


class HangingServer:
    """Accepts, reads the request, never answers; :meth:`close` releases every connection."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"
        self.connections = 0
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            worker = threading.Thread(target=self._hold, args=(conn,), daemon=True)
            self._threads.append(worker)
            worker.start()

    def _hold(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(0.5)
            with contextlib.suppress(OSError):
                conn.recv(65536)
            self._stop.wait()

    def close(self) -> None:
        self._stop.set()
        self._acceptor.join()
        self._listener.close()
        for worker in self._threads:
            worker.join()


def write_tasks(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(1, count + 1):
        (folder / f"OPS-{n}.md").write_text(
            f"---\nkey: OPS-{n}\ntitle: Long task {n}\nlabels: [LONG-TERM]\ncreated: 2025-02-01T09:00:00Z\n---\n\n"
            f"Keep task {n} moving.\n\n## Comments\n\n### Olena · 2025-02-10T10:00:00Z\n\n"
            f"Should task {n} wait for the field test?\n",
            encoding="utf-8",
        )


def run_after(data_dir: Path, tasks: Path, llm_url: str, deadline: float, budget: float) -> dict[str, object]:
    from mission_memory.api import Memory
    from mission_memory.config import Settings
    from mission_memory.trackers.local_files import LocalFolderTracker

    settings = Settings(data_dir=data_dir, llm_base_url=llm_url, llm_model="m", llm_deadline_seconds=deadline,
                        refresh_pass_budget_seconds=budget)
    with Memory(settings) as memory:
        _ = memory.embedder.model_id  # load the embedder outside the timed pass
        start = time.monotonic()
        report = memory.refresh_once(LocalFolderTracker(tasks), None, PASS_AT)
        wall = time.monotonic() - start
    data = report.to_json()
    return {"wall_s": round(wall, 2), "refreshed": len(data["refreshed"]), "failed": len(data["failed"]),
            "summarizers": sorted({r["summarizer"] for r in data["refreshed"]}), "budget": data["budget"]}


_BEFORE_DRIVER = textwrap.dedent(
    """
    import json, sys, time
    from datetime import datetime
    from pathlib import Path
    from mission_memory.api import Memory
    from mission_memory.ingest.trackers.local_files import LocalFolderTracker
    from mission_memory.refresh.ledger import StoreSpendLedger
    from mission_memory.refresh.orchestrator import refresh_once
    from mission_memory.refresh.settings import RefreshSettings
    from mission_memory.refresh.summarizers import ChatCompletionsSummarizer, ExtractiveSummarizer

    tasks, url, timeout, now = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), datetime.fromisoformat(sys.argv[4])
    with Memory.open() as memory:
        _ = memory.embedder.model_id
        summarizer = ChatCompletionsSummarizer(url, "m", None, StoreSpendLedger(memory.store), 200_000,
                                               fallback=ExtractiveSummarizer(), timeout=timeout, clock=lambda: now)
        start = time.monotonic()
        report = refresh_once(memory, LocalFolderTracker(tasks), None, now, summarizer,
                              settings=RefreshSettings(llm_base_url=url, llm_model="m"))
        wall = time.monotonic() - start
    data = report.to_json()
    print(json.dumps({"wall_s": round(wall, 2), "refreshed": len(data["refreshed"]), "failed": len(data["failed"]),
                      "summarizers": sorted({r["summarizer"] for r in data["refreshed"]})}))
    """
)


def run_before(src: Path, data_dir: Path, tasks: Path, llm_url: str, timeout: float) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(src), MISSION_MEMORY_DATA_DIR=str(data_dir))
    done = subprocess.run(
        [sys.executable, "-c", _BEFORE_DRIVER, str(tasks), llm_url, str(timeout), PASS_AT.isoformat()],
        env=env, capture_output=True, text=True, check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--deadline", type=float, default=5.0, help="LLM deadline of the 'after' pass, s")
    parser.add_argument("--budget", type=float, default=10.0, help="pass budget of the 'after' pass, s")
    parser.add_argument("--before-src", type=Path, help="src/ folder of the older tree to time as 'before'")
    parser.add_argument("--before-timeout", type=float, default=5.0, help="per-read LLM timeout of 'before', s")
    args = parser.parse_args()

    server = HangingServer()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-refresh-deadline-") as tmp:
            root = Path(tmp)
            write_tasks(root / "tasks", args.tasks)
            print(f"tasks={args.tasks}, each asking the LLM twice; endpoint {server.url} never answers")
            print(f"old default projection: 2 x {args.tasks} x {OLD_DEFAULT_TIMEOUT:g} s = "
                  f"{2 * args.tasks * OLD_DEFAULT_TIMEOUT:g} s")
            if args.before_src is not None:
                before = run_before(args.before_src, root / "before", root / "tasks", server.url, args.before_timeout)
                print(f"before (per-read timeout {args.before_timeout:g} s, no deadline, no budget): {before}")
            after = run_after(root / "after", root / "tasks", server.url, args.deadline, args.budget)
            print(f"after  (deadline {args.deadline:g} s, pass budget {args.budget:g} s): {after}")
            print(f"LLM connections opened: {server.connections}")
    finally:
        server.close()


if __name__ == "__main__":
    main()
