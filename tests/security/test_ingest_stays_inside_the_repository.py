"""Ingest reads only regular files inside the repository (issue 22 item 5, docs/adr/0056).

Real repositories with real symbolic links, a real FIFO and real device files: a tracked link to a
file outside the clone, to the home folder's git config or to ``/etc/hostname`` is reported and its
target never stored; a link to ``/dev/stdin`` or ``/dev/zero`` and a FIFO in a plain folder neither
block the ingest nor exhaust its memory (those run as ``mission-memory ingest`` subprocesses with a
deadline and an address-space limit, so the old behaviour fails the test instead of hanging it).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.api import Memory
from tests.conftest import GitRepo

CANARY_OUTSIDE = "canary-outside-the-clone-7f3a"
CANARY_HOME = "canary-home-gitconfig-91bc"


def _stored_text() -> str:
    with Memory.open() as memory:
        return "\n".join(f"{r.title}\n{r.text}" for batch in memory.store.iterate() for r in batch)


def _skipped(report: dict[str, object]) -> dict[str, str]:
    files = report["skipped"]["files"]  # type: ignore[index]
    return {entry["path"]: entry["reason"] for entry in files}


def _links_repository(make_git_repo: Callable[[str], GitRepo], tmp_path: Path, links: dict[str, str]) -> GitRepo:
    repo = make_git_repo("clone")
    repo.write("README.md", "# Clone\n\nA third party's repository.\n")
    repo.write("docs/guide.md", "# Guide\n\n## Start\n\nRun the uploader.\n")
    for name, target in links.items():
        (repo.root / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, repo.root / name)
    repo.commit("Add docs and links", "2024-01-01T00:00:00+00:00")
    return repo


def test_tracked_links_leading_out_of_the_clone_are_reported_and_never_stored(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path
) -> None:
    outside = tmp_path / "outside" / "secret.md"
    outside.parent.mkdir()
    outside.write_text(f"# Secret\n\n{CANARY_OUTSIDE}\n", encoding="utf-8")
    home_config = Path(os.environ["HOME"]) / ".gitconfig"
    home_config.write_text(f"[user]\n\tname = {CANARY_HOME}\n", encoding="utf-8")
    hostname = Path("/etc/hostname").read_text(encoding="utf-8").strip() if Path("/etc/hostname").is_file() else ""
    repo = _links_repository(make_git_repo, tmp_path, {
        "docs/outside.md": "../../outside/secret.md",
        "docs/gitconfig.md": str(home_config),
        "docs/hostname.md": "/etc/hostname",
        "docs/guide-again.md": "guide.md",  # a link to a file of the repository is read
    })
    with Memory.open() as memory:
        report = memory.ingest_repository(repo.root).to_json()
    skipped = _skipped(report)
    assert skipped["docs/outside.md"] == "outside-repository"
    assert skipped["docs/gitconfig.md"] == "outside-repository"
    assert skipped["docs/hostname.md"] == "outside-repository"
    assert "docs/guide-again.md" not in skipped
    stored = _stored_text()
    assert CANARY_OUTSIDE not in stored and CANARY_HOME not in stored
    if len(hostname) >= 6:
        assert f"\n{hostname}" not in stored
    assert "docs/guide-again.md" in stored and "Run the uploader." in stored


def test_a_plain_folder_does_not_follow_a_link_out_of_it(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(f"# Secret\n\n{CANARY_OUTSIDE}\n", encoding="utf-8")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.md").write_text("# Plan\n\nShip on Friday.\n", encoding="utf-8")
    os.symlink(outside, folder / "linked.md")
    with Memory.open() as memory:
        report = memory.ingest_repository(folder).to_json()
    assert _skipped(report) == {"linked.md": "outside-repository"}
    assert CANARY_OUTSIDE not in _stored_text()


def _limited_memory() -> None:
    limit = 3 * 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _ingest_in_a_subprocess(path: Path, data_dir: Path) -> dict[str, object]:
    """``mission-memory ingest --json`` with stdin open and never written, 90 s and 3 GB of address space."""
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir))
    stdin_read, stdin_write = os.pipe()  # the write end stays open: a read of stdin waits, as in a terminal
    try:
        with subprocess.Popen([sys.executable, "-m", "mission_memory", "ingest", str(path), "--json"], env=env,
                              stdin=stdin_read, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=_limited_memory) as ingest:
            os.close(stdin_read)
            try:
                out, err = ingest.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                ingest.kill()
                ingest.communicate()
                pytest.fail(f"the ingest of {path} was still blocked after 90 s")
    finally:
        os.close(stdin_write)
    assert ingest.returncode == 0, err[-2000:]
    report: dict[str, object] = json.loads(out)
    return report


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/stdin and /dev/zero")
def test_links_to_stdin_and_to_an_endless_device_neither_block_nor_exhaust_the_ingest(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path, data_dir: Path
) -> None:
    repo = _links_repository(make_git_repo, tmp_path, {"docs/stdin.md": "/dev/stdin", "docs/zero.md": "/dev/zero"})
    report = _ingest_in_a_subprocess(repo.root, data_dir)
    skipped = _skipped(report)
    assert skipped == {"docs/stdin.md": "outside-repository", "docs/zero.md": "outside-repository"}
    assert report["added"] and "Run the uploader." in _stored_text()


def test_a_fifo_in_a_plain_folder_is_not_opened(tmp_path: Path, data_dir: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.md").write_text("# Plan\n\nShip on Friday.\n", encoding="utf-8")
    os.mkfifo(folder / "pipe.md")
    report = _ingest_in_a_subprocess(folder, data_dir)
    assert _skipped(report) == {"pipe.md": "not-a-regular-file"}
    assert "Ship on Friday." in _stored_text()


def test_the_cap_applies_to_the_bytes_read(tmp_path: Path) -> None:
    from mission_memory.ingest.file_reading import read_inside

    (tmp_path / "exact.md").write_bytes(b"x" * 100)
    (tmp_path / "over.md").write_bytes(b"x" * 101)
    os.symlink("exact.md", tmp_path / "link.md")
    os.symlink("loop-b.md", tmp_path / "loop-a.md")
    os.symlink("loop-a.md", tmp_path / "loop-b.md")
    assert read_inside(tmp_path, "exact.md", 100).data == b"x" * 100
    assert read_inside(tmp_path, "link.md", 100).data == b"x" * 100
    assert read_inside(tmp_path, "over.md", 100).reason == "too-large"
    assert read_inside(tmp_path, "loop-a.md", 100).reason in ("unreadable", "outside-repository")
    assert read_inside(tmp_path, "missing.md", 100).reason == "unreadable"
    assert read_inside(tmp_path, ".", 100).reason == "not-a-regular-file"
    assert read_inside(tmp_path, "../outside.md", 100).reason == "outside-repository"
