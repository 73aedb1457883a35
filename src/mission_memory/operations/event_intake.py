"""Event intake: domain events stored at once, their vectors made later by a background embedding queue.

An operations mission receives events faster than a small machine can embed them (multilingual-e5
manages a few dozen passages a second per core). So a write is cheap and immediate: the events'
records are stored in one transaction and are lexically searchable (BM25) and countable for the
escalation rate at once; their vectors follow from :class:`EmbeddingQueue`, which embeds every record
that has no vector of the current model, oldest first, in a background thread of the serving
process, and catches up on demand (the ``feed`` command, ``reindex``). Pull stays answerable while
the queue lags: a record without a vector is still found by BM25 and, in degraded mode, by
criticality. docs/adr/0036 records the choice.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError, MissionMemoryError
from mission_memory.fence import check_mission_name, quote_name
from mission_memory.mission_scope import confusable_mission, event_mission, known_missions
from mission_memory.operations.alert_state import update_open_alerts
from mission_memory.operations.domain_events import (
    EARLIER_VERSIONS_KEPT,
    DomainEvent,
    check_event_times,
    event_from_record,
    event_record,
    event_version,
    events_from_objects,
    version_id,
)
from mission_memory.operations.escalation import EscalationState, FloodPolicy
from mission_memory.operations.escalation_state import assess_mission
from mission_memory.operations.incident_state import sync_incident
from mission_memory.records import Record
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.write_path import embed_stored, forget_vector_backlog
from mission_memory.utc import aware_clock

__all__ = ["EmbeddingQueue", "EventPoster", "IntakeReport", "assess_and_sync", "record_events", "store_events"]


class EventPoster(Protocol):
    """Who posts events on a team server, as intake needs them (met by
    :class:`~mission_memory.teams.access_control.AccessContext`; operations does not import teams)."""

    @property
    def operator(self) -> str:
        """The operator every posted event is stored as."""

    def check_write_mission(self, mission: str) -> None:
        """Raise :class:`~mission_memory.errors.AccessDenied` unless they may post into ``mission``."""


@dataclass(frozen=True)
class IntakeReport:
    """What one intake did.

    Attributes:
        mission: the mission the events were recorded in.
        received: events received (duplicates of one id within the batch counted once).
        added: events stored for the first time.
        replaced: events that replaced the stored version of the same id (a resolved alert).
        unchanged: events already stored as they are.
        escalation: the mission's escalation state assessed after the write.
    """

    mission: str
    received: int
    added: int
    replaced: int
    unchanged: int
    escalation: EscalationState = field(default_factory=EscalationState)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (the HTTP receiver's answer, ``feed --json``)."""
        return {
            "mission": self.mission, "received": self.received, "added": self.added,
            "replaced": self.replaced, "unchanged": self.unchanged, "escalation": self.escalation.to_json(),
        }


def record_events(
    store: MemoryStore,
    events: Sequence[DomainEvent | dict[str, Any]],
    mission: str | None,
    *,
    configured_mission: str | None,
    now: datetime | None,
    max_future_skew: timedelta,
    policy: FloodPolicy,
    access: EventPoster | None = None,
    refuse_typo: bool = False,
) -> IntakeReport:
    """The intake rules of ``Memory.record_events``: check the events, the mission and the clock, store
    the events in one transaction (:func:`store_events`), then assess the mission's escalation.

    Every check runs before anything is written, so a refused batch stores nothing. Vectors are not
    made here (the caller wakes its :class:`EmbeddingQueue`).

    Args:
        store: the store written to (the whole store: ``access`` is checked here).
        events: :class:`~mission_memory.operations.domain_events.DomainEvent` objects or mappings of their fields.
        mission: the mission asked for, or None for ``configured_mission``, else the current folder's name
            (:func:`~mission_memory.mission_scope.event_mission`).
        configured_mission: ``settings.event_mission``.
        now: the escalation clock (timezone-aware; None: the current time).
        max_future_skew: how far after ``now`` an event may be dated (``settings.event_max_future_skew_s``).
        policy: the flood thresholds the escalation is assessed with.
        access: who posts on a team server: they may post only into their missions, and every event is
            stored as theirs, whatever ``operator`` the posted event names (docs/adr/0055). None: the local user.
        refuse_typo: refuse a mission that is not stored and is one typo from a stored one
            (:func:`~mission_memory.mission_scope.confusable_mission`).

    Returns:
        The :class:`IntakeReport` with the escalation state after the write.

    Raises:
        InputError: an invalid event (its index and field named), one dated more than ``max_future_skew``
            after the clock, a mission name that breaks the name rule, a refused typo, a naive ``now``.
        AccessDenied: ``access`` does not cover the mission (nothing is stored).
        BackendUnavailable: the store cannot be written (nothing is stored).
    """
    checked = events_from_objects(events)
    name = check_mission_name(event_mission(mission, configured_mission), "mission")
    if refuse_typo:
        stored = store.missions()
        if name not in stored and confusable_mission(name, stored) is not None:
            raise InputError(
                f"no mission named {quote_name(name)} is stored ({known_missions(name, stored)}): check the"
                " name, or say new_mission=1 to start it"
            )
    if access is not None:
        access.check_write_mission(name)
        # attribution comes from the token, never from the posted body (docs/adr/0055)
        checked = [e.model_copy(update={"operator": access.operator}) for e in checked]
    clock = aware_clock(now)
    check_event_times(checked, clock, max_future_skew)
    report = store_events(store, checked, name)
    return replace(report, escalation=assess_and_sync(store, name, policy, clock))


def assess_and_sync(store: MemoryStore, mission: str, policy: FloodPolicy, now: datetime) -> EscalationState:
    """Assess the mission's escalation at ``now`` and store it
    (:func:`~mission_memory.operations.escalation_state.assess_mission`), then bring its stored incident up
    to date (:func:`~mission_memory.operations.incident_state.sync_incident`: opened by a critical alert
    or a flood, closed when its alerts resolved and the flood is over). Returns the new state."""
    state = assess_mission(store, mission, policy, now)
    sync_incident(store, mission, state, now)
    return state


def store_events(store: MemoryStore, events: Sequence[DomainEvent], mission: str) -> IntakeReport:
    """Store ``events`` as domain-layer records of ``mission`` in one transaction, without vectors.

    An id names one event: its latest version is the current one (a later notification of the same
    alert, a resolved alert replacing its firing one), and every version it replaces, stored or
    earlier in the same batch, is kept in the record's ``earlier_versions`` (docs/adr/0078), so a
    re-sent id never makes memory forget what was reported under it. An identical re-send changes
    nothing. Alerts (events with a fingerprint) open or close their entry of the mission's open alerts
    (:mod:`~mission_memory.operations.alert_state`).

    Raises:
        InputError: ``mission`` is blank.
        BackendUnavailable: the store cannot be written (nothing is stored).
    """
    if not mission.strip():
        raise InputError("mission is blank: name the mission the events belong to")
    versions: dict[str, list[DomainEvent]] = {}
    for event in events:
        chain = versions.setdefault(event.id, [])
        if not chain or chain[-1] != event:
            chain.append(event)
    records = [_with_earlier_versions(mission, [], 0, chain[-1], chain[:-1]) for chain in versions.values()]
    # the stored version is read and folded in inside the store's write (no other writer between)
    outcome = store.upsert_records(records, merge=functools.partial(_merged_with_stored, mission))
    forget_vector_backlog(store, caught_up=False)  # a footer saying none wait is out of date (ADR 0063)
    latest = [chain[-1] for chain in versions.values()]
    if not store.read_only:
        update_open_alerts(store, mission, latest)  # firing until resolved (docs/adr/0057)
    return IntakeReport(
        mission=mission, received=len(latest), added=len(outcome.added),
        replaced=len(outcome.replaced), unchanged=len(outcome.unchanged),
    )


def _with_earlier_versions(mission: str, earlier: list[dict[str, Any]], omitted: int, current: DomainEvent,
                           batch_earlier: Sequence[DomainEvent]) -> Record:
    """The record of ``current`` carrying ``earlier`` (stored), then ``batch_earlier``, bounded by
    :data:`~mission_memory.operations.domain_events.EARLIER_VERSIONS_KEPT` (ADR 0078)."""
    history = [*earlier, *(event_version(e) for e in batch_earlier)]
    if len(history) > EARLIER_VERSIONS_KEPT:
        dropped = len(history) - EARLIER_VERSIONS_KEPT
        history = [history[0], *history[1 + dropped:]]
        omitted += dropped
    return event_record(current, mission, history, omitted)


def _merged_with_stored(mission: str, stored: Record, new: Record) -> Record:
    """The record replacing ``stored`` in its slot: ``new``'s current version, carrying the versions
    ``stored`` kept, then ``stored``'s own, then ``new``'s batch-earlier ones; ``stored`` itself when
    ``new``'s current version is the stored one (an identical re-send). Called by the store inside
    its write (:class:`~mission_memory.stores.base.RecordStore`)."""
    if version_id(stored) == version_id(new):
        return stored
    earlier = [dict(v) for v in stored.attributes.get("earlier_versions") or () if isinstance(v, dict)]
    omitted = int(stored.attributes.get("earlier_versions_omitted") or 0)
    try:
        earlier.append(event_version(event_from_record(stored)))
    except InputError:  # a stored record an older version wrote oddly: keep its words at least
        earlier.append({"time": stored.provenance.time.isoformat(), "criticality": stored.criticality,
                        "text": stored.text})
    earlier += [dict(v) for v in new.attributes.get("earlier_versions") or () if isinstance(v, dict)]
    omitted += int(new.attributes.get("earlier_versions_omitted") or 0)
    return _with_earlier_versions(mission, earlier, omitted, event_from_record(new), ())


class EmbeddingQueue:
    """Embeds records that have no vector of the current model, in the background or on demand.

    The queue is the store itself (:meth:`~mission_memory.stores.base.VectorIndex.ids_without_vector`),
    so nothing is lost when a process stops: the next catch-up, in any process, embeds what is left.

    Args:
        store: the store to read records from and write vectors to.
        embedder: returns the embedder (called on the worker thread, so loading it does not
            delay the write that woke the queue).
        batch: records per embedding call.
    """

    def __init__(self, store: MemoryStore, embedder: Callable[[], Embedder], batch: int = 32) -> None:
        self._store = store
        self._embedder = embedder
        self._batch = batch
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._drain_lock = threading.Lock()
        self._pulls = 0
        self._pulls_done = threading.Condition()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.embedded = 0
        """Records embedded by this queue since it was made."""
        self.last_error: MissionMemoryError | None = None
        """The last store or embedder error met by the background thread (it retries on the next wake)."""

    def notify(self) -> None:
        """Wake the background thread (starting it on first use) to embed what is pending."""
        with self._start_lock:
            if self._stop.is_set():
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mm-embedding-queue", daemon=True)
                self._thread.start()
        self._wake.set()

    @contextmanager
    def pull_priority(self) -> Iterator[None]:
        """Hold the background queue between batches while a pull runs, so the query's own embedding
        waits for one batch at most (pull p95 during a flood; ``benchmarks/bench_events.py``)."""
        with self._pulls_done:
            self._pulls += 1
        try:
            yield
        finally:
            with self._pulls_done:
                self._pulls -= 1
                self._pulls_done.notify_all()

    def _wait_for_pulls(self) -> None:
        with self._pulls_done:
            while self._pulls and not self._stop.is_set():
                self._pulls_done.wait(1.0)

    def pending(self, limit: int = 1_000_000) -> int:
        """Records without a vector of the current model (at most ``limit`` are counted)."""
        return len(self._store.ids_without_vector(self._embedder().model_id, limit))

    def drain(self, limit: int | None = None, *, background: bool = False) -> int:
        """Embed pending records now, oldest first, until none is left (or ``limit`` are done).

        Args:
            limit: stop after this many records (None: until none is left).
            background: give way to running pulls before each batch (the background thread does).

        Returns:
            How many records were embedded.

        Raises:
            BackendUnavailable: the store cannot be read or written.
        """
        done = 0
        with self._drain_lock:
            embedder = self._embedder()
            while not self._stop.is_set() and (limit is None or done < limit):
                if background:
                    self._wait_for_pulls()
                size = self._batch if limit is None else min(self._batch, limit - done)
                ids = self._store.ids_without_vector(embedder.model_id, size)
                if not ids:
                    forget_vector_backlog(self._store)  # caught up: the footer stops saying it lags
                    break
                stored = embed_stored(self._store, embedder, ids)
                done += stored
                self.embedded += stored
        return done

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.drain(background=True)
                self.last_error = None
            except MissionMemoryError as exc:  # a busy or damaged store: keep it, retry on the next wake
                self.last_error = exc

    def close(self, timeout: float = 30.0) -> None:
        """Stop the background thread (the batch in progress finishes; the rest waits for a catch-up)."""
        with self._start_lock:
            self._stop.set()
            self._wake.set()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
