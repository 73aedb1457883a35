"""A full disk loses prompts, but never silently: the pre-allocated record counts them and ``hook status`` says so.

The data dir is a real, tiny tmpfs mounted for the test (the tests run as root, as CI does), filled
to the last page before the hook runs.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.capture import dropped_prompts
from mission_memory.cli.app import app
from mission_memory.hook import installer

runner = CliRunner()
PROMPT = "Перевір міграцію бази перед релізом — секретний план Омега"


@pytest.fixture
def small_disk(data_dir: Path) -> Iterator[Path]:
    """``data_dir`` as a 1 MiB tmpfs of its own, unmounted afterwards."""
    data_dir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(data_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        reason = f"cannot mount a tmpfs (needs root): {done.stderr.strip() or done.returncode}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        yield data_dir
    finally:
        subprocess.run(["umount", str(data_dir)], check=True)


def fill(disk: Path) -> None:
    """Write into ``disk`` until the file system refuses another byte."""
    with (disk / "ballast").open("wb", buffering=0) as ballast:
        try:
            while True:
                ballast.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        try:
            while True:
                ballast.write(b"\0")
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def status_json() -> dict[str, object]:
    result = runner.invoke(app, ["hook", "status", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def stored_refs(prompt_repo: Path) -> list[str]:
    refs = prompt_repo / "refs" / "prompts"
    return [str(p) for p in refs.rglob("*") if p.is_file()] if refs.exists() else []


def test_prompt_lost_on_a_full_disk_is_counted_and_reported(small_disk, run_hook, payload, prompt_repo):
    assert (run_hook(payload("stored while there is room")).returncode, len(stored_refs(prompt_repo))) == (
        0,
        1,
    )
    fill(small_disk)

    runs = [run_hook(payload(PROMPT)) for _ in range(2)]

    assert [(r.returncode, r.stdout) for r in runs] == [(0, b"")] * 2
    assert len(stored_refs(prompt_repo)) == 1
    dropped = status_json()["dropped_prompts"]
    assert isinstance(dropped, dict)
    assert (dropped["total"], dropped["storage"], dropped["input"]) == (2, 2, 0)
    assert dropped["last_reason"] == "ENOSPC"
    assert dropped["first"] is not None and dropped["last"] is not None
    text = runner.invoke(app, ["hook", "status"], catch_exceptions=False).stdout
    assert "Dropped prompts: 2" in text
    record = (small_disk / dropped_prompts.RECORD_NAME).read_bytes()
    assert len(record) == dropped_prompts.RECORD_SIZE
    assert "Омега".encode() not in record and b"stored while" not in record


def test_record_preallocated_by_install_counts_a_drop_before_any_prompt_was_stored(
    small_disk, tmp_path, run_hook, payload, prompt_repo
):
    installer.install_hooks(tmp_path / "settings.json", data_dir=small_disk)
    assert (small_disk / dropped_prompts.RECORD_NAME).stat().st_size == dropped_prompts.RECORD_SIZE
    fill(small_disk)

    run = run_hook(payload(PROMPT))

    assert (run.returncode, run.stdout) == (0, b"")
    assert stored_refs(prompt_repo) == []
    dropped = status_json()["dropped_prompts"]
    assert isinstance(dropped, dict)
    assert (dropped["total"], dropped["last_reason"]) == (1, "ENOSPC")


def test_no_leftover_temporary_files_after_a_write_fails_for_space(
    small_disk, run_hook, payload, prompt_repo, git
):
    run_hook(payload("first"))
    fill(small_disk)
    run_hook(payload(PROMPT * 50))  # over 4 KB: goes through zlib, still fails for space
    (small_disk / "ballast").unlink()
    assert [p.name for p in prompt_repo.rglob(".tmp-*")] == []
    git(prompt_repo, "fsck", "--strict")


def test_status_counts_are_zero_with_a_fresh_record_and_say_when_it_is_missing(run_hook, payload, data_dir):
    missing = status_json()["dropped_prompts"]
    assert isinstance(missing, dict)
    assert (missing["preallocated"], missing["total"]) == (False, 0)
    run_hook(payload("hello"))
    fresh = status_json()["dropped_prompts"]
    assert isinstance(fresh, dict)
    assert (fresh["preallocated"], fresh["total"], fresh["last"]) == (True, 0, None)
    run_hook(b"[1, 2]")
    after_bad_input = status_json()["dropped_prompts"]
    assert isinstance(after_bad_input, dict)
    assert (after_bad_input["total"], after_bad_input["input"], after_bad_input["last_reason"]) == (
        1,
        1,
        "input",
    )
