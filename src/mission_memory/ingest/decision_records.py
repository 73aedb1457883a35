"""The decision-record builder: one workflow-layer record per parsed ADR, supersession resolved across them.

Used by repository ingest and by ``decide --write-adr`` (:mod:`mission_memory.ingest.recorded_decisions`),
so a decision written as a MADR file is the same record a later ingest builds for it
(docs/adr/0028, 0030).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, date, datetime, time

from mission_memory.decisions import Decision, DecisionAttributes, DecisionStatus, Principle
from mission_memory.fence import usable_name
from mission_memory.ingest.principles import link_principles
from mission_memory.ingest.source import RepositorySource
from mission_memory.records import Provenance, Record, RecordKind, SourceKind

__all__ = ["RECORD_TEXT_CAP", "bounded_text", "component_of", "decision_records"]

RECORD_TEXT_CAP = 20_000
"""Characters at most in a decision's or principle's record text (and in each long decision field). A
longer ADR keeps its head there and is also ingested whole as document chunks, so a 20 MB file never
becomes one 20-million-character record that every later query has to scan."""

_CRITICALITY = {
    DecisionStatus.ACCEPTED: 0.7,
    DecisionStatus.PROPOSED: 0.6,
    DecisionStatus.REJECTED: 0.4,
    DecisionStatus.DEPRECATED: 0.3,
    DecisionStatus.SUPERSEDED: 0.3,
}


def component_of(path: str) -> str | None:
    """The component a repository-relative path belongs to: its top-level folder (None for root files,
    and for a folder whose name breaks the name rule, :func:`~mission_memory.fence.usable_name`)."""
    return usable_name(path.split("/", 1)[0]) if "/" in path else None


def _decision_time(decision: Decision, fallback: datetime) -> datetime:
    """When a decision was taken: noon UTC of its stated date, but never after ``fallback`` (the
    file's commit or modification time), so a decision written this morning (``decide --write-adr``)
    is not dated in the future and stays inside the current shift's window; else ``fallback``."""
    if isinstance(decision.decided_at, date):
        return min(datetime.combine(decision.decided_at, time(12, 0), tzinfo=UTC), fallback)
    return fallback


def bounded_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at the last paragraph (else line) break, marked as cut."""
    if len(text) <= limit:
        return text
    marker = "\n\n[…]"
    room = limit - len(marker)
    cut = text.rfind("\n\n", 0, room)
    if cut < room // 2:
        cut = text.rfind("\n", 0, room)
    if cut < room // 2:
        cut = room
    return text[:cut].rstrip() + marker


def _cycle_groups(edges: dict[str, set[str]]) -> list[set[str]]:
    """Groups of nodes that reach each other through ``edges`` (cycles), each with two nodes or more."""
    reach: dict[str, set[str]] = {}
    for start in edges:
        seen: set[str] = set()
        stack = list(edges[start])
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(edges.get(node, ()))
        reach[start] = seen
    groups: list[set[str]] = []
    placed: set[str] = set()
    for node in sorted(edges):
        if node in placed or node not in reach[node]:
            continue
        group = {other for other in reach[node] if node in reach.get(other, set())} | {node}
        if len(group) > 1:
            groups.append(group)
            placed |= group
    return groups


def _supersessions(
    source: RepositorySource, adrs: Sequence[tuple[str, Decision]], warnings: list[str]
) -> tuple[dict[str, list[str]], set[str]]:
    """Who supersedes each ADR (``{path: [refs]}``), with links written on either side made symmetric and
    supersession cycles broken; also the paths that a broken cycle leaves current.

    A cycle (A superseded by B, B superseded by A) would leave no decision current. The newest decision
    of the cycle (by its date, else its file's last change) stays current: its links to the others are
    dropped, and a warning names the cycle and the one kept.
    """
    by_number = {f"{d.number:04d}": path for path, d in adrs if d.number is not None}
    key_of = {path: (f"{d.number:04d}" if d.number is not None else path) for path, d in adrs}
    derived: dict[str, set[str]] = defaultdict(set)
    for path, d in adrs:
        for target in d.supersedes:
            derived[by_number.get(target, target)].add(key_of[path])
    later = {path: set(d.superseded_by) | derived.get(path, set()) for path, d in adrs}
    edges = {path: {by_number.get(ref, ref) for ref in refs} & later.keys() for path, refs in later.items()}
    kept_current: set[str] = set()
    decisions = dict(adrs)
    for group in _cycle_groups(edges):
        def moment(path: str) -> tuple[datetime, str]:
            return _decision_time(decisions[path], source.changed(path)[1]), path

        newest = max(group, key=moment)
        dropped = {key_of[path] for path in group} | group
        later[newest] = {ref for ref in later[newest] if ref not in dropped and by_number.get(ref) not in group}
        kept_current.add(newest)
        names = ", ".join(_decision_label(path, decisions[path]) for path in sorted(group))
        warnings.append(
            f"supersession cycle between {names}: each is marked superseded by another, so none would be "
            f"current; {_decision_label(newest, decisions[newest])} is the newest and stays current"
        )
    return {path: sorted(refs) for path, refs in later.items()}, kept_current


def _derived_links(
    adrs: Sequence[tuple[str, Decision]], later_of: dict[str, list[str]]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(amended by, probably superseded by) of each ADR path, as ADR numbers ("0021") or paths.

    "Amended by" joins the ADR's own line with every ADR that says it amends this one. "Probably
    superseded by" names each later-numbered ADR whose prose names this one as replaced
    (:attr:`Decision.probably_supersedes`, docs/adr/0086), unless a stated link between the two exists.
    """
    by_number = {f"{d.number:04d}": path for path, d in adrs if d.number is not None}
    amended: dict[str, set[str]] = {path: set(d.amended_by) for path, d in adrs}
    probable: dict[str, set[str]] = {path: set() for path, _ in adrs}
    for path, d in adrs:
        key = f"{d.number:04d}" if d.number is not None else path
        for ref in d.amends:
            if by_number.get(ref, ref) in amended:
                amended[by_number.get(ref, ref)].add(key)
        for ref in d.probably_supersedes:
            target = by_number.get(ref)
            if target is None or d.number is None or target == path:
                continue
            stated = key in later_of.get(target, ()) or ref in d.supersedes or ref in d.superseded_by
            if not stated:
                probable[target].add(key)
    return ({path: sorted(refs) for path, refs in amended.items()},
            {path: sorted(refs) for path, refs in probable.items()})


def _decision_label(path: str, decision: Decision) -> str:
    return f"ADR-{decision.number:04d} ({path})" if decision.number is not None else path


def decision_records(
    source: RepositorySource, mission: str, adrs: Sequence[tuple[str, Decision]], principles: Sequence[Principle],
    mission_type: str | None, warnings: list[str],
) -> list[Record]:
    """Decision records (workflow layer) for parsed ADRs, with supersession resolved across them.

    Used by ingest and by ``decide --write-adr`` (ingest/recorded_decisions.py), so a decision written as a
    MADR file is the same record a later ingest builds for it.

    Args:
        source: where the files come from (commit and time of each path).
        mission: the mission the records are filed under.
        adrs: ``(repository-relative path, parsed decision)`` pairs.
        principles: the mission's principle registry, linked from decisions that name a principle.
        mission_type: recorded on every record, or None.
        warnings: appended to when a supersession cycle is broken by date (docs/adr/0030).

    Returns:
        One record per ADR, in ``adrs`` order.
    """
    later_of, kept_current = _supersessions(source, adrs, warnings)
    amended_of, probable_of = _derived_links(adrs, later_of)
    records = []
    for path, d in adrs:
        sha, changed = source.changed(path)
        later = later_of[path]
        status = d.status.value if d.status else None
        if later and status in (None, "accepted"):
            status = "superseded"
        elif path in kept_current and not later and status == "superseded":
            status = "accepted"  # its "superseded" came from the broken cycle
        label = f"ADR-{d.number:04d}: {d.title}" if d.number is not None else d.title
        attributes = DecisionAttributes(
            number=d.number,
            status=status,
            status_text=d.status_text,
            decided_at=d.decided_at.isoformat() if d.decided_at else None,
            context=bounded_text(d.context, RECORD_TEXT_CAP) if d.context else None,
            decision=bounded_text(d.decision, RECORD_TEXT_CAP) if d.decision else None,
            rationale=bounded_text(d.rationale, RECORD_TEXT_CAP) if d.rationale else None,
            consequences=bounded_text(d.consequences, RECORD_TEXT_CAP) if d.consequences else None,
            considered_options=tuple(d.considered_options),
            chosen_option=d.chosen_option,
            rejected_alternatives=tuple(d.rejected_alternatives),
            supersedes=tuple(d.supersedes),
            superseded_by=tuple(later),
            related=tuple(d.related),
            deciders=tuple(d.deciders),
            principle_ids=tuple(sorted(set(d.principle_ids) | set(link_principles(d, principles)))),
            task_ids=tuple(d.task_ids),
            tags=tuple(d.tags),
            format=d.format.value,
            path=path,
            mission_type=mission_type or None,
            amends=tuple(d.amends),
            amended_by=tuple(amended_of[path]),
            probably_supersedes=tuple(d.probably_supersedes),
            probably_superseded_by=tuple(probable_of[path]),
        )
        records.append(
            Record.build(
                kind=RecordKind.DECISION,
                title=label,
                text=bounded_text(d.text.strip(), RECORD_TEXT_CAP),
                provenance=Provenance(
                    kind=SourceKind.ADR, ref=path, uri=source.uri(path, commit=sha), mission=mission,
                    time=_decision_time(d, changed), commit=sha,
                ),
                criticality=_CRITICALITY.get(DecisionStatus(status), 0.6) if status else 0.6,
                component=d.component or component_of(path),
                attributes=attributes.as_dict(),
            )
        )
    return records
