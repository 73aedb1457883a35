"""Fixtures every test shares: an isolated data dir and real git repositories with fixed dates."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.corpus import corpus_path


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many pytest-xdist workers ``-n auto`` (the ``addopts`` of pyproject.toml) starts: one per
    core this process may run on, at most 4 (many tests start processes of their own), or
    ``PYTEST_XDIST_AUTO_NUM_WORKERS``. ``-n 0`` runs the suite in one process."""
    configured = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if configured.isdigit():
        return int(configured)
    return max(1, min(len(os.sched_getaffinity(0)), 4))


@pytest.fixture(scope="session")
def embedder_graph_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the graph the ``onnx`` embedder builds from the shipped weights, shared by the
    session: every test has its own home directory, and building the graph once per test would cost
    seconds each (docs/adr/0052)."""
    return tmp_path_factory.mktemp("embedder-graphs")


@pytest.fixture(scope="session")
def bytecode_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One bytecode folder (``PYTHONPYCACHEPREFIX``) for every Python process the tests start, shared by
    the pytest-xdist workers of the run, as an installed package has its bytecode: with
    ``PYTHONDONTWRITEBYTECODE`` set and an editable install, each ``mission-memory`` process the tests
    start would compile the package's modules again (about 0.1-0.2 CPU-s a process; the suite starts
    hundreds). The checkout is not written to."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "bytecode"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder_graph_cache: Path,
             bytecode_cache: Path) -> Iterator[Path]:
    """Point ``MISSION_MEMORY_DATA_DIR`` at a fresh tmp folder: no test touches the home directory.
    Processes the test starts share the session's embedder graph and bytecode caches."""
    path = tmp_path / "mm-data"
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(path))
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDER_CACHE_DIR", str(embedder_graph_cache))
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(bytecode_cache))
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir(exist_ok=True)
    yield path


class GitRepo:
    """A real git repository in a tmp dir whose commits carry fixed author and committer dates."""

    def __init__(self, root: Path, *, existing: bool = False) -> None:
        """A new repository at ``root``; ``existing``: the repository already there (a copy of one)."""
        self.root = root
        if existing:
            return
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "Test Operator")
        self.git("config", "user.email", "operator@example.org")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str, date: str = "2025-01-01T12:00:00+00:00") -> str:
        env = dict(os.environ, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
        done = subprocess.run(
            ["git", *args], cwd=self.root, env=env, check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    def write(self, relpath: str, content: str | bytes) -> Path:
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def commit(self, message: str, date: str, files: dict[str, str | bytes] | None = None) -> str:
        """Write ``files``, stage everything and commit with ``message`` at ``date`` (ISO 8601); return the sha."""
        for relpath, content in (files or {}).items():
            self.write(relpath, content)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message, date=date)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def make_git_repo(tmp_path: Path) -> Callable[[str], GitRepo]:
    """Factory: ``make_git_repo("name")`` gives an empty real git repository under tmp_path."""

    def factory(name: str = "repo") -> GitRepo:
        return GitRepo(tmp_path / name)

    return factory


NYGARD_ADR = """# 1. Use PostgreSQL for the upload ledger

Date: 2024-02-01

## Status

Accepted

## Context

Uploads must be recorded so that a failed transfer can be resumed. We need a transactional store.

## Decision

We will use PostgreSQL for the upload ledger, run as a managed service.

## Consequences

Operators need database credentials; local development needs a container.
"""

MADR_ADR = """---
status: accepted
date: 2024-09-15
deciders: platform team
---

# Use SQLite in WAL mode for the embedded ledger

Supersedes [ADR-0001](0001-use-postgresql-for-the-upload-ledger.md).

## Context and Problem Statement

Field teams run the uploader on laptops without network access. A managed PostgreSQL is not reachable there.

## Considered Options

* SQLite in WAL mode
* Keep PostgreSQL

## Decision Outcome

Chosen option: "SQLite in WAL mode", because it is a single file that needs no server and survives power loss.

## Pros and Cons of the Options

### Keep PostgreSQL

* Bad, because it needs a network connection the field teams do not have.
"""

UKRAINIAN_ADR = """# 3. Черга повторних спроб для перевірки файлів

Дата: 2024-10-01

## Статус

Прийнято

## Контекст

Перевірка антивірусом іноді падає через тайм-аут, і файл залишається неперевіреним.

## Рішення

Ми додаємо чергу повторних спроб з експоненційною затримкою для перевірки файлів антивірусом.

## Наслідки

Перевірка стає повільнішою, але жоден файл не пропускається.
"""

GUIDE = """# Operations guide

How to run the uploader.

## Rotating the API keys

Keys are rotated every 90 days by the on-call operator with the `rotate-keys` script.

## Backups

The ledger file is copied to cold storage every night at 02:00 UTC.
"""

PRINCIPLES = """# Principles

## P1: Offline first

Every feature must work without a network connection.

## P2: Nothing is lost

No upload may be silently dropped; failures are retried or reported.
"""


@pytest.fixture
def mission_repo(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    """A small real mission repository: three ADRs (one superseding another, one Ukrainian), a guide,
    a principle registry, files that must be skipped, and commits naming tracker keys, all with fixed dates."""
    return _fill_mission_repo(make_git_repo("uploader"))


def _fill_mission_repo(repo: GitRepo) -> GitRepo:
    """The commits of :func:`mission_repo`, made in the empty repository ``repo``."""
    repo.commit("Initial README", "2024-01-10T09:00:00+00:00", {"README.md": "# Uploader\n\nMoves records to the archive.\n"})
    repo.commit("OPS-12: record the ledger decision", "2024-02-01T10:00:00+00:00", {
        "docs/adr/0001-use-postgresql-for-the-upload-ledger.md": NYGARD_ADR,
        "PRINCIPLES.md": PRINCIPLES,
    })
    repo.commit("Add operations guide (#7)", "2024-03-05T11:00:00+00:00", {"docs/guide.md": GUIDE})
    repo.commit("OPS-31: move the ledger to SQLite for offline field use", "2024-09-15T12:00:00+00:00", {
        "docs/adr/0002-use-sqlite-in-wal-mode.md": MADR_ADR,
        "src/ledger.py": "LEDGER = 'sqlite'\n",
    })
    repo.commit("OPS-40: retry antivirus checks", "2024-10-01T08:30:00+00:00", {
        "docs/adr/0003-cherha-povtornykh-sprob.md": UKRAINIAN_ADR,
        "docs/logo.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
        "docs/legacy.txt": "caf\xe9 latin-1 text".encode("latin-1"),
    })
    return repo


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` that ``build(folder)`` fills, built once per test run: the first pytest-xdist
    worker to ask builds it in the run's shared temp folder while the others wait on a lock. What is
    built is a template: a test copies what it uses (:func:`copy_tree`) and never writes to it. A build
    that failed is started afresh by the next worker that asks, so its error reaches every test."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / f"{name}-shared"
    root.mkdir(exist_ok=True)
    folder = root / name
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            build(folder)
            (root / ".built").touch()
    return folder


def copy_tree(template: Path, to: Path) -> Path:
    """A copy of the folder ``template`` (a git repository or a data dir built by :func:`built_once`)
    at ``to``, whose parent must exist and which must not."""
    shutil.copytree(template, to, symlinks=True)
    return to


ARCHIVE_ADR = """# 1. Keep the upload ledger in MongoDB

Date: 2024-04-01

## Status

Accepted

## Context

The archive service records every upload in a ledger; the ledger needs a database.

## Decision

The upload ledger of the archive service is kept in MongoDB, one document per upload.

## Consequences

The archive needs a MongoDB replica set.
"""


def _build_two_missions(folder: Path, graphs: Path) -> None:
    """``uploader`` (:func:`mission_repo`) and ``archive`` (a MongoDB ledger ADR) under ``folder``, both
    ingested with ``mission-memory ingest`` into ``folder/mm-data``."""
    from typer.testing import CliRunner

    from mission_memory.cli.app import app

    uploader = _fill_mission_repo(GitRepo(folder / "uploader"))
    archive = GitRepo(folder / "archive")
    archive.commit("ARC-1: record the ledger decision", "2024-04-01T10:00:00+00:00", {
        "docs/adr/0001-keep-the-upload-ledger-in-mongodb.md": ARCHIVE_ADR,
        "src/ledger/store.py": "BACKEND = 'mongodb'\n",
    })
    (folder / "home").mkdir()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MISSION_MEMORY_DATA_DIR", str(folder / "mm-data"))
        env.setenv("MISSION_MEMORY_EMBEDDER_CACHE_DIR", str(graphs))
        env.setenv("HOME", str(folder / "home"))
        for repo in (uploader, archive):
            result = CliRunner().invoke(app, ["ingest", str(repo.root), "--json"])
            assert result.exit_code == 0, result.output


@pytest.fixture
def two_missions(tmp_path_factory: pytest.TempPathFactory, embedder_graph_cache: Path, tmp_path: Path,
                 data_dir: Path) -> tuple[GitRepo, GitRepo]:
    """The ``uploader`` mission (:func:`mission_repo`) and an ``archive`` mission about the same subject,
    both ingested by ``mission-memory ingest``, in ``tmp_path`` and the test's data dir.

    The two repositories and their store are built once per run (:func:`built_once`) and copied for
    each test, so a test may write to its copy (forget a mission, query, re-ingest): the copy is the
    store two ingests made, byte for byte."""
    template = built_once(tmp_path_factory, "two-missions",
                          lambda folder: _build_two_missions(folder, embedder_graph_cache))
    copy_tree(template / "mm-data", data_dir)
    uploader = GitRepo(copy_tree(template / "uploader", tmp_path / "uploader"), existing=True)
    archive = GitRepo(copy_tree(template / "archive", tmp_path / "archive"), existing=True)
    return uploader, archive


@pytest.fixture(scope="session")
def corpora() -> Path:
    """The corpora folder of this repository (tests/corpora: ``tdr-docs.bundle``, a real documentation
    repository with 39 ADRs and 669 commits, and ``transcripts/``; provenance in its README.md).
    The one way tests find it; a missing corpus fails the test that asks for it."""
    return corpus_path()


@dataclass(frozen=True)
class IngestedCorpus:
    """The corpus repository (tdr-docs.bundle), cloned and ingested once: its memory, the ingest report and the clone."""

    memory: Any
    report: dict[str, Any]
    repo: Path


@pytest.fixture(scope="session")
def tdr_corpus(tmp_path_factory: pytest.TempPathFactory, corpora: Path) -> Iterator[IngestedCorpus]:
    """The corpus repository ingested once per test run (once for all pytest-xdist workers) as mission
    ``tdr`` in its own data dir.

    Ingesting it is the costliest step of the suite (about two minutes), so the corpus tests and the
    ranking evaluation share one store; tests must only read it (queries log retrieval events, which
    nothing here counts).
    """
    from mission_memory.api import Memory
    from mission_memory.config import load_settings

    # Under pytest-xdist every worker has its own session: the first to get here ingests into the
    # run's shared temp folder, the others wait on the lock and open the same store.
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "tdr-corpus-shared"
    root.mkdir(exist_ok=True)
    done = root / "report.json"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            subprocess.run(["git", "clone", "-q", str(corpora / "tdr-docs.bundle"), str(root / "tdr-docs")], check=True)
            with Memory.open(load_settings(data_dir=root / "data")) as ingesting:
                report = ingesting.ingest_repository(root / "tdr-docs", mission="tdr")
            done.write_text(json.dumps(report.to_json()), encoding="utf-8")
    memory = Memory.open(load_settings(data_dir=root / "data"))
    yield IngestedCorpus(memory, json.loads(done.read_text(encoding="utf-8")), root / "tdr-docs")
    memory.close()


@pytest.fixture
def shared_root() -> Iterator[Path]:
    """A folder any user can traverse (pytest's tmp_path is private to its owner), for tests that run
    a program as another user; removed afterwards, its folders made writable again first."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="mm-shared-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        for folder, dirs, _ in os.walk(root):
            for name in dirs:
                (Path(folder) / name).chmod(0o755)
        shutil.rmtree(root)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A real PostgreSQL 18 + pgvector server on 127.0.0.1 (tests/postgres_server.py), one for all
    pytest-xdist workers of the run, stopped when the last worker ends; as root it runs as an
    unprivileged user. Starting it costs about 2 s once per run.

    Its folder is outside pytest's temp root, which pytest makes 0700 again at each session start
    (the server's user would lose its data folder); the run's id names it, so workers share it."""
    import tempfile

    from tests.postgres_server import SharedServer

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
    with SharedServer(Path(tempfile.gettempdir()) / f"mm-postgres-{run}").use() as info:
        yield info


@pytest.fixture
def postgres_url(postgres_server: Any) -> Iterator[str]:
    """The URL of a new, empty database on :func:`postgres_server`, dropped after the test."""
    import uuid

    import psycopg

    name = f"mm_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_server.url(), autocommit=True, connect_timeout=10) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield postgres_server.url(name)
    finally:
        with psycopg.connect(postgres_server.url(), autocommit=True, connect_timeout=10) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
