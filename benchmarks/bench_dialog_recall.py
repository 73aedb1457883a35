"""Conversational memory: recall of the evidence turns of long real chats, through the pull pipeline.

Data: REALTALK (Lee et al., 2025, "REALTALK: A 21-Day Real-World Dataset for Long-Term Conversation",
github.com/danny911kr/REALTALK): ten real two-person messaging conversations of 16 to 21 sessions
(8,944 turns) with question-answer pairs whose ``evidence`` names the turns (``D3:12``) that answer
them. Only the ten top-level ``data/Chat_*.json`` files are read; nothing else in the repository is
opened (its subfolders hold other data).

Every turn is stored as a domain event through :meth:`Memory.record_events` (what ``mission-memory
feed`` does): id ``<conversation>:<dia_id>``, time = the turn's time, sector = the conversation, type
``message``, source = the speaker, text = ``Speaker: message``; one mission per conversation, so a
question is asked in its conversation's mission, as an agent asks in its own. The store is built once
under ``--data-root`` with the real embedder and reused.

Each question runs the pull's candidate search once (:func:`~mission_memory.retrieval.query.search_candidates`),
then every ranking is scored on the same candidate lists:

* ``dense``: the dense list alone (cosine order, no cut);
* ``bm25``: the BM25 list alone;
* ``pull``: the pull as it is (:func:`rank_candidates` then :func:`select_candidates`, the order a digest
  is packed in; cut-offs, priors and near-duplicate suppression included);
* extra variants ``--variant name:field=value,...`` of :class:`~mission_memory.retrieval.ranking.RankingParams`.

Metric: the dataset's fractional recall over turns, R@k = |evidence ∩ first k| / |evidence|, averaged
over the questions whose evidence names at least one stored turn (ranges ``D12:3-D12:5`` are
expanded; ids that name no turn are dropped and counted).

Usage::

    .venv/bin/python benchmarks/bench_dialog_recall.py --realtalk /path/to/REALTALK [--data-root DIR]
        [--limit N] [--variant wide:dense_window=0.2,bm25_ratio=0.0] [--baseline-store DIR] [--json]

The vectors depend on the code that built the store (a turn is embedded after the turn before it,
docs/adr/0070): ``--baseline-store`` names a store built by another version, asked every question
right after the store under ``--data-root``, so before and after are measured in one run.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import Layer
from mission_memory.retrieval.query import rank_candidates, search_candidates, select_candidates
from mission_memory.retrieval.ranking import RankingParams
from mission_memory.stores.filters import QueryFilters, SearchFilter

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pull import log  # noqa: E402
from bench_ranking import parse_variant  # noqa: E402  (name:field=value,... → RankingParams)

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "out"
KS = (5, 10, 25)
LAYERS = (Layer.DOMAIN,)
_SESSION = re.compile(r"session_(\d+)$")
_DIA = re.compile(r"D(\d+)\s*:\s*(\d+)")


def conversation_files(realtalk: Path) -> list[tuple[str, dict[str, Any]]]:
    """The ten conversations: (name, parsed JSON), from a checkout or a bare clone of REALTALK."""
    if (realtalk / "data").is_dir():
        files = sorted((realtalk / "data").glob("Chat_*.json"))
        return [(f.stem, json.loads(f.read_text(encoding="utf-8"))) for f in files]
    listing = subprocess.run(
        ["git", "-C", str(realtalk), "ls-tree", "--name-only", "HEAD", "data/"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.split()
    names = sorted(n for n in listing if re.fullmatch(r"data/Chat_[^/]+\.json", n))
    out = []
    for name in names:
        blob = subprocess.run(
            ["git", "-C", str(realtalk), "show", f"HEAD:{name}"], capture_output=True, check=True, timeout=60
        ).stdout
        out.append((Path(name).stem, json.loads(blob)))
    return out


def turns_of(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """Every turn of every session, in order."""
    sessions = sorted((int(m.group(1)), v) for k, v in conversation.items() if (m := _SESSION.match(k)))
    return [t for _, turns in sessions for t in turns if str(t.get("clean_text") or "").strip()]


def evidence_ids(raw: list[str]) -> list[str]:
    """Evidence turn ids, ranges expanded: ``["D12:3-D12:5; D13:1"]`` → D12:3, D12:4, D12:5, D13:1."""
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;,]|\.\s", str(item)):
            found = _DIA.findall(part)
            if len(found) == 2 and "-" in part and found[0][0] == found[1][0]:
                session, lo, hi = found[0][0], int(found[0][1]), int(found[1][1])
                out.extend(f"D{session}:{n}" for n in range(lo, hi + 1))
            else:
                out.extend(f"D{s}:{n}" for s, n in found)
    return list(dict.fromkeys(out))


def parse_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%d.%m.%Y, %H:%M:%S")


def build_store(memory: Memory, conversations: list[tuple[str, dict[str, Any]]]) -> None:
    """Store every turn as a domain event (one mission per conversation) and embed them all."""
    for name, conv in conversations:
        events = []
        for t in turns_of(conv):
            text = f"{t['speaker']}: {t['clean_text'].strip()}"
            events.append({
                "id": f"{name}:{t['dia_id']}", "time": parse_time(t["date_time"]).isoformat() + "+00:00",
                "sector": name, "type": "message", "criticality": 0.5, "source": str(t["speaker"]),
                "text": text[:20_000],
            })
        memory.record_events(events, mission=name, embed=False)
        log(f"stored {name}: {len(events)} turns")
    started = time.perf_counter()
    done = memory.embed_pending()
    log(f"embedded {done} turns in {time.perf_counter() - started:.0f} s")
    memory.prepare_search()


def opened_store(realtalk: Path, data_root: Path) -> tuple[Memory, list[tuple[str, dict[str, Any]]]]:
    """The conversations of ``realtalk`` and the memory at ``data_root/store``, built on first use."""
    conversations = conversation_files(realtalk)
    if not conversations:
        raise SystemExit(f"--realtalk {realtalk}: no data/Chat_*.json found")
    data = data_root / "store"
    fresh = not (data / "memory.db").exists()
    memory = Memory.open(load_settings(data_dir=data))
    if fresh:
        build_store(memory, conversations)
    return memory, conversations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realtalk", type=Path, required=True, help="REALTALK checkout or bare clone")
    parser.add_argument("--data-root", type=Path, default=Path("/tmp/dialog-recall"))
    parser.add_argument("--limit", type=int, default=0, help="questions per conversation (0: all)")
    parser.add_argument("--variant", action="append", default=[], help="name:field=value,...")
    parser.add_argument("--only", default="", help="comma-separated conversation numbers to ask (default: all)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--baseline-store", type=Path, default=None,
                        help="a store built by another version (its data dir, e.g. DATA_ROOT/store of a run on"
                             " main): asked the same questions in the same run, its rows prefixed 'base:'")
    args = parser.parse_args()

    memory, conversations = opened_store(args.realtalk, args.data_root)
    variants = [("pull", RankingParams()), *(parse_variant(v) for v in args.variant)]
    stores = [("", memory)]
    if args.baseline_store:
        if not (args.baseline_store / "memory.db").exists():
            raise SystemExit(f"--baseline-store {args.baseline_store}: no memory.db there")
        stores.insert(0, ("base:", Memory.open(load_settings(data_dir=args.baseline_store))))
    names = [f"{prefix}{n}" for prefix, _ in stores for n in ("dense", "bm25", *(n for n, _ in variants))]
    sums = {n: dict.fromkeys(KS, 0.0) for n in names}
    per_cat: dict[str, dict[int, list[float]]] = {n: {} for n in names}
    asked = dropped_ids = skipped = 0
    started = time.perf_counter()
    only = {f"Chat_{n.strip()}" for n in args.only.split(",") if n.strip()}
    for name, conv in conversations:
        if only and "_".join(name.split("_")[:2]) not in only:
            continue
        stored = {t["dia_id"] for t in turns_of(conv)}
        qa = [q for q in conv.get("qa", []) if q.get("evidence")]
        if args.limit:
            qa = qa[: args.limit]
        where = SearchFilter(LAYERS, QueryFilters(mission=name))
        for q in qa:
            wanted = evidence_ids(q["evidence"])
            known = {f"{name}:{e}" for e in wanted if e in stored}
            dropped_ids += len(wanted) - len(known)
            if not known:
                skipped += 1
                continue
            asked += 1
            for prefix, mem in stores:  # the same question against every store, one after the other
                orders = _orders(mem, q["question"], where, variants)
                for vname, order in orders.items():
                    event_ids = _event_ids(mem, order[: max(KS)])
                    for k in KS:
                        r = len(known & set(event_ids[:k])) / len(known)
                        sums[prefix + vname][k] += r
                        if k == 10:
                            per_cat[prefix + vname].setdefault(int(q.get("category", 0)), []).append(r)
        log(f"{name}: {asked} questions so far ({time.perf_counter() - started:.0f} s)")
    figures = {n: {f"R@{k}": round(100 * sums[n][k] / max(asked, 1), 1) for k in KS} for n in names}
    by_category = {
        n: {str(c): round(100 * sum(v) / len(v), 1) for c, v in sorted(per_cat[n].items())} for n in names
    }
    result = {
        "questions": asked, "skipped_no_stored_evidence": skipped, "evidence_ids_dropped": dropped_ids,
        "figures": figures, "R@10_by_category": by_category,
    }
    OUT_DIR.mkdir(exist_ok=True)
    (OUT_DIR / "bench_dialog_recall.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"REALTALK: {asked} questions ({skipped} without a stored evidence turn skipped, "
          f"{dropped_ids} evidence ids naming no turn dropped)")
    print("| ranking | R@5 | R@10 | R@25 | R@10 by category |")
    print("|---|---|---|---|---|")
    for n in names:
        cats = ", ".join(f"{c}: {v}" for c, v in by_category[n].items())
        print(f"| {n} | {figures[n]['R@5']} | {figures[n]['R@10']} | {figures[n]['R@25']} | {cats} |")


def _orders(
    memory: Memory, question: str, where: SearchFilter, variants: list[tuple[str, RankingParams]]
) -> dict[str, list[str]]:
    """Record ids best first for one question: the dense list, the BM25 list and each ranking variant."""
    lists = search_candidates(memory.store, memory.embedder, question, where, RankingParams())
    dense_order = sorted(
        ((h.score, h.record_id) for hits in lists.dense.get(Layer.DOMAIN, {}).values() for h in hits), reverse=True
    )
    bm25_order = sorted(
        ((h.score, h.record_id) for hits in lists.bm25.get(Layer.DOMAIN, {}).values() for h in hits), reverse=True
    )
    orders = {"dense": [r for _, r in dense_order], "bm25": [r for _, r in bm25_order]}
    for vname, params in variants:
        ranked = rank_candidates(lists, LAYERS, params)
        chosen, _ = select_candidates(memory.store, memory.embedder.model_id, question, where, ranked, params, max(KS))
        orders[vname] = [c.record_id for c in chosen]
    return orders


_event_cache: dict[str, str] = {}


def _event_ids(memory: Memory, record_ids: list[str]) -> list[str]:
    """The event ids (``<conversation>:<dia_id>``) of records, in the same order."""
    missing = [r for r in record_ids if r not in _event_cache]
    if missing:
        for rid, record in memory.store.get(missing).items():
            _event_cache[rid] = str(record.attributes.get("event_id", ""))
    return [_event_cache.get(r, "") for r in record_ids]


if __name__ == "__main__":
    main()
