"""How fast events get their vectors: inline intake and the background queue, code trees side by side (issue 37).

Real event text: loghub's labelled 2k samples of real system logs (Zookeeper, BGL, Hadoop, HDFS,
OpenStack; ``--loghub DIR``, a checkout or bare git directory of https://github.com/logpai/loghub),
turned into events as the triage benchmark does (:func:`~mission_memory.operations.scenarios.loghub_scenario`),
the datasets interleaved line by line. For each code tree (``--tree NAME=SRC``: a ``src`` folder of
mission-memory, e.g. ``before=/path/to/checkout-of-6adcb71/src``; this checkout's own ``src`` is
always ``after``) a worker process on that tree, in a fresh data dir, with the default embedder
(its graph built before timing), times:

* **inline** — what ``mission-memory feed`` does: ``record_events(..., embed=False)`` in posts of
  ``--post`` events, then ``embed_pending()`` until none is left;
* **queue** — what the server does: ``record_events(...)`` in posts of ``--post`` events waking the
  background embedding queue, then waiting until ``embedding_lag()`` is 0.

Printed per tree and path: events, wall seconds, events/s (wall), CPU seconds of the worker process
(every thread: storing, tokenizing, ONNX Runtime) and CPU-ms per event, which stays comparable on a
shared machine where the wall clock measures the other work; with the load average before and after.
Trees run one after the other, paths alternate within each worker, ``--rounds`` times.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_event_embedding.py --loghub DIR
        [--tree before=/work/wt/base/src] [--tree main=DIR/src] [--events 1000] [--post 50] [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATASETS = ("Zookeeper", "BGL", "Hadoop", "HDFS", "OpenStack")
QUESTIONS: dict[str, tuple[str, ...]] = {  # written before any result was looked at; each set's own question first
    "Zookeeper": ("When was the last snapshot of the data tree written?",
                  "Why did the connection between the quorum peers break?",
                  "Коли востаннє було записано знімок дерева даних?",
                  "Чому обірвалося з'єднання між вузлами кворуму?"),
    "BGL": ("How many instruction cache parity errors were corrected on the node cards?",
            "Which node cards reported kernel panics or fatal errors?",
            "Скільки помилок парності кешу інструкцій виправлено?",
            "Які вузли повідомили про фатальні помилки ядра?"),
    "Hadoop": ("Which containers were assigned to the reduce tasks?",
               "Why did the task fail to connect to the remote host?",
               "Які контейнери призначено для задач reduce?",
               "Чому завдання не змогло підключитися до віддаленого хоста?"),
    "HDFS": ("Which blocks were added to the namesystem?",
             "Which data node failed to receive a block?",
             "Які блоки додано до простору імен?",
             "Який вузол даних не отримав блок?"),
    "OpenStack": ("How long did the image cache scan take?",
                  "Why was the instance not found or its build failed?",
                  "Скільки тривало сканування кешу образів?",
                  "Чому екземпляр не знайдено або його збірка не вдалася?"),
}
"""Operator questions per loghub set, English then Ukrainian, for the ranking check of ``--builds``."""
RELEVANT: dict[tuple[str, int], frozenset[str]] = {  # (set, question index mod 2) -> loghub templates (EventId)
    ("Zookeeper", 1): frozenset({"E11", "E5", "E49"}),  # connection broken, cannot open channel, shutdown
    ("BGL", 0): frozenset({"E77"}),  # instruction cache parity error corrected
    ("Hadoop", 0): frozenset({"E13", "E105"}),  # assigned container ... to attempt; using containerId
    ("HDFS", 0): frozenset({"E6", "E7"}),  # NameSystem.addStoredBlock / allocateBlock
    ("HDFS", 1): frozenset({"E3"}),  # got exception while serving a block
    ("OpenStack", 0): frozenset({"E34", "E35"}),  # image ... checking / in use (the image cache scan)
    ("OpenStack", 1): frozenset({"E33"}),  # no instances found
}
"""The relevant templates of the questions whose answer is among each set's first 200 distinct lines,
labelled from the template texts before any ranking was looked at (the Ukrainian question shares
its English twin's label); questions without one are left out of hit@3 and MRR."""
TRIAGE_ALPHA = 0.5
"""α of the ranking check's triage score ``α · criticality + (1 − α) · sim`` (sim from the dense rank)."""


def loghub_events(root: Path, count: int) -> list[dict[str, Any]]:
    """``count`` events from the loghub samples under ``root``, the datasets interleaved line by line."""
    from mission_memory.operations.scenarios import LOGHUB_DATASETS, loghub_scenario

    per_set = []
    for name in DATASETS:
        path = LOGHUB_DATASETS[name][0]
        if (root / path).is_file():
            text = (root / path).read_text(encoding="utf-8")
        else:
            text = subprocess.run(["git", "--git-dir", str(root), "show", f"HEAD:{path}"], capture_output=True,
                                  text=True, check=True, timeout=120).stdout
        per_set.append(loghub_scenario(name, text).events)
    out: list[dict[str, Any]] = []
    for row in range(max(len(events) for events in per_set)):
        for events in per_set:
            if row < len(events) and len(out) < count:
                out.append(events[row].model_dump(mode="json", exclude_none=True))
    return out


def _loghub_sets(root: Path, per_set: int) -> dict[str, list[Any]]:
    """The first ``per_set`` events of distinct text of each loghub set, as DomainEvent objects."""
    from mission_memory.operations.scenarios import LOGHUB_DATASETS, loghub_scenario

    out: dict[str, list[Any]] = {}
    for name in DATASETS:
        path = LOGHUB_DATASETS[name][0]
        text = (root / path).read_text(encoding="utf-8") if (root / path).is_file() else subprocess.run(
            ["git", "--git-dir", str(root), "show", f"HEAD:{path}"], capture_output=True, text=True, check=True,
            timeout=120).stdout
        seen: dict[str, Any] = {}
        for event in loghub_scenario(name, text).events:
            seen.setdefault(event.text, event)
        out[name] = list(seen.values())[:per_set]
    return out


def _triage_top(sims: Any, criticality: Any, k: int) -> list[int]:
    """The top ``k`` by ``α · criticality + (1 − α) · sim``, sim the reciprocal dense rank scaled to [0, 1]."""
    import numpy as np

    ranks = np.empty(len(sims), dtype=np.int64)
    ranks[np.argsort(-sims, kind="stable")] = np.arange(1, len(sims) + 1)
    sim = 61.0 / (60.0 + ranks)
    score = TRIAGE_ALPHA * criticality + (1 - TRIAGE_ALPHA) * sim
    return [int(i) for i in np.argsort(-score, kind="stable")[:k]]


def builds(root: Path, per_set: int, k: int) -> None:
    """Cosine and ranking of event vectors: int8 against fp32 (and each event's words once against
    twice), on loghub lines, with the questions of :data:`QUESTIONS`."""
    import numpy as np

    from mission_memory.embeddings.onnxruntime_engine import OnnxE5Embedder
    from mission_memory.operations.domain_events import event_record
    from mission_memory.records import Record

    sets = _loghub_sets(root, per_set)
    records: dict[str, list[Record]] = {name: [event_record(e, "bench") for e in events] for name, events in sets.items()}
    twice = {name: [f"{r.title}\n{r.text}" for r in rs] for name, rs in records.items()}  # the passage before
    current = {name: [r.embedding_text for r in rs] for name, rs in records.items()}
    engines = {fmt: OnnxE5Embedder(fmt) for fmt in ("fp32", "int8")}  # type: ignore[arg-type]
    variants = {"fp32, words twice (before)": ("fp32", twice), "fp32, as stored now": ("fp32", current),
                "int8, words twice": ("int8", twice), "int8, as stored now": ("int8", current)}
    vectors: dict[str, dict[str, Any]] = {}
    queries: dict[str, dict[str, Any]] = {}
    for label, (fmt, texts) in variants.items():
        engine = engines[fmt]
        spent = _cpu()
        if fmt == "fp32":
            vectors[label] = {name: engine.embed_passages(t) for name, t in texts.items()}
        else:  # int8 quantises activations per run: one text per run, or a vector depends on its neighbours
            vectors[label] = {name: np.vstack([engine.embed_passages([x]) for x in t]) for name, t in texts.items()}
        spent = _cpu() - spent
        tokens = sum(len(engine.token_ids(t, query=False)) for ts in texts.values() for t in ts)
        print(f"{label}: {sum(map(len, texts.values()))} events, {tokens} tokens, {spent:.1f} CPU-s "
              f"(load {os.getloadavg()[0]:.1f})")
        queries[fmt] = {q: engine.embed_query(q) for qs in QUESTIONS.values() for q in qs}
    reference = "fp32, words twice (before)"
    cos = np.concatenate([(vectors["int8, words twice"][n] * vectors[reference][n]).sum(1) for n in DATASETS])
    print(f"int8 against fp32, same passages: cosine min {cos.min():.5f}, mean {cos.mean():.5f}")
    batched = engines["int8"].embed_passages(twice["Zookeeper"])
    cos = (batched * vectors["int8, words twice"]["Zookeeper"]).sum(1)
    print(f"int8 in runs of equal length against int8 one text per run: cosine min {cos.min():.5f}")
    print("| variant | lang | labelled questions | hit@3 | MRR of the first relevant line |")
    print("|---|---|---|---|---|")
    rows = [(label, fmt) for label, (fmt, _) in variants.items()] + [("int8, words twice", "fp32")]
    for row_number, (label, query_fmt) in enumerate(rows):
        mixed = " (query fp32: a mixed store)" if row_number == len(variants) else ""
        for lang in ("en", "uk"):
            hits, rr, n = 0, 0.0, 0
            for (name, which), relevant in RELEVANT.items():
                q = QUESTIONS[name][which if lang == "en" else 2 + which]
                order = np.argsort(-(vectors[label][name] @ queries[query_fmt][q]))
                first = next(i for i, row in enumerate(order) if sets[name][row].type in relevant)
                hits += first < 3
                rr += 1 / (first + 1)
                n += 1
            print(f"| {label}{mixed} | {lang} | {n} | {hits}/{n} | {rr / n:.3f} |")
    print(f"| variant | lang | questions | dense top-{k} shared with {reference} | triage top-{k} shared |"
          " reference's first in the variant's top 3 |")
    print("|---|---|---|---|---|---|")
    checks = [(label, fmt, fmt) for label, (fmt, _) in variants.items() if label != reference]
    checks.append(("int8, words twice", "int8", "fp32"))  # a mixed store: int8 vectors, fp32 query
    for label, passage_fmt, query_fmt in checks:
        for lang in ("en", "uk"):
            dense_shared, triage_shared, first_kept, n = 0.0, 0.0, 0, 0
            for name in DATASETS:
                crit = np.asarray([r.criticality for r in records[name]])
                for q in QUESTIONS[name][:2] if lang == "en" else QUESTIONS[name][2:]:
                    ref = vectors[reference][name] @ queries["fp32"][q]
                    got = vectors[label][name] @ queries[query_fmt][q]
                    ref_top, got_top = np.argsort(-ref)[:k], np.argsort(-got)[:k]
                    dense_shared += len(set(ref_top) & set(got_top)) / k
                    triage_shared += len(set(_triage_top(ref, crit, k)) & set(_triage_top(got, crit, k))) / k
                    first_kept += int(ref_top[0] in got_top[:3])
                    n += 1
            mixed = " (query fp32)" if query_fmt != passage_fmt else ""
            print(f"| {label}{mixed} | {lang} | {n} | {dense_shared / n:.2f} | {triage_shared / n:.2f} | {first_kept}/{n} |")


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _worker(events_file: Path, post: int, rounds: int) -> None:
    """Runs inside the tree's interpreter: prints one JSON line per path and round."""
    from mission_memory.api import Memory

    events = json.loads(events_file.read_text())
    for round_ in range(rounds):
        for path in ("inline", "queue"):
            with tempfile.TemporaryDirectory(prefix="bench-event-embedding-") as folder:
                os.environ["MISSION_MEMORY_DATA_DIR"] = folder
                with Memory.open(event_mission="bench") as memory:
                    memory.embedder.embed_passages(["warm-up line"])  # loads the engine (and builds its graph)
                    batch = [dict(e, id=f"{e['id']}-r{round_}") for e in events]
                    cpu, wall = _cpu(), time.perf_counter()
                    for start in range(0, len(batch), post):
                        memory.record_events(batch[start : start + post], embed=path == "queue")
                    stored_s = time.perf_counter() - wall
                    if path == "inline":
                        memory.embed_pending()
                    else:
                        while memory.embedding_lag():
                            time.sleep(0.05)
                    spent_cpu, spent = _cpu() - cpu, time.perf_counter() - wall
                    assert memory.embedding_lag() == 0
            print(json.dumps({"path": path, "round": round_, "events": len(batch), "wall_s": spent,
                              "stored_s": stored_s, "cpu_s": spent_cpu}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--loghub", type=Path, help="a loghub checkout or bare git directory")
    parser.add_argument("--tree", action="append", default=[], help="NAME=SRC, a mission-memory src folder to time")
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--post", type=int, default=50, help="events per record_events call")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--builds", action="store_true", help="compare the engine's builds on event text instead")
    parser.add_argument("--per-set", type=int, default=300, help="--builds: distinct events per loghub set")
    parser.add_argument("--top", type=int, default=10, help="--builds: the ranking check's top k")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        _worker(args.worker, args.post, args.rounds)
        return
    if args.loghub is None:
        raise SystemExit("--loghub DIR is needed: git clone --depth 1 https://github.com/logpai/loghub")
    if args.builds:
        builds(args.loghub, args.per_set, args.top)
        return
    trees = [tuple(t.split("=", 1)) for t in args.tree] + [("after", str(HERE.parent / "src"))]
    with tempfile.TemporaryDirectory(prefix="bench-event-embedding-") as folder:
        events_file = Path(folder) / "events.json"
        events_file.write_text(json.dumps(loghub_events(args.loghub, args.events)))
        print(f"load average before {os.getloadavg()}; {args.events} loghub events, posts of {args.post}")
        print("| tree | path | events | wall s | events/s | CPU s | CPU-ms/event | load |")
        print("|---|---|---|---|---|---|---|---|")
        for name, src in trees:
            env = dict(os.environ, PYTHONPATH=src, MISSION_MEMORY_EMBEDDER_CACHE_DIR=str(Path(folder) / "graphs"))
            proc = subprocess.run(
                [sys.executable, __file__, "--worker", str(events_file), "--post", str(args.post),
                 "--rounds", str(args.rounds)],
                env=env, capture_output=True, text=True, timeout=3600,
            )
            if proc.returncode:
                raise SystemExit(f"tree {name} failed:\n{proc.stderr[-3000:]}")
            for line in proc.stdout.splitlines():
                row = json.loads(line)
                print(f"| {name} | {row['path']} | {row['events']} | {row['wall_s']:.1f} | "
                      f"{row['events'] / row['wall_s']:.1f} | {row['cpu_s']:.1f} | "
                      f"{1000 * row['cpu_s'] / row['events']:.1f} | {os.getloadavg()[0]:.1f} |", flush=True)
        print(f"load average after {os.getloadavg()}")


if __name__ == "__main__":
    main()
