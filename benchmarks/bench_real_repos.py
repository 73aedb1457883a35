"""Real repositories ingested from scratch (issue 34 item 4): does a first ingest of a public repository
with an ADR folder finish, find every ADR, and read the statuses a person reads?

For each repository of the data file (``benchmarks/data/real_repos.json``: bare mirrors fetched
beforehand, the ADR folder, a clone depth, a hand-checked status sample), and for each ``--src``
tree (e.g. the starting commit's ``src`` and this checkout's), the bench clones the mirror into a
temporary folder (``git clone --depth N`` when the data file gives a depth: the CLI has no history
limit, and a 12,000-commit history does not finish on a shared 2-core machine), runs
``python -m mission_memory ingest <clone> --json`` in its own process with a fresh data folder,
and prints one row per repository and tree:

* exit status (``crash`` when the process printed a traceback; ``timeout`` past ``--deadline``);
* records by kind (from the report);
* decisions found in the ADR folder against the ADR files present there (``*.md`` whose name
  matches the repository's ``adr_pattern``, templates and indexes of ``not_adrs`` left out);
* statuses read against the hand-checked sample, with the misses named;
* records/s (the report's) and CPU-seconds of the ingest process and its children.

Both trees of a repository run back to back, so they see the same load; ``uptime`` is printed at the
start and the end. Not a test: it needs the mirrors and minutes of CPU.

Usage::

    python benchmarks/bench_real_repos.py --src /work/wt/base/src --src src [--only adr/madr] [--deadline 1800]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "real_repos.json"
DEFAULT_PATTERN = r"^(?:adr[-_]?)?\d+"


@dataclass
class Row:
    """One ingest of one repository by one source tree."""

    repo: str
    tree: str
    exit: str = ""
    kinds: dict[str, int] = field(default_factory=dict)
    decisions: int = 0
    adr_files: int = 0
    missing: list[str] = field(default_factory=list)
    status_ok: int = 0
    status_total: int = 0
    status_misses: list[str] = field(default_factory=list)
    records_per_second: float = 0.0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    commits: int = 0
    note: str = ""


def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=900).stdout


def _clone(mirror: Path, target: Path, depth: int | None) -> None:
    """A fresh clone of the mirror's default branch, made shallow at ``depth`` commits when given.

    A local clone (objects linked, not packed: a mirror may lack a large blob the checkout never needs,
    and ``git clone --depth`` over ``file://`` refuses such a mirror); the depth is then set as git's
    own shallow clones set it, in ``.git/shallow``: the commits whose parents are cut off.
    """
    _git("clone", "-q", "--no-checkout", str(mirror), str(target))
    missing = _missing_blobs(target)
    _git("checkout", "-q", "HEAD", "--", ".", *(f":(exclude,literal){path}" for path in missing), cwd=target)
    (target / ".git" / "bench-missing-blobs").write_text("\n".join(missing), encoding="utf-8")
    if not depth:
        return
    kept = _git("rev-list", f"--max-count={depth}", "--parents", "HEAD", cwd=target).splitlines()
    inside = {line.split()[0] for line in kept}
    boundary = [line.split()[0] for line in kept if any(parent not in inside for parent in line.split()[1:])]
    if boundary:
        (target / ".git" / "shallow").write_text("\n".join(boundary) + "\n", encoding="ascii")


def _missing_blobs(clone: Path) -> list[str]:
    """Paths of HEAD whose blobs the mirror does not hold (the fetched snapshots leave out their
    largest files); they are left out of the checkout, and the row says how many."""
    tree = _git("-c", "core.quotepath=off", "ls-tree", "-r", "HEAD", cwd=clone).splitlines()
    entries = [(line.split("\t", 1)[0].split()[2], line.split("\t", 1)[1]) for line in tree
               if line.split()[1] == "blob"]
    checked = subprocess.run(["git", "cat-file", "--batch-check"], cwd=clone, input="\n".join(s for s, _ in entries) + "\n",
                             capture_output=True, text=True, check=True, timeout=900).stdout.splitlines()
    return [path for (sha, path), line in zip(entries, checked, strict=True) if line.endswith("missing")]


def _adr_files(clone: Path, entry: dict[str, Any]) -> list[str]:
    """Repository-relative paths of the ADR files the folder holds (by the entry's name pattern)."""
    folder = entry["adr_dir"].strip("/")
    listing = _git("-c", "core.quotepath=off", "ls-tree", "--name-only", "HEAD", f"{folder}/" if folder else ".",
                   cwd=clone)
    pattern = re.compile(entry.get("adr_pattern") or DEFAULT_PATTERN, re.IGNORECASE)
    skip = set(entry.get("not_adrs") or ())
    out = []
    for path in listing.splitlines():
        name = path.rsplit("/", 1)[-1]
        if name.lower().endswith((".md", ".markdown")) and pattern.match(name) and name not in skip:
            out.append(path)
    return out


def _run_ingest(src: Path, clone: Path, data_dir: Path, mission: str, deadline: float) -> tuple[str, dict[str, Any], float, float]:
    """(exit, report, CPU-seconds, wall seconds) of one ingest process running ``src``'s package."""
    env = dict(os.environ, PYTHONPATH=str(src), MISSION_MEMORY_DATA_DIR=str(data_dir))
    out_path, err_path = data_dir / "stdout.json", data_dir / "stderr.txt"
    data_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mission_memory", "ingest", str(clone), "--mission", mission, "--json"],
            stdout=out, stderr=err, env=env, start_new_session=True,
        )
        status, usage = 0, None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                return "timeout", {}, usage.ru_utime + usage.ru_stime, time.monotonic() - started
            time.sleep(0.5)
    wall = time.monotonic() - started
    cpu = usage.ru_utime + usage.ru_stime if usage else 0.0
    code = os.waitstatus_to_exitcode(status)
    stderr = err_path.read_text(encoding="utf-8", errors="replace")
    try:
        report = json.loads(out_path.read_text(encoding="utf-8") or "{}")
    except ValueError:
        report = {}
    exit_text = "crash" if "Traceback (most recent call last)" in stderr else str(code)
    return exit_text, report, cpu, wall


def _stored_decisions(data_dir: Path, mission: str) -> dict[str, str | None]:
    """Status of each stored decision record, by its repository-relative path."""
    db = data_dir / "memory.db"
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT ref, json_extract(attributes, '$.status') FROM records WHERE mission = ? AND kind = 'decision'",
            (mission,),
        ).fetchall()
    return {str(ref): status for ref, status in rows}


def bench_one(entry: dict[str, Any], src: Path, mirror_root: Path, work: Path, deadline: float) -> Row:
    """Clone one repository and ingest it with one source tree."""
    name = entry["name"]
    row = Row(repo=name, tree=str(src))
    mirror = mirror_root / name.replace("/", "+") / "repo"
    slug = re.sub(r"[^\w.-]+", "-", name)
    clone = work / f"{slug}-{abs(hash(str(src))) % 10_000}"
    _clone(mirror, clone, entry.get("depth"))
    row.commits = int(_git("rev-list", "--count", "HEAD", cwd=clone).strip())
    files = _adr_files(clone, entry)
    row.adr_files = len(files)
    data_dir = work / f"{clone.name}-data"
    mission = slug.lower()
    row.exit, report, row.cpu_seconds, row.wall_seconds = _run_ingest(src, clone, data_dir, mission, deadline)
    row.kinds = dict(Counter(report.get("by_kind", {}).get("added", {})))
    row.records_per_second = float(report.get("records_per_second") or 0.0)
    stored = _stored_decisions(data_dir, mission)
    row.decisions = sum(1 for path in files if path in stored)
    row.missing = [path.rsplit("/", 1)[-1] for path in files if path not in stored]
    folder = entry["adr_dir"].strip("/")
    for file_name, expected in (entry.get("status_sample") or {}).items():
        path = f"{folder}/{file_name}" if folder else file_name
        row.status_total += 1
        got = stored.get(path, "<no record>")
        if got == expected:
            row.status_ok += 1
        else:
            row.status_misses.append(f"{file_name[:40]}: {got} (expected {expected})")
    notes = []
    missing = (clone / ".git" / "bench-missing-blobs").read_text(encoding="utf-8").split()
    if missing:
        notes.append(f"{len(missing)} files absent from the mirror")
    skipped = report.get("skipped", {}).get("count") if report else None
    if skipped:
        notes.append(f"{skipped} skipped")
    failed = report.get("failed") or report.get("failures") if report else None
    if failed:
        notes.append(f"{len(failed) if isinstance(failed, list) else failed} records failed")
    row.note = "; ".join(notes)
    return row


def _print_row(row: Row, label: str) -> None:
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(row.kinds.items())) or "-"
    print(
        f"| {row.repo} | {label} | {row.exit} | {row.commits} | {kinds} | {row.decisions}/{row.adr_files} | "
        f"{row.status_ok}/{row.status_total} | {row.records_per_second:.1f} | {row.cpu_seconds:.0f} | "
        f"{row.wall_seconds:.0f} | {row.note} |",
        flush=True,
    )
    for miss in row.status_misses:
        print(f"|   status miss ({label}): {miss}", flush=True)
    if row.missing:
        print(f"|   ADR files without a decision ({label}): {', '.join(row.missing[:8])}"
              + (f" and {len(row.missing) - 8} more" if len(row.missing) > 8 else ""), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the repositories' data file")
    parser.add_argument("--src", type=Path, action="append", help="a source tree to run (repeatable; default: src)")
    parser.add_argument("--only", action="append", default=[], help="only this repository (repeatable)")
    parser.add_argument("--deadline", type=float, default=1800.0, help="seconds one ingest may take")
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    srcs = [path.resolve() for path in (args.src or [Path(__file__).resolve().parents[1] / "src"])]
    mirror_root = Path(data["mirror_root"])
    entries = [e for e in data["repos"] if not args.only or e["name"] in args.only]
    labels = {src: f"tree{index + 1}" for index, src in enumerate(srcs)}
    print("load at start:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    for src, label in labels.items():
        print(f"{label} = {src}")
    print("| repository | tree | exit | commits read | records by kind | decisions/ADR files | statuses | records/s |"
          " CPU-s | wall-s | note |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-real-repos-") as tmp:
        for entry in entries:
            for src in srcs:
                try:
                    row = bench_one(entry, src, mirror_root, Path(tmp), args.deadline)
                except (subprocess.SubprocessError, OSError) as exc:  # the clone, not the ingest
                    row = Row(repo=entry["name"], tree=str(src), exit="no clone", note=str(exc)[:120])
                rows.append(row)
                _print_row(row, labels[src])
    print("load at end:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    for src, label in labels.items():
        mine = [r for r in rows if r.tree == str(src)]
        crashes = sum(r.exit not in ("0",) for r in mine)
        print(f"{label}: {len(mine)} repositories, {crashes} not exit 0 "
              f"({', '.join(f'{r.repo}: {r.exit}' for r in mine if r.exit != '0') or 'none'}); "
              f"decisions {sum(r.decisions for r in mine)}/{sum(r.adr_files for r in mine)} ADR files; "
              f"statuses {sum(r.status_ok for r in mine)}/{sum(r.status_total for r in mine)}; "
              f"CPU {sum(r.cpu_seconds for r in mine):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
