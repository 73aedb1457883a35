"""Who may see what: an operator's access context and a store view that enforces it (docs/design.md §10, ADR 0045).

An :class:`AccessContext` says who is asking: the operator, their clearance (an
:class:`~mission_memory.records.AccessLevel`), their :class:`Role` and, optionally, the missions their
workflow views are scoped to (a team's missions). The rules, applied to every record any path returns:

* a record above the clearance is never returned (public < internal < restricted < secret);
* a practitioner record is returned only to its own operator and to leads;
* an archived rotation brief (``handover_brief``) only to its incoming operator and to leads (it quotes
  the outgoing operator's profile);
* with mission scoping, records of every layer only from those missions (docs/adr/0055: a mission's
  documents and events come from its own repositories and feeds, so sharing the domain layer across
  missions handed a scoped token the other missions' documents).

:class:`AccessScopedStore` wraps a :class:`~mission_memory.stores.base.MemoryStore`: searches get the
clearance and the practitioner rule pushed into their :class:`~mission_memory.stores.filters.SearchFilter`
(so restricted records do not crowd the top-k), and every read that returns records (``get``,
``records_of_kind``, ``iterate``) drops what the context may not see, as the last guard. ``Memory``'s
query, brief and export paths run on this view when given a context, so the CLI and the MCP server share
the enforcement (not the shells).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from mission_memory.errors import AccessDenied, InputError
from mission_memory.records import AccessLevel, Layer, Record, RecordKind
from mission_memory.stores.filters import ACCESS_ORDER, SearchFilter

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from mission_memory.retrieval_events import NewRetrievalEvent, RetrievalEvent
    from mission_memory.stores.base import (
        EventKind,
        EventRetentionRow,
        Hit,
        MemoryStore,
        RecordMerge,
        RecordPriors,
        UpsertOutcome,
    )

__all__ = ["AccessContext", "AccessScopedStore", "Role", "lower_access", "most_restricted"]


class Role(StrEnum):
    """An operator's role on a team server (ADR 0045).

    ``operator`` sees their own practitioner records; ``lead`` sees every operator's (a shift lead
    reviews the team's correction patterns). Neither role lifts the clearance.
    """

    OPERATOR = "operator"
    LEAD = "lead"


def lower_access(a: AccessLevel, b: AccessLevel) -> AccessLevel:
    """The less restricted of two access levels (the effective clearance of a request)."""
    return a if ACCESS_ORDER.index(a.value) <= ACCESS_ORDER.index(b.value) else b


def most_restricted(levels: Iterable[AccessLevel], default: AccessLevel = AccessLevel.INTERNAL) -> AccessLevel:
    """The most restricted of ``levels``; ``default`` when there are none."""
    ranked = sorted(levels, key=lambda level: ACCESS_ORDER.index(level.value))
    return ranked[-1] if ranked else default


@dataclass(frozen=True)
class AccessContext:
    """Who a request runs as, and so what it may see (docs/design.md §10).

    Attributes:
        operator: the operator's name (retrieval events and recorded corrections carry it).
        clearance: the highest access level they may read.
        role: :class:`Role`; leads see every operator's practitioner records.
        missions: the missions their workflow and practitioner views are scoped to; empty = all.
        handover_from: an outgoing operator whose practitioner records this context may read, set
            only while building the rotation brief for this operator (docs/design.md §6: the brief
            shows the predecessor's profile to the successor).
    """

    operator: str
    clearance: AccessLevel
    role: Role = Role.OPERATOR
    missions: frozenset[str] = field(default_factory=frozenset)
    handover_from: str | None = None

    @property
    def is_lead(self) -> bool:
        """True for a lead (sees every operator's practitioner records)."""
        return self.role is Role.LEAD

    def allows(self, record: Record) -> bool:
        """May this context be shown ``record``? (the rules of the module docstring)."""
        if ACCESS_ORDER.index(record.access_level.value) > ACCESS_ORDER.index(self.clearance.value):
            return False
        if self.missions and record.provenance.mission not in self.missions:
            return False
        if self.is_lead:
            return True
        if record.layer is Layer.PRACTITIONER:
            return record.operator is not None and record.operator in self.practitioner_operators()
        if record.kind is RecordKind.HANDOVER_BRIEF:
            return record.operator == self.operator
        return True

    def practitioner_operators(self) -> frozenset[str]:
        """Whose practitioner records a non-lead sees: their own (and the predecessor's in a brief)."""
        return frozenset(o for o in (self.operator, self.handover_from) if o)

    def check_mission(self, mission: str | None) -> None:
        """Refuse a query naming a mission outside the context's scope.

        Raises:
            InputError: ``mission`` is named, not ``*``, and not one of :attr:`missions`.
        """
        if self.missions and mission not in (None, "*") and mission not in self.missions:
            raise InputError(
                f"mission {mission!r} is outside the missions operator {self.operator!r} may read "
                f"({', '.join(sorted(self.missions))})"
            )

    def check_write_mission(self, mission: str) -> None:
        """Refuse a write (events, alerts) into a mission outside the context's scope.

        The events they post set the receiving mission's escalation state and degraded mode
        (docs/design.md §7), so a scoped operator may post only into their own missions, as they read
        only those.

        Raises:
            AccessDenied: the context is scoped to missions and ``mission`` is not one of them.
        """
        if self.missions and mission not in self.missions:
            raise AccessDenied(
                f"operator {self.operator!r} may not post events into mission {mission!r} "
                f"(their missions: {', '.join(sorted(self.missions))})"
            )

    def narrow(self, where: SearchFilter) -> SearchFilter:
        """``where`` with the clearance (and, for a non-lead with a single visible operator, the
        practitioner rule; for a context scoped to one mission, that mission) pushed into the filters
        the stores already evaluate, so records it may not see take no top-k slot."""
        wanted = where.filters.max_access
        clearance = self.clearance if wanted is None else lower_access(wanted, self.clearance)
        updates: dict[str, object] = {"max_access": clearance}
        if len(self.missions) == 1 and where.filters.mission in (None, "*"):
            updates["mission"] = next(iter(self.missions))
        if not self.is_lead and self.handover_from is None and where.filters.practitioner_operator is None:
            updates["practitioner_operator"] = self.operator
        return SearchFilter(where.layers, where.filters, **updates)

    def for_handover_from(self, outgoing: str | None) -> AccessContext:
        """This context, also allowed the outgoing operator's practitioner records (brief only)."""
        return AccessContext(self.operator, self.clearance, self.role, self.missions, outgoing)


class AccessScopedStore:
    """A :class:`~mission_memory.stores.base.MemoryStore` seen through an :class:`AccessContext`.

    Searches are narrowed (:meth:`AccessContext.narrow`); reads returning records drop those the
    context may not see (:meth:`AccessContext.allows`); retrieval events of other operators are
    hidden from non-leads (their queries are the other operator's working notes). Writes pass
    through unchanged.

    Args:
        store: the store to read through.
        access: who is reading.
    """

    def __init__(self, store: MemoryStore, access: AccessContext) -> None:
        self._store = store
        self.access = access
        self.read_only = store.read_only

    @property
    def schema_version(self) -> int:
        """As the wrapped store."""
        return self._store.schema_version

    def _visible(self, records: Iterable[Record]) -> list[Record]:
        return [r for r in records if self.access.allows(r)]

    def _visible_events(self, events: list[RetrievalEvent]) -> list[RetrievalEvent]:
        if self.access.is_lead:
            return events
        return [e for e in events if e.operator == self.access.operator]

    # -- reads that return records: filtered --------------------------------------------------

    def get(self, record_ids: Sequence[str]) -> dict[str, Record]:
        """Records by id that the context may see."""
        return {rid: r for rid, r in self._store.get(record_ids).items() if self.access.allows(r)}

    def iterate(self, batch: int = 256) -> Iterator[list[Record]]:
        """Every visible record, in batches of at most ``batch``."""
        for chunk in self._store.iterate(batch):
            visible = self._visible(chunk)
            if visible:
                yield visible

    def records_of_kind(
        self, kinds: Sequence[str], *, mission: str | None = None, operator: str | None = None,
        since: datetime | None = None, until: datetime | None = None, limit: int = 1000,
    ) -> list[Record]:
        """Visible records of ``kinds``; reads past hidden ones so up to ``limit`` are returned."""
        found = self._store.records_of_kind(
            kinds, mission=mission, operator=operator, since=since, until=until, limit=limit
        )
        visible = self._visible(found)
        if len(found) == limit and len(visible) < limit:
            deeper = self._store.records_of_kind(
                kinds, mission=mission, operator=operator, since=since, until=until, limit=limit * 4
            )
            visible = self._visible(deeper)[:limit]
        return visible

    # -- searches: narrowed ---------------------------------------------------------------------

    def event_kinds(self, where: SearchFilter) -> list[EventKind]:
        """As the wrapped store, under the narrowed filter (read through it when it cannot aggregate)."""
        from mission_memory.operations.event_groups import event_kinds

        return event_kinds(self._store, self.access.narrow(where))

    def most_critical(self, where: SearchFilter, limit: int) -> list[Hit]:
        """As the wrapped store, under the narrowed filter."""
        return self._store.most_critical(self.access.narrow(where), limit)

    def bm25_search(self, terms: Sequence[str], where: SearchFilter, limit: int) -> list[Hit]:
        """As the wrapped store, under the narrowed filter."""
        return self._store.bm25_search(terms, self.access.narrow(where), limit)

    def bm25_search_by_layer(self, terms: Sequence[str], where: SearchFilter, limit: int) -> dict[Layer, list[Hit]]:
        """As the wrapped store, under the narrowed filter."""
        return self._store.bm25_search_by_layer(terms, self.access.narrow(where), limit)

    def phrase_search(
        self, phrases: Sequence[str], where: SearchFilter, limit: int, title_only: bool = False
    ) -> list[str]:
        """As the wrapped store, under the narrowed filter."""
        return self._store.phrase_search(phrases, self.access.narrow(where), limit, title_only)

    def dense_search_by_layer(
        self, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int, per_kind: bool = False
    ) -> dict[Layer, list[Hit]]:
        """As the wrapped store, under the narrowed filter."""
        return self._store.dense_search_by_layer(query, model_id, self.access.narrow(where), limit, per_kind)

    # -- retrieval events: own only, unless a lead -----------------------------------------------

    def retrieval_events(self, limit: int = 100) -> list[RetrievalEvent]:
        """The latest events this context may see."""
        return self._visible_events(self._store.retrieval_events(limit))

    def retrieval_events_matching(
        self, *, session_id: str | None = None, operator: str | None = None, mission: str | None = None,
        since: datetime | None = None, until: datetime | None = None, limit: int = 100,
    ) -> list[RetrievalEvent]:
        """Matching events this context may see."""
        return self._visible_events(self._store.retrieval_events_matching(
            session_id=session_id, operator=operator, mission=mission, since=since, until=until, limit=limit
        ))

    # -- everything else: passed through -------------------------------------------------------

    def log_retrieval_event(self, event: NewRetrievalEvent) -> RetrievalEvent:
        """As the wrapped store."""
        return self._store.log_retrieval_event(event)

    def count_retrieval_events(self) -> int:
        """As the wrapped store."""
        return self._store.count_retrieval_events()

    def put_retrieval_events(self, events: Sequence[RetrievalEvent]) -> int:
        """As the wrapped store (import writes events as they were)."""
        return self._store.put_retrieval_events(events)

    def upsert_records(self, records: Sequence[Record], *, merge: RecordMerge | None = None) -> UpsertOutcome:
        """As the wrapped store."""
        return self._store.upsert_records(records, merge=merge)

    def upsert(
        self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str
    ) -> UpsertOutcome:
        """As the wrapped store."""
        return self._store.upsert(records, vectors, model_id)

    def relocate(self, moves: Mapping[str, str]) -> int:
        """As the wrapped store."""
        return self._store.relocate(moves)

    def delete(self, record_ids: Iterable[str]) -> int:
        """As the wrapped store."""
        return self._store.delete(record_ids)

    def event_retention_rows(self, mission: str, until: datetime, batch: int = 5000) -> Iterator[list[EventRetentionRow]]:
        """As the wrapped store (what pruning reads; it deletes as :meth:`delete` does)."""
        return self._store.event_retention_rows(mission, until, batch)

    def known_ids(self, record_ids: Iterable[str]) -> set[str]:
        """As the wrapped store."""
        return self._store.known_ids(record_ids)

    def ids_by_source_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """Record id by source key, for the stored keys whose record the context may see."""
        found = self._store.ids_by_source_keys(keys)
        visible = self.get(list(found.values()))
        return {key: rid for key, rid in found.items() if rid in visible}

    def priors_of(self, record_ids: Sequence[str]) -> dict[str, RecordPriors]:
        """As the wrapped store (priors carry no content)."""
        return self._store.priors_of(record_ids)

    def delete_missing(
        self, mission: str, kinds: Sequence[str], keep_source_keys: Iterable[str],
        *, spare: Callable[[Record], bool] | None = None,
    ) -> int:
        """As the wrapped store."""
        return self._store.delete_missing(mission, kinds, keep_source_keys, spare=spare)

    def count_by_component(
        self, kinds: Sequence[str], *, mission: str | None = None, after: datetime, through: datetime
    ) -> dict[str, int]:
        """As the wrapped store (counts only)."""
        return self._store.count_by_component(kinds, mission=mission, after=after, through=through)

    def delete_mission(self, mission: str) -> dict[str, int]:
        """As the wrapped store."""
        return self._store.delete_mission(mission)

    def counts(self) -> dict[str, dict[str, int]]:
        """As the wrapped store (counts only)."""
        return self._store.counts()

    def count_kind(self, mission: str, kind: str) -> int:
        """As the wrapped store (counts only)."""
        return self._store.count_kind(mission, kind)

    def missions(self) -> dict[str, int]:
        """Record counts by mission, of the missions the context is scoped to (all for an unscoped one):
        an error listing the stored missions names no other (``record_decision``, ``record_correction``)."""
        return {m: n for m, n in self._store.missions().items() if self._in_scope(m)}

    def mission_names(self) -> frozenset[str]:
        """The stored missions' names (:func:`~mission_memory.stores.base.stored_mission_names`) in the
        context's scope."""
        from mission_memory.stores.base import stored_mission_names

        return frozenset(m for m in stored_mission_names(self._store) if self._in_scope(m))

    def _in_scope(self, mission: str) -> bool:
        return not self.access.missions or mission in self.access.missions

    def components(self, limit: int = 30, *, mission: str | None = None) -> dict[str, int]:
        """The stored components (of ``mission``; None: of every mission) holding a record the context
        may see, most records first (the wrapped store's counts; read among its 4 x ``limit`` largest)."""
        largest = self._store.components(limit * 4, mission=mission)
        return dict(list((c, n) for c, n in largest.items() if self.has_component(c, mission=mission))[:limit])

    def has_component(self, component: str, *, mission: str | None = None) -> bool:
        """Whether ``component`` is stored (in ``mission``; None: in any) and holds a record the context
        may see: a folder of restricted files only does not exist for a lower clearance (docs/adr/0055)."""
        if not self._store.has_component(component, mission=mission):
            return False
        where = SearchFilter(tuple(Layer), component=component, mission=mission)
        hits = self._store.most_critical(self.access.narrow(where), 50)
        return bool(self.get([h.record_id for h in hits]))  # get applies every rule of the context

    def hides_component(self, component: str) -> bool:
        """Whether records carry ``component`` but none the context may see: a write naming it is refused
        as one naming a component that is not stored (it would make it visible to this reader)."""
        return self._store.has_component(component) and not self.has_component(component)

    def put_vectors(self, record_ids: Sequence[str], vectors: npt.NDArray[np.float32], model_id: str) -> None:
        """As the wrapped store."""
        self._store.put_vectors(record_ids, vectors, model_id)

    def vectors_for(self, record_ids: Sequence[str], model_id: str) -> dict[str, npt.NDArray[np.float32]]:
        """As the wrapped store (vectors of records the caller already holds)."""
        return self._store.vectors_for(record_ids, model_id)

    def ids_without_vector(self, model_id: str, limit: int, *, mission: str | None = None) -> list[str]:
        """As the wrapped store."""
        return self._store.ids_without_vector(model_id, limit, mission=mission)

    def delete_vectors_not_of(self, model_id: str) -> int:
        """As the wrapped store."""
        return self._store.delete_vectors_not_of(model_id)

    def vector_models(self) -> dict[str, int]:
        """As the wrapped store."""
        return self._store.vector_models()

    def get_state(self, mission: str, key: str) -> str | None:
        """As the wrapped store."""
        return self._store.get_state(mission, key)

    def set_state(self, mission: str, key: str, value: str) -> None:
        """As the wrapped store."""
        self._store.set_state(mission, key, value)

    def replace_state(self, mission: str, key: str, expected: str | None, value: str) -> bool:
        """As the wrapped store."""
        return self._store.replace_state(mission, key, expected, value)

    def state_items(self, mission: str | None = None) -> list[tuple[str, str, str]]:
        """As the wrapped store (state holds bookmarks and settings, not records)."""
        return self._store.state_items(mission)

    def ensure_sound(self) -> None:
        """As the wrapped store."""
        self._store.ensure_sound()

    def close(self) -> None:
        """Does nothing: the wrapped store belongs to its ``Memory``."""
