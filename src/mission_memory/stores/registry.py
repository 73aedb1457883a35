"""The store registry: the one module that names concrete backends (DESIGN.md §10).

A backend is chosen by ``MISSION_MEMORY_STORE`` (``Settings.store``): ``sqlite`` (the embedded
default, ``<data dir>/memory.db``) today; a URL-style value whose scheme names the backend
(``qdrant+http://host:6333``) for server engines later. Each backend is a factory function
``(spec, data_dir) -> MemoryStore``, imported lazily, so that choosing SQLite never imports a
server client. The contract suite in ``tests/stores/contract/`` runs against every entry of
:data:`BACKENDS`. See docs/adr/0016-store-boundary-and-retrieval-events.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import cast

from mission_memory.errors import ConfigError
from mission_memory.stores.base import MemoryStore

__all__ = ["BACKENDS", "DEFAULT_STORE", "open_sqlite_store", "open_store", "scheme_of"]

DEFAULT_STORE = "sqlite"
DATABASE_NAME = "memory.db"

BACKENDS: dict[str, str] = {
    "sqlite": "mission_memory.stores.registry:open_sqlite_store",
}
"""Backend scheme -> ``module:factory`` of a ``(spec, data_dir) -> MemoryStore`` function."""


def scheme_of(spec: str) -> str:
    """The backend scheme of a store setting: ``sqlite`` for ``sqlite``, ``qdrant`` for
    ``qdrant+http://host:6333`` (the part before ``+`` or ``://``)."""
    head = spec.strip().split("://", 1)[0]
    return head.split("+", 1)[0].lower()


def open_store(spec: str, data_dir: Path) -> MemoryStore:
    """Open the store named by ``spec`` for the data dir ``data_dir``.

    Args:
        spec: ``sqlite``, or a URL whose scheme names a registered backend.
        data_dir: the memory's data dir (the embedded store's file lives there).

    Raises:
        ConfigError: ``spec`` names no registered backend; the message lists the known schemes.
        BackendUnavailable: the backend cannot be opened.
    """
    scheme = scheme_of(spec)
    target = BACKENDS.get(scheme)
    if target is None:
        known = ", ".join(sorted(BACKENDS))
        raise ConfigError(
            f"MISSION_MEMORY_STORE={spec!r} names no known store backend (known schemes: {known})"
        )
    module_name, factory_name = target.split(":", 1)
    factory = cast(Callable[[str, Path], MemoryStore], getattr(importlib.import_module(module_name), factory_name))
    return factory(spec, data_dir)


def open_sqlite_store(spec: str, data_dir: Path) -> MemoryStore:
    """The embedded default: ``<data_dir>/memory.db`` (``spec`` is ``sqlite``)."""
    from mission_memory.stores.sqlite import SqliteStore

    return SqliteStore(data_dir / DATABASE_NAME)
