"""``RefreshStore``: the narrow view of the store the push refresher works through (DESIGN.md §5).

The refresher keeps its per-task state and the LLM spend ledger as ``ingest_state`` entries, reads
the latest retrieval events (to tell when a task's records were last pulled), finds the ingested
records of the commits touching a task, searches proposed decisions by BM25, and stores each task's
three artifacts in one upsert. These seven methods are all it calls; the embedded
:class:`~mission_memory.stores.sqlite.SqliteStore` satisfies the protocol (the type checker proves it
where ``Memory`` hands its store to the refresher), and so must any backend that serves push mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from mission_memory.records import Record
from mission_memory.stores.base import Hit, SearchFilter, UpsertOutcome

__all__ = ["RefreshStore", "StateStore"]


class StateStore(Protocol):
    """Small string values keyed by ``(mission, key)``: the refresher's per-task state and spend ledger."""

    def get_state(self, mission: str, key: str) -> str | None:
        """The value stored under ``(mission, key)``, or None."""
        ...

    def set_state(self, mission: str, key: str, value: str) -> None:
        """Store ``value`` under ``(mission, key)``, replacing any previous value."""
        ...


class RefreshStore(StateStore, Protocol):
    """Everything a refresh pass reads from and writes to the store."""

    def upsert(
        self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str
    ) -> UpsertOutcome:
        """Store ``records`` and their row-aligned unit ``vectors`` (``(n, dim)``) in one transaction."""
        ...

    def retrieval_events(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest ``limit`` retrieval events, newest first."""
        ...

    def records_by_source_keys(self, keys: Sequence[str]) -> dict[str, int]:
        """Row ids by source key, for the keys that are stored."""
        ...

    def get_records(self, rowids: Sequence[int]) -> dict[int, Record]:
        """Records by row id (missing ids are absent)."""
        ...

    def bm25_search(self, terms: Sequence[str], where: SearchFilter, limit: int) -> list[Hit]:
        """The best ``limit`` BM25 hits for ``terms`` (OR-ed) within ``where``, best first."""
        ...
