"""The one write path for records: embed what is new, upsert it with its vectors, count by kind.

Every intake that stores records (repository ingest, tracker items, recorded decisions, handover
notes, corrections, refresh artifacts) goes through :func:`store_records`, and every pass that gives
stored records their vectors (the event vector queue, ``reindex``) through :func:`embed_stored`, so
what "stored" means — deduplicated by id, embedded once, one transaction per batch, vectors tagged
with the embedder's model id (docs/adr/0006, 0034), a decision's vector summed from its three views
(:func:`passage_vectors`, docs/adr/0075) — is written once. :func:`vector_backlog` says
what is still waiting for a vector (``status``, ``escalation status``, the digest footer; issue 21).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from mission_memory.errors import InputError
from mission_memory.records import Layer, Record, RecordKind
from mission_memory.stores.base import MemoryStore, UpsertOutcome

if TYPE_CHECKING:  # NumPy is imported where vectors are made: opening the memory (``status``) loads none
    import numpy as np
    import numpy.typing as npt

    from mission_memory.embeddings.base import Embedder

__all__ = [
    "BatchFn",
    "PassageFn",
    "RecordWriter",
    "StoreResult",
    "VectorBacklog",
    "embed_stored",
    "forget_vector_backlog",
    "passage_vectors",
    "store_records",
    "vector_backlog",
]

PassageFn = Callable[[Record], str]
"""The text a record is embedded by (default :attr:`Record.embedding_text`)."""

BatchFn = Callable[[Sequence[Record], Sequence[str], float], None]
"""``on_batch(records, passages, seconds)``: called after each batch is stored, with its wall time."""

BATCH = 64
"""Records per embedding batch and per transaction."""


class RecordWriter(Protocol):
    """What :func:`store_records` needs of a store (a narrow view of ``MemoryStore``)."""

    def known_ids(self, record_ids: Iterable[str]) -> set[str]:
        """Which of ``record_ids`` are stored."""
        ...

    def upsert(
        self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str
    ) -> UpsertOutcome:
        """Store ``records`` and their row-aligned unit ``vectors`` in one transaction."""
        ...

    def ids_by_source_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """Record ids by source key, for the keys that are stored."""
        ...

    def get(self, record_ids: Sequence[str]) -> dict[str, Record]:
        """Records by id (missing ids are absent)."""
        ...

    def vectors_for(self, record_ids: Sequence[str], model_id: str) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors by record id (records without a vector of ``model_id`` are absent)."""
        ...


@dataclass
class StoreResult:
    """What :func:`store_records` did.

    Attributes:
        added, replaced, unchanged: record counts by kind value (``replaced``: same source key, new
            content; ``unchanged``: the id was stored already, nothing was embedded for it).
        outcome: the same, by record id, in the order the records were given.
        embedded: passages embedded.
        vectors_reused: vectors copied from the record a new one replaces (same passage text).
    """

    added: Counter[str] = field(default_factory=Counter)
    replaced: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    outcome: UpsertOutcome = field(default_factory=UpsertOutcome)
    embedded: int = 0
    vectors_reused: int = 0


def _embedding_text(record: Record) -> str:
    return record.embedding_text


def passage_vectors(
    embedder: Embedder, records: Sequence[Record], passages: Sequence[str]
) -> npt.NDArray[np.float32]:
    """One unit vector per record: of its passage, or, for a record with
    :attr:`~mission_memory.records.Record.secondary_passages`, the normalised sum of the vectors of
    its passage and of those (docs/adr/0075). All texts go to the embedder in one call.

    Args:
        embedder: gives the vectors.
        records: the records, in order.
        passages: each record's passage text (``PassageFn`` of the record), in the same order.

    Returns:
        ``float32`` array of shape ``(len(records), embedder.dim)``.
    """
    import numpy as np

    texts = list(passages)
    owners: list[int] = []
    for index, record in enumerate(records):
        extra = record.secondary_passages
        texts.extend(extra)
        owners.extend([index] * len(extra))
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    vectors = embedder.embed_passages(texts)
    if not owners:
        return vectors
    out = np.array(vectors[: len(passages)], dtype=np.float32)
    np.add.at(out, np.asarray(owners), vectors[len(passages) :])
    summed = sorted(set(owners))
    out[summed] /= np.linalg.norm(out[summed], axis=1, keepdims=True)
    return out


def store_records(
    store: RecordWriter,
    embedder: Embedder,
    records: Sequence[Record],
    *,
    passage: PassageFn | None = None,
    batch: int | None = BATCH,
    reuse_vectors: bool = False,
    on_batch: BatchFn | None = None,
) -> StoreResult:
    """Store ``records``: those already stored (same id) are counted unchanged and not embedded; the
    rest are embedded and upserted, ``batch`` at a time, each batch one transaction.

    Args:
        store: the memory store.
        embedder: gives the vectors; its ``model_id`` tags them.
        records: records to store; repeated ids are stored once.
        passage: the text each record is embedded by (default :attr:`Record.embedding_text`).
        batch: records per embedding call and transaction; None stores them all in one.
        reuse_vectors: copy the vector of the record a new one replaces when that record's passage
            text is the same (a section whose line moved), instead of embedding it again (ADR 0034).
        on_batch: called after each stored batch (progress, per-folder cost).

    Returns:
        The counts by kind and by id.

    Raises:
        BackendUnavailable: the store cannot be written or the embedder fails.
    """
    text_of = passage or _embedding_text
    # the store's last guard (Record.redacted, docs/adr/0053) runs here first, so the ids looked up,
    # embedded and counted are those of the text the store writes: a record made by Record.build
    # comes back as itself (redaction is idempotent), one that still held a secret with its id
    # derived from the redacted text
    unique = list({r.id: r for r in (record.redacted() for record in records)}.values())
    known = store.known_ids(r.id for r in unique)
    result = StoreResult()
    for record in unique:
        if record.id in known:
            result.unchanged[record.kind.value] += 1
            result.outcome.unchanged.append(record.id)
    fresh = [r for r in unique if r.id not in known]
    size = max(1, batch if batch is not None else len(fresh))
    for start in range(0, len(fresh), size):
        chunk = fresh[start : start + size]
        started = _clock()
        passages = [text_of(r) for r in chunk]
        vectors = (
            _vectors_reusing(store, embedder, chunk, passages, text_of, result)
            if reuse_vectors
            else _embedded(embedder, chunk, passages, result)
        )
        outcome = store.upsert(chunk, vectors, embedder.model_id)
        kinds = {r.id: r.kind.value for r in chunk}
        for rid in outcome.added:
            result.added[kinds[rid]] += 1
        for rid in outcome.replaced:
            result.replaced[kinds[rid]] += 1
        for rid in outcome.unchanged:
            result.unchanged[kinds[rid]] += 1
        result.outcome.added.extend(outcome.added)
        result.outcome.replaced.extend(outcome.replaced)
        result.outcome.unchanged.extend(outcome.unchanged)
        if on_batch is not None:
            on_batch(chunk, passages, _clock() - started)
    return result


def embed_stored(
    store: MemoryStore, embedder: Embedder, record_ids: Sequence[str], *, passage: PassageFn | None = None
) -> int:
    """Embed stored records by id and store their vectors of ``embedder.model_id`` (one transaction).

    Ids no longer stored (deleted meanwhile) are skipped.

    Returns:
        How many records got a vector.

    Raises:
        BackendUnavailable: the store cannot be read or written, or the embedder fails.
    """
    text_of = passage or _embedding_text
    records = store.get(list(record_ids))
    present = [rid for rid in record_ids if rid in records]
    if present:
        chosen = [records[rid] for rid in present]
        vectors = passage_vectors(embedder, chosen, [text_of(r) for r in chosen])
        store.put_vectors(present, vectors, embedder.model_id)
    return len(present)


BACKLOG_READ = 20_000
"""At most this many records without a vector are read to break the backlog down by kind and date it."""


@dataclass(frozen=True)
class VectorBacklog:
    """Records stored without a vector of one model: what the event vector queue (or a ``reindex``)
    still has to embed. They are found by BM25 meanwhile, not by the dense search (docs/adr/0063).

    Attributes:
        model_id: the model the vectors are missing for.
        missing: how many records have no vector of it (every record counted), or, with ``at_least``,
            how many were found before the reading stopped.
        by_layer: ``{layer: {kind: n}}`` of the oldest ``read`` of them.
        read: how many were read for ``by_layer`` and ``oldest_event`` (``missing`` capped at
            :data:`BACKLOG_READ`).
        oldest_event: when the oldest domain event without a vector among those read was stored
            (:attr:`~mission_memory.stores.base.RecordPriors.stored`), or None. Not when the event
            happened: a replayed or late-delivered event has waited since it was stored (issue 37).
        mission: the mission counted (None: every mission).
        at_least: ``missing`` is a lower bound: one mission's records are counted by reading them,
            and the reading stopped at ``read``.
    """

    model_id: str
    missing: int = 0
    by_layer: dict[str, dict[str, int]] = field(default_factory=dict)
    read: int = 0
    oldest_event: datetime | None = None
    mission: str | None = None
    at_least: bool = False

    @property
    def events(self) -> int:
        """Domain events among the records read without a vector."""
        return self.by_layer.get(Layer.DOMAIN.value, {}).get(RecordKind.DOMAIN_EVENT.value, 0)

    def event_age_seconds(self, now: datetime) -> float | None:
        """Seconds the oldest waiting event has waited since it was stored, at ``now`` (≥ 0), or None
        when no event waits."""
        return None if self.oldest_event is None else max(0.0, (now - self.oldest_event).total_seconds())

    def queue_line(self, now: datetime) -> str:
        """How far behind the event vector queue is, in one sentence (empty when no event waits), e.g.
        ``30 events are stored without a vector yet, the oldest from 3 min ago: they are found by their
        words (BM25) until the queue reaches them``."""
        if not self.events:
            return ""
        if self.at_least:
            counted = f"at least {self.events:,} events are"
        elif self.read >= self.missing:
            counted = f"{self.events:,} {'event is' if self.events == 1 else 'events are'}"
        else:  # only the oldest were read
            counted = f"at least {self.events:,} events ({self.missing:,} records in all) are"
        age = self.event_age_seconds(now)
        since = f", the oldest from {_span(age)} ago" if age is not None else ""
        return (f"{counted} stored without a vector yet{since}: found by their words (BM25) until the"
                " event vector queue reaches them")

    def to_json(self, now: datetime) -> dict[str, Any]:
        """``{"model_id", "mission", "records", "records_at_least", "by_layer", "counted", "events",
        "oldest_event", "oldest_event_age_s"}`` (``mission`` None: every mission's records)."""
        age = self.event_age_seconds(now)
        return {
            "model_id": self.model_id, "mission": self.mission, "records": self.missing,
            "records_at_least": self.at_least, "by_layer": self.by_layer, "counted": self.read,
            "events": self.events, "oldest_event": self.oldest_event.isoformat() if self.oldest_event else None,
            "oldest_event_age_s": round(age, 1) if age is not None else None,
        }


def vector_backlog(
    store: MemoryStore, model_id: str, *, read: int = BACKLOG_READ, max_age_seconds: float = 0.0,
    mission: str | None = None,
) -> VectorBacklog:
    """What is stored without a vector of ``model_id``: the count, by layer and kind, and the oldest event.

    The count is the records minus the vectors of the model (two counts, no join); only when some
    are missing are the oldest of them (at most ``read``) read for the rest. For one ``mission`` the
    records without a vector are read (at most ``read``; more are counted as "at least").

    Args:
        store: the memory store.
        model_id: the current embedder's model id.
        read: at most this many records without a vector are read for ``by_layer`` and the oldest
            event (the queue embeds in the order records were stored, so the event waiting longest
            is among the first).
        max_age_seconds: an answer computed for this store and model at most this long ago may be
            given again (the digest footer asks on every pull; 0 computes afresh). The answer is
            dropped sooner when the queue catches up or events arrive at a caught-up store
            (:func:`forget_vector_backlog`).
        mission: count only this mission's records (None: every mission's). A mission's view never
            counts another mission's waiting events.

    Raises:
        BackendUnavailable: the store cannot be read.
    """
    key = (id(store), model_id, mission)
    if max_age_seconds > 0:
        with _backlog_lock:
            cached = _backlog_cache.get(key)
        if cached is not None and cached[1]() is store and time.monotonic() - cached[0] <= max_age_seconds:
            return cached[2]
    if mission is None:
        missing = max(0, sum(store.missions().values()) - store.vector_models().get(model_id, 0))
        ids = store.ids_without_vector(model_id, min(missing, max(1, read))) if missing else []
    elif not vector_backlog(store, model_id, read=read, max_age_seconds=max_age_seconds).missing:
        # A record holds at most one vector, so when the whole store has none missing (two counts,
        # or the store's answer given moments ago) no mission has any; a mission's own list is a
        # join over its records, 28 ms at 100k records on the first pull of a mission-scoped digest.
        ids, missing = [], 0
    else:
        ids = store.ids_without_vector(model_id, max(1, read), mission=mission)
        missing = len(ids)
    backlog = VectorBacklog(model_id, mission=mission)
    if missing:
        priors = store.priors_of(ids)
        by_layer: dict[str, dict[str, int]] = {}
        oldest: datetime | None = None
        for prior in priors.values():
            kinds = by_layer.setdefault(prior.layer.value, {})
            kinds[prior.kind.value] = kinds.get(prior.kind.value, 0) + 1
            event = prior.kind is RecordKind.DOMAIN_EVENT
            if event and prior.stored is not None and (oldest is None or prior.stored < oldest):
                oldest = prior.stored
        backlog = VectorBacklog(model_id, missing, by_layer, len(ids), oldest, mission,
                                at_least=mission is not None and len(ids) >= max(1, read))
    try:
        held = weakref.ref(store)
    except TypeError:  # a store that cannot be referenced weakly is not kept
        return backlog
    with _backlog_lock:
        if len(_backlog_cache) >= 64:  # one entry per open store and model
            _backlog_cache.clear()
        _backlog_cache[key] = (time.monotonic(), held, backlog)
    return backlog


def forget_vector_backlog(store: MemoryStore, *, caught_up: bool = True) -> None:
    """Drop what :func:`vector_backlog` may give again for ``store``.

    Args:
        store: the memory store.
        caught_up: True when no record of the model waits any more (the queue found none): every
            answer goes. False when records were stored without a vector (event intake): only an
            answer saying none waited goes, so that a flood does not make every pull count again.
    """
    with _backlog_lock:
        for key, (_, _, backlog) in list(_backlog_cache.items()):
            if key[0] == id(store) and (caught_up or not backlog.missing):
                del _backlog_cache[key]


def _span(seconds: float) -> str:
    """``seconds`` as ``under a minute``, ``7 min``, ``2 h 05 min`` or ``3 d 4 h``."""
    minutes = int(seconds // 60)
    if minutes < 1:
        return "under a minute"
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 24 * 60:
        return f"{minutes // 60} h {minutes % 60:02d} min"
    return f"{minutes // 1440} d {minutes % 1440 // 60} h"


_backlog_cache: dict[tuple[int, str, str | None], tuple[float, weakref.ref[Any], VectorBacklog]] = {}
_backlog_lock = threading.Lock()


def _clock() -> float:
    return time.perf_counter()


def _embedded(
    embedder: Embedder, chunk: Sequence[Record], passages: Sequence[str], result: StoreResult
) -> npt.NDArray[np.float32]:
    result.embedded += len(passages)
    return passage_vectors(embedder, chunk, passages)


def _vectors_reusing(
    store: RecordWriter, embedder: Embedder, chunk: Sequence[Record], passages: Sequence[str],
    text_of: PassageFn, result: StoreResult,
) -> npt.NDArray[np.float32]:
    """The chunk's vectors: reused from the record each one replaces when that record's passage text is
    the same (a section whose line number moved, a file whose last commit changed), embedded otherwise."""
    import numpy as np

    previous_ids = store.ids_by_source_keys([r.source_key for r in chunk])
    previous = store.get(list(previous_ids.values())) if previous_ids else {}
    stored = store.vectors_for(list(previous), embedder.model_id) if previous else {}
    reuse: dict[int, npt.NDArray[np.float32]] = {}
    for index, (record, text) in enumerate(zip(chunk, passages, strict=True)):
        old_id = previous_ids.get(record.source_key)
        if (old_id in stored and text_of(previous[old_id]) == text
                and previous[old_id].secondary_passages == record.secondary_passages):
            reuse[index] = stored[old_id]
    todo = [i for i in range(len(chunk)) if i not in reuse]
    fresh = passage_vectors(embedder, [chunk[i] for i in todo], [passages[i] for i in todo]) if todo else None
    result.embedded += len(todo)
    result.vectors_reused += len(reuse)
    out = np.zeros((len(chunk), embedder.dim), dtype=np.float32)
    for row, index in enumerate(todo):
        assert fresh is not None
        out[index] = fresh[row]
    for index, vector in reuse.items():
        out[index] = vector
    return out


def check_vector_rows(expected: int, vectors: npt.NDArray[np.float32]) -> None:
    """Refuse ``vectors`` unless it is a matrix of shape (``expected``, dim): one row per record.

    Raises:
        InputError: any other shape.
    """
    if vectors.ndim != 2 or vectors.shape[0] != expected:
        raise InputError(f"vectors of shape {vectors.shape} do not give one row for each of the {expected} records")

