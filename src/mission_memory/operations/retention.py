"""Retention of domain events: events older than a configurable age are pruned, per mission and event type.

An operations mission receives events without end; a store that keeps them all slows pull (issue 24
measured pull p50/p95 of 627 / 1,167 ms at 100k events) and holds years of heartbeats nobody will ask
about. Only domain events are pruned here (docs/adr/0058): decisions, documents, notes, handover
briefs, commits and every other kind are never touched, whatever their age, and ``forget --mission``
remains the only way to delete a whole mission.

Rules, for each mission (or the one named):

* an event is due when its time is older than the retention of its type (``per_type`` days, else the
  default ``max_age``); ``0`` days keeps everything;
* resolved alerts and point events (log lines, reports) that are due are pruned, resolved ones first;
* an alert still open (fired and not resolved, :mod:`~mission_memory.operations.alert_state`) is kept
  however old: it is what the incoming shift must see;
* ``dry_run`` counts what would go and deletes nothing.

:class:`PruneSchedule` runs :func:`prune_events` in a background thread of the serving process every
``interval`` (the HTTP and stdio servers start one, docs/adr/0058).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from mission_memory.errors import InputError, MissionMemoryError
from mission_memory.operations.alert_state import open_alerts
from mission_memory.stores.base import MemoryStore

__all__ = ["EventPruneReport", "PruneSchedule", "prune_events"]

_BATCH = 5000


@dataclass
class EventPruneReport:
    """What one prune did (or would do, on a dry run).

    Attributes:
        dry_run: nothing was deleted.
        cutoff: the default cutoff (events before it were due, unless their type has its own).
        pruned: events deleted (or due), per mission.
        resolved: of them, resolved alerts.
        kept_open: due events kept because their alert is still open.
        by_type: events deleted (or due) per event type.
        type_cutoffs: the cutoff of each event type given its own retention (``--kind``).
    """

    dry_run: bool
    cutoff: datetime | None
    pruned: dict[str, int] = field(default_factory=dict)
    resolved: int = 0
    kept_open: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    type_cutoffs: dict[str, datetime] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Events deleted (or due) in all missions."""
        return sum(self.pruned.values())

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (``prune --json``)."""
        return {"dry_run": self.dry_run, "cutoff": self.cutoff.isoformat() if self.cutoff else None,
                "pruned": self.total, "by_mission": dict(self.pruned), "resolved": self.resolved,
                "kept_open": self.kept_open, "by_type": dict(sorted(self.by_type.items())),
                "type_cutoffs": {t: c.isoformat() for t, c in sorted(self.type_cutoffs.items())}}


def prune_events(
    store: MemoryStore,
    *,
    now: datetime,
    max_age: timedelta | None,
    per_type: Mapping[str, timedelta] | None = None,
    mission: str | None = None,
    dry_run: bool = False,
) -> EventPruneReport:
    """Delete the domain events due under the retention rules (module docstring).

    Args:
        store: the store.
        now: the clock (timezone-aware).
        max_age: the default retention (None or 0: events of types without their own are kept).
        per_type: retention per event type, overriding ``max_age``.
        mission: only this mission (default: every stored mission).
        dry_run: count only.

    Returns:
        The :class:`EventPruneReport`.

    Raises:
        InputError: a naive ``now``, a negative age, an unknown ``mission``.
        BackendUnavailable: the store cannot be read or written.
    """
    if now.tzinfo is None:
        raise InputError("the prune clock must be timezone-aware")
    rules = dict(per_type or {})
    if any(age < timedelta(0) for age in [*rules.values(), *([max_age] if max_age else [])]):
        raise InputError("a retention age must not be negative")
    default = max_age if max_age else None
    longest = max([*(a for a in rules.values() if a), *([default] if default else [])], default=None)
    report = EventPruneReport(dry_run=dry_run, cutoff=now - default if default else None,
                         type_cutoffs={t: now - age for t, age in rules.items()})
    stored = store.missions()
    if mission is not None and mission not in stored:
        raise InputError(f"no mission named {mission!r} is stored (missions: {', '.join(sorted(stored)) or 'none'})")
    if longest is None and not rules:
        return report
    shortest = min([*(a for a in rules.values()), *([default] if default else [])])
    for name in [mission] if mission is not None else sorted(stored):
        kept = {a.event_id for a in open_alerts(store, name)}
        due_resolved: list[str] = []
        due_other: list[str] = []
        for rows in store.event_retention_rows(name, now - shortest, _BATCH):
            for row in rows:
                age = rules.get(row.event_type, default)
                if not age or row.time >= now - age:
                    continue
                if row.event_id in kept:
                    report.kept_open += 1
                    continue
                (due_resolved if row.state == "resolved" else due_other).append(row.record_id)
                report.by_type[row.event_type] = report.by_type.get(row.event_type, 0) + 1
        due = due_resolved + due_other  # resolved ones first
        report.resolved += len(due_resolved)
        if due:
            report.pruned[name] = len(due)
            if not dry_run:
                for start in range(0, len(due), _BATCH):
                    store.delete(due[start:start + _BATCH])  # one transaction per batch
    return report


class PruneSchedule:
    """Runs a prune every ``interval`` in a daemon thread until :meth:`close`.

    Args:
        prune: the prune to run (e.g. ``lambda: memory.prune_events()``); its errors are kept in
            :attr:`last_error` and retried at the next tick.
        interval: time between prunes (the first runs one interval after :meth:`start`).
    """

    def __init__(self, prune: Callable[[], EventPruneReport], interval: timedelta) -> None:
        self._prune = prune
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs = 0
        """Prunes run so far."""
        self.last_report: EventPruneReport | None = None
        self.last_error: MissionMemoryError | None = None
        self.last_run: datetime | None = None

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="mm-prune", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval.total_seconds()):
            try:
                self.last_report = self._prune()
                self.last_error = None
            except MissionMemoryError as exc:  # a busy store: keep it, retry at the next tick
                self.last_error = exc
            self.runs += 1
            self.last_run = datetime.now(UTC)

    def close(self, timeout: float = 30.0) -> None:
        """Stop the thread (a prune in progress finishes)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
