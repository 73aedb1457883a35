"""Mixed load on one memory: is everything acknowledged still stored at the end? (issue 22 item 1, ADR 0056)

Real processes share one data dir for ``--seconds``: repeated ``mission-memory ingest`` runs of a
generated git repository (a new commit and document before each), ``mission-memory decide`` and
``mission-memory correct`` runs, the streamable-HTTP MCP server (``serve --write-tools``) answering
``workflow_memory_query`` and ``record_decision`` calls from a real MCP client and ``POST /events``
batches, the installed prompt-capture hook command run as Claude Code runs it, and one
``mission-memory refresh once`` pass in the middle. Every answer that says "stored" is counted as
acknowledged; afterwards the store (and the prompt repository) is read and, per kind, acknowledged
and stored are printed side by side, with the load average. Exit status 1 when any kind lost something.

The embedder is the configured one (the shipped multilingual-e5-small by default), so ingests run
for seconds as they do for users; ``--embeddings-url`` points every process at an OpenAI-compatible
endpoint instead.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_mixed_load_acknowledged.py [--seconds 120] [--commits 150]

Works in a temporary folder; nothing else is written.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MISSION = "convoy"


@dataclass
class Tally:
    """What the load acknowledged, per kind, and the keys to look for in the store."""

    acknowledged: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    keys: dict[str, set[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ack(self, kind: str, key: str | None = None) -> None:
        with self.lock:
            self.acknowledged[kind] += 1
            if key is not None:
                self.keys.setdefault(kind, set()).add(key)

    def fail(self, kind: str, error: str = "") -> None:
        with self.lock:
            self.failed[kind] += 1
            if error:
                self.errors.append(f"{kind}: {error[-600:]}")


def _git(root: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.org",
               GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.org")
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def make_repository(root: Path, commits: int) -> None:
    """A git repository of ``commits`` commits, two ADRs and a runbook per ten commits."""
    (root / "docs" / "adr").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# Convoy\n\nMoves supplies between depots.\n", encoding="utf-8")
    for number, title in ((1, "Use SQLite for the ledger"), (2, "Retry uploads five times")):
        (root / "docs" / "adr" / f"000{number}-adr.md").write_text(
            f"# {number}. {title}\n\n## Status\n\nAccepted\n\n## Context\n\nDepots.\n\n## Decision\n\n{title}.\n",
            encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "OPS-1: start")
    for i in range(commits):
        if i % 10 == 0:
            (root / "docs" / f"runbook-{i}.md").write_text(
                f"# Runbook {i}\n\n## Restart\n\nRestart depot {i} at dawn.\n\n## Alerts\n\nPage shift {i}.\n",
                encoding="utf-8")
            _git(root, "add", "-A")
        _git(root, "commit", "-q", "--allow-empty", "-m", f"OPS-{i + 2}: route change {i}\n\nDepot {i} moved.")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mission_memory", *args]


def _run(args: list[str], env: dict[str, str], cwd: Path, stdin: bytes | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(args, env=env, cwd=cwd, input=stdin, capture_output=True, timeout=timeout)


def _ingests(stop: threading.Event, repo: Path, env: dict[str, str], tally: Tally) -> None:
    i = 0
    while i == 0 or not stop.is_set():  # at least one round each
        name = f"docs/later-{i}.md"
        (repo / name).write_text(f"# Later {i}\n\n## Step\n\nDrain queue {i} before the convoy leaves.\n",
                                 encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"OPS-{1000 + i}: later note {i}")
        done = _run(_cli("ingest", str(repo), "--mission", MISSION, "--json"), env, repo)
        if done.returncode == 0:
            tally.ack("ingested file", name)
            tally.ack("ingest run")
        else:
            tally.fail("ingest run", done.stderr.decode("utf-8", "replace"))
        i += 1


def _decides(stop: threading.Event, repo: Path, env: dict[str, str], tally: Tally, prefix: str) -> None:
    i = 0
    while i == 0 or not stop.is_set():  # at least one round each
        done = _run(_cli("decide", f"{prefix} decision {i}: hold depot {i}", "--decision", f"Hold {i} hours.",
                         "--rationale", "the road is cut", "--mission", MISSION, "--json"), env, repo)
        if done.returncode == 0:
            tally.ack("decision (decide)", json.loads(done.stdout)["source_key"])
        else:
            tally.fail("decision (decide)", done.stderr.decode("utf-8", "replace"))
        i += 1


def _corrections(stop: threading.Event, repo: Path, env: dict[str, str], tally: Tally) -> None:
    i = 0
    while i == 0 or not stop.is_set():  # at least one round each
        done = _run(_cli("correct", "--class", "wrong-approach", "--category", "scope", "--outcome", "modified",
                         "--summary", f"Used the old depot list ({i})", "--mission", MISSION,
                         "--session", f"bench-{i}", "--json"), env, repo)
        if done.returncode == 0:
            tally.ack("correction", f"correction/{json.loads(done.stdout)['correction_id']}")
        else:
            tally.fail("correction", done.stderr.decode("utf-8", "replace"))
        i += 1


def _hook_prompts(stop: threading.Event, repo: Path, env: dict[str, str], tally: Tally, data_dir: Path) -> None:
    from mission_memory.hook.installer import prompt_hook_command

    command = prompt_hook_command(data_dir)
    i = 0
    while i == 0 or not stop.is_set():  # at least one round each
        payload = json.dumps({"session_id": "bench-session", "transcript_path": "/tmp/t.jsonl", "cwd": str(repo),
                              "permission_mode": "default", "hook_event_name": "UserPromptSubmit",
                              "prompt": f"Check the convoy route {i} before noon, будь ласка."}).encode()
        done = subprocess.run(["/bin/sh", "-c", command], input=payload, env=env, cwd=repo, capture_output=True,
                              timeout=60)
        (tally.ack if done.returncode == 0 else tally.fail)("prompt (hook)")
        i += 1
        time.sleep(0.2)


def _mcp_and_events(stop: threading.Event, url: str, tally: Tally) -> None:
    import anyio
    import httpx
    from mcp import Client

    events_url = url.removesuffix("/mcp") + f"/events?mission={MISSION}"

    async def session(first: int) -> int:
        i = first
        async with Client(url) as client, httpx.AsyncClient(timeout=120) as http:
            while i == 0 or not stop.is_set():  # at least one round
                result = await client.call_tool("workflow_memory_query",
                                                {"task_description": f"which depot is held {i}?", "token_budget": 1200})
                (tally.ack if not result.is_error else tally.fail)("mcp query")
                result = await client.call_tool("record_decision", {
                    "title": f"Agent decision {i}: reroute via depot {i}", "decision": f"Reroute {i}.",
                    "rationale": "the bridge is out"})
                if result.is_error:
                    tally.fail("decision (MCP)")
                else:
                    tally.ack("decision (MCP)", json.loads(result.content[0].text)["source_key"])
                lines = "".join(json.dumps({"id": f"bench-{i}-{k}", "time": "2026-12-01T10:00:00+00:00",
                                            "sector": "north", "type": "lost_link", "criticality": 0.5,
                                            "text": f"Lost link with drone {i}-{k}"}) + "\n" for k in range(5))
                answer = await http.post(events_url, content=lines.encode(),
                                         headers={"Content-Type": "application/x-ndjson"})
                if answer.status_code == 200:
                    for k in range(5):
                        tally.ack("event", f"event:bench-{i}-{k}")
                else:
                    tally.fail("event", f"HTTP {answer.status_code}: {answer.text[:300]}")
                i += 1
        return i

    async def go() -> None:
        i = 0
        while i == 0 or not stop.is_set():
            try:
                i = await session(i)
            except Exception as exc:  # noqa: BLE001 - a broken session is counted and reported; a new one starts
                tally.fail("mcp session", repr(exc))
                i += 1

    anyio.run(go)


def _tasks(parent: Path) -> Path:
    """A local tracker folder holding one LONG-TERM task, for the refresh pass."""
    folder = parent / "tasks"
    folder.mkdir(exist_ok=True)
    (folder / "OPS-7.md").write_text(
        "---\nkey: OPS-7\ntitle: Keep the convoy ledger current\nlabels: [LONG-TERM]\nstate: In Progress\n"
        "created: 2026-11-01T09:00:00Z\nupdated: 2026-11-02T09:00:00Z\nfiles: [docs/adr/0001-adr.md]\n---\n\n"
        "Keep the depot ledger in step with the routes.\n\n## Comments\n\n### ops · 2026-11-02T09:00:00Z\n\n"
        "Which depot closes first?\n", encoding="utf-8")
    return folder


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stored_counts(data_dir: Path, tally: Tally, env: dict[str, str]) -> dict[str, int]:
    """Per kind, how many of the acknowledged keys the store holds (prompts: the corpus's count)."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        from mission_memory.api import Memory
        from mission_memory.capture.dropped_prompts import read_record
        from mission_memory.prompts.corpus import PromptCorpus

        with Memory.open() as memory:
            refs: set[str] = set()
            keys: set[str] = set()
            paths: set[str] = set()
            for batch in memory.store.iterate():
                for r in batch:
                    refs.add(r.provenance.ref)
                    keys.add(r.source_key)
                    if isinstance(r.attributes.get("path"), str):
                        paths.add(r.attributes["path"])
            queries = memory.store.count_retrieval_events()
        out = {
            "decision (decide)": len(tally.keys.get("decision (decide)", set()) & keys),
            "decision (MCP)": len(tally.keys.get("decision (MCP)", set()) & keys),
            "correction": len(tally.keys.get("correction", set()) & refs),
            "event": len(tally.keys.get("event", set()) & refs),
            "ingested file": len(tally.keys.get("ingested file", set()) & paths),
            "mcp query": queries,
        }
        prompts = len(PromptCorpus(data_dir / "prompts.git").prompts())
        dropped = read_record(str(data_dir))
        out["prompt (hook)"] = prompts
        if dropped is not None:
            out["prompt (hook) dropped and counted"] = dropped.storage + dropped.input
        return out
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_mixed_load(seconds: float, workdir: Path, commits: int, extra_env: dict[str, str] | None = None,
                   refresh: bool = True) -> dict[str, dict[str, int]]:
    """Run the load for ``seconds`` in ``workdir``; ``{kind: {"acknowledged", "stored", "failed"}}``.

    Args:
        seconds: how long the writers keep writing (ingests and CLI runs under way finish after).
        workdir: an empty folder: the repository and the data dir go there.
        commits: commits of the generated repository.
        extra_env: ``MISSION_MEMORY_*`` variables for every process (an embeddings endpoint).
        refresh: run one ``refresh once`` pass in the middle.
    """
    repo, data_dir = workdir / MISSION, workdir / "data"
    repo.mkdir()
    make_repository(repo, commits)
    env = {**os.environ, **(extra_env or {}), "MISSION_MEMORY_DATA_DIR": str(data_dir),
           "HOME": str(workdir / "home")}
    (workdir / "home").mkdir()
    first = _run(_cli("ingest", str(repo), "--mission", MISSION, "--json"), env, repo)
    if first.returncode != 0:
        raise SystemExit(f"the first ingest failed: {first.stderr.decode()[-2000:]}")
    tally = Tally()
    port = _free_port()
    with subprocess.Popen(
        _cli("serve", "--transport", "http", "--port", str(port), "--write-tools", "--mission", MISSION),
        cwd=repo, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    ) as server:
        _load(server, port, seconds, refresh, repo, env, tally, data_dir)
    stored = stored_counts(data_dir, tally, env)
    kinds = sorted(set(tally.acknowledged) | set(tally.failed) | set(stored))
    out = {kind: {"acknowledged": tally.acknowledged.get(kind, 0), "stored": stored.get(kind, -1),
                  "failed": tally.failed.get(kind, 0)} for kind in kinds}
    for error in tally.errors[:10]:
        print("error:", error, file=sys.stderr)
    return out


def _load(server: subprocess.Popen[str], port: int, seconds: float, refresh: bool, repo: Path,
          env: dict[str, str], tally: Tally, data_dir: Path) -> None:
    stop = threading.Event()
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if "Uvicorn running on" in line:
                break
        threading.Thread(target=server.stderr.read, daemon=True).start()  # keep the pipe drained
        workers: list[tuple[Callable[..., None], tuple[Any, ...]]] = [
            (_ingests, (stop, repo, env, tally)),
            (_decides, (stop, repo, env, tally, "Operator")),
            (_corrections, (stop, repo, env, tally)),
            (_hook_prompts, (stop, repo, env, tally, data_dir)),
            (_mcp_and_events, (stop, f"http://127.0.0.1:{port}/mcp", tally)),
        ]
        threads = [threading.Thread(target=target, args=args) for target, args in workers]
        for thread in threads:
            thread.start()
        time.sleep(seconds / 2)
        if refresh:
            done = _run(_cli("refresh", "once", "--tracker", "local", "--tasks-dir", str(_tasks(repo.parent)),
                             "--repo", str(repo), "--json"), env, repo)
            if done.returncode == 0:
                tally.ack("refresh pass")
            else:
                tally.fail("refresh pass", done.stderr.decode("utf-8", "replace"))
        time.sleep(seconds / 2)
        stop.set()
        for thread in threads:
            thread.join()
    finally:
        stop.set()
        server.terminate()
        server.wait(timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--commits", type=int, default=150)
    parser.add_argument("--embeddings-url", help="an OpenAI-compatible endpoint for every process")
    parser.add_argument("--embeddings-model", default="multilingual-e5-small")
    args = parser.parse_args()
    extra = {}
    if args.embeddings_url:
        extra = {"MISSION_MEMORY_EMBEDDER": "openai", "MISSION_MEMORY_EMBEDDINGS_URL": args.embeddings_url,
                 "MISSION_MEMORY_EMBEDDINGS_MODEL": args.embeddings_model}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mm-mixed-load-") as tmp:
        results = run_mixed_load(args.seconds, Path(tmp), args.commits, extra)
    print(f"mixed load for {args.seconds:.0f} s ({time.perf_counter() - started:.0f} s with setup and drain);"
          f" load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'kind':38} {'acknowledged':>12} {'stored':>8} {'failed':>7}")
    lost = False
    for kind, row in results.items():
        stored = str(row["stored"]) if row["stored"] >= 0 else "-"
        print(f"{kind:38} {row['acknowledged']:>12} {stored:>8} {row['failed']:>7}")
        if kind in COUNTED and row["stored"] < row["acknowledged"]:
            lost = True
    prompts = results.get("prompt (hook)", {"acknowledged": 0, "stored": 0})
    dropped = results.get("prompt (hook) dropped and counted", {"stored": 0})["stored"]
    if prompts["stored"] + max(0, dropped) < prompts["acknowledged"]:
        lost = True
    print("acknowledged = stored for every kind" if not lost else "LOST: some acknowledged writes are not stored")
    print("command:", shlex.join(sys.argv))
    return 1 if lost else 0


COUNTED = frozenset({"decision (decide)", "decision (MCP)", "correction", "event", "ingested file", "mcp query"})
"""Kinds whose stored count must reach the acknowledged one (prompts: stored + dropped-and-counted)."""


if __name__ == "__main__":
    raise SystemExit(main())
