"""The relevance threshold's precision, measured on the hand-labelled set of the corpus repository (docs/adr/0024)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from mission_memory.config import load_settings

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_correction_relevance", ROOT / "benchmarks" /
                                                  "bench_correction_relevance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_labelled_set_has_at_least_40_cases_in_both_classes() -> None:
    rows = _bench().load_labels()
    assert len(rows) >= 40
    assert 0.3 < sum(relevant for _, _, relevant in rows) / len(rows) < 0.7


def test_the_default_threshold_keeps_precision_above_nine_tenths_on_the_labelled_set(tmp_path: Path, corpora: Path) -> None:
    bench = _bench()
    cases = bench.score_cases(corpora / "tdr-docs.bundle", tmp_path)
    above, precision, recall = bench.precision_recall(cases, load_settings().correction_relevance_threshold)
    assert above >= 20
    assert precision is not None and precision >= 0.9
    assert recall >= 0.6
