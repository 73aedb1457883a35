"""Fitting the pull ranking's fusion weights on retrieval-correction pairs (``ranking tune``, ADR 0032).

A retrieval-correction pair (docs/design.md §6; format in ``docs/adr/0032-…``) says: this query retrieved
these records, and should have served these (``missed``). :func:`tune_fusion_weights` re-runs each
pair's query against today's store once, then ranks the same candidate lists under a small grid of
fusion weights (convex or reciprocal rank fusion, the RRF constant, the weights of the dense and the BM25 lists), picks the point
that serves the most missed records on a training split, and adopts it only if it also serves more of
them on the held-out split than the weights in use. It reports the recall before and after either way.

Adopted weights are kept in the store's state (mission ``*``, key ``ranking.fusion_weights``), which
every pull reads through :func:`~mission_memory.retrieval.ranking.tuned_params` (one key lookup, no per-query work over records).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError
from mission_memory.records import Layer, RecordKind
from mission_memory.retrieval.candidates import CandidateLists
from mission_memory.retrieval.filters import QueryFilters
from mission_memory.retrieval.query import rank_candidates, search_candidates
from mission_memory.retrieval.ranking import (
    FUSION_STATE_KEY,
    FUSION_STATE_MISSION,
    FusionWeights,
    RankingParams,
    tuned_params,
)
from mission_memory.retrieval_events import RetrievalEvent
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.filters import SearchFilter

__all__ = ["RetrievalPair", "TuneReport", "pairs_from_store", "read_pairs", "tune_fusion_weights"]

_GRID_K = (5, 10, 20, 40, 60)
_GRID_BM25_SHARE = (0.2, 0.35, 0.5, 0.65, 0.8)
_LAYERS = (Layer.DOMAIN, Layer.WORKFLOW, Layer.PRACTITIONER)


@dataclass(frozen=True)
class RetrievalPair:
    """One "retrieved X, should have served Y" pair (the JSON Lines of ``corrections pairs``).

    Attributes:
        correction_id, event_id: the correction and the retrieval event it follows.
        time: when the correction happened (ISO 8601, UTC), as written.
        mission: the mission the query was asked in, or None.
        query: the task description of the retrieval event.
        retrieved: record ids the digest served, in digest order.
        missed: record ids that should have been served.
    """

    correction_id: str
    event_id: str
    time: str
    mission: str | None
    query: str
    retrieved: tuple[str, ...]
    missed: tuple[str, ...]


def _pair_from(row: Any) -> RetrievalPair:
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    query = row.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("'query' must be a non-empty string")
    lists = {}
    for name in ("retrieved", "missed"):
        value = row.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{name!r} must be a list of record ids")
        lists[name] = tuple(value)
    mission = row.get("mission")
    return RetrievalPair(
        correction_id=str(row.get("correction_id", "")), event_id=str(row.get("event_id", "")),
        time=str(row.get("time", "")), mission=mission if isinstance(mission, str) and mission else None,
        query=query, retrieved=lists["retrieved"], missed=lists["missed"],
    )


def read_pairs(path: Path) -> list[RetrievalPair]:
    """Read retrieval-correction pairs from a JSON Lines file (blank lines skipped).

    Raises:
        InputError: the file cannot be read, or a line is not a pair (the message names file and line).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read pairs file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"pairs file {path} is not UTF-8 text") from exc
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(_pair_from(json.loads(line)))
        except ValueError as exc:
            raise InputError(f"{path}:{number}: not a retrieval-correction pair ({exc})") from exc
    return out


def pairs_from_store(store: MemoryStore, limit: int = 10_000) -> list[RetrievalPair]:
    """Pairs built from the store's correction records (practitioner layer) that name missed records.

    A correction record carries ``retrieval_event_id``, ``missed_record_ids`` and
    ``served_record_ids`` (docs/adr interfaces); the query is read from the retrieval event.
    Corrections without a missed record or without a stored event are left out.
    """
    out = []
    for record in store.records_of_kind([RecordKind.CORRECTION_PATTERN.value], limit=limit):
        attrs = record.attributes
        missed, event_id = attrs.get("missed_record_ids") or [], attrs.get("retrieval_event_id")
        if not missed or not event_id:
            continue
        event = _linked_event(store, attrs)
        if event is None:
            continue
        out.append(RetrievalPair(
            correction_id=str(attrs.get("correction_id", record.id)), event_id=event_id,
            time=record.provenance.time.isoformat(), mission=event.mission, query=event.query,
            retrieved=tuple(event.record_ids), missed=tuple(str(m) for m in missed),
        ))
    return out


def _linked_event(store: MemoryStore, attrs: dict[str, Any]) -> RetrievalEvent | None:
    """The retrieval event a correction record names, found by its time (``retrieval_event_time``):
    a derived correction may follow another session's event (the same operator's, docs/adr/0082), so
    the correction's own session does not find it. Records without the time: by their session."""
    event_id = attrs.get("retrieval_event_id")
    raw = attrs.get("retrieval_event_time")
    if isinstance(raw, str):
        try:
            moment = datetime.fromisoformat(raw)
        except ValueError:
            moment = None
        if moment is not None:
            around = store.retrieval_events_matching(
                since=moment - timedelta(milliseconds=1), until=moment + timedelta(milliseconds=1), limit=1000)
            return next((e for e in around if e.id == event_id), None)
    events = store.retrieval_events_matching(session_id=attrs.get("session_id"), limit=1000)
    return next((e for e in events if e.id == event_id), None)


@dataclass(frozen=True)
class TuneReport:
    """What ``ranking tune`` measured and did.

    Attributes:
        pairs: pairs read; used: pairs with at least one missed record still stored.
        train, holdout: pairs in each split.
        before, after: the weights in use and the best fitted ones.
        train_recall_before, train_recall_after, holdout_recall_before, holdout_recall_after: share
            of missed records among the first ``max_entries`` ranked candidates, in [0, 1].
        adopted: the fitted weights were stored (held-out recall rose and not a dry run).
        reason: why they were or were not adopted.
    """

    pairs: int
    used: int
    train: int
    holdout: int
    before: FusionWeights
    after: FusionWeights
    train_recall_before: float
    train_recall_after: float
    holdout_recall_before: float
    holdout_recall_after: float
    adopted: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (recalls rounded to 4 decimals)."""
        out = asdict(self)
        for key in ("train_recall_before", "train_recall_after", "holdout_recall_before", "holdout_recall_after"):
            out[key] = round(out[key], 4)
        return out


def _recall(
    prepared: Sequence[tuple[CandidateLists, frozenset[str]]], params: RankingParams, max_entries: int
) -> float:
    found = total = 0
    for lists, missed in prepared:
        top = {c.record_id for c in rank_candidates(lists, _LAYERS, params)[:max_entries]}
        found += len(missed & top)
        total += len(missed)
    return found / total if total else 0.0


def _grid() -> list[FusionWeights]:
    shares = [(round(2 * (1 - s), 3), round(2 * s, 3)) for s in _GRID_BM25_SHARE]
    convex = [FusionWeights("convex", 60, d, b) for d, b in shares]
    return convex + [FusionWeights("rrf", k, d, b) for k in _GRID_K for d, b in shares]


def tune_fusion_weights(
    store: MemoryStore,
    embedder: Embedder,
    pairs: Sequence[RetrievalPair],
    *,
    holdout: float = 0.3,
    seed: int = 0,
    max_entries: int = 10,
    dry_run: bool = False,
) -> TuneReport:
    """Fit the fusion weights on ``pairs`` and adopt them if held-out recall of missed records rises.

    Args:
        store: the store pull reads (the adopted weights are written to its state).
        embedder: the embedder of the store's vectors.
        pairs: retrieval-correction pairs; those whose missed records are all gone are left out.
        holdout: share of the used pairs held out, in (0, 1).
        seed: seed of the split's shuffle.
        max_entries: a missed record counts as served when it ranks among this many candidates.
        dry_run: measure and report, store nothing.

    Raises:
        InputError: ``holdout`` outside (0, 1); fewer than two pairs with a missed record still stored.
    """
    if not 0.0 < holdout < 1.0:
        raise InputError(f"holdout must be a share between 0 and 1 (exclusive), got {holdout}")
    current = tuned_params(store)
    missions = store.missions()
    prepared: list[tuple[CandidateLists, frozenset[str]]] = []
    for pair in pairs:
        missed = frozenset(store.known_ids(pair.missed))
        if not missed:
            continue
        filters = QueryFilters(mission=pair.mission) if pair.mission in missions else QueryFilters()
        where = SearchFilter(_LAYERS, filters)
        prepared.append((search_candidates(store, embedder, pair.query, where, current), missed))
    if not pairs:
        raise InputError(
            "no retrieval-correction pairs: pass --pairs FILE (written by `mission-memory corrections pairs -o FILE`)"
            " or record corrections that name the records memory missed"
        )
    if len(prepared) < 2:
        raise InputError(
            f"{len(prepared)} of {len(pairs)} pairs name a missed record that is still stored;"
            " fitting needs at least 2 (one to fit, one to hold out)"
        )
    order = list(range(len(prepared)))
    random.Random(seed).shuffle(order)
    n_holdout = min(len(order) - 1, max(1, round(holdout * len(order))))
    held = [prepared[i] for i in order[:n_holdout]]
    train = [prepared[i] for i in order[n_holdout:]]

    before = FusionWeights.of(current)
    scored = [(w, _recall(train, w.applied_to(current), max_entries)) for w in _grid()]
    train_before = _recall(train, current, max_entries)
    best, train_after = max(scored, key=lambda item: item[1])
    if train_after <= train_before:
        best, train_after = before, train_before
    held_before = _recall(held, current, max_entries)
    held_after = _recall(held, best.applied_to(current), max_entries)
    if held_after <= held_before:
        adopted, reason = False, "held-out recall of the missed records did not rise; the weights in use stay"
    elif dry_run:
        adopted, reason = False, "dry run: held-out recall would rise, nothing stored"
    else:
        store.set_state(FUSION_STATE_MISSION, FUSION_STATE_KEY, json.dumps({
            "weights": asdict(best), "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "pairs": len(prepared), "holdout_recall_before": held_before, "holdout_recall_after": held_after,
        }))
        adopted, reason = True, "held-out recall of the missed records rose; the fitted weights are in use"
    return TuneReport(
        pairs=len(pairs), used=len(prepared), train=len(train), holdout=len(held), before=before, after=best,
        train_recall_before=train_before, train_recall_after=train_after,
        holdout_recall_before=held_before, holdout_recall_after=held_after, adopted=adopted, reason=reason,
    )
