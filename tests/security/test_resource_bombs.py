"""Small inputs that cost unbounded time or memory are refused or cut (issue 22 item 6, docs/adr/0056).

* A nine-line YAML alias bomb (nine anchors of nine aliases each) in an ADR's front matter, in a YAML
  document under ``docs/`` and under an ``access:`` key: before, depth 7 took 47 s and 803 MB and
  depth 8 ended the whole ingest in ``MemoryError``. Now the loader refuses the expansion, the ADR is
  read with the loose front-matter reader, the YAML document is skipped as invalid YAML naming the
  alias bomb, and the rest of the repository is ingested. The ingest runs as a subprocess with a 3 GB
  address-space limit and a deadline, so the old behaviour fails the test rather than the machine.
* A 957 KB file of one-line sections: before, tens of thousands of records (88,001 in the issue's file,
  an hour of embedding with the default embedder); now the first ``max_records_per_file`` are ingested
  and the report names the file as cut. Embedding goes through a loopback endpoint to keep it short.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.front_matter import load_text_yaml
from mission_memory.records import RecordKind
from tests.conftest import GitRepo
from tests.security.held_embeddings import embedding_endpoint


def alias_bomb(depth: int, key: str = "lol") -> str:
    """A YAML mapping of ``depth + 1`` lines whose last key stands for 9^(depth+1) leaves."""
    names = [f"{key}{i}" for i in range(depth + 1)]
    lines = [f'{names[0]}: &{names[0]} ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"{name}: &{name} [{', '.join([f'*{names[i]}'] * 9)}]" for i, name in enumerate(names[1:])]
    return "\n".join(lines) + "\n"


def _limited_memory() -> None:
    limit = 3 * 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_an_alias_bomb_in_front_matter_and_documents_is_refused_and_the_rest_is_ingested(
    make_git_repo: Callable[[str], GitRepo], data_dir: Path
) -> None:
    repo = make_git_repo("bombed")
    bomb = alias_bomb(8)
    repo.commit("Add ADRs and a config", "2024-01-01T00:00:00+00:00", {
        "docs/adr/0001-use-sqlite.md": f"---\nstatus: accepted\n{bomb}---\n\n# Use SQLite\n\n## Decision\n\nSQLite.\n",
        "docs/adr/0002-keep-logs.md": f"---\nstatus: accepted\naccess: internal\n{alias_bomb(8, 'ha')}---\n\n"
                                      "# Keep logs 30 days\n\n## Decision\n\nThirty days.\n",
        "docs/settings.yaml": bomb,
        "docs/guide.md": "# Guide\n\n## Start\n\nRun the uploader.\n",
    })
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    with subprocess.Popen([sys.executable, "-m", "mission_memory", "ingest", str(repo.root), "--json"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          preexec_fn=_limited_memory) as ingest:
        try:
            out, err = ingest.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            ingest.kill()
            ingest.communicate()
            pytest.fail("the ingest of nine-line alias bombs was still running after 120 s")
    assert ingest.returncode == 0, err[-2000:]
    report = json.loads(out)
    [skipped] = report["skipped"]["files"]
    assert skipped["path"] == "docs/settings.yaml" and skipped["reason"] == "invalid-yaml"
    assert "alias bomb" in skipped["detail"]
    with Memory.open() as memory:
        titles = {r.title for r in memory.store.records_of_kind([RecordKind.DECISION.value], mission="bombed")}
        assert {"Use SQLite", "Keep logs 30 days"} <= {t.split(": ", 1)[-1] for t in titles}
        assert memory.store.count_kind("bombed", RecordKind.DOC_CHUNK.value) >= 1


def test_aliases_within_the_bound_load_as_before() -> None:
    from mission_memory.front_matter import MAX_EXPANDED_NODES

    text = "base: &base {image: python, stage: test}\nunit:\n  <<: *base\n  script: pytest\nlint: *base\n"
    assert load_text_yaml(text) == {
        "base": {"image": "python", "stage": "test"},
        "unit": {"image": "python", "stage": "test", "script": "pytest"},
        "lint": {"image": "python", "stage": "test"},
    }
    assert len(load_text_yaml(alias_bomb(3))) == 4  # 9^4 = 6,561 leaves: under the bound
    assert MAX_EXPANDED_NODES < 9**6  # depth 5 is refused


def test_a_file_of_tiny_sections_is_cut_to_the_cap_and_reported(
    make_git_repo: Callable[[str], GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = 500  # MISSION_MEMORY_MAX_RECORDS_PER_FILE: the default (2,000) costs more embedding than a test should
    monkeypatch.setenv("MISSION_MEMORY_MAX_RECORDS_PER_FILE", str(cap))
    repo = make_git_repo("handbook")
    sections = []
    size = i = 0
    while size < 957_000:
        sections.append(f"## Step {i}\nDo {i}.\n")
        size += len(sections[-1])
        i += 1
    repo.commit("Add the step list", "2024-01-01T00:00:00+00:00",
                {"docs/steps.md": "".join(sections), "docs/guide.md": "# Guide\n\n## Start\n\nRun it.\n"})
    with embedding_endpoint() as endpoint:
        for name, value in endpoint.environment().items():
            monkeypatch.setenv(name, value)
        with Memory.open() as memory:
            report = memory.ingest_repository(repo.root).to_json()
            stored = memory.store.records_of_kind([RecordKind.DOC_CHUNK.value], mission="handbook", limit=100_000)
    from_steps = [r for r in stored if r.attributes.get("path") == "docs/steps.md"]
    assert len(from_steps) == cap, f"{len(from_steps):,} records from one file of {len(sections):,} tiny sections"
    assert report.get("cut") == [{"path": "docs/steps.md", "records": len(sections), "kept": cap}]
    assert any("docs/steps.md" in w and "cap" in w for w in report["warnings"])
    assert any(r.attributes.get("path") == "docs/guide.md" for r in stored)
    assert endpoint.passages < cap + 50


def test_the_default_cap_is_the_settings_default() -> None:
    from mission_memory.config import Settings
    from mission_memory.ingest.repository import MAX_RECORDS_PER_FILE

    assert Settings().max_records_per_file == MAX_RECORDS_PER_FILE == 2000
