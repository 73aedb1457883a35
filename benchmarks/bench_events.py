"""Event intake under a flood: events/s into the embedded store, embedding-queue lag, pull p95 meanwhile.

A producer thread records domain events through ``Memory.record_events`` (the path the CLI, the HTTP
receivers and the API share) in batches, paced at ``--rate`` events/s for ``--seconds`` (or as fast as
it can with ``--rate 0``), while the background embedding queue (docs/adr/0036) embeds them with the
real embedder and a query thread runs pull queries back to back. English and Ukrainian texts, several
sectors and criticalities. At the end it checks that every event sent is stored, waits for the queue
to drain, and prints: achieved intake events/s, intake call p50/p95, embedding-queue lag (max, at the
flood's end, and after ``--drain-seconds`` with the embedding rate), pull p50/p95 during the flood (and
its mode), and the escalation state. The remaining vectors are not waited for (on a loaded 2-core machine
the embedder manages a few records per second); they stay queued in the store.

Usage::

    .venv/bin/python benchmarks/bench_events.py [--rate 150] [--seconds 20] [--batch 10] [--no-embed]

Works in a temporary data dir; nothing else is written.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mission_memory.api import Memory
from mission_memory.records import RecordKind

SECTORS = ["north", "south", "east", "west", "checkout", "payments"]
TEXTS = [
    "Shelling reported near the {s} checkpoint, {n} rounds, no casualties yet.",
    "Обстріл у секторі {s}: {n} вибухів, уточнюємо втрати.",
    "GPS jamming detected over sector {s}; drones switching to inertial navigation ({n}).",
    "Придушення зв'язку в секторі {s}, втрачено зв'язок з {n} дронами рою.",
    "Error rate of service {s} above objective: {n}% of requests failing.",
    "Latency of {s} p99 above 2 s for {n} minutes.",
]
QUERIES = [
    "What is happening in sector north right now?",
    "Що відбувається з дронами рою?",
    "Which services are failing and why?",
    "Where is jamming reported?",
]


def _event(i: int, rng: random.Random) -> dict[str, Any]:
    sector = rng.choice(SECTORS)
    return {
        "id": f"bench-{i}", "time": datetime.now(UTC).isoformat(), "sector": sector,
        "type": rng.choice(["shelling", "ew_jamming", "lost_link", "HighErrorRate"]),
        "criticality": round(rng.choice([0.1, 0.2, 0.3, 0.5, 0.6, 0.9, 0.95]), 2), "source": "bench",
        "text": rng.choice(TEXTS).format(s=sector, n=rng.randint(1, 99)),
    }


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=150.0, help="target events/s (0: as fast as possible)")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the flood")
    parser.add_argument("--batch", type=int, default=10, help="events per record_events call")
    parser.add_argument("--no-embed", action="store_true", help="baseline: leave vectors unmade during the flood")
    parser.add_argument("--drain-seconds", type=float, default=10.0, help="how long to watch the queue after the flood")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, Memory.open(data_dir=Path(tmp), event_mission="bench") as memory:
        rng = random.Random(5)
        memory.record_events([_event(-i - 1, rng) for i in range(50)], embed=False)
        memory.embed_pending()  # warm the embedder and the store
        memory.query("warm up", token_budget=2000)

        stop = threading.Event()
        intake_ms: list[float] = []
        pull_ms: list[float] = []
        pull_modes: list[str] = []
        lags: list[int] = []
        sent = 0

        def produce() -> None:
            nonlocal sent
            started = time.perf_counter()
            i = 0
            while time.perf_counter() - started < args.seconds:
                batch = [_event(i + k, rng) for k in range(args.batch)]
                t = time.perf_counter()
                memory.record_events(batch, embed=not args.no_embed)
                intake_ms.append((time.perf_counter() - t) * 1000)
                i += args.batch
                sent = i
                if args.rate > 0:
                    ahead = started + i / args.rate - time.perf_counter()
                    if ahead > 0:
                        time.sleep(ahead)

        def pull() -> None:
            k = 0
            while not stop.is_set():
                t = time.perf_counter()
                digest = memory.query(QUERIES[k % len(QUERIES)], token_budget=2000, filters={"mission": "bench"})
                pull_ms.append((time.perf_counter() - t) * 1000)
                pull_modes.append("degraded" if "Mode: degraded" in digest.text else "normal")
                k += 1

        def sample() -> None:
            while not stop.wait(1.0):
                lags.append(memory.embedding_lag())

        threads = [threading.Thread(target=pull), threading.Thread(target=sample)]
        for t in threads:
            t.start()
        flood_started = time.perf_counter()
        produce()
        flood_s = time.perf_counter() - flood_started
        stop.set()
        for t in threads:
            t.join()
        lag_at_end = memory.embedding_lag()
        time.sleep(args.drain_seconds)  # the background queue keeps embedding; measure how fast
        lag_after = memory.embedding_lag()
        drain_rate = (lag_at_end - lag_after) / args.drain_seconds
        stored = memory.store.count_kind("bench", RecordKind.DOMAIN_EVENT.value) - 50
        state = memory.escalation_status()

    queue = "no embedding (baseline)" if args.no_embed else "background embedding queue on"
    print(f"flood: {args.seconds:g} s at target {args.rate:g} events/s, batches of {args.batch}, {queue}")
    print(f"events sent {sent}, stored {stored}, lost {sent - stored}")
    print(f"intake: {sent / flood_s:.1f} events/s achieved; record_events p50 {_pct(intake_ms, .5):.1f} ms, "
          f"p95 {_pct(intake_ms, .95):.1f} ms per batch")
    eta = f"{lag_after / drain_rate:.0f} s more to drain" if drain_rate > 0 else "not draining"
    print(f"embedding queue lag: max {max(lags, default=0)} records, {lag_at_end} at the flood's end, {lag_after} "
          f"{args.drain_seconds:g} s later ({drain_rate:.1f} records/s embedded after the flood; {eta})")
    print(f"pull during the flood: {len(pull_ms)} queries, p50 {_pct(pull_ms, .5):.0f} ms, p95 {_pct(pull_ms, .95):.0f} ms, "
          f"{pull_modes.count('degraded')} answered in degraded mode")
    print(f"escalation at the end: {state.mode.value}, α {state.alpha:.3f}, {state.rate} events in the window")


if __name__ == "__main__":
    main()
