"""The one git runner: output, failures translated into the error tree naming repository and command,
a total timeout that stops git and what it started."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.errors import BackendUnavailable, InputError
from mission_memory.git_runner import run_git, run_git_text
from tests.conftest import GitRepo


def test_run_git_returns_output_as_bytes_and_as_text(make_git_repo: Callable[[str], GitRepo]) -> None:
    repo = make_git_repo("repo")
    sha = repo.commit("Додати журнал завантажень", "2025-02-01T10:00:00+00:00", {"docs/огляд.md": "# Огляд\n"})
    assert run_git(repo.root, "rev-parse", "HEAD") == f"{sha}\n".encode()
    # core.quotepath=off: a Ukrainian file name arrives as written, not as octal escapes
    assert run_git_text(repo.root, "ls-files") == "docs/огляд.md\n"


def test_failed_command_names_the_repository_the_command_and_gits_reason(
    make_git_repo: Callable[[str], GitRepo],
) -> None:
    repo = make_git_repo("repo")
    with pytest.raises(BackendUnavailable) as caught:
        run_git_text(repo.root, "show", "no-such-revision")
    message = str(caught.value)
    assert "git show no-such-revision" in message
    assert str(repo.root) in message
    assert "fatal:" in message


def test_check_false_turns_a_failed_command_into_none(make_git_repo: Callable[[str], GitRepo]) -> None:
    repo = make_git_repo("repo")
    assert run_git_text(repo.root, "rev-parse", "--verify", "-q", "HEAD", check=False) is None


def test_failure_class_is_the_callers_choice(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InputError, match="not a git repository"):
        run_git_text(plain, "rev-parse", "--show-toplevel", failure=InputError)


def test_missing_folder_is_bad_input_not_a_missing_git(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"repository path .*nowhere is not a folder"):
        run_git(tmp_path / "nowhere", "status")


def test_bare_repository_is_run_through_git_dir(tmp_path: Path) -> None:
    bare = tmp_path / "prompts.git"
    bare.mkdir()
    run_git(bare, "init", "-q", "--bare", str(bare))
    oid = run_git_text(bare, "hash-object", "-w", "--stdin", stdin="підказка\n".encode(), bare=True).strip()
    assert run_git(bare, "cat-file", "-p", oid, bare=True) == "підказка\n".encode()


def test_git_running_past_the_timeout_is_stopped_and_reported(make_git_repo: Callable[[str], GitRepo]) -> None:
    repo = make_git_repo("repo")
    # an alias whose shell never ends; the timeout must stop it (and its child) and say so
    with pytest.raises(BackendUnavailable, match=r"did not finish within 0\.5 s"):
        run_git(repo.root, "-c", "alias.block=!tail -f /dev/null", "block", timeout=0.5)
