"""``make_tracker``: tracker kind -> a configured ``Tracker``. The only module that names the concrete
trackers; each is imported when asked for, so choosing the local tracker never imports httpx.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from mission_memory.errors import ConfigError
from mission_memory.trackers.base import Tracker

__all__ = ["TRACKER_KINDS", "make_tracker"]

_IMPLEMENTATIONS: dict[str, tuple[str, str]] = {
    "plane": ("mission_memory.trackers.plane", "PlaneTracker"),
    "github": ("mission_memory.trackers.github", "GitHubTracker"),
    "local": ("mission_memory.trackers.local_files", "LocalFolderTracker"),
}

TRACKER_KINDS: tuple[str, ...] = tuple(_IMPLEMENTATIONS)
"""The kinds :func:`make_tracker` accepts: ``plane``, ``github``, ``local``."""


def make_tracker(kind: str, **options: Any) -> Tracker:
    """Build the tracker of ``kind`` with its constructor's arguments.

    Args:
        kind: ``"plane"``, ``"github"`` or ``"local"`` (case-insensitive).
        **options: the constructor's arguments by name:
            plane: ``base_url, workspace, project_id, api_key`` (+ ``client, max_retries, sleep, clock``);
            github: ``repo, token`` (+ ``base_url, client, max_retries, sleep, clock``);
            local: ``folder``.

    Returns:
        A :class:`~mission_memory.trackers.base.Tracker`.

    Raises:
        ConfigError: unknown kind, missing or unexpected options, or an option the tracker rejects.
    """
    name = kind.strip().lower()
    if name not in _IMPLEMENTATIONS:
        raise ConfigError(f"unknown tracker {kind!r}; choose one of: {', '.join(TRACKER_KINDS)}")
    module_name, class_name = _IMPLEMENTATIONS[name]
    cls = getattr(importlib.import_module(module_name), class_name)
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        raise ConfigError(f"tracker {name!r}: {exc}") from exc
    tracker: Tracker = cls(**options)
    return tracker
