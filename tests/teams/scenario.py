"""A team's mission with planted restricted records, and the team server running over it on loopback.

The planted records each carry a canary word (``MARMOT-…``) that appears nowhere else, so a canary
in any answer to the lower clearance is a leak:

* documents: ``docs/security/keys.md`` (restricted by the path mapping), ``docs/ops/vault.md``
  (``access: restricted`` front matter);
* a decision: ``docs/adr/0002-encrypt-the-archive.md`` (front matter ``access: restricted``);
* practitioner records: one of alice's at ``restricted``, and one ordinary correction of alice's
  (``internal``: hidden from bob by the practitioner rule, not by clearance);
* a refresh artifact at ``restricted``;
* commits: one touching only ``docs/security/keys.md`` whose message carries a canary, and the one
  adding the restricted documents (both restricted: a commit takes its files' levels), so the
  restricted folder's name is a canary too.

Operators: alice (clearance restricted, lead) and bob (clearance internal, operator).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.ingest.access_levels import with_access
from mission_memory.records import AccessLevel, Provenance, Record, RecordKind, SourceKind
from mission_memory.teams.operator_tokens import add_token
from tests.conftest import GitRepo

MISSION = "ops"
ACCESS_PATHS = '{"docs/security/**": "restricted"}'
RESTRICTED_CANARIES = (
    "MARMOT-PATH-41", "MARMOT-FRONT-42", "MARMOT-ADR-43", "MARMOT-PRACT-44", "MARMOT-REFRESH-45", "MARMOT-COMMIT-47",
    "docs/security/", "docs/ops/vault.md",
)
ALICE_PRACTITIONER_CANARY = "MARMOT-ALICE-46"


GUIDE = """# Upload guide

Uploads are retried three times with exponential backoff, then parked for the duty operator.
Archive batches are sealed nightly and shipped to cold storage.
"""
KEYS = """# Signing key rotation

The archive signing keys rotate every 30 days. The rotation ceremony needs two officers.
The master key escrow code word is MARMOT-PATH-41.
"""
VAULT = """---
title: Vault access procedure
access: restricted
---

# Vault access procedure

Opening the offline vault that holds the archive keys needs the duty lead and a witness.
The vault combination is kept with the code word MARMOT-FRONT-42.
"""
PUBLIC_FAQ = """---
access: public
---

# Uploader FAQ

Uploads resume after a network loss; nothing is lost.
"""
ADR_SQLITE = """# 1. Keep the upload ledger in SQLite

Date: 2024-02-01

## Status

Accepted

## Context

The uploader runs offline on field laptops, so the upload ledger must be embedded.

## Decision

We keep the upload ledger in SQLite in WAL mode.

## Consequences

Backups copy one file.
"""
ADR_ENCRYPT = """---
status: accepted
date: 2024-06-01
access: restricted
---

# Encrypt the archive with the escrowed master key

## Context and Problem Statement

Archive batches in cold storage must stay confidential if a courier loses a disk.

## Decision Outcome

Chosen option: "envelope encryption under the escrowed master key", code word MARMOT-ADR-43.
"""


@dataclass(frozen=True)
class TeamMission:
    """The scenario: its data dir, repository, tokens and the ids of the records bob may not see."""

    data_dir: Path
    repo: Path
    alice_token: str
    bob_token: str
    expired_token: str
    restricted_ids: frozenset[str]
    alice_practitioner_ids: frozenset[str]

    def env(self) -> dict[str, str]:
        """The environment a process over this mission needs."""
        return {"MISSION_MEMORY_DATA_DIR": str(self.data_dir), "MISSION_MEMORY_ACCESS_PATHS": ACCESS_PATHS}

    def memory(self) -> Memory:
        """The mission's memory, opened in this process."""
        return Memory(load_settings(data_dir=self.data_dir, access_paths={"docs/security/**": "restricted"}))


def _record(kind: RecordKind, title: str, text: str, level: AccessLevel, *,
            attributes: dict[str, object] | None = None) -> Record:
    return Record.build(
        kind=kind, title=title, text=text, access_level=level, component="docs",
        provenance=Provenance(kind=SourceKind.PUSH_REFRESH, ref=f"planted/{title}", uri=f"mission-memory://planted/{title}",
                              mission=MISSION, time=datetime(2025, 1, 10, tzinfo=UTC)),
        attributes=attributes or {},
    )


def build_team_mission(root: Path) -> TeamMission:
    """Make the repository, ingest it with the path mapping, plant the other records, issue tokens."""
    repo = GitRepo(root / MISSION)
    repo.commit("Add the upload guide and the ledger decision", "2024-02-01T10:00:00+00:00", {
        "docs/guide.md": GUIDE, "docs/faq.md": PUBLIC_FAQ, "docs/adr/0001-keep-the-ledger-in-sqlite.md": ADR_SQLITE,
    })
    repo.commit("Add the key rotation and vault procedures", "2024-06-01T10:00:00+00:00", {
        "docs/security/keys.md": KEYS, "docs/ops/vault.md": VAULT, "docs/adr/0002-encrypt-the-archive.md": ADR_ENCRYPT,
    })
    repo.commit("Rotate the escrow code word to MARMOT-COMMIT-47", "2024-07-01T10:00:00+00:00", {
        "docs/security/keys.md": KEYS + "\nRotated in July.\n",
    })
    data_dir = root / "data"
    scenario = TeamMission(data_dir, repo.root, "", "", "", frozenset(), frozenset())
    with scenario.memory() as memory:
        memory.ingest_repository(repo.root, mission=MISSION)
        memory.record_correction(
            correction_class="wrong-approach", category="security", outcome="modified", component="docs",
            summary="Corrected the agent on the escrow ceremony: code word MARMOT-PRACT-44.",
            operator="alice", mission=MISSION, session_id="alice-session",
        )
        (escrow,) = [r for r in memory.store.records_of_kind([RecordKind.CORRECTION_PATTERN.value], operator="alice")
                     if "MARMOT-PRACT-44" in r.title]
        planted = [
            with_access(escrow, AccessLevel.RESTRICTED),
            _record(RecordKind.REFRESH_ARTIFACT, "refresh of the key rotation task",
                    "Key rotation task status: ceremony booked, code word MARMOT-REFRESH-45.", AccessLevel.RESTRICTED,
                    attributes={"task_key": "OPS-9", "artifact_kind": "summary"}),
        ]
        memory.store.upsert(planted, memory.embedder.embed_passages([r.embedding_text for r in planted]),
                            memory.embedder.model_id)
        memory.record_correction(
            correction_class="missed-decision", category="data", outcome="modified", component="docs",
            summary=f"The agent retried uploads forever instead of parking them ({ALICE_PRACTITIONER_CANARY}).",
            operator="alice", mission=MISSION, session_id="alice-session",
        )
        memory.record_correction(
            correction_class="wrong-approach", category="tests", outcome="accepted", component="docs",
            summary="Bob asked for the backoff to be tested against a real clock.",
            operator="bob", mission=MISSION, session_id="bob-session",
        )
        restricted, alice_own = set(), set()
        for batch in memory.store.iterate():
            for r in batch:
                if r.access_level in (AccessLevel.RESTRICTED, AccessLevel.SECRET):
                    restricted.add(r.id)
                elif r.kind is RecordKind.CORRECTION_PATTERN and r.operator == "alice":
                    alice_own.add(r.id)
    tokens = data_dir / "team-tokens.toml"
    alice = add_token(tokens, operator="alice", clearance="restricted", role="lead").token
    bob = add_token(tokens, operator="bob", clearance="internal", role="operator").token
    past = datetime.now(UTC) - timedelta(days=2)
    expired = add_token(tokens, operator="bob", clearance="internal", expires=past + timedelta(days=1), now=past).token
    return TeamMission(data_dir, repo.root, alice, bob, expired, frozenset(restricted), frozenset(alice_own))


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def team_server(env: dict[str, str], *args: str, host: str = "127.0.0.1") -> Iterator[str]:
    """``mission-memory serve --transport http`` as a real subprocess; yield its base URL once it listens."""
    port = free_port()
    with subprocess.Popen(
        [sys.executable, "-m", "mission_memory", "serve", "--transport", "http", "--host", host, "--port", str(port), *args],
        env=dict(os.environ, **env), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    ) as server:
        try:
            assert server.stderr is not None
            seen = []
            for line in server.stderr:  # wait for the server to say it listens (no sleeps)
                seen.append(line)
                if "Uvicorn running on" in line:
                    break
            else:
                raise AssertionError("the server stopped before listening:\n" + "".join(seen))
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()
            server.wait(timeout=30)
