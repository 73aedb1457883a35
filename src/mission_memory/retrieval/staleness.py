"""Stale vs current among pull candidates: a record replaced by a newer one of the same source and role
gives way to its successor (issue 12 item 1, ADR 0030).

Two replacement relations are read from the store at query time:

* **supersession** of decisions: ``attributes["superseded_by"]`` names the later decisions (ADR
  numbers such as ``0009`` or paths), followed to the end of the chain (A→B→C: C is current);
* **refresh artifacts** of one task and kind (``attributes["task"]``, ``attributes["artifact"]``):
  the newest refresh of the same mission, task and kind replaces every older one.

(A re-written document section needs nothing here: ingest replaces its record under the same
source key, and a renamed or deleted section leaves the store.)

The rule (:func:`replace_stale`): a stale candidate never appears beside its successor, and the
successor takes its place with the better of the two scores, so nothing current is lost when only
the old one matched the task. A superseded *decision* stays, marked, when the task asks about the
history (:func:`asks_about_history`) or names it (``ADR-0008``); its current successor is added
then too. A successor the query's time range or clearance hides does not replace anything: as of
``until``, the older record was current.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from mission_memory.decisions import DecisionAttributes
from mission_memory.records import Layer, Record, RecordKind, source_key_for
from mission_memory.retrieval.ranking import Candidate, is_superseded
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.filters import SearchFilter, filter_columns, matches

__all__ = ["StaleReplacement", "asks_about_history", "current_successors", "replace_stale"]

_HISTORY = re.compile(
    r"\b(?:histor(?:y|ic|ical)|supersed\w*|deprecated|used\s+to|originally|formerly"
    r"|(?:previous|earlier|old|former|original)\s+(?:decision|approach|design|choice|adr)s?"
    r"|why\s+(?:did|do|have)\s+(?:we|they|you)\s+(?:drop|dropp|abandon|stop|switch|mov|replac|leav|chang)\w*"
    r"|(?:was|were|been|got)\s+replaced|replaced\s+by)"
    r"|історі\w*|замін\w*|відмовил\w*|попередн\w*\s+рішенн\w*|раніше|застарі\w*",
    re.IGNORECASE,
)
_MAX_CHAIN = 32
_ARTIFACTS_SCANNED = 2000


def asks_about_history(task: str) -> bool:
    """True when a task asks about how decisions changed: "history of", "superseded", "why did we
    drop", "used to", "previous decision", or the Ukrainian "історія", "замінено", "чому відмовились".
    """
    return _HISTORY.search(task) is not None


@dataclass(frozen=True)
class StaleReplacement:
    """What :func:`replace_stale` did to one query's candidates.

    Attributes:
        dropped: ids of stale candidates left out (their successor is in the list).
        added: ids of current successors brought in because only a stale predecessor matched.
        kept_superseded: ids of superseded decisions kept, marked, because the task asks about them.
    """

    dropped: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    kept_superseded: tuple[str, ...] = ()


def _successor_filter(where: SearchFilter, mission: str) -> SearchFilter:
    """What a successor must pass: the predecessor's mission, the query's time bound and clearance."""
    f = where.filters
    return SearchFilter((Layer.WORKFLOW,), mission=mission, until=f.until, max_access=f.max_access,
                        mission_type=f.mission_type)


def _decision_refs(store: MemoryStore, record: Record, refs: Iterable[str], where: SearchFilter) -> list[Record]:
    """The stored decisions that ``refs`` (ADR numbers or paths, from ``superseded_by``) name."""
    mission = record.provenance.mission
    visible = _successor_filter(where, mission)
    numbers: list[int] = []
    keys: list[str] = []
    base = posixpath.dirname(record.provenance.ref)
    for ref in refs:
        text = str(ref).strip()
        digits = text.lstrip("#").removeprefix("ADR").removeprefix("adr").strip("-_ ")
        if digits.isdigit():
            numbers.append(int(digits))
            continue
        for path in (text, posixpath.normpath(posixpath.join(base, text))):
            keys.append(source_key_for(mission, RecordKind.DECISION, path))
    ids = list(store.ids_by_source_keys(keys).values()) if keys else []
    if numbers:
        ids += store.phrase_search([f"adr {n:04d}" for n in numbers], visible, 10 * len(numbers), title_only=True)
    found = store.get(ids)
    return [
        r for r in found.values()
        if r.kind is RecordKind.DECISION and r.id != record.id and r.provenance.mission == mission
        and (r.source_key in keys or DecisionAttributes.read(r.attributes).number in numbers)
        and matches(visible, filter_columns(r))
    ]


def _decision_successors(store: MemoryStore, record: Record, where: SearchFilter) -> list[Record]:
    """The current ends of ``record``'s supersession chains (A→B→C gives C), visible under ``where``."""
    ends: dict[str, Record] = {}
    seen = {record.id}
    frontier = [record]
    for _ in range(_MAX_CHAIN):
        if not frontier:
            break
        following: list[Record] = []
        for node in frontier:
            later = [r for r in _decision_refs(store, node, DecisionAttributes.read(node.attributes).superseded_by, where)
                     if r.id not in seen]
            if node is not record and not later:
                ends[node.id] = node
            for r in later:
                seen.add(r.id)
                following.append(r)
        frontier = following
    return [r for r in ends.values() if not is_superseded(r)] or list(ends.values())


def _artifact_successor(
    store: MemoryStore, record: Record, where: SearchFilter, newer_by_mission: dict[str, list[Record]] | None = None
) -> Record | None:
    """The newest refresh artifact of the same mission, task and kind, newer than ``record``.

    ``newer_by_mission`` (filled by :func:`replace_stale`) holds each mission's artifacts from the
    oldest candidate's time on, newest first, so a query reads them once per mission.
    """
    task, artifact = record.attributes.get("task"), record.attributes.get("artifact")
    if not task or not artifact:
        return None
    visible = _successor_filter(where, record.provenance.mission)
    newer = (newer_by_mission or {}).get(record.provenance.mission)
    if newer is None:
        newer = store.records_of_kind(
            [RecordKind.REFRESH_ARTIFACT.value], mission=record.provenance.mission, since=record.provenance.time,
            limit=_ARTIFACTS_SCANNED,
        )
    for r in newer:  # newest first
        if (r.id != record.id and r.provenance.time > record.provenance.time
                and r.attributes.get("task") == task and r.attributes.get("artifact") == artifact
                and matches(visible, filter_columns(r))):
            return r
    return None


def current_successors(
    store: MemoryStore, record: Record, where: SearchFilter, newer_by_mission: dict[str, list[Record]] | None = None
) -> list[Record]:
    """The current records that replace ``record`` (empty when it is current itself).

    Args:
        store: read for the successors.
        record: a candidate record.
        where: the query's search filter (its mission, ``until`` and clearance bound the successors).
        newer_by_mission: refresh artifacts read ahead per mission, newest first (optional).

    Returns:
        The chain ends for a superseded decision, the newest refresh of the same task and kind for
        a refresh artifact, else ``[]``. A decision marked superseded whose successor is not stored
        gets ``[]``: it stays, marked.
    """
    if record.kind is RecordKind.DECISION and DecisionAttributes.read(record.attributes).superseded_by:
        return _decision_successors(store, record, where)
    if record.kind is RecordKind.REFRESH_ARTIFACT:
        successor = _artifact_successor(store, record, where, newer_by_mission)
        return [successor] if successor is not None else []
    return []


def replace_stale(
    store: MemoryStore,
    task: str,
    where: SearchFilter,
    candidates: Sequence[Candidate],
    named_decisions: Iterable[int] = (),
) -> tuple[list[Candidate], StaleReplacement]:
    """Put each candidate's current successor in place of the stale candidate (ADR 0030).

    Args:
        store: read for successors.
        task: the task description (see :func:`asks_about_history`).
        where: the query's search filter.
        candidates: best first, records attached.
        named_decisions: ADR numbers the task names; those decisions stay even when superseded.

    Returns:
        The candidates best first (successors carry the better of their own and their stale
        predecessors' scores) and what was replaced.
    """
    history = asks_about_history(task)
    named = set(named_decisions)
    by_id: dict[str, Candidate] = {c.record_id: c for c in candidates}
    order = [c.record_id for c in candidates]
    dropped: list[str] = []
    added: list[str] = []
    kept_superseded: list[str] = []
    oldest: dict[str, Record] = {}
    for cand in candidates:
        r = cand.record
        if r is not None and r.kind is RecordKind.REFRESH_ARTIFACT:
            mission = r.provenance.mission
            if mission not in oldest or r.provenance.time < oldest[mission].provenance.time:
                oldest[mission] = r
    newer_by_mission = {
        mission: store.records_of_kind([RecordKind.REFRESH_ARTIFACT.value], mission=mission,
                                       since=r.provenance.time, limit=_ARTIFACTS_SCANNED)
        for mission, r in oldest.items()
    }
    for cand in candidates:
        record = cand.record
        if record is None or cand.record_id not in by_id:
            continue
        successors = current_successors(store, record, where, newer_by_mission)
        if not successors:
            if (record.kind is RecordKind.DECISION and is_superseded(record)
                    and (history or DecisionAttributes.read(record.attributes).number in named)):
                kept_superseded.append(cand.record_id)  # asked for: no near-duplicate hides it (ADR 0086)
            continue
        for successor in successors:
            present = by_id.get(successor.id)
            if present is None:
                by_id[successor.id] = Candidate(record_id=successor.id, score=cand.score, record=successor,
                                                superseded=is_superseded(successor))
                order.append(successor.id)
                added.append(successor.id)
            elif present.score < cand.score:
                by_id[successor.id] = replace(present, score=cand.score)
        keep = record.kind is RecordKind.DECISION and (history or DecisionAttributes.read(record.attributes).number in named)
        if keep:
            by_id[cand.record_id] = replace(cand, superseded=True)
            kept_superseded.append(cand.record_id)
        else:
            del by_id[cand.record_id]
            dropped.append(cand.record_id)
    out = [by_id[rid] for rid in dict.fromkeys(order) if rid in by_id]
    out.sort(key=lambda c: -c.score)  # stable: at equal scores a named decision stays before its successor
    return out, StaleReplacement(tuple(dropped), tuple(added), tuple(kept_superseded))
