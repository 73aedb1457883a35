"""Fixtures every test shares: an isolated data dir and real git repositories with fixed dates."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point ``MISSION_MEMORY_DATA_DIR`` at a fresh tmp folder: no test touches the home directory."""
    path = tmp_path / "mm-data"
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir(exist_ok=True)
    yield path


class GitRepo:
    """A real git repository in a tmp dir whose commits carry fixed author and committer dates."""

    def __init__(self, root: Path) -> None:
        self.root = root
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
