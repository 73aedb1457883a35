"""Opening a store while other processes write it: real processes, the real write path, the real check.

Writers store records through :meth:`SqliteStore.upsert_records` in batches large enough that each
SQLite checkpoint grows ``memory.db`` by megabytes: a checkpoint copies page 1 (whose header counts the
new pages) first and the new pages after it, so for the length of that copy the file is shorter than
its header says. Checkers run the open-time check (:func:`check_file_shape`) in a loop, and openers
open and close a whole :class:`SqliteStore`; every refusal is counted. The store is healthy all along,
so every refusal is false. Used by ``tests/security/test_open_beside_writers.py`` (a short run) and
``benchmarks/bench_open_under_writes.py`` (10^6 checks and more).
"""

from __future__ import annotations

import multiprocessing
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["OpenTally", "run_opens_beside_writers"]

_DIM = 4096
_WORDS = ("ledger", "upload", "rotation", "quota", "replica", "shard", "deadline", "checksum", "tenant",
          "gateway", "backoff", "cursor", "manifest", "lease", "fence", "epoch", "vault", "queue")


@dataclass
class OpenTally:
    """What one run saw.

    Attributes:
        checks: open-time checks run (:func:`check_file_shape` calls and whole opens together).
        opens: of them, whole :class:`SqliteStore` opens.
        refusals: checks that refused the store (all false: it is never damaged).
        records_written: records the writers stored meanwhile.
        seconds: how long the checkers ran (the longest).
        first_refusal: the first refusal's message, or "".
        checks_to_first_refusal: the fewest checks a checker ran up to its first refusal (0: none).
    """

    checks: int
    opens: int
    refusals: int
    records_written: int
    seconds: float
    first_refusal: str
    checks_to_first_refusal: int


def _write(path: str, seed: int, batch: int, counter: Any, max_records: int, go: Any = None, stop: Any = None,
           dim: int = _DIM) -> None:
    from mission_memory.records import Provenance, Record, RecordKind, SourceKind
    from mission_memory.stores.sqlite import SqliteStore

    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    store = SqliteStore(Path(path))
    if go is not None:
        go.wait()
    n = 0
    try:
        while n < max_records and not (stop is not None and stop.is_set()):
            records = []
            for _ in range(batch):
                n += 1
                text = " ".join(rng.choice(_WORDS) + str(rng.randrange(10**6)) for _ in range(30))
                records.append(Record.build(
                    kind=RecordKind.DOC_CHUNK, title=f"w{seed} doc {n}", text=text,
                    provenance=Provenance(kind=SourceKind.DOC, ref=f"w{seed}/{n}.md", uri=f"file:///w{seed}/{n}.md",
                                          mission="m", time=datetime(2025, 1, 1, tzinfo=UTC))))
            vectors = np_rng.normal(size=(len(records), dim)).astype(np.float32)
            store.upsert(records, vectors / np.linalg.norm(vectors, axis=1, keepdims=True), "bench-model")
            with counter.get_lock():
                counter.value += len(records)
    finally:
        store.close()


def _check(path: str, open_every: int, go: Any, done: Any, queue: Any, checks_each: int = 0) -> None:
    from mission_memory.errors import StoreDamaged
    from mission_memory.stores.sqlite import SqliteStore
    from mission_memory.stores.sqlite_integrity import check_file_shape

    db = Path(path)
    checks = opens = refusals = first_at = 0
    first = ""
    go.wait()
    started = time.time()
    while not done.is_set() and not (checks_each and checks >= checks_each):
        checks += 1
        try:
            if open_every and checks % open_every == 0:
                opens += 1
                SqliteStore(db).close()
            else:
                check_file_shape(db)
        except StoreDamaged as exc:
            refusals += 1
            first = first or str(exc)[:400]
            first_at = first_at or checks
    queue.put((checks, opens, refusals, first, time.time() - started, first_at))


def run_opens_beside_writers(path: Path, *, writers: int, checkers: int, records_each: int, batch: int = 100,
                             open_every: int = 200, warmup_records: int = 600, checks_each: int = 0,
                             dim: int = _DIM) -> OpenTally:
    """Run ``writers`` processes each storing ``records_each`` records (``batch`` a transaction, each with
    a 16 KiB vector) into the store ``path``, and ``checkers`` processes checking it until the writers are
    done; ``warmup_records`` records are stored first, so the file is past its first pages. With
    ``checks_each``, the run ends instead when every checker has run that many checks (the writers
    stop then, or at ``records_each``, whichever comes first; ``dim``: the vectors' dimension).

    Each checker opens a whole store every ``open_every``-th check (0: never) and runs
    :func:`check_file_shape` otherwise. Returns the counts summed over the checkers.
    """
    ctx = multiprocessing.get_context("spawn")
    counter = ctx.Value("q", 0)
    _write(str(path), 10**6, batch, counter, warmup_records)
    queue = ctx.Queue()
    go = ctx.Barrier(writers + checkers)  # every process has imported the package and opened the store
    done = ctx.Event()
    stop = ctx.Event()
    writing = [ctx.Process(target=_write, args=(str(path), seed, batch, counter, records_each, go, stop, dim))
               for seed in range(writers)]
    checking = [ctx.Process(target=_check, args=(str(path), open_every, go, done, queue, checks_each))
                for _ in range(checkers)]
    for p in writing + checking:
        p.start()
    if checks_each:
        results = [queue.get() for _ in range(checkers)]
        stop.set()
        for p in writing:
            p.join()
    else:
        for p in writing:
            p.join()
        done.set()
        results = [queue.get(timeout=120) for _ in range(checkers)]
    for p in checking:
        p.join(timeout=60)
    if any(p.exitcode for p in writing):
        raise RuntimeError(f"a writer failed (exit codes {[p.exitcode for p in writing]})")
    checks = sum(r[0] for r in results)
    return OpenTally(checks=checks, opens=sum(r[1] for r in results), refusals=sum(r[2] for r in results),
                     records_written=int(counter.value), seconds=max(r[4] for r in results),
                     first_refusal=next((r[3] for r in results if r[3]), ""),
                     checks_to_first_refusal=min((r[5] for r in results if r[5]), default=0))
