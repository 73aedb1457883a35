"""Storage protocols: what the core needs from a backend, named by capability (docs/design.md §10).

The core (``Memory``, pull, ingest, refresh, the spend ledger) is typed against these protocols
only; :mod:`mission_memory.stores.registry` is the one module that names a concrete backend.
Every key that crosses this boundary is a record id (the content-derived id of
:class:`~mission_memory.records.Record`), never a backend's own row id, so a record can live in
one engine and its vector in another.

* :class:`RecordStore` — records: upsert by record id (replacing by source key), delete, get, iterate;
* :class:`LexicalIndex` — BM25 and exact-phrase search over record titles and texts;
* :class:`VectorIndex` — one vector per record per embedding model, exact cosine search;
* :class:`RetrievalEventLog` — every pull query as a :class:`~mission_memory.retrieval_events.RetrievalEvent`;
* :class:`StateStore` — small named values per mission (ingest bookmarks, refresh state, spend);
* :class:`MemoryStore` — all five, plus the store-wide operations the core calls (open mode, health).

The embedded default (``SqliteStore``) implements :class:`MemoryStore` in one SQLite file. The
contract suite in ``tests/stores/contract/`` runs every behaviour below against every registered
backend. See docs/adr/0016-store-boundary-and-retrieval-events.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from mission_memory.records import Layer, Record, RecordKind
from mission_memory.retrieval_events import NewRetrievalEvent, RetrievalEvent
from mission_memory.stores.filters import SearchFilter

if TYPE_CHECKING:  # annotations only: opening a store (``status``) loads no NumPy
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DescribedStore",
    "EventKind",
    "EventKindIndex",
    "EventRetentionRow",
    "Hit",
    "LexicalIndex",
    "MemoryStore",
    "MissionNames",
    "RecordMerge",
    "RecordPriors",
    "RecordStore",
    "RetrievalEventLog",
    "SearchFilter",
    "SearchPreparation",
    "StateStore",
    "UpsertOutcome",
    "VectorIndex",
    "prepare_search",
    "sort_event_kinds",
    "stored_mission_names",
]


@dataclass(frozen=True)
class Hit:
    """One search result: a record id and a score (higher is better; the scale is the retriever's).

    ``kind`` is the record's kind when the search was per kind (``per_kind=True``), else None.
    """

    record_id: str
    score: float
    kind: RecordKind | None = None


@dataclass(frozen=True)
class RecordPriors:
    """What ranking needs of a record before reading it in full (docs/design.md §7 priors).

    Attributes:
        layer, kind: see :class:`~mission_memory.records.Layer`, :class:`~mission_memory.records.RecordKind`.
        bare_merge: a merge commit whose message has no body (it says nothing of its own).
        criticality: in [0, 1].
        superseded: a decision whose status is superseded or that a later decision supersedes.
        time: the record's provenance time (None when the backend does not read it); degraded-mode
            triage weighs domain events by it (docs/adr/0058).
        stored: when this version of the record was written to the store (UTC; None when the backend
            does not read it). The event vector queue is dated by it: an event replayed from 2015 and
            stored a minute ago has waited a minute (issue 37).
    """

    layer: Layer
    kind: RecordKind
    bare_merge: bool
    criticality: float
    superseded: bool
    time: datetime | None = None
    stored: datetime | None = None


@dataclass(frozen=True)
class EventRetentionRow:
    """What retention needs of a stored domain event, read without building the record (docs/adr/0058).

    Attributes:
        record_id: the record's id.
        time: its provenance time (the event's time; an alert's start).
        event_type: the event's type ("" when not stored).
        event_id: the source's event id ("" when not stored).
        state: ``firing`` or ``resolved`` ("" when not stored).
    """

    record_id: str
    time: datetime
    event_type: str
    event_id: str
    state: str


@dataclass(frozen=True)
class EventKind:
    """One kind of domain event within a filter, aggregated over every event of it (docs/adr/0088).

    A kind is the record attribute ``kind_key`` intake stores (the source fingerprint, else type, sector
    and text template; :func:`~mission_memory.operations.event_template.kind_key`); a record stored
    without one is a kind of its own (``record:<id>``).

    Attributes:
        key: the kind key.
        count: how many events of the kind pass the filter (exact).
        first_seen, last_seen: the oldest and newest of their provenance times.
        max_criticality: the highest criticality among them.
        best_id: the record id of the kind's representative: the most critical, newest among equals,
            then the highest record id.
        oldest_ref, newest_ref: the provenance references (``event:<id>``) of the oldest and newest
            event (by time, then record id).
    """

    key: str
    count: int
    first_seen: datetime
    last_seen: datetime
    max_criticality: float
    best_id: str
    oldest_ref: str
    newest_ref: str


@runtime_checkable
class EventKindIndex(Protocol):
    """A store that aggregates domain events by kind in the store (an SQL ``GROUP BY``, a payload scan).

    :func:`mission_memory.operations.event_groups.event_kinds` uses it when the store has it and reads
    the events otherwise, so a backend without it answers the same, only slower.
    """

    def event_kinds(self, where: SearchFilter) -> list[EventKind]:
        """Every kind of domain event among the records passing ``where`` (:class:`EventKind`), exact
        over all of them, however many: most critical first, then last seen newest first, then by key."""
        ...


def sort_event_kinds(kinds: Iterable[EventKind]) -> list[EventKind]:
    """``kinds`` in the order :meth:`EventKindIndex.event_kinds` returns them."""
    return sorted(kinds, key=lambda k: (-k.max_criticality, -k.last_seen.timestamp(), k.key))


@dataclass
class UpsertOutcome:
    """What an upsert did, by record id: added, replaced (same source, new content) or unchanged."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


RecordMerge = Callable[[Record, Record], Record]
"""``merge(stored, new) -> record to store`` for :meth:`RecordStore.upsert_records` (docs/adr/0078)."""


class RecordStore(Protocol):
    """Records keyed by record id, unique by source key (docs/adr/0006)."""

    def upsert_records(self, records: Sequence[Record], *, merge: RecordMerge | None = None) -> UpsertOutcome:
        """Store ``records`` in one transaction.

        A record whose id is stored is unchanged; one whose source key holds another id replaces
        that record (and its vectors); otherwise it is added. With ``merge``, the record replacing
        another is ``merge(stored, new)`` instead, read and written in the same transaction (SQLite)
        or under the store's lock (Qdrant), so a concurrent writer's version is never lost between
        the read and the write; a merge returning the stored record leaves it unchanged
        (docs/adr/0078).
        """
        ...

    def relocate(self, moves: Mapping[str, str]) -> int:
        """Set the provenance URI of stored records (``{record id: new uri}``): the same repository
        ingested from another path keeps its unchanged records, ids and vectors, and points them where
        it is now. Ids not stored are skipped; returns how many records changed."""
        ...

    def delete(self, record_ids: Iterable[str]) -> int:
        """Delete these records and their vectors; return how many existed."""
        ...

    def get(self, record_ids: Sequence[str]) -> dict[str, Record]:
        """Records by id (ids that are not stored are absent)."""
        ...

    def iterate(self, batch: int = 256) -> Iterator[list[Record]]:
        """Every record, in batches of at most ``batch``, in a stable order."""
        ...

    def known_ids(self, record_ids: Iterable[str]) -> set[str]:
        """Which of ``record_ids`` are stored."""
        ...

    def ids_by_source_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """Record id by source key, for the keys that are stored."""
        ...

    def priors_of(self, record_ids: Sequence[str]) -> dict[str, RecordPriors]:
        """:class:`RecordPriors` by record id, read without building the records."""
        ...

    def event_retention_rows(self, mission: str, until: datetime, batch: int = 5000) -> Iterator[list[EventRetentionRow]]:
        """The domain events of ``mission`` dated before ``until`` (exclusive), in batches of at most ``batch``,
        as :class:`EventRetentionRow` s: what pruning reads of 100k events instead of their records."""
        ...

    def most_critical(self, where: SearchFilter, limit: int) -> list[Hit]:
        """The ``limit`` most critical records passing ``where`` (newest first among equals);
        ``score`` is the criticality. Lets a ranking policy take candidates by criticality as well
        as by similarity (docs/design.md §7 triage)."""
        ...

    def delete_missing(
        self, mission: str, kinds: Sequence[str], keep_source_keys: Iterable[str],
        *, spare: Callable[[Record], bool] | None = None,
    ) -> int:
        """Delete records of ``mission`` and ``kinds`` whose source key is not kept; return how many.

        ``spare`` is asked about each record about to be deleted, as the store holds it at the moment
        of deleting (inside the deleting transaction where the backend has transactions): a record it
        answers True for stays. An ingest passes the rule that keeps recorded decisions, so a decision
        recorded while it ran is judged too, not only those it read at its start (docs/adr/0056).
        """
        ...

    def records_of_kind(
        self,
        kinds: Sequence[str],
        *,
        mission: str | None = None,
        operator: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 1000,
    ) -> list[Record]:
        """Records of ``kinds`` (record kind values), newest provenance time first, at most ``limit``.

        ``mission`` and ``operator`` narrow by equality; ``since`` (inclusive) and ``until``
        (exclusive) bound the provenance time. Used by the correction signal and the handover
        brief (docs/design.md §6), which read a layer's records without a query.
        """
        ...

    def count_by_component(
        self, kinds: Sequence[str], *, mission: str | None = None, after: datetime, through: datetime
    ) -> dict[str, int]:
        """How many records of ``kinds`` have a provenance time in ``(after, through]``, per component
        (records without one under ``""``). The event rate of a sliding window (docs/design.md §7)."""
        ...

    def delete_mission(self, mission: str) -> dict[str, int]:
        """Delete every record of ``mission`` with its vectors, its retrieval events and its state.

        Returns:
            ``{"records": n, "retrieval_events": n, "state": n}``: how many of each were deleted.
        """
        ...

    def counts(self) -> dict[str, dict[str, int]]:
        """Record counts as ``{layer: {kind: n}}`` (every layer present)."""
        ...

    def count_kind(self, mission: str, kind: str) -> int:
        """How many records of ``kind`` ``mission`` holds."""
        ...

    def missions(self) -> dict[str, int]:
        """Record counts by mission."""
        ...

    def components(self, limit: int = 30, *, mission: str | None = None) -> dict[str, int]:
        """Record counts of the ``limit`` most common components (of ``mission``'s records; None: of all)."""
        ...

    def has_component(self, component: str, *, mission: str | None = None) -> bool:
        """Whether any record (of ``mission``; None: of any) has ``component`` (cheap: pull checks it
        before a filtered query)."""
        ...


class LexicalIndex(Protocol):
    """BM25 over record titles (weight 2) and texts (weight 1), under a :class:`SearchFilter`."""

    def bm25_search(self, terms: Sequence[str], where: SearchFilter, limit: int) -> list[Hit]:
        """The best ``limit`` hits over the layers of ``where``; ``terms`` are OR-ed; score = −BM25."""
        ...

    def bm25_search_by_layer(self, terms: Sequence[str], where: SearchFilter, limit: int) -> dict[Layer, list[Hit]]:
        """The best ``limit`` hits of each layer in ``where.layers``, best first."""
        ...

    def phrase_search(
        self, phrases: Sequence[str], where: SearchFilter, limit: int, title_only: bool = False
    ) -> list[str]:
        """Ids of records containing any of ``phrases`` as an exact token sequence, best first."""
        ...


class VectorIndex(Protocol):
    """One unit vector per record per embedding model; exact nearest-neighbour search.

    Vectors of different models are never compared: every call names its ``model_id``.
    """

    def put_vectors(self, record_ids: Sequence[str], vectors: npt.NDArray[np.float32], model_id: str) -> None:
        """Store ``vectors`` (shape ``(len(record_ids), dim)``, unit rows) for stored records,
        replacing their vector; ids that are not stored are skipped."""
        ...

    def dense_search_by_layer(
        self, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int, per_kind: bool = False
    ) -> dict[Layer, list[Hit]]:
        """Cosine similarity of ``query`` (unit, shape ``(dim,)``) with the vectors of ``model_id``:
        the best ``limit`` per layer in ``where.layers``, best first. With ``per_kind``, the best
        ``limit`` of each record kind of each layer (merged per layer, best first, each hit with
        its ``kind``), so a small kind is not crowded out of its layer's list by a large one
        (docs/adr/0050)."""
        ...

    def vectors_for(self, record_ids: Sequence[str], model_id: str) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors by record id (records without a vector of ``model_id`` are absent)."""
        ...

    def ids_without_vector(self, model_id: str, limit: int, *, mission: str | None = None) -> list[str]:
        """Up to ``limit`` ids of records (of ``mission``; None: of all) with no vector of ``model_id``
        (for reindex and the event vector queue), in write order."""
        ...

    def delete_vectors_not_of(self, model_id: str) -> int:
        """Delete every vector of another model; return how many."""
        ...

    def vector_models(self) -> dict[str, int]:
        """Stored vector counts by model id."""
        ...


class RetrievalEventLog(Protocol):
    """Every pull query, as a typed retrieval event (docs/design.md §4, §6)."""

    def log_retrieval_event(self, event: NewRetrievalEvent) -> RetrievalEvent:
        """Store one event, giving it an id and a time; return it as stored."""
        ...

    def retrieval_events(self, limit: int = 100) -> list[RetrievalEvent]:
        """The latest ``limit`` events, newest first."""
        ...

    def retrieval_events_matching(
        self,
        *,
        session_id: str | None = None,
        operator: str | None = None,
        mission: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
    ) -> list[RetrievalEvent]:
        """Events matching every given field (equality), with ``since`` <= time < ``until``,
        newest first, at most ``limit``. Links a correction to the retrieval event it follows
        (docs/design.md §6)."""
        ...

    def count_retrieval_events(self) -> int:
        """How many events are stored."""
        ...

    def put_retrieval_events(self, events: Sequence[RetrievalEvent]) -> int:
        """Store events as they are (id and time kept), skipping ids already stored; return how
        many were new. For moving a memory between backends (export and import); ``events`` come
        oldest first, so that the newest-first order holds."""
        ...


class StateStore(Protocol):
    """Small named text values per mission: ingest bookmarks, refresh state, LLM spend."""

    def get_state(self, mission: str, key: str) -> str | None:
        """The value of ``key`` for ``mission``, or None."""
        ...

    def set_state(self, mission: str, key: str, value: str) -> None:
        """Set ``key`` of ``mission`` to ``value``."""
        ...

    def replace_state(self, mission: str, key: str, expected: str | None, value: str) -> bool:
        """Set ``key`` of ``mission`` to ``value`` only if it holds ``expected`` now (None: no value), as
        one step no other writer of the store comes between (a compare-and-set); True when set.

        A read-modify-write of a value several processes change (the stored incident, docs/adr/0091)
        reads with :meth:`get_state`, changes, and replaces; on False it reads again. ``expected`` is
        compared with the stored value (which :meth:`get_state` returns: redacted as stored).
        """
        ...

    def state_items(self, mission: str | None = None) -> list[tuple[str, str, str]]:
        """Every ``(mission, key, value)``, of ``mission`` only when given, sorted."""
        ...


class MemoryStore(RecordStore, LexicalIndex, VectorIndex, RetrievalEventLog, StateStore, Protocol):
    """Everything the core needs from one memory's storage.

    Attributes:
        read_only: the store can be read but not written (its data dir is not writable); writes
            raise :class:`~mission_memory.errors.BackendUnavailable`, queries are not logged.
        schema_version: the version of the stored schema.
    """

    read_only: bool

    @property
    def schema_version(self) -> int:
        """The schema version the store holds."""
        ...

    def upsert(
        self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str
    ) -> UpsertOutcome:
        """:meth:`RecordStore.upsert_records` and, for the records added or replaced, their
        row-aligned ``vectors`` of ``model_id``, in one transaction where the backend has them."""
        ...

    def ensure_sound(self) -> None:
        """Raise :class:`~mission_memory.errors.BackendUnavailable` when the store is damaged."""
        ...

    def close(self) -> None:
        """Release connections; the object is not used afterwards."""
        ...


@runtime_checkable
class MissionNames(Protocol):
    """An optional capability: the stored missions' names without counting their records.

    Every pull checks the mission it answers from against the stored ones; counting records by
    mission reads every record's index entry (SQLite: 30–140 ms at 100k records and 0.3–0.8 s at
    1M on the loaded 2-core machine, twice per pull), while the names alone take a few index
    seeks (docs/adr/0049).
    """

    def mission_names(self) -> frozenset[str]:
        """The names of the missions that hold at least one record."""
        ...


def stored_mission_names(store: MemoryStore) -> frozenset[str]:
    """The stored missions' names: :meth:`MissionNames.mission_names` when the backend has it,
    else the keys of :meth:`RecordStore.missions`."""
    if isinstance(store, MissionNames):
        return store.mission_names()
    return frozenset(store.missions())


@runtime_checkable
class DescribedStore(Protocol):
    """An optional capability: what a store is and where it lives, for ``status`` and messages, so
    that a store of another backend than the user expects never looks like an empty memory.

    Attributes:
        backend: the backend's scheme (``sqlite``, ``qdrant``), as ``MISSION_MEMORY_STORE`` names it.
        description: the store in a few words: ``sqlite``, ``qdrant (local mode, /data/qdrant)``,
            ``qdrant (https://host:6333)``; never a credential.
        location: the path of the file or folder that is open, or the server's URL.
    """

    backend: str

    @property
    def description(self) -> str:
        """The store in a few words (see the class docstring)."""
        ...

    @property
    def location(self) -> str:
        """The path or URL of what is open."""
        ...


@runtime_checkable
class SearchPreparation(Protocol):
    """An optional capability: bring derived search state up to date before the first query.

    A backend that keeps derived state beside its records (SQLite: the vector snapshot and the BM25
    index, docs/adr/0048) builds it on the first query that needs it; at 1M records that is over a
    minute of CPU, long enough for an agent's tool call to time out. Ingest and ``reindex`` call
    this once they have written, so the cost is paid where the user already waits and sees progress.
    """

    def prepare_search(self, model_id: str) -> bool:
        """Build or refresh the derived search state for vectors of ``model_id``.

        Returns:
            True when anything was built or refreshed, False when the store is too small to
            keep derived state (nothing to do) or cannot be written.
        """
        ...


def prepare_search(store: MemoryStore, model_id: str) -> bool:
    """:meth:`SearchPreparation.prepare_search` when the backend has it; else False (nothing to prepare)."""
    if isinstance(store, SearchPreparation):
        return store.prepare_search(model_id)
    return False
