"""Fixtures for the corpus tests: a prompt repository built through the hook's own capture code."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from mission_memory.capture import prompt_commit
from mission_memory.prompts.corpus import PromptCorpus


def _capture(
    data_dir: Path, when: str, prompt: str, *, session: str = "s-1", cwd: str = "/work/alpha"
) -> str:
    moment = datetime.fromisoformat(when)
    now_ns = int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000
    raw = json.dumps(
        {
            "session_id": session,
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        },
        ensure_ascii=False,
    ).encode()
    return prompt_commit.capture(raw, str(data_dir), now_ns=now_ns)


@pytest.fixture
def capture(data_dir: Path) -> Callable[..., str]:
    """``capture(when_iso, prompt, session=..., cwd=...)``: store a prompt at a fixed time; returns its ref."""

    def store(when: str, prompt: str, **kwargs: str) -> str:
        return _capture(data_dir, when, prompt, **kwargs)

    return store


@pytest.fixture
def corpus(data_dir: Path) -> PromptCorpus:
    """The corpus the hook writes into for this test's data dir."""
    return PromptCorpus(data_dir / "prompts.git")
