"""mission-memory: memory for long-horizon agents whose human operators rotate.

The package import is deliberately lazy: ``import mission_memory`` costs nothing beyond this
module, so the prompt-capture hook (stdlib only) and the CLI start fast. ``Memory``, the one
core API every shell calls, is imported on first attribute access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Memory", "__version__"]

if TYPE_CHECKING:
    from mission_memory.api import Memory


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from mission_memory.api import Memory

        return Memory
    raise AttributeError(f"module 'mission_memory' has no attribute {name!r}")
