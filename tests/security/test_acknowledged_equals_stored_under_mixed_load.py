"""A short mixed load (benchmarks/bench_mixed_load_acknowledged.py) loses nothing it acknowledged (issue 22 item 1).

Ingests, ``decide``, ``correct``, the prompt hook, MCP queries and ``record_decision``, event posts and a
refresh pass run at once as real processes on one data dir for a few seconds, embedding through a
loopback endpoint so the test stays short; every kind's stored count must reach its acknowledged count.
The benchmark runs the same load longer with the shipped embedder.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tests.security.held_embeddings import embedding_endpoint

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_mixed_load_acknowledged.py"


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_mixed_load_acknowledged", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through it
    spec.loader.exec_module(module)
    return module


def test_a_short_mixed_load_stores_everything_it_acknowledged(tmp_path: Path) -> None:
    bench = _benchmark()
    workdir = tmp_path / "load"
    workdir.mkdir()
    with embedding_endpoint() as endpoint:
        results = bench.run_mixed_load(10, workdir, commits=20, extra_env=endpoint.environment())
    for kind in bench.COUNTED:
        row = results[kind]
        assert row["acknowledged"] > 0, f"{kind}: nothing was acknowledged ({results})"
        assert row["stored"] >= row["acknowledged"], f"{kind}: {row} ({results})"
    prompts = results["prompt (hook)"]
    dropped = results.get("prompt (hook) dropped and counted", {"stored": 0})["stored"]
    assert prompts["acknowledged"] > 0 and prompts["stored"] + dropped >= prompts["acknowledged"], results
    assert results["decision (decide)"]["failed"] == 0 and results["decision (MCP)"]["failed"] == 0, results
