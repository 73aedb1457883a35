"""What ``mission-memory status`` reports about the open store (:meth:`~mission_memory.api.Memory.status`).

The data dir, the store that is open and how it is named, record counts per layer and kind, missions,
components, vectors per model, the schema version, whether the store is read-only, and the paths that
others than the owner may read. Read over the store protocol (:mod:`mission_memory.stores.base`),
so every backend reports alike; nothing here loads NumPy or the embedder.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mission_memory.embeddings import configured_model_id
from mission_memory.stores.base import DescribedStore, MemoryStore
from mission_memory.stores.registry import OtherStore, scheme_of

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = ["exposed_paths", "store_status"]


def store_status(
    store: MemoryStore,
    settings: Settings,
    *,
    other_store: Callable[[], OtherStore | None],
    without_vectors: dict[str, Any],
) -> dict[str, Any]:
    """The status of ``store`` opened with ``settings``, as :meth:`~mission_memory.api.Memory.status` documents it.

    Args:
        store: the open store.
        settings: the settings it was opened with (data dir, store URL, embedding model).
        other_store: the data dir's other backend's non-empty store, or None; asked only when
            ``store`` holds no record.
        without_vectors: :meth:`~mission_memory.api.Memory.vectors_missing`, reported as is.

    Returns:
        ``{"data_dir", "exposed", "store", "backend", "database", "other_store", "schema_version",
        "embedding_model", "records", "layers", "missions", "components", "vectors_by_model",
        "retrieval_events", "read_only", "without_vectors"}``.
    """
    counts = store.counts()
    records = sum(sum(kinds.values()) for kinds in counts.values())
    if isinstance(store, DescribedStore):
        backend, described, database = store.backend, store.description, store.location
    else:
        backend, described, database = scheme_of(settings.store), settings.store, ""
    other = other_store() if records == 0 else None
    return {
        "data_dir": str(settings.data_dir),
        "exposed": exposed_paths([settings.data_dir, *([Path(database)] if database.startswith("/") else [])]),
        "store": described,
        "backend": backend,
        "database": database,
        "other_store": None if other is None else {
            "store": other.store, "path": str(other.path), "records": other.records,
            "advice": other.advice(settings.store),
        },
        "schema_version": store.schema_version,
        "embedding_model": configured_model_id(settings),
        "records": records,
        "layers": counts,
        "missions": store.missions(),
        "components": store.components(),
        "vectors_by_model": store.vector_models(),
        "retrieval_events": store.count_retrieval_events(),
        "read_only": store.read_only,
        "without_vectors": without_vectors,
    }


def exposed_paths(paths: Sequence[Path]) -> list[dict[str, str]]:
    """``{"path", "mode", "fix"}`` for each of ``paths`` that exists and grants its group or others any
    access; ``fix`` is the ``chmod`` that makes it private (700 for a folder, 600 for a file)."""
    out = []
    for path in dict.fromkeys(paths):
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            continue
        if mode & 0o077:
            private = "700" if path.is_dir() else "600"
            out.append({"path": str(path), "mode": f"{mode:04o}", "fix": f"chmod {private} {shlex.quote(str(path))}"})
    return out
