"""Storage protocols: what the core needs from a backend, named by capability.

``RecordStore`` keeps records, retrieval events and ingest state and answers BM25 queries;
``VectorIndex`` keeps one vector per record per embedding model and answers exact cosine queries.
The embedded default (:class:`~mission_memory.stores.sqlite.SqliteStore`) implements both in one
SQLite file; a server backend (Qdrant for vectors) can implement ``VectorIndex`` alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from mission_memory.records import Layer, Record, RecordKind

__all__ = ["Hit", "RecordStore", "SearchFilter", "UpsertOutcome", "VectorIndex"]


@dataclass(frozen=True)
class SearchFilter:
    """Structured restriction applied by both BM25 and dense search.

    Attributes:
        layers: layers in scope (never empty).
        mission: only this mission, or all.
        component: only records of this component.
        min_criticality: only records with criticality ≥ this, in [0, 1].
        since, until: only records whose provenance time is in [since, until] (UTC).
        mission_type: only records of missions of this type (records without a type are kept).
        outcome: only practitioner records with this outcome (other layers are not affected).
    """

    layers: tuple[Layer, ...]
    mission: str | None = None
    component: str | None = None
    min_criticality: float | None = None
    since: datetime | None = None
    until: datetime | None = None
    mission_type: str | None = None
    outcome: str | None = None


@dataclass(frozen=True)
class Hit:
    """One search result: the store's row id of a record and a score (higher is better)."""

    rowid: int
    score: float


@dataclass
class UpsertOutcome:
    """What an upsert did, by record id: added, replaced (same source, new content) or unchanged."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


class RecordStore(Protocol):
    """Records, BM25, retrieval events and ingest state of one memory: what pull and ingest call."""

    def known_ids(self, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` are stored already."""
        ...

    def upsert(self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str) -> UpsertOutcome:
        """Store ``records`` (and their vectors, row-aligned) in one transaction."""
        ...

    def bm25_search_by_layer(self, terms: Sequence[str], where: SearchFilter, limit: int) -> dict[Layer, list[Hit]]:
        """The best ``limit`` BM25 hits of each layer in scope; ``terms`` are OR-ed."""
        ...

    def phrase_search(self, phrases: Sequence[str], where: SearchFilter, limit: int, title_only: bool = False) -> list[int]:
        """Row ids of records containing any of ``phrases`` as an exact token sequence."""
        ...

    def kinds_of(self, rowids: Sequence[int]) -> dict[int, tuple[RecordKind, bool]]:
        """``(kind, bare_merge)`` by row id."""
        ...

    def get_records(self, rowids: Sequence[int]) -> dict[int, Record]:
        """Records by row id."""
        ...

    def log_retrieval_event(self, event: dict[str, Any]) -> str:
        """Store one retrieval event; return its id."""
        ...


class VectorIndex(Protocol):
    """Exact nearest-neighbour search over one embedding model's vectors."""

    def dense_search_by_layer(
        self, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int
    ) -> dict[Layer, list[Hit]]:
        """Cosine similarity of ``query`` (unit length) with stored unit vectors: best ``limit`` per layer."""
        ...

    def vectors_for(self, rowids: Sequence[int], model_id: str) -> dict[int, npt.NDArray[np.float32]]:
        """Stored vectors by row id (rows without a vector of ``model_id`` are absent)."""
        ...
