"""Every file the product writes is 0600 and every folder 0700 (issue 35 item 6).

The starting code created ``prompts.git`` (its objects, refs, HEAD and config) and ``logs/`` 0644 and
0755 under the usual umask 022; the store's own files were already private. The commands are run as a
user runs them (the prompt hook as installed, the CLI) and the data dir is walked.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.hook import installer
from tests.conftest import GitRepo
from tests.hook.conftest import make_payload


def _loose_modes(root: Path) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            mode = stat.S_IMODE((Path(folder) / name).stat().st_mode)
            if mode != 0o700:
                found.append(f"{oct(mode)} folder {Path(folder, name).relative_to(root)}")
        for name in files:
            mode = stat.S_IMODE((Path(folder) / name).lstat().st_mode)
            if mode & 0o077:
                found.append(f"{oct(mode)} file {Path(folder, name).relative_to(root)}")
    return found


def test_every_file_a_command_writes_is_private(data_dir: Path, tmp_path: Path,
                                                 make_git_repo: Callable[[str], GitRepo]) -> None:
    old_umask = os.umask(0o022)  # the usual umask: the product must not rely on a stricter one
    try:
        hook = installer.prompt_hook_command(data_dir)
        for stdin in (make_payload("Why do uploads retry three times?"), b"{not json"):  # a prompt, a log line
            subprocess.run(hook, shell=True, input=stdin, capture_output=True, timeout=60, check=True)
        repo = make_git_repo("svc")
        repo.commit("Retry uploads with backoff", "2024-03-01T10:00:00+00:00",
                    {"docs/retries.md": "# Retries\n\nUploads are retried three times with backoff.\n"})
        runner = CliRunner()
        out = tmp_path / "out"  # the user's own folder for exports
        out.mkdir(mode=0o700)
        for args in (["ingest", str(repo.root), "--mission", "svc"],
                     ["decide", "Keep the ledger in SQLite", "--decision", "The ledger stays in SQLite.",
                      "--rationale", "Offline field teams.", "--mission", "svc"],
                     ["query", "upload retries", "--mission", "svc"],
                     ["handover", "note", "Watch the retry queue", "--mission", "svc"],
                     ["team", "token", "add", "--operator", "alice", "--clearance", "internal"],
                     ["export", "-o", str(out / "memory.jsonl")],
                     ["prompts", "export", "-o", str(out / "prompts.jsonl")],
                     ["corrections", "pairs", "-o", str(out / "pairs.jsonl")]):
            done = runner.invoke(app, args)
            assert done.exit_code == 0, (args, done.output)
    finally:
        os.umask(old_umask)
    assert (data_dir / "prompts.git" / "HEAD").is_file() and (data_dir / "logs").is_dir()
    assert (data_dir / "memory.db").is_file()
    loose = [f"{oct(stat.S_IMODE(data_dir.stat().st_mode))} data dir", *_loose_modes(data_dir)]
    assert loose == ["0o700 data dir"], "\n".join(loose)
    assert _loose_modes(out) == [] and stat.S_IMODE(out.stat().st_mode) == 0o700
    assert sorted(p.name for p in out.iterdir()) == ["memory.jsonl", "pairs.jsonl", "prompts.jsonl"]
