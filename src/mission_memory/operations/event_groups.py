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

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from mission_memory.operations.domain_events import DomainEvent
from mission_memory.records import Record, RecordKind

__all__ = ["EventGroup", "event_template", "group_events", "group_key", "group_key_of_record", "group_members"]

_MASKS = (
    re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE),  # URLs
    re.compile(r"(?<![\w/])(?:[\w.-]*/)+[\w.@:-]+"),  # paths, host/ip pairs, class paths with slashes
    re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE),  # UUIDs
    re.compile(r"\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}\b", re.IGNORECASE),  # IPv6
    re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"),  # IPv4 with an optional port
    re.compile(r"\b0x[0-9a-f]+\b|\b[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b", re.IGNORECASE),  # hex
    re.compile(r"\S*\d\S*"),  # any token holding a digit: counters, ids, ports, times
)
_MASK = "<*>"


@lru_cache(maxsize=32_768)
def event_template(text: str) -> str:
    """``text`` with its variable parts replaced by ``<*>``, whitespace collapsed, lower-cased.

    Kept for the last 32,768 texts seen: a flood repeats its texts, and every degraded pull groups the
    same events again (docs/adr/0057).

    Args:
        text: an event's text (any language; only ASCII digits, hex, addresses and paths are masked).

    Returns:
        The template; two repeats of one message differing only in numbers, ids, hexadecimal values,
        IP addresses or paths have the same one.
    """
    out = text
    for mask in _MASKS:
        out = mask.sub(_MASK, out)
    out = re.sub(r"(?:<\*>[\s,:;=/-]*)+<\*>", _MASK, out)  # runs of masks are one variable part
    return " ".join(out.split()).lower()


def group_key(event: DomainEvent) -> tuple[str, str, str]:
    """``(type, sector, template)`` of ``event``, whitespace-normalised."""
    return (" ".join(event.type.split()), " ".join(event.sector.split()), event_template(event.text))


def group_key_of_record(record: Record) -> str | None:
    """The group key of a domain-event record as one string (None for other kinds).

    A record with a source fingerprint is keyed by it (``fingerprint:<fp>``), else by
    ``type · sector · template`` of its stored attributes and text.
    """
    if record.kind is not RecordKind.DOMAIN_EVENT:
        return None
    a = record.attributes
    if a.get("fingerprint"):
        return f"fingerprint:{a['fingerprint']}"
    kind = " ".join(str(a.get("event_type") or "event").split())
    sector = " ".join(str(a.get("sector") or record.component or "").split())
    return f"{kind}\x1f{sector}\x1f{event_template(record.text)}"


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
