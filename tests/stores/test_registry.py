"""The store registry picks the backend from MISSION_MEMORY_STORE and rejects what it does not know."""

from __future__ import annotations

from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.errors import BackendUnavailable, ConfigError
from mission_memory.stores.registry import BACKENDS, open_store, scheme_of


def test_the_scheme_is_read_from_a_name_or_a_url() -> None:
    assert scheme_of("sqlite") == "sqlite"
    assert scheme_of("qdrant+http://localhost:6333") == "qdrant"
    assert scheme_of("Postgres://db/x") == "postgres"


def test_an_unknown_store_is_a_config_error_naming_the_value_and_the_known_schemes(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        open_store("mongo://localhost", tmp_path)
    message = str(caught.value)
    assert "'mongo://localhost'" in message and "MISSION_MEMORY_STORE" in message
    assert all(scheme in message for scheme in BACKENDS)


def test_memory_opens_the_store_the_environment_names(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("MISSION_MEMORY_STORE", "sqlite")
    with Memory.open() as memory:
        assert memory.status()["records"] == 0
    assert (data_dir / "memory.db").is_file()
    monkeypatch.setenv("MISSION_MEMORY_STORE", "qdrant+memory:")
    with Memory.open() as memory:
        assert memory.status()["records"] == 0
    monkeypatch.setenv("MISSION_MEMORY_STORE", "qdrant+http://127.0.0.1:1")
    with pytest.raises(BackendUnavailable, match=r"Qdrant at http://127\.0\.0\.1:1 cannot be reached"):
        Memory.open()
