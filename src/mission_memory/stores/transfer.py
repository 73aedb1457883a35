"""Moving a whole memory between stores as JSON Lines: records, vectors, retrieval events, state.

The export format (version :data:`FORMAT_VERSION`), one JSON object per line, UTF-8:

1. a header ``{"type": "header", "format": "mission-memory-export", "version": 1, "exported_at": ...,
   "mission": M | null, "max_access_level": L | null}``;
2. ``{"type": "record", "record": {...}, "vector": {"model_id": ..., "dim": n, "f32le": base64} | null}``
   per record (the vector's float32 values, little-endian, base64: exact, so nothing is
   re-embedded and nothing is rounded);
3. ``{"type": "event", "event": {...}}`` per retrieval event, oldest first;
4. ``{"type": "state", "mission": ..., "key": ..., "value": ...}`` per state value;
5. a trailer ``{"type": "end", "records": n, "vectors": n, "events": n, "state": n}``, so that a
   truncated file is recognised.

Import reads the file twice: the first pass validates every line (a bad one is named by its line
number, and nothing is stored); the second writes in batches. Writing is idempotent (records by
content id, events by id, state by mission and key), so an import interrupted by a backend
failure is finished by running it again. ``mission`` narrows either direction to one mission;
``max_access_level`` leaves out records above that level on export (docs/design.md §10), every
retrieval event (a query's text is an operator's working note with no access level of its own: it
may quote what it looked for, such as a restricted task's title, and other operators' events are
hidden from non-leads; docs/adr/0055) and every state value except the bookkeeping that holds no
text (:data:`BOOKKEEPING_STATE_PREFIXES`: git heads, commit-access prints, tracker bookmarks); the
refresh state, for one, holds task titles.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TextIO

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mission_memory.errors import InputError
from mission_memory.mission_scope import unknown_mission
from mission_memory.records import AccessLevel, Record, redacted_state_value
from mission_memory.retrieval_events import RetrievalEvent
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.filters import ACCESS_ORDER

__all__ = ["BOOKKEEPING_STATE_PREFIXES", "FORMAT_NAME", "FORMAT_VERSION", "TransferSummary", "export_memory", "import_memory"]

FORMAT_NAME = "mission-memory-export"
FORMAT_VERSION = 1
BOOKKEEPING_STATE_PREFIXES = ("git_head", "commit_access", "tracker_items")
"""State keys a clearance-limited export keeps (the name, or the name and ``:<source>``): commit ids,
hashes and bookmarks, no record text."""
_BATCH = 256
_MAX_EVENTS = 10_000_000

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class TransferSummary:
    """What an export wrote or an import stored.

    Attributes:
        records, vectors, events, state: lines of each kind written (export) or read (import).
        added: records an import added or replaced (the rest were stored already).
        events_added: retrieval events an import stored (the rest were stored already).
        left_out: records an export left out for the access level.
        vector_models: vectors per embedding model id (import), so a caller can warn about vectors
            that the configured embedder cannot compare with (they need ``reindex``).
    """

    records: int = 0
    vectors: int = 0
    events: int = 0
    state: int = 0
    added: int = 0
    events_added: int = 0
    left_out: int = 0
    vector_models: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON-ready dict."""
        return asdict(self)


class _Vector(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model_id: str = Field(min_length=1)
    dim: int = Field(ge=1, le=65536)
    f32le: str

    def values(self) -> npt.NDArray[np.float32]:
        try:
            raw = base64.b64decode(self.f32le, validate=True)
        except ValueError as exc:
            raise ValueError(f"vector: f32le is not base64 ({exc})") from exc
        if len(raw) != 4 * self.dim:
            raise ValueError(f"vector: {len(raw)} bytes do not hold {self.dim} float32 values")
        array = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        if not np.all(np.isfinite(array)):
            raise ValueError("vector: holds a value that is not a finite number")
        return array


class _Header(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["header"]
    format: Literal["mission-memory-export"]
    version: int
    exported_at: datetime
    mission: str | None = None
    max_access_level: AccessLevel | None = None

    @field_validator("version")
    @classmethod
    def _known(cls, value: int) -> int:
        if value != FORMAT_VERSION:
            raise ValueError(f"format version {value} is not supported (this version reads {FORMAT_VERSION})")
        return value


class _RecordLine(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["record"]
    record: Record
    vector: _Vector | None = None


class _EventLine(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["event"]
    event: RetrievalEvent


class _StateLine(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["state"]
    mission: str
    key: str = Field(min_length=1)
    value: str


class _EndLine(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["end"]
    records: int = Field(ge=0)
    vectors: int = Field(ge=0)
    events: int = Field(ge=0)
    state: int = Field(ge=0)


_LINE_TYPES: dict[str, type[BaseModel]] = {
    "header": _Header, "record": _RecordLine, "event": _EventLine, "state": _StateLine, "end": _EndLine,
}


def _dump(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"


def _encode(model_id: str, vector: npt.NDArray[np.float32]) -> dict[str, Any]:
    values = np.ascontiguousarray(vector, dtype="<f4")
    return {"model_id": model_id, "dim": int(values.shape[0]), "f32le": base64.b64encode(values.tobytes()).decode()}


def export_memory(
    store: MemoryStore,
    out: TextIO,
    *,
    mission: str | None = None,
    max_access_level: AccessLevel | None = None,
    progress: Progress | None = None,
    now: datetime | None = None,
) -> TransferSummary:
    """Write the memory in ``store`` (or one ``mission`` of it) to ``out`` in the format above.

    Args:
        store: the store read.
        out: a text stream opened for writing.
        mission: export only this mission's records, events and state.
        max_access_level: leave out records above this access level, every retrieval event and
            the state values other than :data:`BOOKKEEPING_STATE_PREFIXES` (see the module docstring).
        progress: ``progress("export", done, total)`` as records are written.
        now: the header's export time (default: the current time).

    Raises:
        InputError: ``mission`` names no stored mission (the message lists the stored ones).
    """
    stored_missions = store.missions()
    if mission is not None and mission not in stored_missions:
        raise unknown_mission(mission, stored_missions)
    total = stored_missions.get(mission, 0) if mission is not None else sum(stored_missions.values())
    allowed = set(ACCESS_ORDER[: ACCESS_ORDER.index(max_access_level.value) + 1]) if max_access_level else None
    out.write(_dump({
        "type": "header", "format": FORMAT_NAME, "version": FORMAT_VERSION,
        "exported_at": (now or datetime.now(UTC)).isoformat(), "mission": mission,
        "max_access_level": max_access_level.value if max_access_level else None,
    }))
    models = list(store.vector_models())
    records = vectors = left_out = done = 0
    for batch in store.iterate(_BATCH):
        chosen = []
        for record in batch:
            if mission is not None and record.provenance.mission != mission:
                continue
            done += 1
            if allowed is not None and record.access_level.value not in allowed:
                left_out += 1
                continue
            chosen.append(record)
        found: dict[str, tuple[str, npt.NDArray[np.float32]]] = {}
        for model_id in models:
            for rid, vector in store.vectors_for([r.id for r in chosen if r.id not in found], model_id).items():
                found[rid] = (model_id, vector)
        for record in chosen:
            held = found.get(record.id)
            # a store written before redaction reached every intake may hold secrets (docs/adr/0053)
            out.write(_dump({"type": "record", "record": record.redacted().model_dump(mode="json"),
                             "vector": _encode(*held) if held is not None else None}))
            records += 1
            vectors += held is not None
        if progress is not None:
            progress("export", done, total)
    events = 0
    logged = [] if allowed is not None else (
        store.retrieval_events_matching(mission=mission, limit=_MAX_EVENTS) if mission is not None
        else store.retrieval_events(_MAX_EVENTS)
    )
    for event in reversed(logged):
        out.write(_dump({"type": "event", "event": event.model_dump(mode="json")}))
        events += 1
    state = 0
    for name, key, value in store.state_items(mission):
        if allowed is not None and key.partition(":")[0] not in BOOKKEEPING_STATE_PREFIXES:
            continue
        # a store written before state was redacted may hold secrets there (open alerts, read-backs)
        out.write(_dump({"type": "state", "mission": name, "key": key, "value": redacted_state_value(value)}))
        state += 1
    out.write(_dump({"type": "end", "records": records, "vectors": vectors, "events": events, "state": state}))
    return TransferSummary(records=records, vectors=vectors, events=events, state=state, left_out=left_out)


def _read_lines(path: Path) -> Iterator[tuple[int, BaseModel]]:
    """Every line of ``path`` as its model, with its 1-based number.

    Raises:
        InputError: the file cannot be read, or a line is not a valid line of the format
            (the message names the file, the line number and what is wrong).
    """
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read export file {path}: {exc.strerror or exc}") from exc
    with handle:
        number = 0
        try:
            for number, text in enumerate(handle, start=1):  # noqa: B007 - number names a bad line below
                if not text.strip():
                    raise InputError(f"{path} line {number}: empty line")
                try:
                    data = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path} line {number}: not JSON ({exc.msg}; column {exc.colno})") from exc
                kind = data.get("type") if isinstance(data, dict) else None
                model = _LINE_TYPES.get(kind) if isinstance(kind, str) else None
                if model is None:
                    known = ", ".join(_LINE_TYPES)
                    raise InputError(f"{path} line {number}: 'type' must be one of {known}, not {kind!r}")
                try:
                    line = model.model_validate(data)
                    if isinstance(line, _RecordLine) and line.vector is not None:
                        line.vector.values()
                except (ValidationError, ValueError) as exc:
                    raise InputError(f"{path} line {number}: invalid {kind} line: {_first_problem(exc)}") from exc
                yield number, line
        except UnicodeDecodeError as exc:
            raise InputError(f"{path} line {number + 1}: not UTF-8 ({exc.reason})") from exc


def _first_problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        return f"{where}: {err['msg']}" + (f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else "")
    return str(exc)


def _validate(path: Path) -> tuple[_Header, _EndLine]:
    """First pass: check every line and the counts of the trailer; hold nothing but the counts."""
    header: _Header | None = None
    end: _EndLine | None = None
    counts = {"record": 0, "vector": 0, "event": 0, "state": 0}
    dims: dict[str, int] = {}
    for number, line in _read_lines(path):
        if number == 1:
            if not isinstance(line, _Header):
                raise InputError(f"{path} line 1: the first line must be the header of a {FORMAT_NAME} file")
            header = line
            continue
        if end is not None:
            raise InputError(f"{path} line {number}: a line follows the end line")
        if isinstance(line, _Header):
            raise InputError(f"{path} line {number}: a second header")
        if isinstance(line, _EndLine):
            end = line
            continue
        if isinstance(line, _RecordLine):
            counts["record"] += 1
            if line.vector is not None:
                counts["vector"] += 1
                dim = dims.setdefault(line.vector.model_id, line.vector.dim)
                if dim != line.vector.dim:
                    raise InputError(f"{path} line {number}: a vector of model {line.vector.model_id!r} with "
                                     f"{line.vector.dim} dimensions, earlier ones have {dim}")
        elif isinstance(line, _EventLine):
            counts["event"] += 1
        elif isinstance(line, _StateLine):
            counts["state"] += 1
    if header is None:
        raise InputError(f"{path} is empty: not a {FORMAT_NAME} file")
    if end is None:
        raise InputError(f"{path} has no end line: the file is truncated (nothing was imported)")
    expected = {"record": end.records, "vector": end.vectors, "event": end.events, "state": end.state}
    if counts != expected:
        raise InputError(f"{path}: the end line announces {expected}, the file holds {counts} (nothing was imported)")
    return header, end


def import_memory(
    store: MemoryStore, path: Path, *, mission: str | None = None, progress: Progress | None = None
) -> TransferSummary:
    """Store the memory exported to ``path`` in ``store`` (or only ``mission`` of it).

    Every line is validated before anything is written; then records (with their vectors, of
    the model ids they were exported with), retrieval events and state are written in batches.
    Idempotent: records are keyed by content id, events by id, state by mission and key.

    Raises:
        InputError: the file cannot be read or a line is invalid (named by its number); nothing
            is stored.
        BackendUnavailable: the store failed while writing; running the import again finishes it.
    """
    _, end = _validate(path)
    total = end.records
    records = vectors = events = state = added = events_added = done = 0
    batch: list[_RecordLine] = []
    event_batch: list[RetrievalEvent] = []

    models: dict[str, int] = {}

    def flush_records() -> None:
        nonlocal added, batch
        added += _store_records(store, batch)
        batch = []

    def flush_events() -> None:
        nonlocal events_added, event_batch
        events_added += store.put_retrieval_events(event_batch) if event_batch else 0
        event_batch = []

    for _, line in _read_lines(path):
        if isinstance(line, _RecordLine):
            done += 1
            if mission is not None and line.record.provenance.mission != mission:
                continue
            redacted = line.record.redacted()  # an export of an older version may hold secrets (docs/adr/0053)
            batch.append(line if redacted is line.record else line.model_copy(update={"record": redacted}))
            records += 1
            vectors += line.vector is not None
            if line.vector is not None:
                models[line.vector.model_id] = models.get(line.vector.model_id, 0) + 1
            if len(batch) >= _BATCH:
                flush_records()
                if progress is not None:
                    progress("import", done, total)
        elif isinstance(line, _EventLine):
            if mission is not None and line.event.mission != mission:
                continue
            event_batch.append(line.event)
            events += 1
            if len(event_batch) >= _BATCH:
                flush_events()
        elif isinstance(line, _StateLine):
            if mission is not None and line.mission != mission:
                continue
            store.set_state(line.mission, line.key, line.value)
            state += 1
    flush_records()
    flush_events()
    if progress is not None:
        progress("import", total, total)
    return TransferSummary(records=records, vectors=vectors, events=events, state=state, added=added,
                           events_added=events_added, vector_models=models)


def _store_records(store: MemoryStore, lines: list[_RecordLine]) -> int:
    """Upsert one batch, grouped by vector model; give records stored earlier without a vector theirs.

    Returns how many records were added or replaced."""
    if not lines:
        return 0
    changed = 0
    groups: dict[str | None, list[_RecordLine]] = {}
    for line in lines:
        groups.setdefault(line.vector.model_id if line.vector else None, []).append(line)
    for model_id, group in groups.items():
        records = [line.record for line in group]
        if model_id is None:
            outcome = store.upsert_records(records)
            changed += len(outcome.added) + len(outcome.replaced)
            continue
        matrix = np.stack([line.vector.values() for line in group if line.vector is not None])
        outcome = store.upsert(records, matrix, model_id)
        changed += len(outcome.added) + len(outcome.replaced)
        if outcome.unchanged:
            have = store.vectors_for(outcome.unchanged, model_id)
            row_of = {line.record.id: i for i, line in enumerate(group)}
            missing = [rid for rid in dict.fromkeys(outcome.unchanged) if rid not in have]
            if missing:
                store.put_vectors(missing, matrix[[row_of[rid] for rid in missing]], model_id)
    return changed
