"""One read-modify-write of a stored state value that several processes change (the open alerts, the
silences, the stored incident): read, change, compare-and-set, retried while another writer changed
the value first, so no writer's acknowledged change is lost (docs/adr/0091)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from mission_memory.errors import BackendUnavailable
from mission_memory.stores.base import StateStore

CHANGE_DEADLINE_S = 30.0
"""Seconds a change keeps retrying while other writers win the compare-and-set, in all."""


def change_state(store: StateStore, mission: str, key: str, change: Callable[[str | None], str | None], *,
                 what: str, deadline_s: float = CHANGE_DEADLINE_S) -> str | None:
    """Apply ``change`` (stored value or None -> new value, or None to write nothing) to ``key`` of
    ``mission`` by :meth:`~mission_memory.stores.base.StateStore.replace_state`, read again and retried
    on a concurrent change. ``change`` may run several times: it must depend on its argument alone.

    Returns:
        The value stored afterwards (the one read when ``change`` wrote nothing).

    Raises:
        BackendUnavailable: the store cannot be written, or ``what`` (named in the message) kept
            changing under other writers for ``deadline_s`` seconds.
    """
    deadline = time.monotonic() + deadline_s
    while True:
        raw = store.get_state(mission, key)
        new = change(raw)
        if new is None or new == raw:
            return raw
        if store.replace_state(mission, key, raw, new):
            return new
        if time.monotonic() > deadline:
            raise BackendUnavailable(f"mission {mission!r}: {what} kept changing under concurrent writers for "
                                     f"{deadline_s:g} s; try again")
        time.sleep(random.uniform(0.005, 0.05))  # another writer won: read its change and apply ours on top
