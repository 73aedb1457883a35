"""``make_tracker``: tracker kind -> a configured ``Tracker``. The only module that names the concrete
trackers; each is imported when asked for, so choosing the local tracker never imports httpx.

Credentials and the request deadline come from the settings here, at the factory, so every shell
(CLI, refresher, tests) gets the same check: a Plane tracker without ``MISSION_MEMORY_PLANE_API_KEY`` is a
:class:`~mission_memory.errors.ConfigError` naming that variable before any request is sent. A GitHub
token is optional (public repositories); a private repository without one answers 404, which the tracker
reports as a ConfigError naming ``MISSION_MEMORY_GITHUB_TOKEN``.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Any

from mission_memory.errors import ConfigError
from mission_memory.trackers.base import Tracker

if TYPE_CHECKING:
    from mission_memory.config import Settings

__all__ = ["TRACKER_KINDS", "make_tracker"]

_IMPLEMENTATIONS: dict[str, tuple[str, str]] = {
    "plane": ("mission_memory.trackers.plane", "PlaneTracker"),
    "github": ("mission_memory.trackers.github", "GitHubTracker"),
    "local": ("mission_memory.trackers.local_files", "LocalFolderTracker"),
}

TRACKER_KINDS: tuple[str, ...] = tuple(_IMPLEMENTATIONS)
"""The kinds :func:`make_tracker` accepts: ``plane``, ``github``, ``local``."""


def make_tracker(kind: str, *, settings: Settings | None = None, **options: Any) -> Tracker:
    """Build the tracker of ``kind`` with its constructor's arguments, credentials from the settings.

    Args:
        kind: ``"plane"``, ``"github"`` or ``"local"`` (case-insensitive).
        settings: where ``api_key`` (Plane), ``token`` (GitHub) and ``deadline_seconds`` come from when
            ``options`` do not give them; read from the environment when None and needed.
        **options: the constructor's arguments by name:
            plane: ``base_url, workspace, project_id`` (+ ``api_key, client, max_retries, sleep, clock,
            deadline_seconds``);
            github: ``repo`` (+ ``token, base_url, client, max_retries, sleep, clock, deadline_seconds``);
            local: ``folder``.

    Returns:
        A :class:`~mission_memory.trackers.base.Tracker`.

    Raises:
        ConfigError: unknown kind; Plane without an API key (names ``MISSION_MEMORY_PLANE_API_KEY``);
            missing or unexpected options, or an option the tracker rejects.
    """
    name = kind.strip().lower()
    if name not in _IMPLEMENTATIONS:
        raise ConfigError(f"unknown tracker {kind!r}; choose one of: {', '.join(TRACKER_KINDS)}")
    if name in ("plane", "github"):
        options = _with_settings(name, options, settings)
    module_name, class_name = _IMPLEMENTATIONS[name]
    cls = getattr(importlib.import_module(module_name), class_name)
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        raise ConfigError(f"tracker {name!r}: {exc}") from exc
    if name == "plane" and not options.get("api_key"):
        raise ConfigError("the Plane tracker needs an API key: set MISSION_MEMORY_PLANE_API_KEY")
    tracker: Tracker = cls(**options)
    return tracker


def _with_settings(name: str, options: dict[str, Any], settings: Settings | None) -> dict[str, Any]:
    """``options`` completed with the credential and the deadline of the settings."""
    from mission_memory.config import load_settings

    settings = settings or load_settings()
    filled = {"deadline_seconds": settings.tracker_deadline_seconds} | options
    if name == "plane":
        filled.setdefault("api_key", settings.plane_api_key)
    else:
        filled.setdefault("token", settings.github_token)
    return filled
