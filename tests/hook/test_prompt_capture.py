"""The prompt hook, run as a real subprocess exactly as installed: it stores, never prints, always exits 0."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mission_memory.capture import prompt_commit
from mission_memory.hook import installer
from tests.conftest import GitRepo
from tests.hook.conftest import make_payload, read_documents

Run = Callable[..., object]

SECRETS = {
    "aws": "AKIAQ3EGRTUVWXYZ2345",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY9a",
    "github": "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0123456789",
    "github_pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJK",
    "gitlab": "glpat-x7Yz9Qw3Er5Ty1Ui8OpL",
    "slack": "xoxb-2718281828-3141592653-AbCdEfGhIjKlMnOpQrStUv",
    "openai": "sk-proj-9fJ2kL4mN6pQ8rS0tU2vW4xY6zA8bC0d",
    "password": "Tr0ub4dor&3horse",
    "db_password": "s3cr3t-Pa55",
    "url_password": "hunter2hunter2",
    "key_body": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
    "private_span": "моя приватна нотатка 12345",
    "ua_password": "Київ2024Секрет",
}


def secret_prompt() -> str:
    s = SECRETS
    return (
        f"Deploy with key {s['aws']} and secret {s['aws_secret']}.\n"
        f"Use token {s['github']} or {s['github_pat']}; gitlab {s['gitlab']}, slack {s['slack']}.\n"
        f"export OPENAI_API_KEY={s['openai']}\n"
        f'password="{s["password"]}"\nDB_PASSWORD: {s["db_password"]}\n'
        f"postgres://admin:{s['url_password']}@db.internal:5432/app\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{s['key_body']}\n-----END RSA PRIVATE KEY-----\n"
        f"<private>{s['private_span']}</private> пароль: {s['ua_password']}\n"
    )


def test_valid_prompt_is_stored_as_one_orphan_commit(
    run_hook, payload, prompt_repo, git, stored_documents, make_git_repo
):
    repo = make_git_repo("project")
    repo.commit("init", "2025-01-01T12:00:00+00:00", {"a.txt": "a"})
    repo.git("checkout", "-q", "-b", "feature/prompts")
    sub = repo.root / "src" / "deep"
    sub.mkdir(parents=True)

    run = run_hook(payload("Fix the flaky test please", cwd=str(sub), permission_mode="acceptEdits"))

    assert (run.returncode, run.stdout) == (0, b"")
    [doc] = stored_documents(prompt_repo)
    assert doc["prompt"] == "Fix the flaky test please"
    assert doc["repository"] == str(repo.root)
    assert doc["branch"] == "feature/prompts"
    assert doc["permission_mode"] == "acceptEdits"
    assert doc["session_id"] == "3f0c1a9e-5b7d-4c2a-9e11-0d6f2b8a7c55"
    assert str(doc["timestamp"]).endswith("Z")
    [ref] = git(prompt_repo, "for-each-ref", "--format=%(refname)", "refs/prompts").decode().split()
    assert ref == f"refs/prompts/{doc['prompt_id']}"
    assert git(prompt_repo, "rev-list", "--count", "--all").strip() == b"1"
    assert b"parent" not in git(prompt_repo, "cat-file", "-p", ref)
    assert "Fix the flaky test please" in git(prompt_repo, "log", "--all", "--format=%s").decode()


def test_ukrainian_prompt_round_trips_and_git_shows_it(run_hook, payload, prompt_repo, git, stored_documents):
    text = "Виправ, будь ласка, тест для модуля пам'яті — він падає на «лапках» і ї/є/ґ."
    run = run_hook(payload(text))
    assert (run.returncode, run.stdout) == (0, b"")
    [doc] = stored_documents(prompt_repo)
    assert doc["prompt"] == text
    assert text[:20] in git(prompt_repo, "log", "--all", "--format=%B").decode("utf-8")


@pytest.mark.parametrize(
    ("stdin", "logged"),
    [
        (b"", "nothing captured: stdin is empty"),
        (b"   \n", "nothing captured: stdin is blank (4 bytes of whitespace)"),
        (
            b"{not json",
            "nothing captured: stdin is not JSON: Expecting property name enclosed in double quotes",
        ),
        (b'{"prompt": "x",\n "cwd": }', "stdin is not JSON: Expecting value at line 2 column 9"),
        (b"[1, 2, 3]", "nothing captured: stdin JSON is a list, not an object"),
        (b'"just a string"', "nothing captured: stdin JSON is a string, not an object"),
        (b"null", "nothing captured: stdin JSON is null, not an object"),
        (
            b'{"session_id": "s1", "cwd": "/"}',
            "nothing captured: stdin JSON has no prompt field (fields: session_id, cwd)",
        ),
        (b'{"prompt": "caf\xe9"}', "nothing captured: stdin is not UTF-8: byte 0xe9 at offset 15"),
        (b"\xff\xfegarbage", "nothing captured: stdin is not UTF-8: byte 0xff at offset 0"),
        (b'{"prompt": "a\x00b"}', "nothing captured: stdin holds a NUL byte at offset 13"),
        (b"\x00\x00\x00", "nothing captured: stdin holds a NUL byte at offset 0"),
        (b'{"prompt": 1}{', "nothing captured: stdin is not JSON: Extra data at line 1 column 14"),
    ],
    ids=[
        "empty",
        "blank",
        "broken",
        "broken-line-2",
        "array",
        "string",
        "null",
        "no-prompt",
        "latin-1",
        "binary",
        "nul-in-string",
        "only-nul",
        "trailing",
    ],
)
def test_bad_input_exits_zero_silently_and_logs_what_is_wrong(run_hook, stdin, logged, data_dir, prompt_repo):
    run = run_hook(stdin)
    assert (run.returncode, run.stdout) == (0, b"")
    [line] = (data_dir / "logs" / "prompt-hook.log").read_text(encoding="utf-8").splitlines()
    assert logged in line
    assert "StopIteration" not in line and "SystemError" not in line
    assert not (prompt_repo / "refs" / "prompts").exists()


def test_payload_over_the_size_limit_is_logged_not_stored(run_hook, payload, data_dir, prompt_repo):
    huge = payload("x" * (prompt_commit.MAX_INPUT_BYTES + 10))
    run = run_hook(huge)
    assert (run.returncode, run.stdout) == (0, b"")
    [line] = (data_dir / "logs" / "prompt-hook.log").read_text(encoding="utf-8").splitlines()
    assert f"nothing captured: stdin larger than {prompt_commit.MAX_INPUT_BYTES} bytes" in line
    assert not (prompt_repo / "refs" / "prompts").exists()


def test_missing_fields_still_store_the_prompt(run_hook, prompt_repo, stored_documents):
    run = run_hook(json.dumps({"prompt": "only a prompt"}).encode())
    assert (run.returncode, run.stdout) == (0, b"")
    [doc] = stored_documents(prompt_repo)
    assert doc["prompt"] == "only a prompt"
    assert doc["session_id"] is None
    assert str(doc["prompt_id"]).startswith("unknown-session/")


def test_one_megabyte_prompt_is_stored(run_hook, payload, prompt_repo, stored_documents, git):
    text = ("Довгий рядок тексту for the hook, line after line. " * 20_000)[:1_000_000]
    run = run_hook(payload(text))
    assert (run.returncode, run.stdout) == (0, b"")
    [doc] = stored_documents(prompt_repo)
    assert doc["prompt"] == text
    git(prompt_repo, "fsck", "--strict")


def test_unwritable_data_dir_exits_zero_silently(run_hook, payload, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    command = installer.prompt_hook_command(blocker / "data")
    run = run_hook(payload("anything"), command)
    assert (run.returncode, run.stdout) == (0, b"")
    assert not (blocker / "data").exists()


def test_hook_without_data_dir_argument_uses_the_environment(payload, data_dir):
    command = [str(installer.hook_interpreter()), "-S", "-E", str(installer.PROMPT_HOOK_SCRIPT)]
    done = subprocess.run(command, input=payload("env"), capture_output=True, check=True)
    assert done.stdout == b""
    assert (data_dir / "prompts.git" / "HEAD").is_file()


def test_eight_parallel_writers_times_hundred_prompts_leave_800_commits(run_hook, payload, prompt_repo, git):
    def writer(n: int) -> list[tuple[int, bytes]]:
        results = []
        for i in range(100):
            run = run_hook(payload(f"writer {n} prompt {i} — паралельно", session_id=f"session-{n}"))
            results.append((run.returncode, run.stdout))
        return results

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = [r for batch in pool.map(writer, range(8)) for r in batch]

    assert outcomes == [(0, b"")] * 800
    refs = git(prompt_repo, "for-each-ref", "--format=%(refname)", "refs/prompts").decode().split()
    assert len(refs) == 800
    assert git(prompt_repo, "rev-list", "--count", "--all").strip() == b"800"
    git(prompt_repo, "fsck", "--strict", "--no-dangling")


def test_planted_secrets_appear_in_no_git_object(
    run_hook, payload, prompt_repo, git, data_dir, stored_documents
):
    run = run_hook(payload(secret_prompt(), session_id="secret-session"))
    assert (run.returncode, run.stdout) == (0, b"")
    [doc] = stored_documents(prompt_repo)
    assert "[REDACTED:" in str(doc["prompt"])
    everything = git(prompt_repo, "cat-file", "--batch-all-objects", "--batch")
    # loose objects are zlib-compressed, so check the decompressed stream git prints
    for name, secret in SECRETS.items():
        assert secret.encode() not in everything, name
    for path in data_dir.rglob("*"):
        if path.is_file() and "objects" not in path.parts:
            for name, secret in SECRETS.items():
                assert secret.encode() not in path.read_bytes(), (name, path)


def test_worktree_branch_comes_from_the_worktree_head(
    run_hook, payload, prompt_repo, stored_documents, make_git_repo, tmp_path
):
    repo = make_git_repo("main-checkout")
    repo.commit("init", "2025-01-01T12:00:00+00:00", {"a.txt": "a"})
    worktree = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "wt-branch", str(worktree))
    run_hook(payload("in a worktree", cwd=str(worktree)))
    [doc] = stored_documents(prompt_repo)
    assert doc["repository"] == str(worktree)
    assert doc["branch"] == "wt-branch"


def test_detached_head_records_the_commit(run_hook, payload, prompt_repo, stored_documents, make_git_repo):
    repo = make_git_repo("detached")
    sha = repo.commit("init", "2025-01-01T12:00:00+00:00", {"a.txt": "a"})
    repo.git("checkout", "-q", "--detach")
    run_hook(payload("detached", cwd=str(repo.root)))
    [doc] = stored_documents(prompt_repo)
    assert (doc["branch"], doc["head"]) == (None, sha)


def test_cwd_outside_any_repository_is_the_repository(
    run_hook, payload, prompt_repo, stored_documents, tmp_path
):
    plain = tmp_path / "plain-folder"
    plain.mkdir()
    run_hook(payload("no git here", cwd=str(plain)))
    [doc] = stored_documents(prompt_repo)
    assert (doc["repository"], doc["branch"]) == (str(plain), None)


def test_default_data_dir_matches_platformdirs(monkeypatch, tmp_path):
    from mission_memory.config import _default_data_dir

    monkeypatch.delenv("MISSION_MEMORY_DATA_DIR")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert prompt_commit.default_data_dir() == str(_default_data_dir())
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert prompt_commit.default_data_dir() == str(_default_data_dir())


def test_session_ids_become_safe_ref_names():
    assert prompt_commit.session_slug("../../etc passwd.lock") == "etc-passwd-lock"
    assert prompt_commit.session_slug(None) == "unknown-session"
    assert prompt_commit.session_slug("сесія") == "unknown-session"


def test_operator_name_is_recorded_and_kept_valid_for_git(
    run_hook, payload, prompt_repo, git, stored_documents, monkeypatch
):
    monkeypatch.setenv("USER", " Олена <ops> ")
    run = run_hook(payload("хто я?"))
    assert (run.returncode, run.stdout) == (0, b"")
    [doc] = stored_documents(prompt_repo)
    assert doc["operator"] == " Олена <ops> "
    assert git(prompt_repo, "log", "--all", "--format=%an").decode().strip() == "Олена ops"
    git(prompt_repo, "fsck", "--strict")


def test_control_characters_keep_the_commit_valid(run_hook, prompt_repo, git, stored_documents):
    text = "\x00nul\x07bell\x1b[31m red\r\nsecond line\ud800"
    run = run_hook(json.dumps({"session_id": "s", "prompt": text}).encode("ascii"))  # lone surrogate escaped
    assert (run.returncode, run.stdout) == (0, b"")
    [doc] = stored_documents(prompt_repo)
    assert str(doc["prompt"]).startswith("\x00nul\x07bell") and str(doc["prompt"]).endswith("second line?")
    git(prompt_repo, "fsck", "--strict")


def test_the_operator_is_resolved_like_retrieval_events_env_then_git_email_then_os_user(
    hook_command: str, prompt_repo: Path, tmp_path: Path, make_git_repo: Callable[[str], GitRepo]
) -> None:
    repo = make_git_repo("mission")  # its local config sets user.email operator@example.org
    home = tmp_path / "op-home"
    home.mkdir()
    (home / ".gitconfig").write_text('[user]\n\tname = Olena\n\temail = "olena@example.org" \n', encoding="utf-8")
    plain = tmp_path / "plain"
    plain.mkdir()
    base = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "no-xdg")}

    def capture(cwd: Path, **env: str) -> object:
        stdin = make_payload("which operator?", cwd=str(cwd))
        subprocess.run(hook_command, shell=True, input=stdin, env={**base, **env}, check=True, timeout=60)
        return read_documents(prompt_repo)[-1]["operator"]

    assert capture(repo.root, MISSION_MEMORY_OPERATOR="alice") == "alice"
    assert capture(repo.root, USER="someone") == "operator@example.org"  # the repository's own config wins
    assert capture(plain, USER="someone") == "olena@example.org"  # then the global config
    (home / ".gitconfig").unlink()
    assert capture(plain, USER="someone") == "someone"
    assert capture(plain) == pwd.getpwuid(os.getuid()).pw_name  # no USER at all: the password database
