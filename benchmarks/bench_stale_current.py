"""The "stale leaked / current kept" suite of issue 12 item 1, counted (ADR 0030).

Builds the suite's store (``tests/retrieval/stale_current_cases.py``: refresh artifacts over three
passes, a supersession chain A→B→C, a re-written section, history questions and the corpus
repository's (tests/corpora) ADR-0008/0009 pair) in a temp dir and runs every case twice: with today's
selection, and with the selection before ADR 0030 (no successor substitution, near-duplicates keep
the better-scoring one). Prints both counts per run and every leaked or lost record.

Usage::

    .venv/bin/python benchmarks/bench_stale_current.py [--budget 4000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mission_memory.api import Memory  # noqa: E402
from mission_memory.config import load_settings  # noqa: E402
from mission_memory.retrieval import query as query_module  # noqa: E402
from mission_memory.retrieval.ranking import Candidate  # noqa: E402
from mission_memory.retrieval.staleness import StaleReplacement  # noqa: E402
from tests.conftest import GitRepo  # noqa: E402
from tests.retrieval.stale_current_cases import SuiteScore, build_suite, score_suite  # noqa: E402


def _better_scoring_kept(
    candidates: Sequence[Candidate],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    threshold: float,
    keep: int | None = None,
) -> tuple[list[Candidate], int]:
    """Near-duplicate suppression before ADR 0030: drop candidates that repeat a better one (same
    normalised text, or cosine ≥ ``threshold``), whichever is newer.

    Args:
        candidates: best first.
        vectors: unit vectors by record id (candidates without one are compared by text only).
        threshold: cosine similarity at or above which two candidates are near-duplicates.
        keep: stop once this many candidates are kept (the rest are not examined).

    Returns:
        The kept candidates (order kept) and how many were dropped.
    """
    limit = len(candidates) if keep is None else keep
    dim = next((v.shape[0] for v in vectors.values()), 0)
    kept_matrix = np.empty((limit, dim), dtype=np.float32)
    n_vectors = 0
    kept: list[Candidate] = []
    seen_texts: set[str] = set()
    dropped = 0
    for cand in candidates:
        if len(kept) >= limit:
            break
        text_key = " ".join((cand.record.text if cand.record else "").split()).lower()
        if text_key and text_key in seen_texts:
            dropped += 1
            continue
        vec = vectors.get(cand.record_id)
        if vec is not None and n_vectors and float((kept_matrix[:n_vectors] @ vec).max()) >= threshold:
            dropped += 1
            continue
        kept.append(cand)
        if text_key:
            seen_texts.add(text_key)
        if vec is not None:
            kept_matrix[n_vectors] = vec
            n_vectors += 1
    return kept, dropped


@contextmanager
def _selection_before_adr_0030() -> Iterator[None]:
    """Selection as it was: no successor substitution, near-duplicates keep the better-scoring one."""
    saved = query_module.replace_stale, query_module.suppress_near_duplicates
    query_module.replace_stale = lambda store, task, where, cands, named=(): (list(cands), StaleReplacement())  # type: ignore[assignment]
    query_module.suppress_near_duplicates = (  # type: ignore[assignment]
        lambda cands, vectors, threshold, keep=None, exempt=frozenset(): _better_scoring_kept(
            cands, vectors, threshold, keep=keep)
    )
    try:
        yield
    finally:
        query_module.replace_stale, query_module.suppress_near_duplicates = saved


def _print(label: str, score: SuiteScore) -> None:
    print(f"{label:<28} cases {score.cases:>3}  stale leaked {score.stale_leaked:>3}  "
          f"current kept {score.current_kept:>3}/{score.current_total}")
    for line in score.failures:
        print(f"    {line[:160]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=int, default=4000, help="token budget of each digest")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mm-stale-") as tmp:
        work = Path(tmp)
        print("building the suite (three refresh passes, two ingests, the corpus ADRs)…", file=sys.stderr)
        with Memory.open(load_settings(data_dir=work / "data", llm_base_url=None)) as memory:
            cases = build_suite(memory, lambda name: GitRepo(work / name), work)
            with _selection_before_adr_0030():
                before = score_suite(memory, cases, args.budget)
            after = score_suite(memory, cases, args.budget)
    _print("before ADR 0030 selection", before)
    _print("current selection", after)
    return 0 if after.stale_leaked == 0 and after.current_kept == after.current_total else 1


if __name__ == "__main__":
    raise SystemExit(main())
