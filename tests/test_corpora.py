"""The corpora the tests read live in the repository (tests/corpora) and are found one way.

A test that needs a corpus file fails when it is missing; nothing reaches outside the checkout.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.corpus import CORPORA, corpus_path

ROOT = Path(__file__).resolve().parents[1]
# a path outside the checkout: an absolute /work/... path, or the folder beside the checkout
OUTSIDE = re.compile(r"/work/shared|parent\s*/\s*\"shared\"|\.\./shared|MISSION_MEMORY_CORPUS_BUNDLE")


def test_the_corpus_bundle_is_a_git_repository_with_its_39_adrs(corpora: Path, tmp_path: Path) -> None:
    assert corpora == CORPORA and corpora.is_relative_to(ROOT)
    clone = tmp_path / "tdr-docs"
    subprocess.run(["git", "clone", "-q", str(corpora / "tdr-docs.bundle"), str(clone)], check=True)
    assert len(list((clone / "architecture-decision-records").glob("00*.md"))) == 39
    assert sorted(p.name for p in (corpora / "transcripts").glob("*.jsonl")) == [
        "compact.jsonl", "crud.jsonl", "subagent.jsonl", "todos.jsonl"]
    assert "Open Government Licence" in (corpora / "README.md").read_text(encoding="utf-8")


def test_a_missing_corpus_file_is_an_error_naming_it_not_a_skip() -> None:
    with pytest.raises(FileNotFoundError, match=r"tests/corpora/no-such\.bundle"):
        corpus_path("no-such.bundle")


def test_no_test_or_benchmark_reads_a_corpus_from_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("tests", "benchmarks")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "test_corpora.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line) and "seed" not in line
    ]
    assert offenders == []
