"""The CLI's one way to open the memory: :func:`open_memory`, typed, so ``mypy --strict`` checks every
command's calls into :class:`~mission_memory.api.Memory`.

``mission_memory.api`` (and the store, the tokenizer and the settings behind it) is imported when a
command opens the memory, not when the CLI starts: ``--help`` and commands that never open it stay
quick (the import below is for the type checker only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mission_memory.api import Memory
    from mission_memory.config import Settings

__all__ = ["open_memory"]


def open_memory(settings: Settings | None = None) -> Memory:
    """The memory named by ``settings``, default the environment's (``MISSION_MEMORY_*``); use it in ``with``.

    Raises:
        ConfigError: invalid settings (the variable named).
        BackendUnavailable, StoreDamaged: the store cannot be opened.

    A write that waits for another process's write lock says so on stderr after about two seconds
    (:attr:`~mission_memory.stores.sqlite.SqliteStore.lock_wait_notice`).
    """
    from mission_memory.api import Memory
    from mission_memory.cli.output import err_console

    memory = Memory.open(settings)
    if hasattr(memory.store, "lock_wait_notice"):  # a store with a write lock (SQLite); stdout stays clean
        memory.store.lock_wait_notice = lambda line: err_console.print(line, markup=False, highlight=False)
    return memory
