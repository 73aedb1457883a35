"""Fixtures for the hook tests: run the prompt hook exactly as the installer registers it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from mission_memory.hook import installer


@dataclass(frozen=True)
class HookRun:
    """What one run of the installed hook command did."""

    returncode: int
    stdout: bytes
    stderr: bytes


def make_payload(prompt: object = "hello", **fields: object) -> bytes:
    """A ``UserPromptSubmit`` hook input as Claude Code sends it (UTF-8 JSON)."""
    document: dict[str, object] = {
        "session_id": "3f0c1a9e-5b7d-4c2a-9e11-0d6f2b8a7c55",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": "/",
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    document.update(fields)
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


@pytest.fixture
def hook_command(data_dir: Path) -> str:
    """The shell command ``mission-memory hook install`` writes, with this test's data dir baked in."""
    return installer.prompt_hook_command(data_dir)


@pytest.fixture
def run_hook(hook_command: str) -> Callable[[bytes], HookRun]:
    """Run the installed hook command through the shell with ``stdin`` as its input."""

    def run(stdin: bytes, command: str | None = None) -> HookRun:
        done = subprocess.run(
            command or hook_command, shell=True, input=stdin, capture_output=True, timeout=60, check=False
        )
        return HookRun(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture
def prompt_repo(data_dir: Path) -> Path:
    """Where the hook writes: ``<data dir>/prompts.git``."""
    return data_dir / "prompts.git"


def run_git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    """Run ``git --git-dir repo args``; return stdout bytes (raises on a non-zero exit)."""
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], input=input, capture_output=True, check=True
    ).stdout


def read_documents(repo: Path) -> list[dict[str, object]]:
    """Every stored ``prompt.json``, read with git itself, oldest first."""
    refs = run_git(repo, "for-each-ref", "--format=%(objectname)", "refs/prompts").decode().split()
    docs = [json.loads(run_git(repo, "show", f"{sha}:prompt.json")) for sha in refs]
    return sorted(docs, key=lambda d: int(d["time_ns"]))  # type: ignore[arg-type]


@pytest.fixture
def payload() -> Callable[..., bytes]:
    """``payload(prompt, **fields)``: a hook input as Claude Code sends it."""
    return make_payload


@pytest.fixture
def git() -> Callable[..., bytes]:
    """``git(repo, *args, input=None)``: run git against a bare repository, return stdout."""
    return run_git


@pytest.fixture
def stored_documents() -> Callable[[Path], list[dict[str, object]]]:
    """``stored_documents(repo)``: every stored prompt document, oldest first."""
    return read_documents
