"""One shift, built once per test: alice's work in a real repository and a real store."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from mission_memory.api import Memory
from tests.conftest import GitRepo
from tests.handover.scenario import alices_shift, build_repository


@pytest.fixture
def shift(make_git_repo: Callable[[str], GitRepo]) -> Iterator[tuple[Memory, GitRepo]]:
    repo = build_repository(make_git_repo)
    with Memory.open() as memory:
        alices_shift(memory, repo)
        yield memory, repo
