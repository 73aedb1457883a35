"""Rotation replay on the corpus repository (tests/corpora): what a session start hands the incoming operator.

At each *rotation* in the corpus history — a commit whose author differs from the previous commit's
author after a gap of at least ``--gap-days`` days — memory is built from the history before the
boundary (one clone checked out at the boundary's parent, ingested incrementally into one store),
and each method produces the text an incoming operator's session would start with, under the same
token budget (cl100k_base with the store's safety margin):

* ``rotation brief``: :meth:`Memory.rotation_brief` for the incoming author, from the outgoing one,
  as of the boundary commit's time (docs/design.md §6, ADR 0026);
* ``generic digest``: the generic pull digest the SessionStart hook injected before it knew who is
  starting ("Resume work on the … repository: the decisions in force …", all layers);
* ``git log -20 --stat``: the plain baseline, the last 20 commits with their file lists, cut at a
  line boundary to the budget;
* ``git log --stat, to budget``: the same log with as many commits as the budget holds (a baseline
  that spends the same tokens as the brief may).

The score is what the incoming author then works on: the files, ADRs and top-level components that
author's next ``--next`` commits touch. A file counts as named when its path appears in the text; an
ADR when its path, its file name or its number (``ADR 12``, ``ADR-0012``) does; a component (the first
path segment; ``(root)`` for top-level files) when ``<component>/`` appears, or for ``(root)`` when a
root file is named. Shares are pooled over all rotations (named / touched).

Usage::

    .venv/bin/python benchmarks/bench_rotation.py [--budget 4000] [--gap-days 2] [--next 10] [--max-rotations 0]
        [--bundle tests/corpora/tdr-docs.bundle] [--methods "git log -20 --stat|git log --stat, to budget"]
        [--skip N]

``--methods`` keeps only the named methods (separated by ``|``); with only the git log baselines nothing is
ingested, so they run in seconds.

**Open notes.** Before each boundary the outgoing author leaves three handover notes (a warning, the next
step naming their last commit's subject, a hypothesis; no path in them, so they name no scored file), each
closing the notes of the rotation before (``closes``, ADR 0060), so three notes are open at every brief.
The table says in how many briefs every open note's text was present (``notes``).

**Before and after in one run.** ``--compare-src DIR`` (a folder holding ``src/mission_memory``, e.g.
``git archive c55bf25 src | tar -x -C /tmp/brief-old``) adds the method ``rotation brief (compare-src)``: the
same brief built by that code in a worker process (``PYTHONPATH=DIR/src``) reading the same store at the
same rotation, interleaved rotation by rotation with this checkout's brief; the per-section token shares are
printed for both.

Progress goes to stderr, the table to stdout, per-rotation rows to ``benchmarks/out/bench_rotation.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.tokens import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

DEFAULT_BUNDLE = corpus_path("tdr-docs.bundle")
OUT_DIR = ROOT / "benchmarks" / "out"
ADR_DIR = "architecture-decision-records/"
_US, _RS = "\x1f", "\x1e"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=repo, capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {repo}: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode("utf-8", "replace")


def history(repo: Path) -> list[dict[str, Any]]:
    """Non-merge commits, oldest first, with author, time, first parent and touched files."""
    out = git(repo, "log", "--reverse", "--topo-order", "--no-merges", "--no-renames", "--name-only",
              f"--format={_RS}%H{_US}%P{_US}%ae{_US}%aI{_US}%an{_US}%s", "HEAD")
    commits = []
    for chunk in out.split(_RS):
        if not chunk.strip():
            continue
        header, _, names = chunk.partition("\n")
        sha, parents, author, when, name, subject = header.split(_US)
        if not parents.split():
            continue
        commits.append({"sha": sha, "parent": parents.split()[0], "author": author, "name": name, "subject": subject,
                        "time": datetime.fromisoformat(when),
                        "files": [n.strip() for n in names.splitlines() if n.strip()]})
    return commits


def rotations(commits: list[dict[str, Any]], gap: timedelta, following: int) -> list[dict[str, Any]]:
    """Boundaries where the author changes after ``gap``, with the incoming author's next commits' files."""
    found = []
    for i in range(1, len(commits)):
        before, now = commits[i - 1], commits[i]
        if now["author"] == before["author"] or now["time"] - before["time"] < gap:
            continue
        mine = [c for c in commits[i:] if c["author"] == now["author"]][:following]
        files = sorted({f for c in mine for f in c["files"]})
        found.append({"index": i, "sha": now["sha"], "parent": now["parent"], "from": before["author"],
                      "to": now["author"], "from_name": before["name"], "to_name": now["name"],
                      "from_subject": before["subject"], "from_time": before["time"],
                      "time": now["time"], "gap_days": round((now["time"] - before["time"]).days, 1),
                      "files": files})
    return found


def component(path: str) -> str:
    return path.split("/", 1)[0] if "/" in path else "(root)"


def adr_number(path: str) -> int | None:
    match = re.match(r"0*(\d+)", Path(path).name)
    return int(match.group(1)) if match else None


def named(text: str, files: list[str]) -> dict[str, tuple[int, int]]:
    """(named, touched) counts of files, ADRs and components in ``text``."""
    low = text.lower()
    named_files = {f for f in files if f.lower() in low}
    adrs = [f for f in files if f.startswith(ADR_DIR)]
    numbers = {int(m.group(1)) for m in re.finditer(r"\badr[\s\-_#]*0*(\d{1,4})\b", low)}
    named_adrs = {a for a in adrs if a in named_files or Path(a).name.lower() in low or adr_number(a) in numbers}
    components = {component(f) for f in files}
    named_components = {
        c for c in components
        if (c == "(root)" and any(component(f) == c for f in named_files)) or (c != "(root)" and f"{c.lower()}/" in low)
    }
    return {"files": (len(named_files), len(files)), "adrs": (len(named_adrs), len(adrs)),
            "components": (len(named_components), len(components))}


def git_log_baseline(repo: Path, parent: str, budget: int, tokenizer: Tokenizer, count: int = 20) -> str:
    """``git log -<count> --stat`` at ``parent``, cut at a line boundary to ``budget`` tokens."""
    text = git(repo, "log", f"-{count}", "--stat=200", parent)
    if tokenizer.count(text) <= budget:
        return text
    lines = text.splitlines(keepends=True)
    low, high = 0, len(lines)
    while low < high:  # the longest prefix of whole lines within the budget
        mid = (low + high + 1) // 2
        if tokenizer.count("".join(lines[:mid])) <= budget:
            low = mid
        else:
            high = mid - 1
    return "".join(lines[:low])


GENERIC_TASK = ("Resume work on the {mission} repository: the decisions in force and their rationale, "
                "recent changes, open questions.")


def generic_digest(memory: Memory, mission: str, budget: int) -> str:
    """The generic SessionStart digest (the hook's text before it knew who is starting)."""
    digest = memory.query(GENERIC_TASK.format(mission=mission), scope="all", token_budget=budget,
                          filters={"mission": mission}, client="hook")
    return f"# mission-memory: pull digest for {mission}\n\n{digest.text}" if digest.entries else ""


SECTIONS: dict[tuple[str, str], dict[str, Any]] = {}
"""Per (method, rotation sha): the brief's tokens and the incoming author's files named, by section."""
NOTES_PRESENT: dict[tuple[str, str], bool] = {}
"""Per (method, rotation sha): whether every open note's text was in the brief."""


def leave_notes(memory: Memory, mission: str, rot: dict[str, Any], earlier: list[str]) -> list[str]:
    """The outgoing author's three handover notes before the boundary, closing ``earlier`` (note ids)."""
    at = max(rot["from_time"], rot["time"] - timedelta(hours=1)) + timedelta(seconds=1)
    if at >= rot["time"]:
        at = rot["time"] - timedelta(seconds=3)
    subject = " ".join(rot["from_subject"].split())[:120]
    texts = (
        ("warning", f"Do not merge anything of mine to master without a second review; {rot['from_name']} is away."),
        ("next-step", f"Next: carry on from my last commit, \"{subject}\", and check its review comments."),
        ("hypothesis", "The open work is in my last few commits; whatever they left half done is the first thing to pick up."),
    )
    ids = []
    for i, (kind, text) in enumerate(texts):
        record = memory.handover_note(text, kind, mission=mission, operator=rot["from_name"],
                                      now=at + timedelta(seconds=i), closes=earlier if i == 0 else ())
        ids.append(str(record.attributes["note_id"]))
    rot["notes"] = [t for _, t in texts]
    return ids


def _sections(entries: list[tuple[str, str]], tokenizer: Tokenizer, rot: dict[str, Any]) -> dict[str, Any]:
    per: dict[str, dict[str, Any]] = {}
    for name, shown in entries:
        slot = per.setdefault(name, {"tokens": 0, "text": ""})
        slot["tokens"] += tokenizer.count(shown)
        slot["text"] += "\n" + shown
    return {name: {"tokens": v["tokens"], "files": named(v["text"], rot["files"])["files"][0]} for name, v in per.items()}


def _record_brief(method: str, text: str, entries: list[tuple[str, str]], tokenizer: Tokenizer,
                  rot: dict[str, Any]) -> str:
    SECTIONS[(method, rot["sha"])] = _sections(entries, tokenizer, rot)
    NOTES_PRESENT[(method, rot["sha"])] = all(" ".join(n.split())[:60] in " ".join(text.split())
                                              for n in rot.get("notes", []))
    return text


def rotation_brief(memory: Memory, mission: str, rot: dict[str, Any], budget: int) -> str:
    """The rotation brief for the incoming author, from the outgoing one, at the boundary's time.

    Also records, in :data:`SECTIONS`, each section's tokens (its entries' shown text) and the
    files of the incoming author's next commits that the section names, so each section's share of
    the budget can be set against what it contributes.
    """
    brief = memory.rotation_brief(mission=mission, from_operator=rot["from_name"], for_operator=rot["to_name"],
                                  now=rot["time"], token_budget=budget, archive=False)
    entries = [(item.section.name.lower(), shown) for item, shown in brief.entries]
    return _record_brief("rotation brief", brief.text, entries, memory.tokenizer, rot)


class CompareWorker:
    """This script run with ``--worker`` under another checkout's ``src``: one brief per request line."""

    def __init__(self, src: Path) -> None:
        root = src / "src" if (src / "src" / "mission_memory").is_dir() else src
        if not (root / "mission_memory").is_dir():
            raise SystemExit(f"--compare-src {src}: no mission_memory package in it or in its src/")
        env = {**os.environ, "PYTHONPATH": str(root)}
        self.process = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)

    def brief(self, data_dir: Path, mission: str, rot: dict[str, Any], budget: int, tokenizer: Tokenizer) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        request = {"data_dir": str(data_dir), "mission": mission, "from": rot["from_name"], "to": rot["to_name"],
                   "time": rot["time"].isoformat(), "budget": budget}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit("the --compare-src worker stopped; its error is above")
        answer = json.loads(line)
        entries = [(name, shown) for name, shown in answer["entries"]]
        return _record_brief("rotation brief (compare-src)", answer["text"], entries, tokenizer, rot)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def worker() -> None:
    """Answer brief requests (JSON lines on stdin) with the ``mission_memory`` on ``PYTHONPATH``."""
    import mission_memory

    log(f"compare-src worker: mission_memory from {Path(mission_memory.__file__).parent}")
    memories: dict[str, Memory] = {}
    for line in sys.stdin:
        request = json.loads(line)
        memory = memories.get(request["data_dir"])
        if memory is None:
            memory = memories[request["data_dir"]] = Memory(load_settings(data_dir=Path(request["data_dir"])))
        brief = memory.rotation_brief(mission=request["mission"], from_operator=request["from"],
                                      for_operator=request["to"], now=datetime.fromisoformat(request["time"]),
                                      token_budget=request["budget"], archive=False)
        entries = [(item.section.name.lower(), shown) for item, shown in brief.entries]
        print(json.dumps({"text": brief.text, "entries": entries}), flush=True)
    for memory in memories.values():
        memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE)
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--gap-days", type=float, default=2.0)
    parser.add_argument("--next", type=int, default=10, help="the incoming author's next N commits are scored")
    parser.add_argument("--max-rotations", "--limit", dest="limit", type=int, default=0,
                        help="replay only the first N rotations (0 = all)")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N rotations (replay a later stretch)")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_rotation.json")
    parser.add_argument("--methods", default="", help="method names to run, separated by | (default: all)")
    parser.add_argument("--compare-src", type=Path, default=None,
                        help="another checkout's folder (holding src/mission_memory): its brief beside this one's")
    parser.add_argument("--no-notes", action="store_true", help="leave no handover notes at the boundaries")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return

    work = Path(tempfile.mkdtemp(prefix="mm-bench-rotation-"))
    repo = work / "tdr-docs"
    subprocess.run(["git", "clone", "-q", str(args.bundle), str(repo)], check=True)
    data_dir = work / "data"
    found = rotations(history(repo), timedelta(days=args.gap_days), args.next)
    found = found[args.skip:]
    if args.limit:
        found = found[: args.limit]
    log(f"{len(found)} rotations (author change after >= {args.gap_days:g} days); budget {args.budget} tokens")

    memory = Memory(load_settings(data_dir=data_dir))
    mission = repo.name
    compare = CompareWorker(args.compare_src) if args.compare_src else None
    methods: dict[str, Callable[[dict[str, Any]], str]] = {
        "rotation brief": lambda r: rotation_brief(memory, mission, r, args.budget),
        "generic digest": lambda r: generic_digest(memory, mission, args.budget),
        "git log -20 --stat": lambda r: git_log_baseline(repo, r["parent"], args.budget, memory.tokenizer),
        "git log --stat, to budget": lambda r: git_log_baseline(repo, r["parent"], args.budget, memory.tokenizer,
                                                                count=400),
    }
    if args.methods:
        wanted = [m.strip() for m in args.methods.split("|") if m.strip()]
        unknown = [m for m in wanted if m not in methods]
        if unknown:
            raise SystemExit(f"--methods: unknown {unknown}; known: {list(methods)}")
        methods = {name: methods[name] for name in wanted}
    if compare is not None:  # right after this checkout's brief, on the same store at the same rotation
        at = list(methods).index("rotation brief") + 1 if "rotation brief" in methods else 0
        pairs = list(methods.items())
        pairs.insert(at, ("rotation brief (compare-src)",
                          lambda r: compare.brief(data_dir, mission, r, args.budget, memory.tokenizer)))
        methods = dict(pairs)
    needs_memory = any(not name.startswith("git log") for name in methods)
    rows = []
    note_ids: list[str] = []
    load_before = os.getloadavg()
    try:
        for i, rot in enumerate(found, start=1):
            started = time.perf_counter()
            git(repo, "checkout", "-q", "--detach", rot["parent"])
            if needs_memory:
                memory.ingest_repository(repo, mission=mission)
                if not args.no_notes:
                    note_ids = leave_notes(memory, mission, rot, note_ids)
            ingest_s = time.perf_counter() - started
            row: dict[str, Any] = {**rot, "ingest_s": round(ingest_s, 1), "methods": {}}
            for name, produce in methods.items():
                text = produce(rot)
                row["methods"][name] = {"tokens": memory.tokenizer.count(text), **named(text, rot["files"])}
                if (name, rot["sha"]) in SECTIONS:
                    row["methods"][name]["sections"] = SECTIONS[(name, rot["sha"])]
                    row["methods"][name]["notes_present"] = NOTES_PRESENT[(name, rot["sha"])]
            rows.append(row)
            shown = "  ".join(
                f"{name}: files {m['files'][0]}/{m['files'][1]} comps {m['components'][0]}/{m['components'][1]}"
                for name, m in row["methods"].items()
            )
            log(f"  [{i}/{len(found)}] {rot['sha'][:10]} {rot['from']} -> {rot['to']} ingest {ingest_s:.0f}s  {shown}")
    finally:
        if compare is not None:
            compare.close()
        memory.close()
        shutil.rmtree(work, ignore_errors=True)

    print(f"\nRotation replay: {len(rows)} rotations (skip {args.skip}), budget {args.budget} tokens, next {args.next}"
          f" commits scored; load average before {[round(x, 2) for x in load_before]},"
          f" after {[round(x, 2) for x in os.getloadavg()]}\n")
    print(f"{'method':<30} {'tokens p50':>10} {'files':>8} {'ADRs':>8} {'components':>11} {'notes':>9}")
    summary = {}
    for name in methods:
        pooled = {}
        for key in ("files", "adrs", "components"):
            hit = sum(r["methods"][name][key][0] for r in rows)
            total = sum(r["methods"][name][key][1] for r in rows)
            pooled[key] = hit / total if total else None
        tokens = statistics.median(r["methods"][name]["tokens"] for r in rows) if rows else 0
        summary[name] = {"tokens_p50": tokens, **pooled}

        def pct(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.0%}"

        with_notes = [r["methods"][name]["notes_present"] for r in rows if "notes_present" in r["methods"][name]]
        notes = f"{sum(with_notes)}/{len(with_notes)}" if with_notes and not args.no_notes else "n/a"
        summary[name]["notes_present"] = notes
        print(f"{name:<30} {tokens:>10.0f} {pct(pooled['files']):>8} {pct(pooled['adrs']):>8} "
              f"{pct(pooled['components']):>11} {notes:>9}")
        print(f"{'':<30} {'':>10} {pooled['files'] or 0:>8.3f} {pooled['adrs'] or 0:>8.3f} {pooled['components'] or 0:>11.3f}")
    touched = sum(len(r["files"]) for r in rows) or 1
    for method in [m for m in methods if m.startswith("rotation brief")]:
        brief_rows = [r["methods"][method]["sections"] for r in rows if "sections" in r["methods"].get(method, {})]
        if not brief_rows:
            continue
        print(f"\n{method} by section: share of the brief's entry tokens (pooled), and files of the next"
              " commits it names")
        total_tokens = sum(v["tokens"] for sections in brief_rows for v in sections.values()) or 1
        names = sorted({n for sections in brief_rows for n in sections})
        for section in names:
            tokens = sum(s.get(section, {}).get("tokens", 0) for s in brief_rows)
            files = sum(s.get(section, {}).get("files", 0) for s in brief_rows)
            print(f"  {section:<16} tokens {tokens / total_tokens:>5.0%}   files named {files / touched:>5.0%}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"budget": args.budget, "summary": summary, "rows": rows}, indent=2, default=str))
    log(f"rows written to {args.out}")


if __name__ == "__main__":
    main()
