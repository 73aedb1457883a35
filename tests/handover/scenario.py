"""A shift built in a real git repository and a real store: operator alice works, then bob takes over.

Records of the areas built in parallel (correction patterns, recorded decisions, tracker items) are
made with ``Record.build`` in the shapes docs/design.md §3 fixes.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from tests.conftest import GitRepo, built_once, copy_tree
from tests.hostile_texts import INJECTION_EN, INJECTION_UK

MISSION = "uploader"
NOW = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)

ACCEPTED_ADR = """---
status: accepted
date: 2025-03-03
---

# Use SQLite in WAL mode for the upload ledger

## Context and Problem Statement

Field laptops have no network; the ledger must survive power loss.

## Considered Options

* SQLite in WAL mode
* Keep PostgreSQL

## Decision Outcome

Chosen option: "SQLite in WAL mode", because it is one file that needs no server.

## Pros and Cons of the Options

### Keep PostgreSQL

* Bad, because it needs a network connection the field teams do not have.
"""

PROPOSED_ADR = """# 2. Shard the ledger per field team

Date: 2025-03-04

## Status

Proposed

## Context

One ledger file grows past 2 GB on large teams.

## Decision

We might shard the ledger per field team.
"""


def at(day: int, hour: int = 10) -> datetime:
    return datetime(2025, 3, day, hour, tzinfo=UTC)


def build_repository(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_git_repo(MISSION)
    repo.git("config", "user.name", "carol")
    repo.commit("Initial README", "2025-01-10T09:00:00+00:00", {"README.md": "# Uploader\n"})
    repo.git("config", "user.name", "alice")
    repo.commit("Ledger: write-ahead log", "2025-03-03T10:00:00+00:00", {
        "docs/adr/0001-use-sqlite-in-wal-mode.md": ACCEPTED_ADR, "src/ledger/wal.py": "WAL = True\n"})
    repo.commit("Propose sharding the ledger", "2025-03-04T10:00:00+00:00", {
        "docs/adr/0002-shard-the-ledger.md": PROPOSED_ADR})
    repo.commit(f"Retry flaky uploads\n\n{INJECTION_EN}", "2025-03-05T10:00:00+00:00", {
        "src/ledger/retry.py": "RETRIES = 3\n", "src/upload/client.py": "TIMEOUT = 5\n"})
    repo.commit("Tune retries", "2025-03-06T10:00:00+00:00", {"src/ledger/retry.py": "RETRIES = 4\n"})
    return repo


def correction(correction_id: str, when: datetime, component: str | None, klass: str, category: str,
               outcome: str = "accepted", operator: str = "alice") -> Record:
    return Record.build(
        kind=RecordKind.CORRECTION_PATTERN,
        title=f"{klass}: {category} in {component}",
        text=f"Operator corrected a {klass} about {category} in {component}.",
        provenance=Provenance(kind=SourceKind.CORRECTION, ref=f"correction/{correction_id}",
                              uri=f"mission-memory://correction/{correction_id}", mission=MISSION, time=when),
        component=component, operator=operator,
        attributes={"correction_id": correction_id, "correction_class": klass, "category": category,
                    "outcome": outcome, "source": "explicit", "session_id": "s-alice", "retrieval_caused": "true",
                    "retrieval_event_id": None, "expected": [], "missed_record_ids": [], "served_record_ids": []},
        slot=correction_id,
    )


def recorded_decision() -> Record:
    attributes: dict[str, Any] = {
        "status": "accepted", "decision": "Cap upload retries at four attempts.",
        "context": "Retries piled up on flaky links.", "rationale": "Four attempts cover 99% of transient failures.",
        "rejected_alternatives": [{"option": "Unlimited retries", "reason": "they hide outages"}],
        "principle_ids": [], "supersedes": [], "decided_by": "alice", "session_id": "s-alice", "recorded": True,
    }
    return Record.build(
        kind=RecordKind.DECISION, title="Cap upload retries at four", text="Cap upload retries at four attempts.",
        provenance=Provenance(kind=SourceKind.DECISION, ref="decision/cap-upload-retries",
                              uri="mission-memory://decision/cap-upload-retries", mission=MISSION, time=at(6, 11)),
        criticality=0.7, component="src", attributes=attributes,
    )


def tracker_item(key: str, title: str, when: datetime, *, assignee: str | None, in_progress: bool) -> Record:
    url = f"https://tracker.example/uploader/{key}"
    return Record.build(
        kind=RecordKind.ISSUE, title=title, text=f"{title}. Details in the tracker.",
        provenance=Provenance(kind=SourceKind.ISSUE, ref=key, uri=url, mission=MISSION, time=when),
        attributes={"tracker": "local", "key": key, "state": "in progress" if in_progress else "todo",
                    "labels": ["ledger"], "assignee": assignee, "created": when.isoformat(),
                    "updated": when.isoformat(), "url": url, "in_progress": in_progress},
    )


def tracker_comment(key: str, text: str, when: datetime) -> Record:
    url = f"https://tracker.example/uploader/{key}#c1"
    return Record.build(
        kind=RecordKind.COMMENT, title=f"Comment on {key}", text=text,
        provenance=Provenance(kind=SourceKind.COMMENT, ref=f"{key}#c1", uri=url, mission=MISSION, time=when),
        attributes={"tracker": "local", "key": f"{key}#c1", "issue_key": key, "author": "dave", "answered": False,
                    "url": url, "created": when.isoformat(), "updated": when.isoformat()},
    )


def open_questions_artifact() -> Record:
    return Record.build(
        kind=RecordKind.REFRESH_ARTIFACT, title="OPS-7 Ledger rollout: open questions (refresh 2025-03-06)",
        text="**Proposed decisions**\n- Should we shard the ledger per field team? (docs/adr/0002-shard-the-ledger.md)",
        provenance=Provenance(kind=SourceKind.PUSH_REFRESH, ref="OPS-7", uri="https://tracker.example/uploader/OPS-7",
                              mission=MISSION, time=at(6, 12)),
        attributes={"task": "OPS-7", "artifact": "open_questions"}, slot="OPS-7:open_questions:2025-03-06",
    )


def alices_shift(memory: Memory, repo: GitRepo) -> None:
    """Ingest the repository, then store alice's corrections, decision, notes and the tracker items."""
    memory.ingest_repository(repo.root)
    memory.store.upsert_records([
        correction("c" * 32, at(5), "src", "wrong-assumption", "retries"),
        correction("d" * 32, at(5, 12), "src", "wrong-assumption", "retries", outcome="modified"),
        correction("e" * 32, at(6), "docs", "style", "adr-format", outcome="rejected"),
        correction("f" * 32, at(6), "src", "scope", "other-operator", operator="bob"),
        recorded_decision(),
        tracker_item("OPS-7", "Roll out the SQLite ledger", at(6), assignee="alice", in_progress=True),
        tracker_item("OPS-9", "Investigate upload timeouts", at(5), assignee=None, in_progress=False),
        tracker_comment("OPS-9", f"Should the client timeout be raised to 30 s? {INJECTION_UK}", at(6, 15)),
        open_questions_artifact(),
    ])
    memory.handover_note("Retry storms come from the upload client timeout, not the ledger.", "hypothesis",
                         mission=MISSION, operator="alice", now=at(6, 16))
    memory.handover_note("Next: raise the client timeout in src/upload/client.py and watch OPS-9.", "next-step",
                         mission=MISSION, operator="alice", now=at(6, 17))
    memory.handover_note(f"Do not run the migration on Friday. {INJECTION_EN}", "warning",
                         mission=MISSION, operator="alice", now=at(6, 18))


@dataclass
class Corpus:
    """The corpus repository as a test's memory holds it: the open memory and the clone it ingested."""

    memory: Memory
    repo: Path


def recent_corpus(bundle: Path, root: Path, mission: str, commits: int, include: Sequence[str],
                  once_per_run: pytest.TempPathFactory | None = None) -> Corpus:
    """The corpus repository ``bundle`` (the ``corpora`` fixture's tdr-docs.bundle) cloned into ``root/mission``, cut to its latest ``commits`` (a shallow boundary,
    so ingest reads only those) and ingested with only the ``include`` documents, into ``root/data``.

    With ``once_per_run`` (the session's ``tmp_path_factory``) the clone and its ingest are made once per
    test run (:func:`tests.conftest.built_once`, shared by the pytest-xdist workers, each of which would
    otherwise ingest it again for the tests of a module it runs) and copied into ``root``: the copy is
    what the ingest made, and the module's tests write only to it."""
    if once_per_run is None:
        return _ingested(bundle, root, mission, commits, include)

    def build(folder: Path) -> None:
        _ingested(bundle, folder, mission, commits, include).memory.close()

    kept = hashlib.sha256("\n".join(include).encode()).hexdigest()[:8]
    template = built_once(once_per_run, f"recent-{mission}-{commits}-{kept}", build)
    copy_tree(template / mission, root / mission)
    copy_tree(template / "data", root / "data")
    return Corpus(Memory.open(load_settings(data_dir=root / "data")), root / mission)


def _ingested(bundle: Path, root: Path, mission: str, commits: int, include: Sequence[str]) -> Corpus:
    repo = root / mission
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True)
    boundary = subprocess.run(["git", "rev-list", f"--max-count={commits}", "HEAD"], cwd=repo, capture_output=True,
                              text=True, check=True).stdout.split()[-1]
    (repo / ".git" / "shallow").write_text(boundary + "\n")
    memory = Memory.open(load_settings(data_dir=root / "data"))
    memory.ingest_repository(repo, mission=mission, include=list(include))
    return Corpus(memory, repo)
