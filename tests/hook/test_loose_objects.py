"""The hand-written git writer: valid objects, and a repository created safely by racing first writers."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import zlib

from mission_memory.capture.loose_objects import STORED_LIMIT, BareRepository, zlib_stream


def _ensure_after_barrier(barrier: object, path: str) -> str | None:
    repo = BareRepository(path)
    barrier.wait()  # type: ignore[attr-defined]
    try:
        repo.ensure()
        sha = repo.write_blob(path.encode())
        repo.create_ref(
            f"refs/prompts/race/{sha}", repo.write_commit(repo.write_tree([("f", sha)]), "t <t@t>", 0, "m")
        )
    except OSError as exc:
        return repr(exc)
    return None


def test_racing_first_writers_all_get_a_complete_repository(tmp_path):
    context = multiprocessing.get_context("forkserver")
    with context.Manager() as manager, context.Pool(6) as pool:
        for round_ in range(25):
            path = tmp_path / f"round-{round_}" / "prompts.git"
            barrier = manager.Barrier(6)
            errors = pool.starmap(_ensure_after_barrier, [(barrier, str(path))] * 6)
            assert errors == [None] * 6, round_
            assert [p.name for p in path.parent.iterdir()] == ["prompts.git"]  # no temporary folder left
            subprocess.run(
                ["git", "--git-dir", str(path), "fsck", "--strict"], check=True, capture_output=True
            )


def test_objects_match_what_git_computes(tmp_path):
    repo = BareRepository(str(tmp_path / "r.git"))
    repo.ensure()
    content = "привіт\n".encode()
    blob = repo.write_blob(content)
    expected = (
        subprocess.run(["git", "hash-object", "--stdin"], input=content, capture_output=True, check=True)
        .stdout.decode()
        .strip()
    )
    assert blob == expected
    tree = repo.write_tree([("prompt.json", blob)])
    commit = repo.write_commit(tree, "Оператор <op@example.org>", 1_700_000_000, "subject\n\nbody")
    ref = repo.create_ref("refs/prompts/s/1-1", commit)
    again = repo.create_ref("refs/prompts/s/1-1", commit)
    assert (ref, again) == ("refs/prompts/s/1-1", "refs/prompts/s/1-1-1")
    shown = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "r.git"), "log", "-1", "--format=%an|%at|%B", ref],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    assert shown.startswith("Оператор|1700000000|subject\n\nbody")
    subprocess.run(
        ["git", "--git-dir", str(tmp_path / "r.git"), "fsck", "--strict"], check=True, capture_output=True
    )


def test_zlib_streams_decompress_to_the_object_on_both_paths():
    for size in (0, 1, 700, STORED_LIMIT, STORED_LIMIT + 1, 100_000):
        data = os.urandom(size)
        assert zlib.decompress(zlib_stream(data)) == data
