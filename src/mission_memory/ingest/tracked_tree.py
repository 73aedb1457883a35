"""The repository tree as of the last ingest: which paths exist, kept in the store's state.

An ingest of a git work tree stores the paths git tracks at HEAD under the mission's state key
:data:`TRACKED_FILES_STATE` (JSON list, at most :data:`MAX_TRACKED_PATHS`). Readers ask whether a file
still exists (the rotation brief lists no deleted file, ADR 0060) and whether a component is a folder
of the repository even when no record is charged to it (an explicit correction naming it is accepted,
ADR 0062). A mission ingested before this key existed, or from a plain folder, has no tree: readers
then fall back to what the records say.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from mission_memory.stores.base import MemoryStore

__all__ = ["MAX_TRACKED_PATHS", "TRACKED_FILES_STATE", "has_folder", "store_tracked_files", "tracked_files"]

TRACKED_FILES_STATE = "tracked_files"
"""State key (per mission) of the tracked paths at the last ingested HEAD."""
MAX_TRACKED_PATHS = 200_000
"""A tree with more paths keeps none: a partial list would call existing files deleted."""


def store_tracked_files(store: MemoryStore, mission: str, paths: Sequence[str]) -> None:
    """Keep ``paths`` (repository-relative) as ``mission``'s tree; too many paths clear the key."""
    value = json.dumps(sorted(set(paths))) if len(paths) <= MAX_TRACKED_PATHS else ""
    store.set_state(mission, TRACKED_FILES_STATE, value)


def tracked_files(store: MemoryStore, mission: str) -> frozenset[str] | None:
    """The paths of ``mission``'s tree at its last ingest, or None when memory has no tree for it."""
    raw = store.get_state(mission, TRACKED_FILES_STATE)
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return frozenset(str(p) for p in value) if isinstance(value, list) else None


def has_folder(store: MemoryStore, mission: str, folder: str) -> bool:
    """Whether ``folder`` (``telemetry`` or ``terraform/projects``, no slashes around) is a folder of the tree."""
    paths = tracked_files(store, mission)
    prefix = folder.strip("/") + "/"
    return paths is not None and any(p.startswith(prefix) for p in paths)
