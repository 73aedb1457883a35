"""Storing corrections: label each, build its practitioner record, embed it, write all in one transaction.

The store side of the corrections pipeline (docs/design.md §3, §6), called by
:class:`~mission_memory.api.Memory`: which mission a correction belongs to, checks against what the
store holds (mission, component, named records), labelling (:mod:`.signal`) and the upsert. The
record's embedded text is its summary, which holds abstractions only (docs/adr/0025), so no
operator content reaches the vectors either. Bad input raises before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mission_memory.corrections.practitioner_records import (
    Correction,
    correction_from_record,
    practitioner_record,
)
from mission_memory.corrections.signal import label_correction, resolve_reference, resolve_references
from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError
from mission_memory.fence import listed_name, quote_name
from mission_memory.ingest.tracked_tree import has_folder
from mission_memory.records import RecordKind
from mission_memory.stores.base import MemoryStore, UpsertOutcome
from mission_memory.stores.write_path import store_records

if TYPE_CHECKING:
    from mission_memory.teams.access_control import AccessContext

__all__ = [
    "CorrectionImport",
    "SourceCounts",
    "check_explicit",
    "explicit_mission",
    "record_explicit",
    "store_corrections",
    "stored_corrections",
]

_ALL = 1_000_000


@dataclass
class SourceCounts:
    """What an import did with one source.

    Attributes:
        found: corrections derived from the source.
        added, unchanged, replaced: what the store did with their records (a re-run adds nothing).
        skipped: detections left out, by reason (``no-time``).
    """

    found: int = 0
    added: int = 0
    unchanged: int = 0
    replaced: int = 0
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass
class CorrectionImport:
    """The report of one ``corrections import``: counts per source and the labels given.

    Attributes:
        sources: ``{"prompt": SourceCounts, "transcript": SourceCounts}`` for the sources read.
        labels: counts of ``true``, ``false``, ``unknown`` over the imported corrections.
    """

    sources: dict[str, SourceCounts] = field(default_factory=dict)
    labels: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "sources": {name: vars(counts) for name, counts in self.sources.items()},
            "labels": dict(self.labels),
        }


def explicit_mission(store: MemoryStore, given: str | None, cwd: Path | None = None) -> str:
    """The mission an explicit correction belongs to: ``given`` when the store holds it (or holds
    nothing yet), else as every command chooses (:func:`~mission_memory.mission_scope.stored_mission_for`:
    the only stored mission, else the working directory's repository's).

    Raises:
        InputError: ``given`` is not stored, or no mission can be chosen (the message lists them).
    """
    from mission_memory.mission_scope import stored_mission_for

    return stored_mission_for(given, store.missions(), cwd, new_store_takes_given=True)


def record_explicit(
    store: MemoryStore,
    embedder: Callable[[], Embedder],
    *,
    correction_class: str,
    category: str,
    outcome: str,
    summary: str,
    component: str | None,
    expected: Sequence[str],
    session_id: str | None,
    mission: str | None,
    operator: str | None,
    time: datetime | None,
    access: AccessContext | None,
    window: timedelta,
    threshold: float,
) -> Correction:
    """Record one explicit operator correction (:meth:`~mission_memory.api.Memory.record_correction`
    documents the fields): validate it, choose its mission (:func:`explicit_mission`), check it
    against the store (:func:`check_explicit`), then label and store it (:func:`store_corrections`).

    Args:
        store: the store as the caller sees it (scoped to ``access`` on a team server).
        embedder: gives the embedder; called only once the correction passed every check.
        operator: default :func:`~mission_memory.retrieval_events.resolve_operator`; with ``access``
            the correction is ``access.operator``'s and this is ignored.
        time: default now (UTC).
        access: who records it on a team server: ``mission`` must be one of theirs, and the
            returned label names only the missed records they may see (ADR 0045).
        window, threshold: the labelling's link window and relevance threshold (:mod:`.signal`).

    Returns:
        The correction with its label.

    Raises:
        InputError: a field is invalid, or names a mission, component or record that is not stored;
            nothing is written then.
        AccessDenied: ``mission`` is not one ``access`` may write to.
    """
    from mission_memory.corrections.pipeline import explicit_correction
    from mission_memory.retrieval_events import resolve_operator

    if access is not None:
        access.check_mission(mission)
        operator = access.operator
    correction = explicit_correction(
        correction_class=correction_class, category=category, outcome=outcome, summary=summary,
        component=component, expected=expected, session_id=session_id, mission=explicit_mission(store, mission),
        operator=operator or resolve_operator(), time=time if time is not None else datetime.now(UTC),
    )
    check_explicit(store, correction)
    labelled = store_corrections(store, embedder(), [correction], window=window, threshold=threshold)[0][0]
    if access is None:
        return labelled
    visible = store.get(list(labelled.label.missed_record_ids))
    shown = tuple(r for r in labelled.label.missed_record_ids if r in visible)
    return labelled.model_copy(update={"label": labelled.label.model_copy(update={"missed_record_ids": shown})})


def check_explicit(store: MemoryStore, correction: Correction) -> None:
    """Check an explicit correction against the store: its component and the records it names.

    A component is known when records carry it, or when it is a folder of the repository's tree as
    last ingested (a folder no record is charged to, e.g. one touched only by the first commit,
    ADR 0062), or a folder of a file some commit touched.

    Raises:
        InputError: the component is not stored (the known ones are listed) or a named record is not.
    """
    if correction.component is not None and not _known_component(store, correction.mission, correction.component):
        components = store.components(limit=30, mission=correction.mission)  # its own, no other mission's
        if components:
            raise InputError(
                f"no component named {quote_name(correction.component)} is stored (components, most records"
                f" first: {', '.join(listed_name(c) for c in components)})"
            )
    if correction.expected:
        resolve_references(store, correction.mission, correction.expected)


def _known_component(store: MemoryStore, mission: str, component: str) -> bool:
    from mission_memory.teams.access_control import AccessScopedStore

    if isinstance(store, AccessScopedStore) and store.hides_component(component):
        return False  # only records the caller may not read carry it: recording it would show it to them
    if store.has_component(component, mission=mission) or has_folder(store, mission, component):
        return True
    prefix = component.strip("/") + "/"
    commits = store.records_of_kind([RecordKind.COMMIT.value], mission=mission, limit=_ALL)
    return any(str(f).startswith(prefix) for c in commits for f in (c.attributes.get("files") or []))


def store_corrections(
    store: MemoryStore,
    embedder: Embedder,
    corrections: Sequence[Correction],
    *,
    window: timedelta,
    threshold: float,
) -> tuple[list[Correction], UpsertOutcome]:
    """Label ``corrections``, build their records and store them with their vectors in one transaction.

    Returns:
        The labelled corrections (in the order given) and what the upsert did.
    """
    labelled = [
        c.with_label(label_correction(store, embedder, c, window=window, threshold=threshold)) for c in corrections
    ]
    if not labelled:
        return [], UpsertOutcome()
    records = [practitioner_record(c, _named_source_keys(store, c)) for c in labelled]
    return labelled, store_records(store, embedder, records, batch=None).outcome


def _named_source_keys(store: MemoryStore, correction: Correction) -> list[str]:
    """The source keys of the records ``correction.expected`` names (those found; none raises here:
    :func:`check_explicit` refused unknown references of explicit corrections already)."""
    if not correction.expected:
        return []
    ids = sorted({i for ref in correction.expected for i in resolve_reference(store, correction.mission, ref)})
    return sorted(r.source_key for r in store.get(ids).values())


def stored_corrections(
    store: MemoryStore,
    *,
    mission: str | None = None,
    operator: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[Correction]:
    """The stored corrections, oldest first."""
    records = store.records_of_kind(
        [RecordKind.CORRECTION_PATTERN.value], mission=mission, operator=operator, since=since, until=until, limit=_ALL
    )
    return sorted((correction_from_record(r) for r in records), key=lambda c: (c.time, c.correction_id))
