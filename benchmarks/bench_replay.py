"""Ingest rate and history replay on the shared corpus (``tests/corpora/tdr-docs.bundle``).

(a) **Ingest rate.** Clone the bundle to a temp dir, ingest it into a fresh data dir with the real
embedder and time it: records/s overall, and seconds per kind and layer. Embedding time of each
batch is attributed to the batch's records in proportion to the characters the embedder sees
(clipped as the embedder clips them); store-write time in proportion to record count. A second,
unchanged re-ingest is timed too (it must add and embed nothing).

(b) **Replay.** For each qualifying commit, oldest first — one that touches a file under
``architecture-decision-records/`` or names a tracker key in its message (``TDR-123``, ``TDRD-45``,
``#12``; :func:`mission_memory.ingest.git_history.extract_tracker_keys`) — build memory from the
history *before* it (a separate clone checked out at its first parent, ingested incrementally into
one store; commit records of side branches that are not ancestors of the parent are pruned, so the
memory holds exactly the parent's history), query with the commit's subject and measure:

* ``T'``: the digest's ``tokens_used`` (cl100k_base with the store's safety margin);
* ``1 - W'``: share of digest entries *about* what the commit touched — an entry whose path (ref
  before ``#``) is among the touched files, a commit entry whose files intersect them, or a
  decision entry whose ADR the commit's message names (``ADR 39``, ``ADR-0008``, ``ADR number 38``
  or the file name);
* recall: share of the touched files that existed before the commit and were ingested (Markdown
  documents, ADRs) that appear among the digest entries' paths.

The flat-load baseline is measured the same way: every ADR plus ``README.md`` at the parent,
concatenated; ``T_flat`` counted with the same tokenizer (``memory.tokenizer.count``); ``1 - W`` =
share of loaded files about the commit (touched, or an ADR the message names); recall = share of
the same touched files that are loaded.

Target (issue 2): median digest ``T'`` <= 4,000 tokens.

Usage::

    /work/venv/bin/python benchmarks/bench_replay.py [--limit 40] [--budget 8000] [--skip-ingest]
        [--bundle tests/corpora/tdr-docs.bundle]

``--limit N`` replays an evenly spaced sample of N qualifying commits (0 = all). Progress goes to
stderr; the tables to stdout; per-commit rows to ``benchmarks/out/bench_replay.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.embeddings import make_embedder
from mission_memory.ingest.adr import find_adr_paths
from mission_memory.ingest.documents import DOCUMENT_SUFFIXES
from mission_memory.ingest.git_history import extract_tracker_keys
from mission_memory.records import LAYER_OF_KIND, RecordKind

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

OUT_DIR = Path(__file__).resolve().parent / "out"
BUNDLE = corpus_path("tdr-docs.bundle")
MISSION = "tdr"
ADR_DIR = "architecture-decision-records/"
TARGET_MEDIAN_DIGEST = 4000
_RS, _US, _GS = "\x1e", "\x1f", "\x1d"
_ADR_NUMBER = re.compile(r"\bADR[\s_-]*(?:number\s+|no\.?\s*|#)?0*(\d{1,4})\b", re.IGNORECASE)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "core.quotepath=off", *args], cwd=repo, capture_output=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {repo}: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode("utf-8", "replace")


def clone(bundle: Path, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(bundle), str(dest)], check=True)
    return dest


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if values else float("nan")


def machine_note() -> dict[str, Any]:
    return {
        "date_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "code": code_version(),
    }


def code_version() -> str:
    """The commit of the checkout being measured, with ``+dirty`` when ``src/`` has uncommitted changes."""
    root = Path(__file__).resolve().parent.parent
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "src"], cwd=root, capture_output=True, text=True
    ).stdout
    return (head or "unknown") + ("+dirty" if dirty.strip() else "")


# --------------------------------------------------------------------------------------------
# (a) ingest rate
# --------------------------------------------------------------------------------------------


def bench_ingest(bundle: Path, work: Path, embedder: Any) -> dict[str, Any]:
    repo = clone(bundle, work / "ingest-repo")
    data_dir = work / "ingest-data"
    memory = Memory(load_settings(data_dir=data_dir), embedder=embedder)
    max_chars = getattr(embedder, "max_chars", 10**9)
    embed_s: Counter[str] = Counter()
    write_s: Counter[str] = Counter()
    pending: dict[str, float] = {}
    phase_marks: dict[str, float] = {}
    real_embed = embedder.embed_passages
    real_upsert = memory.store.upsert

    def embed_passages(texts: Any) -> Any:
        t0 = time.perf_counter()
        out = real_embed(texts)
        pending["embed"] = time.perf_counter() - t0
        pending["chars"] = float(sum(min(len(t), max_chars) for t in texts)) or 1.0
        return out

    def upsert(records: Any, vectors: Any, model_id: str) -> Any:
        t0 = time.perf_counter()
        out = real_upsert(records, vectors, model_id)
        dt = time.perf_counter() - t0
        spent, chars = pending.pop("embed", 0.0), pending.pop("chars", 1.0)
        for r in records:
            embed_s[r.kind.value] += spent * min(len(r.embedding_text), max_chars) / chars
            write_s[r.kind.value] += dt / len(records)
        return out

    def progress(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        phase_marks.setdefault(f"{phase}_first", now)
        phase_marks[f"{phase}_last"] = now
        if phase == "embed" and (done % 256 == 0 or done == total):
            log(f"  ingest: embedded {done}/{total}")

    embedder.embed_passages = embed_passages
    memory.store.upsert = upsert  # type: ignore[method-assign]
    try:
        log(f"(a) ingesting {repo} into a fresh store …")
        started = time.perf_counter()
        report = memory.ingest_repository(repo, mission=MISSION, progress=progress)
        total = time.perf_counter() - started
        t0 = time.perf_counter()
        again = memory.ingest_repository(repo, mission=MISSION)
        reingest_s = time.perf_counter() - t0
    finally:
        embedder.embed_passages = real_embed
        memory.close()
    data = report.to_json()
    added = Counter({k: v for k, v in data["by_kind"]["added"].items()})
    per_kind = []
    for kind in sorted(added, key=lambda k: (LAYER_OF_KIND[RecordKind(k)].value, k)):
        n = added[kind]
        per_kind.append(
            {
                "kind": kind,
                "layer": LAYER_OF_KIND[RecordKind(kind)].value,
                "records": n,
                "embed_s": round(embed_s[kind], 2),
                "write_s": round(write_s[kind], 2),
                "s_per_record": round((embed_s[kind] + write_s[kind]) / n, 4) if n else None,
            }
        )
    per_layer: dict[str, dict[str, float]] = defaultdict(
        lambda: {"records": 0, "embed_s": 0.0, "write_s": 0.0}
    )
    for row in per_kind:
        agg = per_layer[row["layer"]]
        agg["records"] += row["records"]
        agg["embed_s"] += row["embed_s"]
        agg["write_s"] += row["write_s"]
    read_s = phase_marks.get("embed_first", started) - started
    embed_phase = phase_marks.get("embed_last", started) - phase_marks.get("embed_first", started)
    records = sum(added.values())
    return {
        "repo_head": data["head"],
        "records_added": records,
        "embedded": data["embedded"],
        "skipped": data["skipped"]["by_reason"],
        "wall_s": round(total, 2),
        "records_per_s": round(records / total, 2) if total else None,
        "phases_s": {
            "read_parse_git": round(read_s, 2),
            "embed_and_write": round(embed_phase, 2),
            "finish": round(total - read_s - embed_phase, 2),
            "embed_only": round(sum(embed_s.values()), 2),
            "write_only": round(sum(write_s.values()), 2),
        },
        "per_kind": per_kind,
        "per_layer": {k: {kk: round(vv, 2) for kk, vv in v.items()} for k, v in per_layer.items()},
        "reingest_s": round(reingest_s, 2),
        "reingest_added": again.to_json()["added"],
        "reingest_embedded": again.embedded,
    }


# --------------------------------------------------------------------------------------------
# (b) replay
# --------------------------------------------------------------------------------------------


def qualifying_commits(repo: Path) -> list[dict[str, Any]]:
    """Commits oldest first (topological) that touch an ADR or name a tracker key, with touched files."""
    out = git(
        repo,
        "log",
        "--reverse",
        "--topo-order",
        "--no-renames",
        "--diff-merges=first-parent",
        "--name-only",
        f"--format={_RS}%H{_US}%P{_US}%s{_US}%b{_GS}",
        "HEAD",
    )
    commits = []
    for chunk in out.split(_RS):
        if not chunk.strip():
            continue
        header, _, names = chunk.partition(_GS)
        sha, parents, subject, body = [*header.split(_US), "", "", "", ""][:4]
        files = [n.strip() for n in names.splitlines() if n.strip()]
        message = f"{subject}\n{body}"
        keys = extract_tracker_keys(message)
        touches_adr = any(f.startswith(ADR_DIR) for f in files)
        if not (touches_adr or keys) or not parents.split():
            continue
        commits.append(
            {
                "sha": sha,
                "parent": parents.split()[0],
                "merge": len(parents.split()) > 1,
                "subject": subject.strip(),
                "message": message,
                "files": files,
                "touches_adr": touches_adr,
                "tracker_keys": keys,
            }
        )
    return commits


def even_sample(items: list[Any], limit: int) -> list[Any]:
    if limit <= 0 or limit >= len(items):
        return items
    if limit == 1:
        return [items[len(items) // 2]]
    idx = sorted({round(i * (len(items) - 1) / (limit - 1)) for i in range(limit)})
    return [items[i] for i in idx]


def named_adrs(message: str, adr_paths: list[str]) -> tuple[set[int], set[str]]:
    """ADR numbers and ADR paths the commit message names (by number or by file name)."""
    numbers = {int(m.group(1)) for m in _ADR_NUMBER.finditer(message)}
    low = message.lower()
    paths = set()
    for path in adr_paths:
        stem = Path(path).stem.lower()
        number = re.match(r"0*(\d+)", stem)
        if stem in low or path.lower() in low or (number and int(number.group(1)) in numbers):
            paths.add(path)
    return numbers, paths


def entry_paths(entry: Any) -> set[str]:
    r = entry.record
    if r.kind is RecordKind.COMMIT:
        return set()
    return {r.provenance.ref.split("#", 1)[0]}


def entry_about(entry: Any, touched: set[str], numbers: set[int], named_paths: set[str]) -> bool:
    r = entry.record
    if r.kind is RecordKind.COMMIT:
        return bool(set(r.attributes.get("files") or []) & touched)
    path = r.provenance.ref.split("#", 1)[0]
    if path in touched:
        return True
    if r.kind is RecordKind.DECISION:
        return path in named_paths or (
            r.attributes.get("number") is not None and int(r.attributes["number"]) in numbers
        )
    return False


def replay(bundle: Path, work: Path, embedder: Any, limit: int, budget: int) -> dict[str, Any]:
    repo = clone(bundle, work / "replay-repo")
    all_qualifying = qualifying_commits(repo)
    sample = even_sample(all_qualifying, limit)
    log(f"(b) replay: {len(all_qualifying)} qualifying commits, replaying {len(sample)} (budget {budget})")
    memory = Memory(load_settings(data_dir=work / "replay-data"), embedder=embedder)
    tokenizer = memory.tokenizer
    rows = []
    try:
        for i, c in enumerate(sample, start=1):
            t0 = time.perf_counter()
            git(repo, "checkout", "-q", "--detach", c["parent"])
            report = memory.ingest_repository(repo, mission=MISSION)
            ancestry = git(repo, "rev-list", c["parent"]).split()
            pruned = memory.store.delete_missing(
                MISSION, [RecordKind.COMMIT.value], [f"{MISSION}:commit:{sha}" for sha in ancestry]
            )
            ingest_s = time.perf_counter() - t0

            tree = set(git(repo, "ls-tree", "-r", "--name-only", c["parent"]).splitlines())
            ingested_paths = {
                r.provenance.ref.split("#", 1)[0]
                for batch in memory.store.iterate()
                for r in batch
                if r.kind is not RecordKind.COMMIT and r.provenance.mission == MISSION
            }
            touched = set(c["files"])
            relevant = {
                f
                for f in touched
                if f in tree and f in ingested_paths and f.lower().endswith(DOCUMENT_SUFFIXES)
            }
            adr_paths = find_adr_paths(sorted(tree))
            numbers, named_paths = named_adrs(c["message"], adr_paths)

            t1 = time.perf_counter()
            digest = memory.query(c["subject"], token_budget=budget, filters={"mission": MISSION})
            query_ms = (time.perf_counter() - t1) * 1000
            entries = list(digest.entries)
            about = [entry_about(e, touched, numbers, named_paths) for e in entries]
            found = set().union(*(entry_paths(e) for e in entries)) if entries else set()
            commit_files = (
                set().union(
                    *(
                        set(e.record.attributes.get("files") or [])
                        for e in entries
                        if e.record.kind is RecordKind.COMMIT
                    )
                )
                if entries
                else set()
            )

            loaded = list(adr_paths) + (["README.md"] if "README.md" in tree else [])
            flat_text = "\n\n".join((repo / p).read_text(encoding="utf-8", errors="replace") for p in loaded)
            t_flat = tokenizer.count(flat_text)
            flat_about = [p in touched or p in named_paths for p in loaded]

            row = {
                "sha": c["sha"],
                "parent": c["parent"],
                "merge": c["merge"],
                "subject": c["subject"],
                "touches_adr": c["touches_adr"],
                "tracker_keys": c["tracker_keys"],
                "touched": sorted(touched),
                "recall_denominator": sorted(relevant),
                "adr_numbers_named": sorted(numbers),
                "ingest_s": round(ingest_s, 2),
                "embedded": report.embedded,
                "pruned_side_commits": pruned,
                "query_ms": round(query_ms, 1),
                "t_digest": digest.tokens_used,
                "entries": len(entries),
                "omitted": digest.omitted,
                "about_digest": sum(about),
                "share_about_digest": (sum(about) / len(entries)) if entries else None,
                "recall_digest": (len(relevant & found) / len(relevant)) if relevant else None,
                "recall_digest_incl_commit_files": (len(relevant & (found | commit_files)) / len(relevant))
                if relevant
                else None,
                "digest_refs": [
                    {"kind": e.record.kind.value, "ref": e.record.provenance.ref, "about": a}
                    for e, a in zip(entries, about, strict=True)
                ],
                "t_flat": t_flat,
                "flat_files": len(loaded),
                "about_flat": sum(flat_about),
                "share_about_flat": (sum(flat_about) / len(loaded)) if loaded else None,
                "recall_flat": (len(relevant & set(loaded)) / len(relevant)) if relevant else None,
            }
            rows.append(row)
            shown = "-" if row["recall_digest"] is None else f"{row['recall_digest']:.2f}"
            log(
                f"  [{i}/{len(sample)}] {c['sha'][:10]} ingest {ingest_s:5.1f}s (+{report.embedded} emb, "
                f"-{pruned} side) query {query_ms:6.0f}ms T'={digest.tokens_used:5d} T_flat={t_flat:6d} "
                f"about {sum(about)}/{len(entries)} recall {shown} "
                f"| {c['subject'][:60]}"
            )
    finally:
        memory.close()
    return {
        "qualifying": len(all_qualifying),
        "replayed": len(rows),
        "budget": budget,
        "rows": rows,
        "summary": summarise(rows),
        "summary_non_merge": summarise([r for r in rows if not r["merge"]]),
        "summary_merge": summarise([r for r in rows if r["merge"]]),
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"n": 0}

    def stats(key: str) -> dict[str, float]:
        vals = [r[key] for r in rows if r[key] is not None]
        if not vals:
            return {"n": 0}
        return {
            "n": len(vals),
            "median": round(statistics.median(vals), 3),
            "mean": round(statistics.fmean(vals), 3),
            "p90": round(pct(vals, 90), 3),
            "min": round(min(vals), 3),
            "max": round(max(vals), 3),
        }

    return {
        "n": len(rows),
        "t_digest": stats("t_digest"),
        "t_flat": stats("t_flat"),
        "share_about_digest": stats("share_about_digest"),
        "share_about_flat": stats("share_about_flat"),
        "recall_digest": stats("recall_digest"),
        "recall_flat": stats("recall_flat"),
        "recall_digest_incl_commit_files": stats("recall_digest_incl_commit_files"),
        "entries": stats("entries"),
        "query_ms": stats("query_ms"),
        "digest_empty": sum(1 for r in rows if r["entries"] == 0),
    }


# --------------------------------------------------------------------------------------------


def print_ingest(ing: dict[str, Any]) -> None:
    print(
        f"\n(a) ingest of the shared corpus (HEAD {str(ing['repo_head'])[:12]}), fresh store, real embedder"
    )
    print(
        f"records added {ing['records_added']} (embedded {ing['embedded']}) in {ing['wall_s']:.1f} s "
        f"= {ing['records_per_s']:.2f} records/s; skipped {ing['skipped'] or 'none'}"
    )
    ph = ing["phases_s"]
    print(
        f"phases: read+parse+git {ph['read_parse_git']:.1f} s · embed+write {ph['embed_and_write']:.1f} s "
        f"(embed {ph['embed_only']:.1f} s, store writes {ph['write_only']:.1f} s) · finish {ph['finish']:.1f} s"
    )
    print(
        f"{'layer':<13} {'kind':<12} {'records':>8} {'embed s':>8} {'write s':>8} {'s/record':>9} {'records/s':>10}"
    )
    for row in ing["per_kind"]:
        spent = row["embed_s"] + row["write_s"]
        print(
            f"{row['layer']:<13} {row['kind']:<12} {row['records']:>8} {row['embed_s']:>8.1f} {row['write_s']:>8.2f} "
            f"{row['s_per_record']:>9.3f} {(row['records'] / spent if spent else float('nan')):>10.1f}"
        )
    for layer, agg in sorted(ing["per_layer"].items()):
        spent = agg["embed_s"] + agg["write_s"]
        print(
            f"{layer:<13} {'(all)':<12} {int(agg['records']):>8} {agg['embed_s']:>8.1f} {agg['write_s']:>8.2f} "
            f"{spent / agg['records']:>9.3f} {agg['records'] / spent:>10.1f}"
        )
    print(
        f"re-ingest of the unchanged repository: {ing['reingest_s']:.1f} s, added {ing['reingest_added']}, "
        f"embedded {ing['reingest_embedded']}"
    )


def print_replay(rep: dict[str, Any]) -> None:
    s = rep["summary"]
    print(
        f"\n(b) replay: {rep['replayed']} of {rep['qualifying']} qualifying commits (evenly spaced), "
        f"budget {rep['budget']} tokens, query = commit subject"
    )
    if not s.get("n"):
        print("no commits replayed")
        return
    print(f"{'':<28} {'median':>9} {'mean':>9} {'P90':>9}")
    for label, key in (("T' digest tokens", "t_digest"), ("T_flat (ADRs + README)", "t_flat")):
        st = s[key]
        print(f"{label:<28} {st['median']:>9.0f} {st['mean']:>9.0f} {st['p90']:>9.0f}")
    print(f"{'':<28} {'memory':>9} {'flat':>9}")
    print(
        f"{'median (1 - W)':<28} {s['share_about_digest'].get('median', float('nan')):>9.3f} "
        f"{s['share_about_flat'].get('median', float('nan')):>9.3f}"
    )
    print(
        f"{'mean (1 - W)':<28} {s['share_about_digest'].get('mean', float('nan')):>9.3f} "
        f"{s['share_about_flat'].get('mean', float('nan')):>9.3f}"
    )
    print(
        f"{'mean recall':<28} {s['recall_digest'].get('mean', float('nan')):>9.3f} "
        f"{s['recall_flat'].get('mean', float('nan')):>9.3f}   "
        f"(over {s['recall_digest'].get('n', 0)} commits whose touched files existed and were ingested)"
    )
    print(
        f"{'mean recall incl. commit files':<28} {s['recall_digest_incl_commit_files'].get('mean', float('nan')):>9.3f}"
        f"{'':>10}   (a path also counts when a commit entry lists it)"
    )
    print(
        f"digest entries: median {s['entries']['median']:.0f}; empty digests {s['digest_empty']}; "
        f"query ms median {s['query_ms']['median']:.0f}"
    )
    for label, key in (("non-merge", "summary_non_merge"), ("merge", "summary_merge")):
        sub = rep[key]
        if sub.get("n"):
            print(
                f"  {label:<10} n={sub['n']:<3} T' median {sub['t_digest']['median']:.0f} · T_flat median "
                f"{sub['t_flat']['median']:.0f} · median (1-W') {sub['share_about_digest'].get('median', float('nan')):.3f}"
                f" vs flat {sub['share_about_flat'].get('median', float('nan')):.3f} · mean recall "
                f"{sub['recall_digest'].get('mean', float('nan')):.3f} vs flat {sub['recall_flat'].get('mean', float('nan')):.3f}"
            )
    med = s["t_digest"]["median"]
    print(
        f"target: median digest <= {TARGET_MEDIAN_DIGEST} tokens: {med:.0f} "
        f"({'MET' if med <= TARGET_MEDIAN_DIGEST else 'MISSED'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    parser.add_argument(
        "--limit", type=int, default=40, help="replay this many evenly spaced commits (0 = all)"
    )
    parser.add_argument(
        "--budget", type=int, default=8000, help="digest token budget, the same for every commit"
    )
    parser.add_argument("--skip-ingest", action="store_true", help="skip (a), the ingest-rate run")
    parser.add_argument("--skip-replay", action="store_true", help="skip (b), the replay")
    parser.add_argument("--work", type=Path, help="work dir (default: a temp dir, removed afterwards)")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_replay.json")
    args = parser.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="mm-bench-replay-"))
    work.mkdir(parents=True, exist_ok=True)
    note_before = machine_note()
    log(f"load average {note_before['loadavg']}; work dir {work}")
    settings = load_settings()
    embedder = make_embedder(settings.embedder, settings)
    result: dict[str, Any] = {
        "benchmark": "bench_replay",
        "bundle": str(args.bundle),
        "machine_before": note_before,
    }
    started = time.perf_counter()
    try:
        if not args.skip_ingest:
            result["ingest"] = bench_ingest(args.bundle, work, embedder)
            result["ingest"]["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
        if not args.skip_replay:
            t0 = time.perf_counter()
            result["replay"] = replay(args.bundle, work, embedder, args.limit, args.budget)
            result["replay"]["wall_s"] = round(time.perf_counter() - t0, 1)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    result["wall_s"] = round(time.perf_counter() - started, 1)
    result["machine_after"] = machine_note()
    result["target_median_digest_tokens"] = TARGET_MEDIAN_DIGEST
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    after = result["machine_after"]
    print(
        f"bench_replay · {after['date_utc']} · code {note_before['code']} · {after['cpus']} CPUs · load avg before "
        f"{note_before['loadavg']} after {after['loadavg']} · wall {result['wall_s']:.0f} s"
    )
    if "ingest" in result:
        print_ingest(result["ingest"])
    if "replay" in result:
        print_replay(result["replay"])
    print(f"\nJSON: {args.out}")


if __name__ == "__main__":
    main()
