"""The prompt hook and the store name the same operator for the same checkout (one rule, docs/adr/0051).

A captured prompt and the query after it must carry the same operator, or the correction signal
links a correction to nobody's query. Before the rule was shared, the store asked ``git config``
(which follows ``include`` directives and the system config) while the hook read the config files
by hand, so a repository whose ``user.email`` sits in an included file was two people at once.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.retrieval_events import resolve_operator
from tests.hook.conftest import HookRun


def _repository(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _hook_operator(
    run_hook: Callable[[bytes], HookRun], payload: Callable[..., bytes], stored: Callable[[Path], list[dict[str, object]]],
    prompt_repo: Path, cwd: Path,
) -> object:
    assert run_hook(payload("which operator am I?", cwd=str(cwd))).returncode == 0
    return stored(prompt_repo)[-1]["operator"]


@pytest.mark.parametrize("where", ["repository config", "included file", "global config", "environment"])
def test_the_hook_and_the_store_agree_on_the_operator(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    run_hook: Callable[[bytes], HookRun], payload: Callable[..., bytes],
    stored_documents: Callable[[Path], list[dict[str, object]]], prompt_repo: Path,
) -> None:
    repo = _repository(tmp_path / "mission")
    home = Path.home()
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\temail = global@example.org\n", encoding="utf-8")
    monkeypatch.delenv("MISSION_MEMORY_OPERATOR", raising=False)
    if where == "repository config":
        subprocess.run(["git", "-C", str(repo), "config", "user.email", "repo@example.org"], check=True)
    elif where == "included file":
        (repo / "extra.gitconfig").write_text("[user]\n\temail = included@example.org\n", encoding="utf-8")
        subprocess.run(["git", "-C", str(repo), "config", "include.path", "../extra.gitconfig"], check=True)
    elif where == "environment":
        monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "carol")
    subfolder = repo / "src" / "deep"
    subfolder.mkdir(parents=True)

    from_hook = _hook_operator(run_hook, payload, stored_documents, prompt_repo, subfolder)
    assert resolve_operator(subfolder) == from_hook
    assert resolve_operator(repo) == from_hook
