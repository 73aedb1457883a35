"""Push under escalation (docs/design.md §7, issue 10 item 4): the refresh queue by criticality while degraded.

A scheduled refresh every 24 hours is too slow for a crisis. While the mission's escalation state
(:mod:`mission_memory.operations.escalation_state`, persisted by event intake) is degraded, a refresh pass:

* links tasks to escalating sectors by their labels (``north`` or ``sector:north``, case-insensitive);
* makes linked tasks due at once even when their schedule says later — bounded: at most
  :data:`MAX_FORCED_PER_PASS` per pass, and a task is not forced again within
  :data:`FORCED_MIN_INTERVAL` of its last refresh;
* orders the due tasks by criticality first — a task's criticality is that of the most critical event
  of its escalating sectors since one window before the flood began (0 for an unlinked task) — and by
  the usual activity priority after it.

In normal mode nothing changes. Each forced or reordered task says why in the pass report and in
``refresh status``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from mission_memory.operations.escalation import EscalationMode, EscalationState
from mission_memory.operations.escalation_state import load_state
from mission_memory.records import Layer
from mission_memory.refresh.schedule import ActivitySignals, DueTask, activity_score, refresh_interval
from mission_memory.stores.base import Hit, StateStore
from mission_memory.stores.filters import SearchFilter
from mission_memory.trackers.base import Task

__all__ = ["FORCED_MIN_INTERVAL", "MAX_FORCED_PER_PASS", "EscalationPlan", "plan_escalation"]

MAX_FORCED_PER_PASS = 3
"""Tasks made due ahead of their schedule in one pass, at most (the refresher's load stays bounded)."""

FORCED_MIN_INTERVAL = timedelta(hours=1)
"""A task is not forced due again within this time of its last refresh."""


class _CriticalityStore(StateStore, Protocol):
    def most_critical(self, where: SearchFilter, limit: int) -> list[Hit]: ...


@dataclass(frozen=True)
class EscalationPlan:
    """How an escalation changes one refresh pass.

    Attributes:
        state: the mission's escalation state (normal: the plan changes nothing).
        sectors: escalating sectors each task is linked to, by task key.
        criticality: each linked task's criticality in [0, 1], by task key.
    """

    state: EscalationState = field(default_factory=EscalationState)
    sectors: dict[str, tuple[str, ...]] = field(default_factory=dict)
    criticality: dict[str, float] = field(default_factory=dict)

    @property
    def degraded(self) -> bool:
        """True when the pass runs under escalation."""
        return self.state.mode is EscalationMode.DEGRADED

    def forced(
        self, candidates: Iterable[tuple[str, datetime | None, ActivitySignals]], due_keys: set[str], now: datetime
    ) -> list[DueTask]:
        """Linked tasks not due by their schedule that become due now (bounded, most critical first).

        Args:
            candidates: ``(task_key, last_refresh or None, signals)`` per task.
            due_keys: tasks already due by their schedule.
            now: the pass's clock.
        """
        if not self.degraded:
            return []
        out = []
        for key, last_refresh, signals in candidates:
            if key in due_keys or key not in self.sectors:
                continue
            if last_refresh is not None and now - last_refresh < FORCED_MIN_INTERVAL:
                continue
            out.append(DueTask(key, activity_score(signals), refresh_interval(signals), last_refresh))
        out.sort(key=lambda d: (-self.criticality.get(d.task_key, 0.0), -d.priority, d.task_key))
        return out[:MAX_FORCED_PER_PASS]

    def order(self, due: Sequence[DueTask]) -> list[DueTask]:
        """``due`` by criticality first while degraded (stable: activity order among equals)."""
        if not self.degraded:
            return list(due)
        return sorted(due, key=lambda d: -self.criticality.get(d.task_key, 0.0))

    def explain(self, key: str, forced: bool) -> dict[str, Any]:
        """What the escalation did to one task, for the pass report (empty in normal mode or unlinked)."""
        if not self.degraded or key not in self.sectors:
            return {}
        return {"escalation": {"sectors": list(self.sectors[key]), "criticality": self.criticality[key],
                               "forced_due": forced}}

    def to_json(self) -> dict[str, Any]:
        """The plan as ``refresh status`` shows it."""
        return {**self.state.to_json(), "linked_tasks": {
            key: {"sectors": list(sectors), "criticality": self.criticality[key]} for key, sectors in self.sectors.items()
        }}


def _linked(task: Task, sectors: Iterable[str]) -> tuple[str, ...]:
    labels = {label.strip().lower() for label in task.labels}
    labels |= {label.split(":", 1)[1].strip() for label in labels if label.startswith("sector:")}
    return tuple(sorted(s for s in sectors if s.lower() in labels))


def plan_escalation(store: _CriticalityStore, mission: str, tasks: Sequence[Task], now: datetime) -> EscalationPlan:
    """The plan for a pass of ``mission`` at ``now``: which tasks escalating sectors touch, how critical.

    Args:
        store: where the escalation state and the events are.
        mission: the mission whose escalation state applies.
        tasks: the pass's tasks.
        now: the pass's clock.
    """
    state, _ = load_state(store, mission)
    if state.mode is not EscalationMode.DEGRADED or not state.escalating_sectors:
        return EscalationPlan(state)
    start = (state.since or now) - state.window
    sectors: dict[str, tuple[str, ...]] = {}
    criticality: dict[str, float] = {}
    worst: dict[str, float] = {}
    for task in tasks:
        linked = _linked(task, state.escalating_sectors)
        if not linked:
            continue
        for sector in linked:
            if sector not in worst:
                hits = store.most_critical(
                    SearchFilter((Layer.DOMAIN,), mission=mission, sector=sector, since=start), 1
                )
                worst[sector] = hits[0].score if hits else 0.0
        sectors[task.key] = linked
        criticality[task.key] = max(worst[s] for s in linked)
    return EscalationPlan(state, sectors, criticality)
