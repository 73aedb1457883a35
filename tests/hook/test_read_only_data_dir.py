"""A data dir the prompt hook cannot write loses every prompt; ``hook status`` must say so.

The dropped-prompt record lives in the data dir, so when the whole folder is read-only the hook can
count nothing (it still exits 0: a prompt is never blocked), and ``hook status`` reported
``0 problems`` and ``Dropped prompts: 0``. Root ignores file modes, so the hook and the status run
without the capabilities that let it (``setpriv``), as a user whose files these are.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.file_modes import without_file_capabilities
from tests.hook.conftest import HookRun


def _chmod_tree(root: Path, files: int, folders: int) -> None:
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(folders if path.is_dir() else files)


@pytest.fixture
def read_only_after_one_prompt(data_dir: Path, run_hook: Callable[[bytes], HookRun],
                               payload: Callable[..., bytes]) -> Iterator[Path]:
    assert run_hook(payload("the first prompt, stored")).returncode == 0
    _chmod_tree(data_dir, 0o444, 0o555)
    try:
        yield data_dir
    finally:
        _chmod_tree(data_dir, 0o644, 0o755)


def test_hook_status_says_a_read_only_data_dir_loses_prompts_uncounted(
    read_only_after_one_prompt: Path, hook_command: str, payload: Callable[..., bytes]
) -> None:
    prefix = without_file_capabilities()
    if prefix is None:
        assert os.environ.get("CI") != "true", "CI must be able to drop root's file-mode override"
        pytest.skip("running as root without setpriv: file modes do not apply")
    data_dir = read_only_after_one_prompt
    sent = subprocess.run([*prefix, "sh", "-c", hook_command], input=payload("marker prompt, lost"),
                          capture_output=True, timeout=60, check=False)
    assert sent.returncode == 0  # the prompt is never blocked
    status = subprocess.run(
        [*prefix, sys.executable, "-m", "mission_memory", "hook", "status", "--data-dir", str(data_dir), "--json"],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "COLUMNS": "300"},
    )
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["prompts"] == 1 and report["dropped_prompts"]["total"] == 0  # the loss was not countable …
    assert {u["path"] for u in report["unwritable"]} >= {str(data_dir)}  # … so status names the cause
    assert all(u["reason"] in ("EACCES", "EPERM", "EROFS") for u in report["unwritable"]), report["unwritable"]
    text = subprocess.run(
        [*prefix, sys.executable, "-m", "mission_memory", "hook", "status", "--data-dir", str(data_dir)],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "COLUMNS": "300"},
    ).stdout
    assert f"The hook cannot store prompts: {data_dir} is not writable" in text, text


def test_a_writable_data_dir_reports_nothing_unwritable(
    data_dir: Path, run_hook: Callable[[bytes], HookRun], payload: Callable[..., bytes]
) -> None:
    assert run_hook(payload("a stored prompt")).returncode == 0
    status = subprocess.run(
        [sys.executable, "-m", "mission_memory", "hook", "status", "--data-dir", str(data_dir), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["unwritable"] == []
    assert not [p for p in data_dir.rglob(".write-probe-*")]
