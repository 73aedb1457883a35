"""Issue 22 item 2: a secret planted at any intake reaches no file on disk and no MCP digest.

One test per intake that stores text: repository documents, ADRs, commit messages, tracker items,
domain events, handover notes, recorded decisions (and the MADR file ``--write-adr`` writes),
correction summaries, the prompt hook, the query text of retrieval events, and an import of an
export made before redaction. Each plants credentials of formats issue 22 lists (a Vault ``hvs.``
token, a ``.pgpass`` line, ``docker login -p``, a Ukrainian ``Гасло:``, a Sentry DSN key, a BIP-39
seed phrase...), runs the real intake against a real SQLite store (and the real hook against a real
git repository), then reads every byte under the data folder (``memory.db``, its WAL and shared
memory files, vector snapshots, the BM25 index, git objects decompressed), an export, and the
digest the MCP tool serves to a real MCP client. The ordinary words around the secret must be
served, so the test would see a leak. Values are fake, generated in the shapes of the real formats.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mission_memory.api import Memory
from mission_memory.hook import installer
from mission_memory.mcp.server import build_server
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.conftest import GitRepo
from tests.hook.conftest import make_payload

VAULT = "hvs.CAESIJkq8Zr2Lm4Xw7Np1Tv6Yb3Hd"
PGPASS_PASSWORD = "Qw7#xLp2Vz9!sR"
PGPASS_LINE = f"db.internal:5432:ledger:uploader:{PGPASS_PASSWORD}"
DOCKER_PASSWORD = "Tk4$mZ8qLw2xNe"
UK_PASSWORD = "Zr8!kLq2Wm5p"
SENTRY_KEY = "4f9c2b7e1a8d3f6c0b5e9a2d7c4f1e8b"
SEED = "tribe glimpse oyster velvet harbor cactus nephew quantum dolphin ribbon sunset wagon"
SMB_PASSWORD = "Hx3^vB9qLm2k"

SECRETS = (VAULT, PGPASS_PASSWORD, DOCKER_PASSWORD, UK_PASSWORD, SENTRY_KEY, SEED, SMB_PASSWORD)

PLANTED = (
    f"Зберігайте у сховищі: Vault token {VAULT} відкриває kv/ledger.\n"
    f"Рядок .pgpass для реплікації: {PGPASS_LINE}\n"
    f"Збірка: docker login -u ci -p {DOCKER_PASSWORD} registry.example.com\n"
    f"Гасло: {UK_PASSWORD}\n"
    f"SENTRY_DSN=https://{SENTRY_KEY}@o451234.ingest.sentry.io/6012345\n"
    f"Мережева тека: smbclient //fs1/backup -U backup%{SMB_PASSWORD}\n"
    f"Wallet recovery phrase: {SEED}\n"
)
"""Planted secrets in one text; the ordinary words around them (``реплікації``, ``registry``) stay."""

MARKER = "ретрансляторзорепад"
"""An ordinary word written next to the secrets, to show the record carrying them is served."""


def pieces(secret: str) -> list[str]:
    """The secret, its 8-character windows and (lower-cased) the alphanumeric runs an FTS index keeps."""
    found = {secret, secret.lower()}
    found.update(secret[i : i + 8] for i in range(len(secret) - 7))
    if secret is not SEED:  # a seed phrase is ordinary words one by one; only their run is secret
        run = ""
        for ch in secret.lower() + " ":
            if ch.isalnum():
                run += ch
            else:
                if len(run) >= 6:
                    found.add(run)
                run = ""
    return sorted(found)


def _files(root: Path) -> Iterator[tuple[Path, bytes]]:
    """Every file under ``root`` with its bytes; git objects decompressed."""
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if "objects" in path.parts:
            with contextlib.suppress(zlib.error):  # a pack or an index stays as it is
                data = zlib.decompress(data)
        yield path, data


def leaks_on_disk(root: Path, secrets: tuple[str, ...] = SECRETS) -> list[str]:
    """``file: piece`` for every piece of a secret found in a file under ``root``."""
    found = []
    for path, data in _files(root):
        for secret in secrets:
            for piece in pieces(secret):
                if piece.encode("utf-8") in data:
                    found.append(f"{path.relative_to(root)}: {piece!r}")
                    break
    return found


def leaks_in(text: str, secrets: tuple[str, ...] = SECRETS) -> list[str]:
    return [piece for secret in secrets for piece in pieces(secret) if piece in text][:10]


def served_digest(task: str) -> str:
    """What the MCP tool serves a real MCP client for ``task``."""

    async def go() -> Any:
        async with Client(build_server()) as client:
            return await client.call_tool("workflow_memory_query", {"task_description": task, "token_budget": 6000})

    result = anyio.run(go)
    assert not result.is_error, result.content[0].text
    return str(result.content[0].text)


def exported(tmp_path: Path) -> str:
    path = tmp_path / "export.jsonl"
    with Memory.open() as memory, path.open("w", encoding="utf-8") as out:
        memory.export_memory(out)
    return path.read_text(encoding="utf-8")


def assert_nothing_kept(data_dir: Path, tmp_path: Path, task: str) -> None:
    """No piece of a planted secret on disk, in an export or in the served digest; the marker is served."""
    digest = served_digest(task)
    assert MARKER in digest, digest  # the record with the planted secrets is served ...
    assert leaks_in(digest) == [], digest  # ... without them
    assert leaks_in(exported(tmp_path)) == []
    assert leaks_on_disk(data_dir) == []


@pytest.fixture
def repo(make_git_repo) -> GitRepo:  # type: ignore[no-untyped-def]
    repo = make_git_repo("relay-ops")
    repo.commit("Initial README", "2025-01-10T09:00:00+00:00", {"README.md": "# Relay operations\n"})
    return repo


def test_documents(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    repo.commit("Runbook", "2025-01-11T09:00:00+00:00",
                {"docs/runbook.md": f"# Ретранслятор\n\nНотатки {MARKER} для чергових.\n\n{PLANTED}"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
    assert_nothing_kept(data_dir, tmp_path, f"нотатки {MARKER} для чергових")


def test_adrs(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    adr = (f"# 1. Keep relay credentials in Vault\n\nDate: 2025-01-12\n\n## Status\n\nAccepted\n\n## Context\n\n"
           f"The {MARKER} relay needs credentials.\n\n{PLANTED}\n## Decision\n\nWe keep them in Vault.\n\n"
           "## Consequences\n\nRotation is scripted.\n")
    repo.commit("ADR 1", "2025-01-12T09:00:00+00:00", {"docs/adr/0001-keep-relay-credentials-in-vault.md": adr})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
    assert_nothing_kept(data_dir, tmp_path, f"why keep the {MARKER} relay credentials in Vault")


def test_commit_messages(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    repo.commit(f"Configure the {MARKER} relay\n\n{PLANTED}", "2025-01-13T09:00:00+00:00",
                {"relay.cfg": "retries = 3\n"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
    assert_nothing_kept(data_dir, tmp_path, f"configure the {MARKER} relay")


def test_tracker_items(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "OPS-7.md").write_text(
        "---\nkey: OPS-7\ntitle: Доступ до ретранслятора\nstate: In Progress\n"
        "created: 2025-01-10T09:00:00Z\nupdated: 2025-01-14T09:00:00Z\n---\n\n"
        f"Налаштувати {MARKER}.\n\n{PLANTED}\n## Comments\n\n### Олена · 2025-01-14T10:00:00Z\n\n"
        f"Ще раз: {PLANTED}", encoding="utf-8")
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        memory.ingest_tracker(LocalFolderTracker(tasks), mission="relay-ops", now=datetime(2025, 2, 1, tzinfo=UTC))
    assert_nothing_kept(data_dir, tmp_path, f"доступ до ретранслятора {MARKER}")


def test_events(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    event = {"id": "ev-1", "time": "2025-01-15T09:00:00+00:00", "sector": "east", "type": "alert",
             "criticality": 0.9, "source": "relay-monitor", "text": f"Relay {MARKER} down. {PLANTED}"}
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        memory.record_events([event], mission="relay-ops", embed=False, now=datetime(2025, 1, 15, 9, 5, tzinfo=UTC))
        memory.embed_pending()
    assert_nothing_kept(data_dir, tmp_path, f"relay {MARKER} down")


def test_handover_notes(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    note = f"{MARKER}: {VAULT} Гасло: {UK_PASSWORD} docker login -u ci -p {DOCKER_PASSWORD} x"
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        memory.handover_note(note, "warning", mission="relay-ops", operator="alice",
                             now=datetime(2025, 1, 16, tzinfo=UTC))
    assert_nothing_kept(data_dir, tmp_path, f"{MARKER} warning")


def test_recorded_decisions_and_their_adr_file(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        memory.record_decision(
            title=f"Rotate the {MARKER} relay credentials weekly",
            decision=f"Rotate weekly. Current token {VAULT}; Гасло: {UK_PASSWORD}",
            rationale=f"The .pgpass line {PGPASS_LINE} leaked once.",
            context=f"Wallet recovery phrase: {SEED}",
            mission="relay-ops", write_adr=repo.root / "docs" / "adr",
            now=datetime(2025, 1, 17, tzinfo=UTC),
        )
    assert leaks_on_disk(repo.root / "docs") == []  # the MADR file in the repository
    assert_nothing_kept(data_dir, tmp_path, f"rotate the {MARKER} relay credentials")


def test_correction_summaries(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    summary = f"Used the {MARKER} relay token {VAULT} instead of the Гасло: {UK_PASSWORD} one"
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        memory.record_correction(correction_class="wrong-approach", category="data", outcome="accepted",
                                 summary=summary, mission="relay-ops", operator="alice",
                                 time=datetime(2025, 1, 18, tzinfo=UTC))
    assert_nothing_kept(data_dir, tmp_path, f"{MARKER} relay token correction")


def test_the_prompt_hook(data_dir: Path) -> None:
    command = installer.prompt_hook_command(data_dir)
    done = subprocess.run(command, shell=True, input=make_payload(f"Deploy the {MARKER} relay:\n{PLANTED}"),
                          capture_output=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, b"")
    repo = data_dir / "prompts.git"
    everything = subprocess.run(["git", "--git-dir", str(repo), "cat-file", "--batch-all-objects", "--batch"],
                                capture_output=True, check=True).stdout.decode("utf-8", "replace")
    assert MARKER in everything
    assert leaks_in(everything) == []
    assert leaks_on_disk(data_dir) == []


def test_the_query_text_of_retrieval_events(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
        memory.query(f"why does the relay reject {VAULT} and Гасло: {UK_PASSWORD}?", token_budget=500)
        [event] = memory.retrieval_events()
    assert event.query.startswith("why does the relay reject [REDACTED:")
    assert leaks_in(exported(tmp_path)) == []
    assert leaks_on_disk(data_dir) == []


def test_an_import_of_an_export_that_holds_secrets(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    """An export written before redaction (here: an export whose text is edited to hold secrets)."""
    repo.commit("Runbook", "2025-01-11T09:00:00+00:00",
                {"docs/runbook.md": f"# Ретранслятор\n\nНотатки {MARKER} для чергових: PLACEHOLDER.\n"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
    raw = exported(tmp_path)
    assert "PLACEHOLDER" in raw
    old_export = tmp_path / "old-export.jsonl"
    old_export.write_text(raw.replace("PLACEHOLDER", json.dumps(PLANTED)[1:-1]), encoding="utf-8")
    fresh = tmp_path / "fresh-data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MISSION_MEMORY_DATA_DIR", str(fresh))
        with Memory.open() as memory:
            memory.import_memory(old_export)
        assert_nothing_kept(fresh, tmp_path, f"нотатки {MARKER} для чергових")


def test_an_export_of_a_store_written_before_redaction(repo: GitRepo, data_dir: Path, tmp_path: Path) -> None:
    """A store an older version wrote holds secrets in its records; its export holds none."""
    repo.commit("Runbook", "2025-01-11T09:00:00+00:00",
                {"docs/runbook.md": f"# Ретранслятор\n\nНотатки {MARKER} для чергових.\n"})
    with Memory.open() as memory:
        memory.ingest_repository(repo.root)
    with sqlite3.connect(data_dir / "memory.db") as conn:  # what an older version stored
        changed = conn.execute("UPDATE records SET text = text || ? WHERE text LIKE ?",
                               (PLANTED, f"%{MARKER}%")).rowcount
    assert changed == 1
    text = exported(tmp_path)
    assert MARKER in text
    assert leaks_in(text) == []
