"""The store registry: the one module that names concrete backends (docs/design.md §10).

A backend is chosen by ``MISSION_MEMORY_STORE`` (``Settings.store``): ``sqlite`` (the embedded
default, ``<data dir>/memory.db``), or a URL-style value whose scheme names the backend:

* ``qdrant+http://host:6333`` / ``qdrant+https://host:6333`` — a Qdrant server or cluster, with
  ``MISSION_MEMORY_QDRANT_API_KEY`` (a secret: sent as the ``api-key`` header, never logged);
* ``qdrant+path:///abs/dir`` or ``qdrant`` (``<data dir>/qdrant``) — the client's local mode on
  disk (one process at a time; a new folder is 0700, as the SQLite data dir, since the client writes
  its files 0644);
* ``qdrant+memory:`` — local mode in memory (tests);
* ``postgresql://user@host:5432/database`` (or ``postgres://``) — a PostgreSQL server with
  pgvector (docs/adr/0084), with ``MISSION_MEMORY_POSTGRES_PASSWORD`` (a secret, never in the
  URL) or libpq's ``PGPASSWORD`` / ``~/.pgpass``.

Backends beyond the embedded default are extras (``pip install 'mission-memory[postgres]'``,
``'[qdrant]'``); opening one whose client is not installed is a :class:`ConfigError` naming that
command.

Each backend is a factory function ``(spec, data_dir, settings) -> MemoryStore``, imported lazily,
so that choosing SQLite never imports a server client. The contract suite in ``tests/stores/contract/`` runs against every entry of
:data:`BACKENDS`. See docs/adr/0016-store-boundary-and-retrieval-events.md.
"""

from __future__ import annotations

import importlib
import shlex
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

from mission_memory.errors import ConfigError
from mission_memory.stores.base import MemoryStore

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = [
    "BACKENDS",
    "DEFAULT_STORE",
    "OtherStore",
    "open_postgres_store",
    "open_qdrant_store",
    "open_sqlite_store",
    "open_store",
    "other_backend_store",
    "salvage_sqlite",
    "scheme_of",
]

DEFAULT_STORE = "sqlite"
DATABASE_NAME = "memory.db"
QDRANT_FOLDER = "qdrant"
"""The local-mode folder inside the data dir that ``MISSION_MEMORY_STORE=qdrant`` opens."""

BACKENDS: dict[str, str] = {
    "sqlite": "mission_memory.stores.registry:open_sqlite_store",
    "qdrant": "mission_memory.stores.registry:open_qdrant_store",
    "postgres": "mission_memory.stores.registry:open_postgres_store",
}
"""Backend scheme -> ``module:factory`` of a ``(spec, data_dir, settings) -> MemoryStore`` function."""

SCHEME_ALIASES: dict[str, str] = {"postgresql": "postgres"}
"""Other spellings of a backend scheme (libpq's URLs start ``postgresql://``)."""

EXTRA_OF_BACKEND: dict[str, tuple[str, tuple[str, ...]]] = {
    "qdrant": ("qdrant", ("qdrant_client",)),
    "postgres": ("postgres", ("psycopg", "psycopg_pool", "pgvector")),
}
"""Backend scheme -> (the package extra that installs its client, the modules it needs)."""


def require_extra(scheme: str) -> None:
    """Raise :class:`ConfigError` naming the install command when ``scheme``'s client is not installed.

    Raises:
        ConfigError: a module of the backend's extra cannot be imported.
    """
    extra, modules = EXTRA_OF_BACKEND.get(scheme, ("", ()))
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ConfigError(
                f"the {scheme} store backend needs the Python package {module!r}, which is not installed:"
                f" pip install 'mission-memory[{extra}]'"
            ) from exc


def scheme_of(spec: str) -> str:
    """The backend scheme of a store setting: ``sqlite`` for ``sqlite``, ``qdrant`` for
    ``qdrant+http://host:6333`` (the part before ``+`` or ``://``)."""
    head = spec.strip().split("://", 1)[0]
    scheme = head.split("+", 1)[0].lower()
    return SCHEME_ALIASES.get(scheme, scheme)


def open_store(spec: str, data_dir: Path, settings: Settings | None = None) -> MemoryStore:
    """Open the store named by ``spec`` for the data dir ``data_dir``.

    Args:
        spec: ``sqlite``, or a URL whose scheme names a registered backend.
        data_dir: the memory's data dir (the embedded store's file lives there).
        settings: where a backend reads its other settings (API key, deadline); default: the
            environment.

    Raises:
        ConfigError: ``spec`` names no registered backend; the message lists the known schemes.
        ConfigError: the backend's extra is not installed; the message names the install command.
        BackendUnavailable: the backend cannot be opened.
    """
    scheme = scheme_of(spec)
    target = BACKENDS.get(scheme)
    if target is None:
        known = ", ".join(sorted(BACKENDS))
        raise ConfigError(
            f"MISSION_MEMORY_STORE={spec!r} names no known store backend (known schemes: {known})"
        )
    require_extra(scheme)
    module_name, factory_name = target.split(":", 1)
    factory = cast(
        Callable[[str, Path, "Settings | None"], MemoryStore], getattr(importlib.import_module(module_name), factory_name)
    )
    return factory(spec, data_dir, settings)


def open_sqlite_store(spec: str, data_dir: Path, settings: Settings | None = None) -> MemoryStore:
    """The embedded default: ``<data_dir>/memory.db`` (``spec`` is ``sqlite``)."""
    from mission_memory.stores.sqlite import SqliteStore

    return SqliteStore(data_dir / DATABASE_NAME)


def open_qdrant_store(spec: str, data_dir: Path, settings: Settings | None = None) -> MemoryStore:
    """A :class:`~mission_memory.stores.qdrant.QdrantStore` for ``spec`` (see the module docstring).

    The server URL may carry no credentials: the API key comes from
    ``MISSION_MEMORY_QDRANT_API_KEY`` only, so that it never appears in a setting that is shown.
    Every request has the total deadline ``MISSION_MEMORY_QDRANT_DEADLINE_SECONDS``.

    Raises:
        ConfigError: ``spec`` is not one of the accepted forms.
        BackendUnavailable: Qdrant cannot be reached or its collections cannot be created.
    """
    from qdrant_client import QdrantClient

    from mission_memory.config import Settings
    from mission_memory.stores.qdrant import QdrantStore
    from mission_memory.stores.snapshot_integrity import make_data_folder, read_access_problem

    settings = settings if settings is not None else Settings()
    head, _, rest = spec.strip().partition("+")
    if rest == "" and head.lower() == "qdrant":
        rest = "path://"
    kind, _, location = rest.partition(":")
    kind = kind.lower()
    prefix = settings.qdrant_collection_prefix
    if kind in ("http", "https"):
        url = f"{kind}:{location}"
        parts = urlsplit(url)
        if not parts.hostname:
            raise ConfigError(f"MISSION_MEMORY_STORE={spec!r}: the Qdrant URL has no host (e.g. qdrant+http://host:6333)")
        if parts.username or parts.password:
            raise ConfigError(
                "MISSION_MEMORY_STORE must not hold credentials; set MISSION_MEMORY_QDRANT_API_KEY instead"
            )
        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key is not None else None
        timeout = max(1, round(settings.qdrant_deadline_seconds))
        # No version check: it runs in a thread of its own, outside the deadline and the error boundary.
        client = QdrantClient(url=url, api_key=key, timeout=timeout, prefer_grpc=False, check_compatibility=False)
        where = f"{parts.scheme}://{parts.hostname}:{parts.port or 6333}{parts.path}"
        return QdrantStore(client, where, prefix=prefix, replication_factor=settings.qdrant_replication_factor,
                           location=where)
    if kind == "memory":
        return QdrantStore(QdrantClient(location=":memory:"), "memory (local mode)", prefix=prefix, local=True,
                           location=":memory:")
    if kind == "path":
        folder = location[2:] if location.startswith("//") else location
        path = Path(folder).expanduser() if folder else data_dir / QDRANT_FOLDER
        if not path.is_absolute():  # relative to each folder the CLI or a stdio server starts in
            raise ConfigError(
                f"MISSION_MEMORY_STORE={spec!r}: the local-mode folder must be an absolute path"
                f" (qdrant+path:///abs/dir or qdrant+path://~/dir), not {folder!r}"
            )
        from mission_memory.errors import BackendUnavailable

        unreadable = read_access_problem(path, "Qdrant local store")
        if unreadable is not None:
            raise BackendUnavailable(unreadable)
        try:  # private as the SQLite store's folder: the client's own files are 0644 under umask 022
            if not folder:
                make_data_folder(data_dir)
            make_data_folder(path)
        except OSError as exc:
            raise ConfigError(f"MISSION_MEMORY_STORE={spec!r}: cannot create {path}: {exc}") from exc
        try:
            client = QdrantClient(path=str(path))
        except RuntimeError as exc:  # the folder is locked by another process
            raise BackendUnavailable(f"Qdrant local store {path} cannot be opened: {exc}") from exc
        except (OSError, sqlite3.Error) as exc:  # a file in it this user cannot read or write
            raise BackendUnavailable(
                f"Qdrant local store {path} cannot be opened: {exc} (check the owner and modes of the files"
                f" in it with `ls -lR {path}`)"
            ) from exc
        return QdrantStore(client, f"{path} (local mode)", prefix=prefix, local=True, location=str(path))
    raise ConfigError(
        f"MISSION_MEMORY_STORE={spec!r} is not a Qdrant store: use qdrant+http://host:6333, qdrant+https://...,"
        " qdrant+path:///dir, qdrant (local mode in the data dir) or qdrant+memory:"
    )


def open_postgres_store(spec: str, data_dir: Path, settings: Settings | None = None) -> MemoryStore:
    """A :class:`~mission_memory.stores.postgres.PostgresStore` for ``postgresql://user@host:port/database``.

    The URL may carry no password: it comes from ``MISSION_MEMORY_POSTGRES_PASSWORD`` (or libpq's
    ``PGPASSWORD`` / ``~/.pgpass``), so that it never appears in a setting that is shown. Every
    connection attempt and statement has the total deadline ``MISSION_MEMORY_POSTGRES_DEADLINE_SECONDS``;
    ``MISSION_MEMORY_POSTGRES_POOL_SIZE`` bounds the process's connections;
    ``MISSION_MEMORY_POSTGRES_HNSW_MIN_ROWS`` moves the mission size from which HNSW serves a search.

    Raises:
        ConfigError: ``spec`` is not such a URL, or holds a password.
        BackendUnavailable: the server cannot be reached, refuses the login, or the schema cannot be created.
    """
    from psycopg.conninfo import make_conninfo

    from mission_memory.config import Settings
    from mission_memory.stores.postgres import PostgresStore

    settings = settings if settings is not None else Settings()
    url = spec.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("postgres", "postgresql") or not parts.hostname:
        raise ConfigError(
            f"MISSION_MEMORY_STORE={spec!r} is not a PostgreSQL store: use postgresql://user@host:5432/database"
        )
    if parts.password:
        raise ConfigError(
            "MISSION_MEMORY_STORE must not hold a password; set MISSION_MEMORY_POSTGRES_PASSWORD instead"
        )
    if not parts.path.strip("/"):
        raise ConfigError(f"MISSION_MEMORY_STORE={spec!r} names no database (postgresql://user@host:5432/database)")
    extra: dict[str, str] = {}
    if settings.postgres_password is not None:
        extra["password"] = settings.postgres_password.get_secret_value()
    sizing: dict[str, int] = {} if settings.postgres_pool_size is None else {"pool_size": settings.postgres_pool_size}
    if settings.postgres_hnsw_min_rows is not None:
        sizing["hnsw_min_rows"] = settings.postgres_hnsw_min_rows
    return PostgresStore(make_conninfo(url, **extra), deadline_seconds=settings.postgres_deadline_seconds, **sizing)


def salvage_sqlite(source: Path, data_dir: Path) -> dict[str, object]:
    """Copy every readable row of a (damaged) SQLite store file into a new store in ``data_dir``
    (:func:`~mission_memory.stores.sqlite_salvage.salvage_sqlite_store`); its report as JSON.

    Raises:
        InputError: ``source`` is not a file, or ``data_dir`` already holds a store.
    """
    from mission_memory.stores.sqlite_salvage import salvage_sqlite_store

    return salvage_sqlite_store(source, data_dir).to_json()


@dataclass(frozen=True)
class OtherStore:
    """A store of another backend in the data dir, holding records the configured store does not
    read (``MISSION_MEMORY_STORE`` was switched, or set in one shell and not in another).

    Attributes:
        store: the ``MISSION_MEMORY_STORE`` value that opens it (``sqlite`` or ``qdrant``).
        path: its file (``memory.db``) or local-mode folder.
        records: how many records it holds (more than 0).
    """

    store: str
    path: Path
    records: int

    def advice(self, spec: str, client: str = "cli") -> str:
        """One sentence for a user whose store ``spec`` is empty: what else the data dir holds, and
        how to use it or move it into ``spec`` (export, then import with the other setting). For a
        ``client`` other than ``cli`` (an agent: no command line) it says what the operator can do."""
        name = "SQLite store" if self.store == "sqlite" else "Qdrant local-mode store"
        here, there = shlex.quote(spec), shlex.quote(self.store)
        if client != "cli":
            return (f"the data dir also holds a {name} with {self.records:,} records ({self.path}), which this"
                    f" server's store setting ({here}) does not read: an operator can switch the store setting"
                    f" to {there} or move those records into this store")
        return (
            f"the data dir also holds a {name} with {self.records:,} records ({self.path}), which"
            f" MISSION_MEMORY_STORE={here} does not read: set MISSION_MEMORY_STORE={there} to use it, or move"
            f" it here with `MISSION_MEMORY_STORE={there} mission-memory export -o memory.jsonl`, then"
            f" `MISSION_MEMORY_STORE={here} mission-memory import memory.jsonl`"
        )


def other_backend_store(spec: str, data_dir: Path, settings: Settings | None = None) -> OtherStore | None:
    """The non-empty store of another backend than ``spec``'s that ``data_dir`` holds, if any.

    Looks only where the other backend's default setting would open it: ``<data dir>/memory.db``
    for ``sqlite``, ``<data dir>/qdrant`` for ``qdrant``. Neither is opened as a store: the
    records are counted from the file read-only (Qdrant's local mode keeps each collection's points
    in ``collection/<name>/storage.sqlite``; a client would load them all and lock the folder), so
    this is cheap, and callers ask only when their own store is empty.

    Args:
        spec: the configured ``MISSION_MEMORY_STORE``.
        data_dir: the memory's data dir.
        settings: where the Qdrant collection prefix is read; default: the environment.
    """
    from mission_memory.stores.sqlite import count_stored_rows

    scheme = scheme_of(spec)
    if scheme != "sqlite":
        database = data_dir / DATABASE_NAME
        if records := count_stored_rows(database):
            return OtherStore("sqlite", database, records)
    if scheme != "qdrant":
        from mission_memory.config import Settings

        prefix = (settings if settings is not None else Settings()).qdrant_collection_prefix
        folder = data_dir / QDRANT_FOLDER
        # the client's local mode keeps each collection's points in a SQLite file of its own
        if records := count_stored_rows(folder / "collection" / f"{prefix}records" / "storage.sqlite", "points"):
            return OtherStore("qdrant", folder, records)
    return None
