"""Precision of the correction-relevance threshold on a hand-labelled set (docs/adr/0024).

The retrieval-correction signal (docs/design.md §6) calls a record relevant to a correction that names
none when the cosine similarity of the correction's topic with the record reaches
``correction_relevance_threshold``. This script measures that rule on
``tests/corrections/relevance_labels.tsv``: 56 (topic, ADR, relevant?) cases over the 39 ADRs of the
shared corpus (``tdr-docs.bundle``), labelled by hand before any score was computed, 4 of them
Ukrainian topics. The ADRs are ingested as the product ingests them; each case's score is the cosine
of the topic's query embedding with the ADR record's stored vector (the same numbers
:func:`mission_memory.corrections.signal.relevant_records` compares).

Prints, per threshold, the cases above it, precision, recall and the false positives; and the
highest-precision threshold with recall >= 0.5.

Usage::

    python benchmarks/bench_correction_relevance.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import RecordKind

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

LABELS = Path(__file__).resolve().parent.parent / "tests" / "corrections" / "relevance_labels.tsv"
ADR_FOLDER = "architecture-decision-records"


@dataclass(frozen=True)
class Case:
    """One labelled case and its score."""

    topic: str
    adr: str
    relevant: bool
    score: float


def load_labels(path: Path = LABELS) -> list[tuple[str, str, bool]]:
    """The (topic, ADR file name, relevant) rows of the labelled set."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            topic, adr, label = line.split("\t")
            rows.append((topic, adr, label.strip() == "1"))
    return rows


def score_cases(bundle: Path, work: Path) -> list[Case]:
    """Ingest the corpus's ADRs into a fresh memory under ``work`` and score every labelled case."""
    clone = work / "tdr-docs"
    subprocess.run(["git", "clone", "-q", str(bundle), str(clone)], check=True)
    mission = work / "tdr"
    shutil.copytree(clone / ADR_FOLDER, mission / ADR_FOLDER)
    with Memory.open(load_settings(data_dir=work / "data")) as memory:
        memory.ingest_repository(mission, mission="tdr")
        decisions = memory.store.records_of_kind([RecordKind.DECISION.value], mission="tdr")
        by_file = {Path(r.provenance.ref.split("#", 1)[0]).name: r.id for r in decisions}
        vectors = memory.store.vectors_for(list(by_file.values()), memory.embedder.model_id)
        cases = []
        for topic, adr, relevant in load_labels():
            query = memory.embedder.embed_query(topic)
            cases.append(Case(topic, adr, relevant, float(query @ vectors[by_file[adr]])))
    return cases


def precision_recall(cases: list[Case], threshold: float) -> tuple[int, float | None, float]:
    """(cases at or above ``threshold``, precision or None, recall) of the rule."""
    above = [c for c in cases if c.score >= threshold]
    positives = sum(c.relevant for c in cases)
    hits = sum(c.relevant for c in above)
    return len(above), (hits / len(above) if above else None), hits / positives


def main() -> None:
    bundle = corpus_path("tdr-docs.bundle")
    with tempfile.TemporaryDirectory() as work:
        cases = score_cases(bundle, Path(work))
    positives = sum(c.relevant for c in cases)
    print(f"{len(cases)} cases, {positives} relevant, {len(cases) - positives} not relevant")
    for c in sorted(cases, key=lambda c: -c.score):
        print(f"{c.score:.4f}  {'REL' if c.relevant else '---'}  {c.adr[:40]:40}  {c.topic[:60]}")
    print("\nthreshold  above  precision  recall")
    for step in range(76, 93):
        threshold = step / 100
        above, precision, recall = precision_recall(cases, threshold)
        shown = f"{precision:.3f}" if precision is not None else "  -  "
        print(f"{threshold:9.2f}  {above:5d}  {shown:>9}  {recall:6.3f}")


if __name__ == "__main__":
    main()
