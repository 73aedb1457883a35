"""The contract suite's fixture: one store per registered backend (stores/registry.py BACKENDS)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mission_memory.stores.base import MemoryStore
from mission_memory.stores.registry import BACKENDS, open_store


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    """A fresh, empty store of each registered backend."""
    opened = open_store(str(request.param), tmp_path / "contract-data")
    try:
        yield opened
    finally:
        opened.close()
