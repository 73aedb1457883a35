"""``RefreshStore``: the narrow view of the store the push refresher works through (docs/design.md §5).

The refresher keeps its per-task state and the LLM spend ledger as ``ingest_state`` entries, reads
the latest retrieval events (to tell when a task's records were last pulled), finds the ingested
records of the commits touching a task, searches proposed decisions by BM25, and stores each task's
three artifacts in one upsert. These eight methods (the state pair included) are all it calls; the embedded
:class:`~mission_memory.stores.sqlite.SqliteStore` satisfies the protocol (the type checker proves it
where ``Memory`` hands its store to the refresher), and so must any backend that serves push mode.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from mission_memory.records import Record
from mission_memory.retrieval_events import RetrievalEvent
from mission_memory.stores.base import Hit, SearchFilter, StateStore, UpsertOutcome

__all__ = ["RefreshStore", "StateStore"]


class RefreshStore(StateStore, Protocol):
    """Everything a refresh pass reads from and writes to the store (a narrow view of ``MemoryStore``)."""

    def upsert(
        self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str
    ) -> UpsertOutcome:
        """Store ``records`` and their row-aligned unit ``vectors`` (``(n, dim)``) in one transaction."""
        ...

    def known_ids(self, record_ids: Iterable[str]) -> set[str]:
        """Which of ``record_ids`` are stored."""
        ...

    def vectors_for(self, record_ids: Sequence[str], model_id: str) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors by record id (records without a vector of ``model_id`` are absent)."""
        ...

    def retrieval_events(self, limit: int = 100) -> list[RetrievalEvent]:
        """The latest ``limit`` retrieval events, newest first."""
        ...

    def ids_by_source_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """Record ids by source key, for the keys that are stored."""
        ...

    def get(self, record_ids: Sequence[str]) -> dict[str, Record]:
        """Records by id (missing ids are absent)."""
        ...

    def bm25_search(self, terms: Sequence[str], where: SearchFilter, limit: int) -> list[Hit]:
        """The best ``limit`` BM25 hits for ``terms`` (OR-ed) within ``where``, best first."""
        ...

    def most_critical(self, where: SearchFilter, limit: int) -> list[Hit]:
        """The ``limit`` most critical records within ``where`` (push under escalation, docs/design.md §7)."""
        ...
