"""Repeats of one event grouped into one entry: same source fingerprint, or same type, sector and text template.

Real incidents are one error repeated hundreds of times beside a few distinct ones (loghub's Hadoop
network failure: 147 of 152 critical lines are one retry loop's error). Ranking those lines one by one
lets the repeats fill every slot; an on-call engineer reads them as one line with a count. This module
owns that grouping (docs/adr/0057):

* :func:`event_template` — an event text with its variable parts masked (``<*>``): URLs and paths,
  IPv4/IPv6 addresses, hexadecimal numbers, UUIDs, and every token holding a digit (counters, ids,
  attempt and container names, ports, times). It is the normalisation log parsers such as Drain apply
  before clustering (He et al., "Drain: An Online Log Parsing Approach with Fixed Depth Tree", ICWS 2017),
  done with a few fixed masks instead of a learnt tree;
* :func:`group_key` — ``(type, sector, template)``; :func:`group_events` joins events sharing that key
  *or* a source fingerprint (an Alertmanager fingerprint: its notifications are one alert whatever
  their wording) into :class:`EventGroup` s, each with its count, first and last seen, highest
  criticality and a representative event (the most critical, newest among equals).

Groups are ordered most critical first, then by last seen, newest first: the order in which triage and
the crisis timeline choose among them, so every distinct critical kind comes before any repeat.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mission_memory.operations.domain_events import DomainEvent
from mission_memory.operations.event_template import event_template, kind_key
from mission_memory.records import Record, RecordKind
from mission_memory.stores.base import EventKind, EventKindIndex, MemoryStore, sort_event_kinds
from mission_memory.stores.filters import SearchFilter

__all__ = [
    "EventGroup",
    "event_kinds",
    "event_template",
    "group_events",
    "group_key",
    "group_key_of_record",
    "group_members",
    "kind_key",
    "kind_members",
    "kind_note",
]

def group_key(event: DomainEvent) -> tuple[str, str, str]:
    """``(type, sector, template)`` of ``event``, whitespace-normalised."""
    return (" ".join(event.type.split()), " ".join(event.sector.split()), event_template(event.text))


def group_key_of_record(record: Record) -> str | None:
    """The kind key of a domain-event record (None for other kinds): the ``kind_key`` intake stored
    (:func:`~mission_memory.operations.event_template.kind_key`), or, for a record stored before it was kept,
    the same key computed from its fingerprint, else its type, sector and text."""
    if record.kind is not RecordKind.DOMAIN_EVENT:
        return None
    a = record.attributes
    stored = a.get("kind_key")
    if isinstance(stored, str) and stored:
        return stored
    return kind_key(str(a.get("event_type") or "event"), str(a.get("sector") or record.component or ""), record.text,
                    str(a["fingerprint"]) if a.get("fingerprint") else None)


@dataclass(frozen=True)
class EventGroup:
    """Repeats of one event.

    Attributes:
        key: ``(type, sector, template)`` of the representative.
        events: the members, newest first.
        representative: the most critical member, newest among equals (the one shown and cited first).
        count: how many members.
        first_seen, last_seen: the oldest and newest member's time.
        max_criticality: the highest member criticality.
    """

    key: tuple[str, str, str]
    events: tuple[DomainEvent, ...]
    representative: DomainEvent

    @property
    def count(self) -> int:
        """How many events the group holds."""
        return len(self.events)

    @property
    def first_seen(self) -> datetime:
        """The oldest member's time."""
        return min(e.time for e in self.events)

    @property
    def last_seen(self) -> datetime:
        """The newest member's time."""
        return max(e.time for e in self.events)

    @property
    def max_criticality(self) -> float:
        """The highest criticality of the group."""
        return max(e.criticality for e in self.events)


def _fingerprint(event: DomainEvent) -> str | None:
    return getattr(event, "fingerprint", None)


def group_events(events: Iterable[DomainEvent]) -> list[EventGroup]:
    """Group repeats: events sharing :func:`group_key` or a source fingerprint are one group.

    Args:
        events: any order; one event per id (a later duplicate id replaces the earlier).

    Returns:
        The groups, most critical first, then last seen newest first, then by key (deterministic).
    """
    by_id = {e.id: e for e in events}
    ordered: Sequence[DomainEvent] = sorted(by_id.values(), key=lambda e: (e.time, e.id), reverse=True)
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    first_of: dict[object, str] = {}
    for event in ordered:
        parent[event.id] = event.id
        fp = _fingerprint(event)
        for key in (("k", *group_key(event)), ("f", fp) if fp else None):
            if key is None:
                continue
            other = first_of.setdefault(key, event.id)
            a, b = root(other), root(event.id)
            if a != b:
                parent[b] = a
    members: dict[str, list[DomainEvent]] = {}
    for event in ordered:
        members.setdefault(root(event.id), []).append(event)
    groups = []
    for group in members.values():
        best = max(group, key=lambda e: (e.criticality, e.time, e.id))
        groups.append(EventGroup(key=group_key(best), events=tuple(group), representative=best))
    groups.sort(key=lambda g: (-g.max_criticality, -g.last_seen.timestamp(), g.key))
    return groups


def group_members(group: EventGroup) -> str:
    """Every member of ``group`` cited compactly: ``the N from event:<oldest> to event:<newest>``.

    The members are the events of the group's kind from the oldest to the newest (by time, then id), all
    of them: a reader, or a benchmark counting citations, can take the phrase as citing each (docs/adr/0057).
    Write it only for a group read whole (every event of its kind between those two was read).

    Example: ``the 70 from event:hadoop-rm-0 to event:hadoop-rm-69``.
    """
    oldest, newest = group.events[-1], group.events[0]
    return f"the {group.count} from event:{oldest.id} to event:{newest.id}"


_FALLBACK_READ = 2000
"""Records read per page by :func:`event_kinds` from a store without :class:`~mission_memory.stores.base.EventKindIndex`."""


def event_kinds(store: MemoryStore, where: SearchFilter) -> list[EventKind]:
    """Every kind of domain event passing ``where``, exact over all of them (docs/adr/0088).

    A store with :class:`~mission_memory.stores.base.EventKindIndex` aggregates in the store; for
    another every passing event is read (by :meth:`~mission_memory.stores.base.RecordStore.most_critical`
    with no cut, then in pages) and folded here: the same answer, slower.

    Returns:
        The kinds, most critical first, then last seen newest first, then by key.
    """
    if isinstance(store, EventKindIndex):
        return store.event_kinds(where)
    hits = store.most_critical(where, 2**62)
    out: dict[str, tuple[int, float, float, float, tuple[float, float, str], tuple[float, str, str], tuple[float, str, str]]] = {}
    for start in range(0, len(hits), _FALLBACK_READ):
        records = store.get([h.record_id for h in hits[start:start + _FALLBACK_READ]])
        for rid, record in records.items():
            if record.kind is not RecordKind.DOMAIN_EVENT:
                continue
            stored = record.attributes.get("kind_key")  # as the stores: no key stored, a kind of its own
            key = stored if isinstance(stored, str) and stored else f"record:{rid}"
            when, crit, ref = record.provenance.time.timestamp(), record.criticality, record.provenance.ref
            seen = out.get(key)
            if seen is None:
                out[key] = (1, when, when, crit, (crit, when, rid), (when, rid, ref), (when, rid, ref))
                continue
            n, first, last, top, best, oldest, newest = seen
            out[key] = (n + 1, min(first, when), max(last, when), max(top, crit), max(best, (crit, when, rid)),
                        min(oldest, (when, rid, ref)), max(newest, (when, rid, ref)))
    return sort_event_kinds(
        EventKind(key=key, count=n, first_seen=datetime.fromtimestamp(first, UTC),
                  last_seen=datetime.fromtimestamp(last, UTC), max_criticality=top, best_id=best[2],
                  oldest_ref=oldest[2], newest_ref=newest[2])
        for key, (n, first, last, top, best, oldest, newest) in out.items()
    )


def kind_note(kind: EventKind) -> str:
    """The entry heading's note for the event standing for ``kind`` (numbers and times only; "" for one event).

    Example: ``repeated 5000× · first 03:00:00 · last 03:08:59 UTC · highest criticality 0.80``.
    """
    if kind.count < 2:
        return ""
    return (f"repeated {kind.count}× · first {kind.first_seen.astimezone(UTC):%H:%M:%S} · last "
            f"{kind.last_seen.astimezone(UTC):%H:%M:%S} UTC · highest criticality {kind.max_criticality:.2f}")


def kind_members(kind: EventKind) -> str:
    """Every event of ``kind`` cited compactly: ``the N from event:<oldest> to event:<newest>`` (as :func:`group_members`)."""
    return f"the {kind.count} from {kind.oldest_ref} to {kind.newest_ref}"
