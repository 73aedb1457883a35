"""Several real processes share one store: nothing lost, no lock error, a killed ingest leaves a sound store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from mission_memory.api import Memory
from tests.conftest import GitRepo


def _small_repo(make_git_repo: Callable[[str], GitRepo], i: int) -> GitRepo:
    repo = make_git_repo(f"mission{i}")
    repo.commit(f"M{i}-1: start mission {i}", "2024-01-01T00:00:00+00:00",
                {"README.md": f"# Mission {i}\n\nThe mission {i} moves cargo number {i}.\n"})
    repo.commit(f"M{i}-2: add runbook", "2024-02-01T00:00:00+00:00",
                {"docs/runbook.md": f"# Runbook {i}\n\n## Restart\n\nRestart worker {i} nightly.\n\n## Alerts\n\nPage the operator of mission {i}.\n"})
    return repo


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mission_memory", *args]


def test_eight_processes_ingesting_and_querying_at_once_lose_nothing(
    make_git_repo: Callable[[str], GitRepo], data_dir: Path
) -> None:
    repos = [_small_repo(make_git_repo, i) for i in range(8)]
    script = (
        "import json, sys\n"
        "from mission_memory.api import Memory\n"
        "with Memory.open() as m:\n"
        "    report = m.ingest_repository(sys.argv[1])\n"
        "    for q in ('restart the worker', 'перезапуск', 'who is paged'):\n"
        "        m.query(q, token_budget=800)\n"
        "    print(json.dumps(report.to_json()))\n"
    )
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    procs = [subprocess.Popen([sys.executable, "-c", script, str(r.root)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in repos]
    outputs = [p.communicate(timeout=600) for p in procs]
    for p in procs:
        p.__exit__(None, None, None)
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err.lower()
    added = sum(json.loads(out)["added"] for out, _ in outputs)
    with Memory.open() as memory:
        status = memory.status()
        assert status["records"] == added
        assert set(status["missions"]) == {f"mission{i}" for i in range(8)}
        assert status["retrieval_events"] == 8 * 3
        assert sum(status["vectors_by_model"].values()) == added
        assert memory.store.integrity_check() == "ok"


def test_a_process_killed_mid_ingest_leaves_a_sound_store_that_reingest_completes(
    make_git_repo: Callable[[str], GitRepo], data_dir: Path
) -> None:
    repo = make_git_repo("big")
    sections = "\n\n".join(f"## Section {i}\n\nParagraph about topic {i} and its handling, step {i}." for i in range(160))
    repo.commit("Add the big manual", "2024-01-01T00:00:00+00:00", {"docs/manual.md": "# Manual\n\n" + sections})
    script = (
        "import sys\n"
        "from mission_memory.api import Memory\n"
        "m = Memory.open()\n"
        "m.ingest_repository(sys.argv[1], progress=lambda p, d, t: print(p, d, t, flush=True))\n"
    )
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    with subprocess.Popen([sys.executable, "-c", script, str(repo.root)], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            phase, done, _total = line.split()
            if phase == "embed" and int(done) >= 64:
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    with Memory.open() as memory:
        assert memory.store.integrity_check() == "ok"
        partial = memory.status()["records"]
        assert partial >= 64
        report = memory.ingest_repository(repo.root)
        final = memory.status()["records"]
        assert report.embedded == final - partial
        assert final == partial + sum(report.added.values())
        again = memory.ingest_repository(repo.root)
        assert again.embedded == 0 and memory.status()["records"] == final
        assert memory.query("topic 123 handling", token_budget=600).entries
