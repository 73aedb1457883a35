"""The Qdrant backend: records, BM25, vectors, retrieval events and state in Qdrant collections.

Everything a memory holds lives in Qdrant, so mission-memory server replicas in front of one
Qdrant cluster keep no state of their own (docs/adr/0043-qdrant-backend-what-lives-where.md):

* ``<prefix>records`` — one point per :class:`~mission_memory.records.Record`: the record as JSON
  in the payload, beside the filter columns (:func:`~mission_memory.stores.filters.filter_columns`)
  and the look-up keys, each with a payload index; a sparse vector ``bm25`` with Qdrant's IDF
  modifier, the token count and the write order, from which lexical search gives FTS5's BM25
  (:mod:`~mission_memory.stores.qdrant_terms`, :meth:`QdrantStore.bm25_search_by_layer`);
* ``<prefix>vectors_<hash of the model id>`` — one collection per embedding model, one point per
  record with the same point id and the filter columns, so a filtered dense search is one request
  and vectors of two models can never be compared. The distance is the dot product: the vectors
  are unit vectors (the :class:`~mission_memory.stores.base.VectorIndex` contract), so it is
  their cosine, and Qdrant stores them as given (with ``Cosine`` it would normalise them again
  and an export would no longer return the bits that were imported);
* ``<prefix>keys`` — the source-key map: one point per source key (a name-based id), naming the
  record that holds it, so an upsert finds the record it replaces by id instead of by a filter;
* ``<prefix>events`` — retrieval events (payload only), newest first by a ``time`` range index;
* ``<prefix>state`` — per-mission named values (payload only);
* ``<prefix>meta`` — the layout version (and the sparse layout, :data:`~mission_memory.stores.qdrant_terms.LEXICAL_LAYOUT`)
  and the model id of each vector collection.

A point id is the record id read as a UUID (record ids are 32 hex digits); any other string maps
to a name-based UUID (RFC 4122 version 5), so looking up a foreign id finds nothing instead of
failing. Like the SQLite store, a record has at most one vector: storing one of another model
replaces it (the record's ``vector_model`` payload says which).

Qdrant has no transactions. Writes are ordered so that an interrupted one leaves nothing a
reader trusts wrongly: new vectors, then new records, then the records they replace and their
vectors, then the key map; a later upsert of the same record finds the key map naming another
record and finishes the replacement. A delete removes the key-map entry first.

Every call goes through the client's REST (or local-mode) interface with its ``timeout`` as the
total deadline of one request; every client error leaves as
:class:`~mission_memory.errors.BackendUnavailable` at one boundary (:func:`_translating`).
Only calls the Qdrant server speaks are used, so the contract suite run on the client's local
mode covers a server deployment; payload indexes are created for the server (local mode ignores
them).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar, cast

import httpx
import numpy as np
import numpy.typing as npt
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ApiException, ResponseHandlingException, UnexpectedResponse

from mission_memory.decisions import DecisionAttributes
from mission_memory.errors import BackendUnavailable, InputError
from mission_memory.records import LAYER_OF_KIND, Layer, Record, RecordKind, redacted_state_value
from mission_memory.retrieval_events import NewRetrievalEvent, RetrievalEvent
from mission_memory.stores.base import (
    EventKind,
    EventRetentionRow,
    Hit,
    MemoryStore,
    RecordMerge,
    RecordPriors,
    UpsertOutcome,
    sort_event_kinds,
)
from mission_memory.stores.filters import SearchFilter, filter_columns, matches
from mission_memory.stores.fts5_bm25 import occurrences
from mission_memory.stores.qdrant_filters import PAYLOAD_INDEXES, equals, search_filter
from mission_memory.stores.qdrant_terms import (
    AVERAGE_TOKENS,
    LARGE_FREQUENCIES_FIELD,
    LEXICAL_LAYOUT,
    TITLE_WEIGHT,
    TOKENS_FIELD,
    DocumentTerms,
    SparseTerms,
    TermEncoder,
    document_frequency,
    fts5_idf,
    fts5_scores,
    raw_frequencies,
    term_index,
)
from mission_memory.stores.sqlite_fts_terms import COMMON_SHARE
from mission_memory.stores.write_path import check_vector_rows
from mission_memory.utc import as_utc

__all__ = ["LAYOUT_VERSION", "QdrantStore", "point_id"]

T = TypeVar("T")
P = ParamSpec("P")

LAYOUT_VERSION = 5
"""The record schema the collections hold: the same fields as SQLite schema version 5."""

_SPARSE = "bm25"
_PAGE = 256
_FACET_LIMIT = 100_000
_PHRASE_DEPTH = 200
_PHRASE_SCAN = 5_000  # a phrase whose rarest token at most this many records hold is looked for in all of them
_WRITTEN = "written"  # payload: write order (ns clock + place in batch); BM25 ties go by it, as FTS5's by row id
_BOUND_SLACK = 1e-5  # 32-bit stored weights and scores: relative error well below this
_ID_NAMESPACE = uuid.UUID("6f1c7a52-3f0e-4d55-9a51-0b1e1d4d6a11")
_CLIENT_ERRORS: tuple[type[BaseException], ...] = (ApiException, httpx.HTTPError, OSError, RuntimeError, ValueError)


def point_id(key: str) -> str:
    """The Qdrant point id of a record id, event id or other key (a UUID string).

    A 32-hex-digit id is read as a UUID as it is; any other key gets a name-based UUID.
    """
    if len(key) == 32:
        try:
            return str(uuid.UUID(hex=key))
        except ValueError:
            pass
    return str(uuid.uuid5(_ID_NAMESPACE, key))


def _translating(cls: type[QdrantStore]) -> type[QdrantStore]:
    """Wrap the public methods of ``cls`` so that client errors leave as :class:`BackendUnavailable`."""
    for name, member in list(vars(cls).items()):
        if name.startswith("_") or not callable(member) or inspect.isgeneratorfunction(member):
            continue

        def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(method)
            def translated(self: QdrantStore, *args: Any, **kwargs: Any) -> Any:
                try:
                    return method(self, *args, **kwargs)
                except _CLIENT_ERRORS as exc:
                    if isinstance(exc, InputError):
                        raise
                    raise self._translate(exc) from exc

            return translated

        setattr(cls, name, wrap(member))
    return cls


@_translating
class QdrantStore:
    """Records, sparse BM25, dense vectors per model, retrieval events and state in Qdrant.

    Implements :class:`~mission_memory.stores.base.MemoryStore`.

    Args:
        client: an open ``QdrantClient`` (server or local mode); closed by :meth:`close`.
        where: how to name the store in messages (the URL or path, never a key).
        prefix: prefix of every collection name (several memories can share one cluster).
        local: the client runs in local mode (payload indexes are skipped there; calls are
            serialised, as local mode is not thread-safe).
        replication_factor: copies of each shard the cluster keeps of every collection this store
            creates (None: the server's default, 1); a cluster of three with 2 survives losing a node.
        location: the folder (local mode), ``:memory:`` or the server's URL, as ``status`` shows it
            (never a key); default: ``where``.

    Raises:
        BackendUnavailable: Qdrant cannot be reached, or its collections cannot be created.
    """

    read_only = False
    backend = "qdrant"

    def __init__(
        self, client: QdrantClient, where: str, prefix: str = "mm_", local: bool = False,
        replication_factor: int | None = None, location: str | None = None,
    ) -> None:
        self._location = location if location is not None else where
        self._client = client
        self._replication_factor = replication_factor
        self._where = where
        self._prefix = prefix
        self._local = local
        self._lock = threading.RLock()
        self._terms = TermEncoder()
        self._records = f"{prefix}records"
        self._events = f"{prefix}events"
        self._state = f"{prefix}state"
        self._meta = f"{prefix}meta"
        self._keys = f"{prefix}keys"
        self._models: dict[str, str] = {}
        self._dims: dict[str, int] = {}
        try:
            self._create_collections()
        except _CLIENT_ERRORS as exc:
            self.close()
            raise self._translate(exc) from exc

    # -- the boundary ---------------------------------------------------------------------------

    def _translate(self, exc: BaseException) -> BackendUnavailable:
        """The package error for a client failure; names the store, never its API key."""
        if isinstance(exc, ResponseHandlingException):  # the client's wrapper of a transport error
            exc = exc.source
        if isinstance(exc, httpx.TimeoutException):
            return BackendUnavailable(f"Qdrant at {self._where} did not answer in time ({type(exc).__name__})")
        if isinstance(exc, httpx.HTTPError | OSError):
            return BackendUnavailable(f"Qdrant at {self._where} cannot be reached: {type(exc).__name__}: {exc}")
        text = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        return BackendUnavailable(f"Qdrant at {self._where} failed: {text}")

    def _call(self, action: Callable[[QdrantClient], T]) -> T:
        """Run one client call (serialised in local mode)."""
        if self._local:
            with self._lock:
                return action(self._client)
        return action(self._client)

    def _run(self, method: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Call one bound client method (serialised in local mode)."""
        if self._local:
            with self._lock:
                return method(*args, **kwargs)
        return method(*args, **kwargs)

    def _create_collections(self) -> None:
        existing = {c.name for c in self._call(lambda c: c.get_collections()).collections}
        if self._records not in existing:
            self._create(self._records, vectors_config={},
                         sparse_vectors_config={_SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)})
            self._index(self._records, {**PAYLOAD_INDEXES, TOKENS_FIELD: models.PayloadSchemaType.INTEGER})
        if self._events not in existing:
            self._create(self._events, vectors_config={})
            self._index(self._events, {
                "time": models.PayloadSchemaType.FLOAT, "session_id": models.PayloadSchemaType.KEYWORD,
                "operator": models.PayloadSchemaType.KEYWORD, "mission": models.PayloadSchemaType.KEYWORD,
            })
        if self._state not in existing:
            self._create(self._state, vectors_config={})
            self._index(self._state, {"mission": models.PayloadSchemaType.KEYWORD})
        if self._keys not in existing:
            self._create(self._keys, vectors_config={})
            self._index(self._keys, {"mission": models.PayloadSchemaType.KEYWORD})
        if self._meta not in existing:
            self._create(self._meta, vectors_config={})
            self._call(lambda c: c.upsert(self._meta, [models.PointStruct(
                id=point_id("layout"), vector={},
                payload={"entry": "layout", "version": LAYOUT_VERSION, "lexical": LEXICAL_LAYOUT,
                         "vector_kinds": 1},
            )], wait=True))
        self._load_models()
        if self._meta in existing:
            self._upgrade_lexical_layout()
            self._upgrade_vector_kinds()

    def _upgrade_vector_kinds(self) -> None:
        """Give the vector points written before docs/adr/0050 their record's ``kind`` (dense search
        per kind filters on it), from the record points, then mark the layout entry.

        Idempotent: two replicas upgrading at once write the same payload.
        """
        found = self._call(lambda c: c.retrieve(self._meta, [point_id("layout")]))
        layout = found[0].payload if found and found[0].payload else None
        if layout is None or int(layout.get("vector_kinds", 0)) >= 1:
            return
        for collection in self._models.values():
            self._index(collection, {"kind": models.PayloadSchemaType.KEYWORD})
        offset: models.ExtendedPointId | None = None
        while True:
            points, offset = self._run(
                self._client.scroll, self._records, limit=_PAGE, offset=offset, with_payload=["kind", "vector_model"],
            )
            groups: dict[tuple[str, str], list[models.ExtendedPointId]] = {}
            for p in points:
                payload = p.payload or {}
                model, kind = payload.get("vector_model"), payload.get("kind")
                if model in self._models and kind is not None:
                    groups.setdefault((self._models[str(model)], str(kind)), []).append(p.id)
            for (collection, kind), ids in groups.items():
                self._run(self._client.set_payload, collection, {"kind": kind}, points=ids, wait=True)
            if offset is None:
                break
        self._run(self._client.set_payload, self._meta, {"vector_kinds": 1}, points=[point_id("layout")], wait=True)

    def _upgrade_lexical_layout(self) -> None:
        """Rewrite the sparse vectors of collections written before :data:`LEXICAL_LAYOUT` 2.

        Layout 1 had no presence term and no token count in the payload, so FTS5's scores cannot be
        recovered from it. Every record point is written again with its payload and new sparse
        vector (idempotent: two replicas upgrading at once write the same points), then the layout
        entry says 2.
        """
        found = self._call(lambda c: c.retrieve(self._meta, [point_id("layout")]))
        layout = found[0].payload if found and found[0].payload else None
        if layout is None or int(layout.get("lexical", 1)) >= LEXICAL_LAYOUT:
            return
        offset: models.ExtendedPointId | None = None
        while True:
            points, offset = self._run(
                self._client.scroll, self._records, limit=_PAGE, offset=offset, with_payload=True,
            )
            records = [_record_of(p) for p in points]
            lexical = self._terms.document_terms([(r.title, r.text) for r in records])
            rewritten = [
                models.PointStruct(id=p.id, vector=_sparse_vector(terms.vector),
                                   payload={**cast(dict[str, Any], p.payload), **_lexical_payload(terms)})
                for p, terms in zip(points, lexical, strict=True)
            ]
            if rewritten:
                self._run(self._client.upsert, self._records, rewritten, wait=True)
            if offset is None:
                break
        self._run(self._client.set_payload, self._meta, {"lexical": LEXICAL_LAYOUT},
                  points=[point_id("layout")], wait=True)

    def _create(self, name: str, **config: Any) -> None:
        """Create a collection (with the replication factor on a server)."""
        if not self._local and self._replication_factor is not None:
            config["replication_factor"] = self._replication_factor
        try:
            self._run(self._client.create_collection, name, **config)
        except UnexpectedResponse as exc:
            if exc.status_code != 409:  # 409: another replica created it first, which is as good
                raise

    def _index(self, collection: str, fields: dict[str, models.PayloadSchemaType]) -> None:
        """Create the payload indexes a server needs for filters and ordering (not in local mode,
        where they have no effect and the client warns)."""
        if self._local:
            return
        for key, schema in fields.items():
            self._run(self._client.create_payload_index, collection, key, schema, wait=True)

    def _load_models(self) -> None:
        points, _ = self._call(lambda c: c.scroll(
            self._meta, scroll_filter=models.Filter(must=[equals("entry", "vector_model")]), limit=10_000,
        ))
        self._models = {str(p.payload["model_id"]): str(p.payload["collection"]) for p in points if p.payload}
        self._dims = {str(p.payload["model_id"]): int(p.payload["dim"]) for p in points if p.payload}

    def _vector_collection(self, model_id: str, dim: int) -> str:
        """The collection of ``model_id``'s vectors, created (dot product of unit vectors, ``dim``) on first use.

        Raises:
            InputError: the model's stored vectors have another dimension.
        """
        known = self._models.get(model_id) or self._refreshed_model(model_id)
        if known is not None:
            size = self._dims[model_id]
            if size != dim:
                raise InputError(f"vectors of model {model_id!r} have {size} dimensions, these have {dim}")
            return known
        name = f"{self._prefix}vectors_{hashlib.sha256(model_id.encode()).hexdigest()[:16]}"
        self._create(name, vectors_config=models.VectorParams(size=dim, distance=models.Distance.DOT))
        self._index(name, {k: v for k, v in PAYLOAD_INDEXES.items() if k not in ("source_key", "vector_model")})
        self._call(lambda c: c.upsert(self._meta, [models.PointStruct(
            id=point_id(f"model:{model_id}"), vector={},
            payload={"entry": "vector_model", "model_id": model_id, "collection": name, "dim": dim},
        )], wait=True))
        self._models[model_id] = name
        self._dims[model_id] = dim
        return name

    @property
    def description(self) -> str:
        """``qdrant (local mode, /dir)``, ``qdrant (local mode, in memory)`` or ``qdrant (URL)``
        (:class:`~mission_memory.stores.base.DescribedStore`)."""
        if not self._local:
            return f"qdrant ({self._location})"
        return f"qdrant (local mode, {'in memory' if self._location == ':memory:' else self._location})"

    @property
    def location(self) -> str:
        """The local-mode folder, ``:memory:`` or the server's URL."""
        return self._location

    @property
    def schema_version(self) -> int:
        """The record schema version the collections hold (:data:`LAYOUT_VERSION` once created)."""
        found = self._call(lambda c: c.retrieve(self._meta, [point_id("layout")]))
        return int(found[0].payload["version"]) if found and found[0].payload else 0

    def ensure_sound(self) -> None:
        """Raise :class:`BackendUnavailable` when a collection is missing or its status is red."""
        names = [self._records, self._keys, self._events, self._state, self._meta, *self._models.values()]
        for name in names:
            try:
                info = self._run(self._client.get_collection, name)
            except _CLIENT_ERRORS as exc:
                raise BackendUnavailable(f"Qdrant at {self._where}: collection {name} is missing ({exc})") from exc
            if info.status == models.CollectionStatus.RED:
                raise BackendUnavailable(f"Qdrant at {self._where}: collection {name} is damaged (status red)")

    def close(self) -> None:
        """Close the client and the tokenizer."""
        self._client.close()
        self._terms.close()

    # -- records --------------------------------------------------------------------------------

    def _payload(self, record: Record, vector_model: str | None) -> dict[str, Any]:
        return {
            **filter_columns(record),
            "record_id": record.id,
            "source_key": record.source_key,
            "kind": record.kind.value,
            "vector_model": vector_model,
            "record": record.model_dump(mode="json"),
        }

    def _retrieve(self, collection: str, ids: Sequence[str], payload: bool | list[str] = True,
                  vectors: bool = False) -> list[models.Record]:
        out: list[models.Record] = []
        wanted = list(dict.fromkeys(ids))
        for start in range(0, len(wanted), _PAGE):
            chunk = [point_id(i) for i in wanted[start : start + _PAGE]]
            out.extend(self._run(
                self._client.retrieve, collection, chunk, with_payload=payload, with_vectors=vectors,
            ))
        return out

    def _scroll_all(self, collection: str, where: models.Filter | None, payload: bool | list[str]) -> Iterator[models.Record]:
        offset: models.ExtendedPointId | None = None
        while True:
            points, offset = self._run(
                self._client.scroll, collection, scroll_filter=where, limit=_PAGE, offset=offset, with_payload=payload,
            )
            yield from points
            if offset is None:
                return

    def known_ids(self, record_ids: Iterable[str]) -> set[str]:
        """Which of ``record_ids`` are stored."""
        return {str(p.payload["record_id"]) for p in self._retrieve(self._records, list(record_ids), ["record_id"])
                if p.payload}

    def upsert_records(self, records: Sequence[Record], *, merge: RecordMerge | None = None) -> UpsertOutcome:
        """Store ``records`` (see :meth:`upsert`).

        With ``merge``, a record whose source key holds another is replaced by ``merge(stored, new)``,
        read and written under this store's lock (one process's threads; Qdrant has no transaction
        for several processes sharing a server, docs/adr/0078).
        """
        if merge is None:
            return self.upsert(records, None, "")
        with self._lock:
            records = [record.redacted() for record in records]
            held = self._held_by_keys([r.source_key for r in records])
            stored = self.get([rid for r in records if (rid := held.get(r.source_key)) and rid != r.id])
            merged = [merge(stored[held[r.source_key]], r) if held.get(r.source_key) in stored else r for r in records]
            return self.upsert(merged, None, "")

    def upsert(
        self, records: Sequence[Record], vectors: npt.NDArray[np.float32] | None, model_id: str
    ) -> UpsertOutcome:
        """Store ``records`` with their row-aligned ``vectors`` of ``model_id``.

        Each record first goes through :meth:`Record.redacted` (a record that still holds a secret
        is stored redacted, its id derived again; docs/adr/0053).
        A record whose id is stored is unchanged; one whose source key holds another record
        replaces it (and its vector); otherwise it is added. Written in the order described in
        the module docstring (Qdrant has no transaction spanning collections).

        Raises:
            InputError: ``vectors`` does not have one row per record (nothing is written).
        """
        if vectors is not None:
            check_vector_rows(len(records), vectors)
        records = [record.redacted() for record in records]  # the last guard: no secret reaches disk (docs/adr/0053)
        outcome = UpsertOutcome()
        stored = self.known_ids([r.id for r in records])
        held = self._held_by_keys([r.source_key for r in records])
        fresh: dict[str, tuple[int, Record]] = {}  # by source key: a later record replaces an earlier one
        mapped: dict[str, Record] = {}  # source key -> the record the key map must name
        batch_ids: set[str] = set()
        for i, record in enumerate(records):
            if record.id in stored or record.id in batch_ids:
                outcome.unchanged.append(record.id)
                if record.id in stored and held.get(record.source_key) != record.id:
                    mapped[record.source_key] = record  # an interrupted write: finish it
                continue
            if record.source_key in held or record.source_key in fresh:
                outcome.replaced.append(record.id)
            else:
                outcome.added.append(record.id)
            batch_ids.add(record.id)
            fresh[record.source_key] = (i, record)
            mapped[record.source_key] = record
        if not mapped:
            return outcome
        stale = [held[key] for key, record in mapped.items() if key in held and held[key] != record.id]
        kept = list(fresh.values())
        vector_model = model_id if vectors is not None else None
        if vectors is not None and kept:
            collection = self._vector_collection(model_id, int(vectors.shape[1]))
            self._put_vector_points(collection, [r for _, r in kept], vectors[[i for i, _ in kept]])
        lexical = self._terms.document_terms([(r.title, r.text) for _, r in kept])
        written = time.time_ns()
        points = [
            models.PointStruct(id=point_id(r.id), vector=_sparse_vector(terms.vector), payload={
                **self._payload(r, vector_model), **_lexical_payload(terms), _WRITTEN: written + place,
            })
            for place, ((_, r), terms) in enumerate(zip(kept, lexical, strict=True))
        ]
        for start in range(0, len(points), _PAGE):
            self._run(self._client.upsert, self._records, points[start : start + _PAGE], wait=True)
        self._delete_records(stale, keep_keys=True)
        entries = [
            models.PointStruct(id=_key_point(key), vector={},
                               payload={"source_key": key, "record_id": r.id, "mission": r.provenance.mission})
            for key, r in mapped.items()
        ]
        for start in range(0, len(entries), _PAGE):
            self._run(self._client.upsert, self._keys, entries[start : start + _PAGE], wait=True)
        return outcome

    def _held_by_keys(self, source_keys: Sequence[str]) -> dict[str, str]:
        """The record id the key map names for each of ``source_keys`` that it holds."""
        keys = list(dict.fromkeys(source_keys))
        out: dict[str, str] = {}
        for start in range(0, len(keys), _PAGE):
            chunk = [_key_point(key) for key in keys[start : start + _PAGE]]
            for p in self._run(self._client.retrieve, self._keys, chunk, with_payload=True):
                if p.payload:
                    out[str(p.payload["source_key"])] = str(p.payload["record_id"])
        return out

    def _delete_records(self, record_ids: Sequence[str], keep_keys: bool = False) -> int:
        """Delete records with their vectors (and, unless ``keep_keys``, the key-map entries naming
        them, first: a record the map does not name is healed by the next upsert of its source);
        return how many records existed."""
        found = self._retrieve(self._records, record_ids, ["record_id", "source_key", "vector_model"])
        if not found:
            return 0
        payloads = [cast(dict[str, Any], p.payload) for p in found]
        if not keep_keys:
            held = self._held_by_keys([str(p["source_key"]) for p in payloads])
            naming = [_key_point(key) for key, rid in held.items()
                      if rid in {str(p["record_id"]) for p in payloads}]
            self._delete_ids(self._keys, naming)
        self._delete_ids(self._records, [str(p.id) for p in found])
        by_model: dict[str, list[str]] = {}
        for p in found:
            model = cast(dict[str, Any], p.payload).get("vector_model")
            if model is not None:
                by_model.setdefault(str(model), []).append(str(p.id))
        if any(model not in self._models for model in by_model):
            self._load_models()  # another replica may have added a model
        for model, pids in by_model.items():
            if model in self._models:
                self._delete_ids(self._models[model], pids)
        return len(found)

    def _delete_ids(self, collection: str, pids: Sequence[str]) -> None:
        for start in range(0, len(pids), _PAGE):
            chunk: list[models.ExtendedPointId] = list(pids[start : start + _PAGE])
            self._run(self._client.delete, collection, models.PointIdsList(points=chunk), wait=True)

    def _put_vector_points(self, collection: str, records: Sequence[Record], vectors: npt.NDArray[np.float32]) -> None:
        points = [
            models.PointStruct(
                id=point_id(r.id), vector=np.asarray(v, dtype=np.float32).tolist(),
                payload={**filter_columns(r), "record_id": r.id, "kind": r.kind.value},
            )
            for r, v in zip(records, vectors, strict=True)
        ]
        for start in range(0, len(points), _PAGE):
            self._run(self._client.upsert, collection, points[start : start + _PAGE], wait=True)

    def relocate(self, moves: Mapping[str, str]) -> int:
        """Set the provenance URI of stored records (``{record id: uri}``, the record kept whole in its
        payload); return how many changed."""
        changed = 0
        for rid, record in self.get(list(moves)).items():
            if record.provenance.uri == moves[rid]:
                continue
            moved = record.model_copy(update={"provenance": record.provenance.model_copy(update={"uri": moves[rid]})})
            self._run(self._client.set_payload, self._records, {"record": moved.model_dump(mode="json")},
                      points=[point_id(rid)], wait=True)
            changed += 1
        return changed

    def delete(self, record_ids: Iterable[str]) -> int:
        """Delete these records and their vectors; return how many existed."""
        return self._delete_records(list(dict.fromkeys(record_ids)))

    def get(self, record_ids: Sequence[str]) -> dict[str, Record]:
        """Records by id (ids that are not stored are absent)."""
        out = {}
        for p in self._retrieve(self._records, record_ids, ["record"]):
            record = _record_of(p)
            out[record.id] = record
        return out

    def iterate(self, batch: int = 256) -> Iterator[list[Record]]:
        """Every record, in batches of at most ``batch``, in point-id order."""
        offset: models.ExtendedPointId | None = None
        while True:
            try:
                points, offset = self._run(
                    self._client.scroll, self._records, limit=batch, offset=offset, with_payload=["record"],
                )
            except _CLIENT_ERRORS as exc:
                raise self._translate(exc) from exc
            if points:
                yield [_record_of(p) for p in points]
            if offset is None:
                return

    def ids_by_source_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """Record id by source key, for the keys that are stored (read from the key map)."""
        return self._held_by_keys(keys)

    def priors_of(self, record_ids: Sequence[str]) -> dict[str, RecordPriors]:
        """:class:`RecordPriors` by record id."""
        out: dict[str, RecordPriors] = {}
        for p in self._retrieve(self._records, record_ids, ["record", _WRITTEN]):
            record = _record_of(p)
            attrs = record.attributes
            written = (p.payload or {}).get(_WRITTEN)
            out[record.id] = RecordPriors(
                layer=record.layer, kind=record.kind,
                bare_merge=bool(attrs.get("merge")) and attrs.get("has_body") in (False, 0),
                criticality=record.criticality,
                superseded=record.kind is RecordKind.DECISION and DecisionAttributes.marks_superseded(attrs),
                time=record.provenance.time,
                stored=datetime.fromtimestamp(int(written) / 1e9, UTC) if isinstance(written, (int, float)) else None,
            )
        return out

    def most_critical(self, where: SearchFilter, limit: int) -> list[Hit]:
        """The ``limit`` most critical records passing ``where`` (newest first among equals).

        Qdrant orders by one payload key: the most critical ``limit`` give the lowest criticality
        kept; records above it are all taken, records at it are taken newest first.
        """
        if limit <= 0:
            return []
        base = search_filter(where)
        top, _ = self._call(lambda c: c.scroll(
            self._records, scroll_filter=base, limit=limit, with_payload=["criticality"],
            order_by=models.OrderBy(key="criticality", direction=models.Direction.DESC),
        ))
        if not top:
            return []
        floor = float(cast(dict[str, Any], top[-1].payload)["criticality"])
        above = self._ordered(_and(base, models.FieldCondition(key="criticality", range=models.Range(gt=floor))),
                              "criticality", limit, ["criticality", "time", "record_id"])
        at = self._ordered(_and(base, models.FieldCondition(key="criticality", range=models.Range(gte=floor, lte=floor))),
                           "time", limit - len(above), ["criticality", "time", "record_id"])
        rows = [cast(dict[str, Any], p.payload) for p in (*above, *at)]
        rows.sort(key=lambda r: (-float(r["criticality"]), -float(r["time"]), str(r["record_id"])))
        return [Hit(record_id=str(r["record_id"]), score=float(r["criticality"])) for r in rows[:limit]]

    def _ordered(self, where: models.Filter, key: str, limit: int, payload: list[str]) -> list[models.Record]:
        """Up to ``limit`` points passing ``where``, highest ``key`` first."""
        if limit <= 0:
            return []
        points, _ = self._call(lambda c: c.scroll(
            self._records, scroll_filter=where, limit=limit, with_payload=payload,
            order_by=models.OrderBy(key=key, direction=models.Direction.DESC),
        ))
        return points

    def delete_missing(
        self, mission: str, kinds: Sequence[str], keep_source_keys: Iterable[str],
        *, spare: Callable[[Record], bool] | None = None,
    ) -> int:
        """Delete records of ``mission`` and ``kinds`` whose source key is not kept and that ``spare``
        does not keep; return how many.

        Qdrant has no transactions: the candidates, with their stored payload, are read just before
        the delete and ``spare`` judges them as stored then (docs/adr/0056).
        """
        if not kinds:
            return 0
        keep = set(keep_source_keys)
        where = models.Filter(must=[equals("mission", mission),
                                    models.FieldCondition(key="kind", match=models.MatchAny(any=list(kinds)))])
        fields = ["source_key", "record_id"] + (["record"] if spare is not None else [])
        stale = [str(cast(dict[str, Any], p.payload)["record_id"])
                 for p in self._scroll_all(self._records, where, fields)
                 if cast(dict[str, Any], p.payload).get("source_key") not in keep
                 and (spare is None or not spare(_record_of(p)))]
        return self._delete_records(stale)

    def event_kinds(self, where: SearchFilter) -> list[EventKind]:
        """Every kind of domain event passing ``where``, exact (:class:`~mission_memory.stores.base.EventKindIndex`):
        the matching points' payloads are scrolled in pages and folded by kind key (docs/adr/0088)."""
        base = _and(search_filter(where), equals("kind", RecordKind.DOMAIN_EVENT.value))
        acc: dict[str, list[Any]] = {}
        for point in self._scroll_all(self._records, base, ["record_id", "time", "criticality", "record"]):
            payload = cast(dict[str, Any], point.payload)
            rid, when, crit = str(payload["record_id"]), float(payload["time"]), float(payload["criticality"])
            record = cast(dict[str, Any], payload["record"])
            key = str((record.get("attributes") or {}).get("kind_key") or f"record:{rid}")
            ref = str((record.get("provenance") or {}).get("ref") or "")
            a = acc.get(key)
            if a is None:  # [count, first, last, top, best (crit, time, id), oldest (time, id, ref), newest]
                acc[key] = [1, when, when, crit, (crit, when, rid), (when, rid, ref), (when, rid, ref)]
                continue
            a[0] += 1
            a[1], a[2], a[3] = min(a[1], when), max(a[2], when), max(a[3], crit)
            a[4] = max(a[4], (crit, when, rid))
            a[5] = min(a[5], (when, rid, ref))
            a[6] = max(a[6], (when, rid, ref))
        return sort_event_kinds(
            EventKind(key=key, count=a[0], first_seen=datetime.fromtimestamp(a[1], UTC),
                      last_seen=datetime.fromtimestamp(a[2], UTC), max_criticality=a[3], best_id=a[4][2],
                      oldest_ref=a[5][2], newest_ref=a[6][2])
            for key, a in acc.items()
        )

    def event_retention_rows(self, mission: str, until: datetime, batch: int = 5000) -> Iterator[list[EventRetentionRow]]:
        """Domain events of ``mission`` before ``until`` as :class:`EventRetentionRow` s, scrolled in pages."""
        where = models.Filter(must=[equals("mission", mission), equals("kind", RecordKind.DOMAIN_EVENT.value),
                                    *_time_window("time", None, until)])
        page: list[EventRetentionRow] = []
        for point in self._scroll_all(self._records, where, ["record"]):
            record = _record_of(point)
            a = record.attributes
            page.append(EventRetentionRow(record.id, record.provenance.time, str(a.get("event_type") or ""),
                                          str(a.get("event_id") or ""), str(a.get("state") or "")))
            if len(page) >= batch:
                yield page
                page = []
        if page:
            yield page

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
        """Records of ``kinds``, newest provenance time first (see :meth:`RecordStore.records_of_kind`)."""
        if not kinds or limit <= 0:
            return []
        must: list[models.Condition] = [models.FieldCondition(key="kind", match=models.MatchAny(any=[str(k) for k in kinds]))]
        for key, value in (("mission", mission), ("operator", operator)):
            if value is not None:
                must.append(equals(key, value))
        must.extend(_time_window("time", since, until))
        points = self._ordered(models.Filter(must=must), "time", limit, ["record"])
        return [_record_of(p) for p in points]

    def count_by_component(
        self, kinds: Sequence[str], *, mission: str | None = None, after: datetime, through: datetime
    ) -> dict[str, int]:
        """Records of ``kinds`` with time in ``(after, through]``, counted per component."""
        if not kinds:
            return {}
        must: list[models.Condition] = [
            models.FieldCondition(key="kind", match=models.MatchAny(any=[str(k) for k in kinds])),
            models.FieldCondition(key="time", range=models.Range(gt=_ts(after), lte=_ts(through))),
        ]
        if mission is not None:
            must.append(equals("mission", mission))
        where = models.Filter(must=must)
        out = self._facet("component", where)
        unset = self._count(self._records, _and(where, models.IsNullCondition(is_null=models.PayloadField(key="component"))))
        if unset:
            out[""] = unset
        return out

    def _facet(self, key: str, where: models.Filter | None = None) -> dict[str, int]:
        return {str(value): count for value, count in self._facet_values(key, where).items()}

    def _facet_values(self, key: str, where: models.Filter | None = None) -> dict[Any, int]:
        found = self._call(lambda c: c.facet(self._records, key=key, facet_filter=where, limit=_FACET_LIMIT, exact=True))
        return {hit.value: int(hit.count) for hit in found.hits}

    def _count(self, collection: str, where: models.Filter | None = None) -> int:
        return int(self._call(lambda c: c.count(collection, count_filter=where, exact=True)).count)

    def delete_mission(self, mission: str) -> dict[str, int]:
        """Delete ``mission``'s records with their vectors, its retrieval events and its state."""
        where = models.Filter(must=[equals("mission", mission)])
        counts = {"records": self._count(self._records, where), "retrieval_events": self._count(self._events, where),
                  "state": self._count(self._state, where)}
        self._load_models()
        for collection in self._models.values():
            self._run(self._client.delete, collection, models.FilterSelector(filter=where), wait=True)
        for collection in (self._keys, self._records, self._events, self._state):
            self._run(self._client.delete, collection, models.FilterSelector(filter=where), wait=True)
        return counts

    def counts(self) -> dict[str, dict[str, int]]:
        """Record counts as ``{layer: {kind: n}}`` (every layer present)."""
        out: dict[str, dict[str, int]] = {layer.value: {} for layer in Layer}
        for kind, n in self._facet("kind").items():
            out[LAYER_OF_KIND[RecordKind(kind)].value][kind] = n
        return out

    def count_kind(self, mission: str, kind: str) -> int:
        """How many records of ``kind`` ``mission`` holds."""
        return self._count(self._records, models.Filter(must=[equals("mission", mission), equals("kind", kind)]))

    def missions(self) -> dict[str, int]:
        """Record counts by mission."""
        return self._facet("mission")

    def components(self, limit: int = 30, *, mission: str | None = None) -> dict[str, int]:
        """Record counts of the ``limit`` most common components (of ``mission``'s records; None: of
        all; ties by name)."""
        where = None if mission is None else models.Filter(must=[equals("mission", mission)])
        ranked = sorted(self._facet("component", where).items(), key=lambda item: (-item[1], item[0]))
        return dict(ranked[:limit])

    def has_component(self, component: str, *, mission: str | None = None) -> bool:
        """Whether any record (of ``mission``; None: of any) has ``component``."""
        must: list[models.Condition] = [equals("component", component)]
        must += [] if mission is None else [equals("mission", mission)]
        points, _ = self._call(lambda c: c.scroll(
            self._records, scroll_filter=models.Filter(must=must), limit=1, with_payload=False,
        ))
        return bool(points)

    # -- lexical search -------------------------------------------------------------------------

    def bm25_search(self, terms: Sequence[str], where: SearchFilter, limit: int) -> list[Hit]:
        """The best ``limit`` hits over the layers of ``where`` (BM25 with Qdrant's IDF; higher is better)."""
        merged = [h for hits in self.bm25_search_by_layer(terms, where, limit).values() for h in hits]
        return sorted(merged, key=lambda h: -h.score)[:limit]

    def bm25_search_by_layer(self, terms: Sequence[str], where: SearchFilter, limit: int) -> dict[Layer, list[Hit]]:
        """The SQLite store's BM25 hits of each layer in ``where.layers``, best first: FTS5's
        ``bm25(records_fts, 2.0, 1.0)`` scores (negated, higher is better) over the same rows.

        As the SQLite store (:meth:`~mission_memory.stores.sqlite.SqliteStore.bm25_search_by_layer`):
        terms found in more than :data:`~mission_memory.stores.sqlite_fts_terms.COMMON_SHARE` of the
        records are left out while rarer ones remain; without field filters, the best
        ``limit × 3`` rows of the whole store are taken and those of ``where``'s layers kept; under
        filters, the best ``limit × len(where.layers)`` rows passing them; each layer capped at
        ``limit``. Three requests: a facet of token counts (``N``, ``avgdl``), a batch of one-term
        probes (each term's ``n`` from Qdrant's IDF) and the candidate search, read deeper until
        no record outside the candidates can beat the last one kept (docs/adr/0043).
        """
        out: dict[Layer, list[Hit]] = {layer: [] for layer in where.layers}
        if not terms or limit <= 0:
            return out
        plan = self._lexical_plan(terms)
        if plan is None:
            return out
        if where.active():
            wanted, condition = limit * len(where.layers), search_filter(where)
        else:
            wanted, condition = limit * len(Layer), None
        for record_id, layer, score in self._fts5_ranked(plan, condition, wanted):
            if layer in out and len(out[layer]) < limit:
                out[layer].append(Hit(record_id=record_id, score=score))
        return out

    def _idf_params(self) -> models.SearchParams | None:
        """IDF over the live records: on a server the default (global) statistics read the sparse
        index, which goes on counting deleted points until it is optimised; a corpus filter is
        counted over live points. Local mode's global statistics are live already (and its corpus
        path is a scan in Python)."""
        if self._local:
            return None
        return models.SearchParams(idf=models.IdfCorpusParams(corpus=models.Filter(must=[
            models.FieldCondition(key=TOKENS_FIELD, range=models.Range(gte=0)),
        ])))

    def _old_layout(self) -> BackendUnavailable:
        return BackendUnavailable(
            f"Qdrant at {self._where}: records written with sparse layout 1 (by an older mission-memory);"
            " open the store once with this version to rewrite them"
        )

    def _lexical_plan(self, terms: Sequence[str]) -> _LexicalPlan | None:
        """FTS5's statistics for ``terms`` and the candidate query (None: nothing can match).

        ``N`` and ``Σ|d|`` come from one exact facet over the token counts; each distinct token's
        ``n`` from a one-term probe: the best record holding it scores ``idf × w`` with its stored
        weight ``w`` known, and Qdrant's ``idf`` gives ``n`` back (:func:`document_frequency`).
        """
        lengths = self._facet_values(TOKENS_FIELD)
        records = sum(lengths.values())
        if records == 0:
            if self._count(self._records):
                raise self._old_layout()
            return None
        total = sum(length * count for length, count in lengths.items())
        tokens = self._terms.term_tokens(terms)
        indices = list(dict.fromkeys(term_index(t) for ts in tokens for t in ts))
        params = self._idf_params()
        probes = self._batch(self._records, [
            models.QueryRequest(query=models.SparseVector(indices=[i], values=[1.0]), using=_SPARSE, limit=1,
                                with_payload=False, with_vector=[_SPARSE], params=params)
            for i in indices
        ]) if indices else []
        documents: dict[int, int] = {}
        qdrant_idf: dict[int, float] = {}
        for index, found in zip(indices, probes, strict=True):
            weight = _sparse_weight(found[0], index) if found else 0.0
            if weight > 0.0:
                qdrant_idf[index] = float(found[0].score) / weight
                documents[index] = document_frequency(qdrant_idf[index], records)
        # FtsTermStats.plan: a term whose tokens are all in more than COMMON_SHARE of the records
        # is left out while rarer terms remain.
        bound = COMMON_SHARE * records
        common = [len(terms) >= 2 and bool(ts) and all(documents.get(term_index(t), 0) > bound for t in ts)
                  for ts in tokens]
        if all(common):
            common = [False] * len(terms)
        phrases = [(term_index(t), fts5_idf(records, documents[term_index(t)]))
                   for ts, is_common in zip(tokens, common, strict=True) if not is_common
                   for t in ts if term_index(t) in documents]
        if not phrases:
            return None
        weights: dict[int, float] = {}
        for index, idf in phrases:
            weights[index] = weights.get(index, 0.0) + idf / qdrant_idf[index]
        ordered = sorted(weights.items())
        query = SparseTerms([i for i, _ in ordered], [w for _, w in ordered])
        return _LexicalPlan(phrases, query, records, total / records, params)

    def _fts5_ranked(
        self, plan: _LexicalPlan, condition: models.Filter | None, wanted: int
    ) -> list[tuple[str, Layer, float]]:
        """The best ``wanted`` records matching ``plan`` and ``condition``: ``(record id, layer,
        FTS5 score)``, best first; equal scores in write order, as FTS5 orders them by row id.

        The candidate search scores ``Σ idf · w`` with the stored weights ``w`` at
        :data:`~mission_memory.stores.qdrant_terms.AVERAGE_TOKENS`; at the live ``avgdl`` a
        weight differs from it by at most the factor ``max(1, avgdl / AVERAGE_TOKENS)``, so a record
        beyond the candidates scores at most that times the last candidate's search score. The
        search is read 4× deeper until the ``wanted``-th exact score reaches that bound.
        """
        depth = max(2 * wanted, wanted + 50)
        ceiling = max(1.0, plan.average / AVERAGE_TOKENS) * (1.0 + _BOUND_SLACK)
        while True:
            [found] = self._batch(self._records, [models.QueryRequest(
                query=_sparse(plan.query), using=_SPARSE, filter=condition, limit=depth, params=plan.params,
                with_payload=["record_id", "layer", _WRITTEN, TOKENS_FIELD, LARGE_FREQUENCIES_FIELD],
                with_vector=[_SPARSE],
            )])
            scored = []
            for point in found:
                payload = cast(dict[str, Any], point.payload)
                vector = cast(dict[str, models.SparseVector], point.vector)[_SPARSE]
                if payload.get(TOKENS_FIELD) is None:
                    raise self._old_layout()
                length = int(payload[TOKENS_FIELD])
                frequencies = raw_frequencies(vector.indices, vector.values, length, payload.get(LARGE_FREQUENCIES_FIELD))
                score = fts5_scores(plan.phrases, frequencies, length, plan.average)
                scored.append((-score, int(payload.get(_WRITTEN, 0)), str(payload["record_id"]), Layer(payload["layer"])))
            scored.sort()
            if len(found) < depth or (len(scored) >= wanted and -scored[wanted - 1][0] >= ceiling * found[-1].score):
                return [(record_id, layer, -negated) for negated, _, record_id, layer in scored[:wanted]]
            depth *= 4

    def _batch(self, collection: str, requests: list[models.QueryRequest]) -> list[list[models.ScoredPoint]]:
        responses = self._call(lambda c: c.query_batch_points(collection, requests=requests))
        return [response.points for response in responses]

    def phrase_search(
        self, phrases: Sequence[str], where: SearchFilter, limit: int, title_only: bool = False
    ) -> list[str]:
        """Ids of records containing any of ``phrases`` as an exact token sequence (in the title
        only, with ``title_only``), best first by FTS5's BM25 of the phrases, as the SQLite store
        orders them (equal scores in write order).

        Each phrase is looked for among the records holding its rarest token: all of them, when
        at most :data:`_PHRASE_SCAN` hold it (``ADR 0005``, a tracker key), so the phrase's
        document count and FTS5's IDF are exact; else the best :data:`_PHRASE_DEPTH` sparse
        matches of that token, and the order is approximate (docs/adr/0043).
        """
        wanted = [(i, tokens) for i, tokens in enumerate(self._terms.term_tokens(phrases)) if tokens]
        lengths = self._facet_values(TOKENS_FIELD) if wanted and limit > 0 else {}
        records = sum(lengths.values())
        if not records:
            return []
        average = sum(length * count for length, count in lengths.items()) / records
        held = self._documents_holding(list(dict.fromkeys(t for _, tokens in wanted for t in tokens)), records)
        rarest = [min(tokens, key=held.__getitem__) for _, tokens in wanted]
        counts = [held[t] for t in rarest]
        found = self._batch(self._records, [
            models.QueryRequest(query=models.SparseVector(indices=[term_index(token)], values=[1.0]), using=_SPARSE,
                                limit=n if 0 < n <= _PHRASE_SCAN else _PHRASE_DEPTH, params=self._idf_params(),
                                with_payload=["record", _WRITTEN, TOKENS_FIELD])
            for token, n in zip(rarest, counts, strict=True) if n > 0
        ])
        holding = [tokens for (_, tokens), n in zip(wanted, counts, strict=True) if n > 0]
        # Per phrase: each candidate's frequency (title × 2, text × 1, as bm25(records_fts, 2.0, 1.0)).
        seen: dict[str, tuple[Record, int, int]] = {}
        frequencies: list[dict[str, float]] = []
        for tokens, points in zip(holding, found, strict=True):
            records_here = [_record_of(p) for p in points]
            split = self._terms.tokens([(r.title, "" if title_only else r.text) for r in records_here])
            counted: dict[str, float] = {}
            for point, record, (title_tokens, text_tokens) in zip(points, records_here, split, strict=True):
                f = TITLE_WEIGHT * occurrences(title_tokens, tokens) + occurrences(text_tokens, tokens)
                if f > 0:
                    payload = cast(dict[str, Any], point.payload)
                    counted[record.id] = f
                    seen[record.id] = (record, int(payload.get(_WRITTEN, 0)), int(payload.get(TOKENS_FIELD, 0)))
            frequencies.append(counted)
        idfs = [fts5_idf(records, len(counted)) for counted in frequencies]
        ranked = []
        for record_id, (record, written, length) in seen.items():
            if not matches(where, filter_columns(record)):
                continue
            score = fts5_scores(list(enumerate(idfs)), {i: counted.get(record_id, 0.0)
                                                         for i, counted in enumerate(frequencies)}, length, average)
            ranked.append((-score, written, record_id))
        return [record_id for _, _, record_id in sorted(ranked)[:limit]]

    def _documents_holding(self, tokens: Sequence[str], records: int) -> dict[str, int]:
        """How many records hold each token (0: none), from Qdrant's IDF of one-term probes (one batch)."""
        indices = [term_index(token) for token in tokens]
        found = self._batch(self._records, [models.QueryRequest(
            query=models.SparseVector(indices=[index], values=[1.0]), using=_SPARSE, limit=1,
            with_payload=False, with_vector=[_SPARSE], params=self._idf_params(),
        ) for index in indices])
        out: dict[str, int] = {}
        for token, index, points in zip(tokens, indices, found, strict=True):
            weight = _sparse_weight(points[0], index) if points else 0.0
            out[token] = document_frequency(float(points[0].score) / weight, records) if weight > 0.0 else 0
        return out

    # -- vectors --------------------------------------------------------------------------------

    def put_vectors(self, record_ids: Sequence[str], vectors: npt.NDArray[np.float32], model_id: str) -> None:
        """Store vectors of ``model_id`` for stored records, replacing their vector (of any model).

        Raises:
            InputError: ``vectors`` does not have one row per record id (nothing is written).
        """
        check_vector_rows(len(record_ids), vectors)
        if not record_ids:
            return
        points = self._retrieve(self._records, record_ids, ["record", "vector_model"])
        if not points:
            return
        row_of = {rid: i for i, rid in enumerate(record_ids)}
        records = [_record_of(p) for p in points]
        collection = self._vector_collection(model_id, int(vectors.shape[1]))
        self._put_vector_points(collection, records, vectors[[row_of[r.id] for r in records]])
        self._call(lambda c: c.set_payload(
            self._records, {"vector_model": model_id}, points=[p.id for p in points], wait=True,
        ))
        others: dict[str, list[str]] = {}
        for p in points:
            old = (p.payload or {}).get("vector_model")
            if old is not None and old != model_id and old in self._models:
                others.setdefault(old, []).append(str(p.id))
        for old, pids in others.items():
            self._delete_ids(self._models[old], pids)

    def dense_search_by_layer(
        self, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int, per_kind: bool = False
    ) -> dict[Layer, list[Hit]]:
        """Cosine similarity of ``query`` with the vectors of ``model_id``: the best ``limit`` per
        layer (with ``per_kind``, per record kind of each layer, merged per layer best first), one
        batch request (a server searches its HNSW graph under the filter; local mode scans
        exactly). Scores are cosine similarities."""
        out: dict[Layer, list[Hit]] = {layer: [] for layer in where.layers}
        collection = self._models.get(model_id) or self._refreshed_model(model_id)
        if collection is None or limit <= 0:
            return out
        vector = np.asarray(query, dtype=np.float32).tolist()
        groups: list[tuple[Layer, RecordKind | None, models.Filter]] = []
        for layer in where.layers:
            layer_filter = search_filter(where, (layer,))
            if not per_kind:
                groups.append((layer, None, layer_filter))
                continue
            for each in RecordKind:
                if LAYER_OF_KIND[each] is layer:
                    groups.append((layer, each, models.Filter(must=[
                        *cast(list[models.Condition], layer_filter.must), equals("kind", each.value),
                    ])))
        results = self._batch(collection, [
            models.QueryRequest(query=vector, filter=condition, limit=limit, with_payload=["record_id"])
            for _, _, condition in groups
        ])
        for (layer, kind, _), found in zip(groups, results, strict=True):
            out[layer].extend(Hit(str(cast(dict[str, Any], p.payload)["record_id"]), float(p.score), kind)
                              for p in found)
        if per_kind:
            for hits in out.values():
                hits.sort(key=lambda h: -h.score)  # stable: equal scores keep their kind's order
        return out

    def _refreshed_model(self, model_id: str) -> str | None:
        """The collection of ``model_id`` after re-reading the model list (another replica may
        have created it)."""
        self._load_models()
        return self._models.get(model_id)

    def vectors_for(self, record_ids: Sequence[str], model_id: str) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors of ``model_id`` by record id."""
        collection = self._models.get(model_id) or self._refreshed_model(model_id)
        if collection is None or not record_ids:
            return {}
        out: dict[str, npt.NDArray[np.float32]] = {}
        for p in self._retrieve(collection, record_ids, ["record_id"], vectors=True):
            vector = p.vector
            if isinstance(vector, list) and p.payload:
                out[str(p.payload["record_id"])] = np.asarray(vector, dtype=np.float32)
        return out

    def ids_without_vector(self, model_id: str, limit: int, *, mission: str | None = None) -> list[str]:
        """Up to ``limit`` ids of records (of ``mission``; None: of all) with no vector of ``model_id``."""
        if limit <= 0:
            return []
        must: list[models.Condition] | None = None if mission is None else [equals("mission", mission)]
        points, _ = self._call(lambda c: c.scroll(
            self._records, scroll_filter=models.Filter(must=must, must_not=[equals("vector_model", model_id)]),
            limit=limit, with_payload=["record_id"],
        ))
        return [str(cast(dict[str, Any], p.payload)["record_id"]) for p in points]

    def delete_vectors_not_of(self, model_id: str) -> int:
        """Delete every vector of another model (their collections); return how many."""
        self._load_models()
        deleted = 0
        for other, collection in list(self._models.items()):
            if other == model_id:
                continue
            deleted += self._count(collection)
            self._run(
                self._client.set_payload, self._records, {"vector_model": None},
                points=models.Filter(must=[equals("vector_model", other)]), wait=True,
            )
            self._run(self._client.delete_collection, collection)
            self._run(
                self._client.delete, self._meta, models.PointIdsList(points=[point_id(f"model:{other}")]), wait=True,
            )
            del self._models[other]
            self._dims.pop(other, None)
        return deleted

    def vector_models(self) -> dict[str, int]:
        """Stored vector counts by model id (models whose vectors were all deleted are left out)."""
        self._load_models()
        counts = {model: self._count(collection) for model, collection in self._models.items()}
        return {model: n for model, n in counts.items() if n}

    # -- retrieval events and state -------------------------------------------------------------

    def log_retrieval_event(self, event: NewRetrievalEvent) -> RetrievalEvent:
        """Store one retrieval event, giving it an id and the current time."""
        stored = RetrievalEvent(**event.model_dump(), id=uuid.uuid4().hex, time=datetime.now(UTC))
        self.put_retrieval_events([stored])
        return stored

    def retrieval_events(self, limit: int = 100) -> list[RetrievalEvent]:
        """The latest ``limit`` events, newest first."""
        return self._select_events(None, limit)

    def _select_events(self, where: models.Filter | None, limit: int) -> list[RetrievalEvent]:
        if limit <= 0:
            return []
        points, _ = self._call(lambda c: c.scroll(
            self._events, scroll_filter=where, limit=limit, with_payload=True,
            order_by=models.OrderBy(key="time", direction=models.Direction.DESC),
        ))
        out = []
        for p in points:
            item = dict(cast(dict[str, Any], p.payload))
            item["time"] = datetime.fromtimestamp(float(item["time"]), tz=UTC)
            out.append(RetrievalEvent.model_validate(item))
        return out

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
        """Events matching every given field, with ``since`` <= time < ``until``, newest first."""
        must: list[models.Condition] = [
            equals(key, value)
            for key, value in (("session_id", session_id), ("operator", operator), ("mission", mission))
            if value is not None
        ]
        must.extend(_time_window("time", since, until))
        return self._select_events(models.Filter(must=must) if must else None, limit)

    def count_retrieval_events(self) -> int:
        """How many events are stored."""
        return self._count(self._events)

    def put_retrieval_events(self, events: Sequence[RetrievalEvent]) -> int:
        """Store events as they are (id and time kept), skipping stored ids; return how many were new."""
        stored = {str(p.id) for p in self._retrieve(self._events, [e.id for e in events], False)}
        points = []
        for event in events:
            pid = point_id(event.id)
            if pid in stored:
                continue
            stored.add(pid)
            payload = event.model_dump(mode="json")
            payload["time"] = event.time.timestamp()
            points.append(models.PointStruct(id=pid, vector={}, payload=payload))
        for start in range(0, len(points), _PAGE):
            self._run(self._client.upsert, self._events, points[start : start + _PAGE], wait=True)
        return len(points)

    def get_state(self, mission: str, key: str) -> str | None:
        """The value of ``key`` for ``mission``, or None."""
        found = self._call(lambda c: c.retrieve(self._state, [point_id(f"state:{mission}\x00{key}")]))
        return str(found[0].payload["value"]) if found and found[0].payload else None

    def set_state(self, mission: str, key: str, value: str) -> None:
        """Set ``key`` of ``mission`` to ``value`` (redacted first: :func:`redacted_state_value`)."""
        value = redacted_state_value(value)  # the last guard: no secret reaches disk (docs/adr/0053)
        self._call(lambda c: c.upsert(self._state, [models.PointStruct(
            id=point_id(f"state:{mission}\x00{key}"), vector={},
            payload={"mission": mission, "key": key, "value": value},
        )], wait=True))

    def replace_state(self, mission: str, key: str, expected: str | None, value: str) -> bool:
        """Set ``key`` of ``mission`` to ``value`` if it holds ``expected`` (None: absent); True when set.

        Read and written under this store's lock: atomic for one process's threads and for local mode
        (one process holds its directory). Qdrant has no transaction, so processes sharing a Qdrant
        server may still interleave (as :meth:`upsert_records`' merge, docs/adr/0078).
        """
        with self._lock:
            if self.get_state(mission, key) != expected:
                return False
            self.set_state(mission, key, value)
            return True

    def state_items(self, mission: str | None = None) -> list[tuple[str, str, str]]:
        """Every ``(mission, key, value)``, of ``mission`` only when given, sorted."""
        where = models.Filter(must=[equals("mission", mission)]) if mission is not None else None
        return sorted((str(p.payload["mission"]), str(p.payload["key"]), str(p.payload["value"]))
                      for p in self._scroll_all(self._state, where, True) if p.payload)


def _key_point(source_key: str) -> str:
    """The key-map point id of a source key."""
    return point_id(f"key:{source_key}")


@dataclass(frozen=True)
class _LexicalPlan:
    """One BM25 query as FTS5 would run it: its phrases in query order as ``(sparse index, FTS5
    IDF)``, the candidate search's query vector, ``N``, ``avgdl`` and the IDF scope of the requests."""

    phrases: list[tuple[int, float]]
    query: SparseTerms
    records: int
    average: float
    params: models.SearchParams | None


def _lexical_payload(terms: DocumentTerms) -> dict[str, Any]:
    """The payload fields of a record's lexical side (token count; large raw frequencies)."""
    payload: dict[str, Any] = {TOKENS_FIELD: terms.tokens}
    if terms.large:
        payload[LARGE_FREQUENCIES_FIELD] = {str(index): f for index, f in terms.large.items()}
    return payload


def _sparse_weight(point: models.ScoredPoint, index: int) -> float:
    """The stored weight of ``index`` in a returned point's sparse vector (0 when absent)."""
    vector = cast(dict[str, models.SparseVector], point.vector or {}).get(_SPARSE)
    if vector is None:
        return 0.0
    for i, value in zip(vector.indices, vector.values, strict=True):
        if i == index:
            return float(value)
    return 0.0


def _sparse(terms: SparseTerms) -> models.SparseVector:
    return models.SparseVector(indices=terms.indices, values=terms.values)


def _sparse_vector(terms: SparseTerms) -> dict[str, Any]:
    return {} if terms.empty else {_SPARSE: _sparse(terms)}


def _record_of(point: models.Record | models.ScoredPoint) -> Record:
    return Record.model_validate(cast(dict[str, Any], point.payload)["record"])


def _and(where: models.Filter, condition: models.Condition) -> models.Filter:
    return models.Filter(must=[where, condition])


def _ts(moment: datetime) -> float:
    return as_utc(moment).timestamp()


def _time_window(key: str, since: datetime | None, until: datetime | None) -> list[models.Condition]:
    if since is None and until is None:
        return []
    return [models.FieldCondition(key=key, range=models.Range(
        gte=_ts(since) if since is not None else None, lt=_ts(until) if until is not None else None,
    ))]


def _conforms(store: QdrantStore) -> MemoryStore:
    """Never called: lets the type checker prove that QdrantStore satisfies :class:`MemoryStore`."""
    return store
