"""The escalation state of each mission, kept in the state store so the CLI, the server and the hook agree.

:mod:`mission_memory.operations.escalation` computes rates, the mode and α as pure functions; this module
reads the event counts of the sliding window from the store
(:meth:`~mission_memory.stores.base.RecordStore.count_by_component` over domain events), runs
:func:`~mission_memory.operations.escalation.assess_escalation` against the previous state, and writes the
result, with the :class:`~mission_memory.operations.escalation.FloodPolicy` it was judged by, under the
mission's ``escalation`` key. Pull reads it back (:func:`current_state`) without the settings: the
stored policy lets a stale state (no assessment for a whole window) be brought up to date on read.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from mission_memory.errors import InputError
from mission_memory.operations.escalation import EscalationState, FloodPolicy, RateSnapshot, assess_escalation
from mission_memory.records import RecordKind
from mission_memory.stores.base import MemoryStore, StateStore

__all__ = ["STATE_KEY", "assess_mission", "current_state", "load_state", "window_rates"]

STATE_KEY = "escalation"
"""The state-store key (per mission) holding the escalation state."""


def window_rates(store: MemoryStore, mission: str | None, at: datetime, window: timedelta) -> RateSnapshot:
    """Domain events of ``mission`` (every mission when None) in ``(at − window, at]``, per sector.

    Raises:
        InputError: ``at`` is naive.
    """
    if at.tzinfo is None:
        raise InputError("the escalation clock must be timezone-aware")
    by_sector = store.count_by_component([RecordKind.DOMAIN_EVENT.value], mission=mission, after=at - window, through=at)
    return RateSnapshot(at=at, window=window, total=sum(by_sector.values()), by_sector=by_sector)


def load_state(store: StateStore, mission: str) -> tuple[EscalationState, FloodPolicy | None]:
    """The stored state of ``mission`` and the policy it was judged by (a fresh state and None if none).

    Raises:
        InputError: the stored value is not readable (the message names the mission).
    """
    raw = store.get_state(mission, STATE_KEY)
    if raw is None:
        return EscalationState(), None
    try:
        data = json.loads(raw)
        policy = FloodPolicy(
            window=timedelta(seconds=float(data["policy"]["window_s"])),
            flood_start=float(data["policy"]["flood_start"]),
            flood_end=float(data["policy"]["flood_end"]),
            operators_on_duty=int(data["policy"]["operators_on_duty"]),
        )
        return EscalationState.from_json(data["state"]), policy
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"mission {mission!r}: stored escalation state is not readable ({exc})") from None


def assess_mission(
    store: MemoryStore, mission: str, policy: FloodPolicy, now: datetime, *, persist: bool = True
) -> EscalationState:
    """Assess ``mission`` at ``now`` from its stored state and the window's events; store the result.

    Args:
        store: where the events and the state live.
        mission: the mission.
        policy: thresholds, window and operators on duty (from the settings).
        now: the clock (timezone-aware); replays and tests choose it.
        persist: write the new state (not on a read-only store).

    Returns:
        The new state (docs/design.md §7, docs/adr/0022).
    """
    previous, _ = load_state(store, mission)
    state = assess_escalation(previous, window_rates(store, mission, now, policy.window), policy)
    if persist and not store.read_only:
        payload = {
            "state": state.to_json(),
            "policy": {
                "window_s": policy.window.total_seconds(), "flood_start": policy.flood_start,
                "flood_end": policy.flood_end, "operators_on_duty": policy.operators_on_duty,
            },
        }
        store.set_state(mission, STATE_KEY, json.dumps(payload, sort_keys=True))
    return state


def current_state(store: MemoryStore, mission: str, now: datetime) -> EscalationState:
    """The state of ``mission`` as pull should use it at ``now``; reading never stores a state.

    The stored state when ``now`` is its assessment's time; otherwise the state is assessed at ``now``
    with the stored policy, the window's events counted in the store at ``now`` (cheap: the per-minute
    kind summaries, docs/adr/0088), from the stored state when ``now`` is later (the flood's start is
    kept while it holds) and from a fresh one when it is earlier (a question about a replayed history
    at another time: the hysteresis before ``now`` is then not known), and *not* stored: only intake and
    ``escalation status`` write the state, so a replay's state is never overwritten by a query at
    another time (docs/adr/0058). So a digest or a brief shows the rate of its own window, the one its
    sector lines count, and a mode consistent with it, never the figures of the last intake.
    """
    state, policy = load_state(store, mission)
    if policy is None or state.assessed_at is None:
        return state
    if now == state.assessed_at:
        return state
    previous = state if now > state.assessed_at else EscalationState()
    return assess_escalation(previous, window_rates(store, mission, now, policy.window), policy)
