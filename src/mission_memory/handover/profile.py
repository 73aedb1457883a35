"""The predecessor's profile: their typical corrections and their attention zones (docs/design.md §6).

Computed from records only, no I/O:

* typical corrections — the outgoing operator's correction patterns in the shift window, counted by
  correction class and semantic category (the practitioner records of the corrections pipeline);
* attention zones — the components that drew the most corrections *and* activity. A file's
  component is its top-level folder (``(root)`` for files at the top). Components are ranked by
  corrections first (where the operator had to step in), then by their recent-activity score
  (:mod:`mission_memory.handover.activity`, ADR 0038); each zone names its highest-ranked files and
  its latest commit, so an incoming operator knows where the work is (ADR 0026).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from mission_memory.handover.activity import RecentActivity, component_of_path
from mission_memory.records import AccessLevel, Record
from mission_memory.teams.access_control import most_restricted

__all__ = ["AttentionZone", "CorrectionPattern", "PredecessorProfile", "build_profile", "component_of_path"]

@dataclass(frozen=True)
class CorrectionPattern:
    """One (class, category) of the predecessor's corrections.

    Attributes:
        correction_class, category: as the practitioner record states them.
        count: corrections of this pair in the window.
        outcomes: ``{"accepted": n, "rejected": n, "modified": n}`` as far as present.
        components: components these corrections concerned, most frequent first.
        refs: provenance references of the corrections (``correction/<id>``), newest first.
    """

    correction_class: str
    category: str
    count: int
    outcomes: dict[str, int]
    components: tuple[str, ...]
    refs: tuple[str, ...]
    summaries: tuple[str, ...] = ()
    """The summary sentences of its newest corrections (a correction record's title is its summary)."""
    access_level: AccessLevel = AccessLevel.PUBLIC
    """The most restricted access level of its corrections (what quoting them reveals)."""


@dataclass(frozen=True)
class AttentionZone:
    """A component that drew corrections and activity in the window.

    Attributes:
        component: the component (top-level folder, or ``(root)``).
        corrections: the predecessor's corrections concerning it.
        commits: recent commits (the activity horizon) touching a file in it.
        files: its touched files, highest activity score first.
        latest_commits: ``(sha, "date author: subject")`` of its latest commits, newest first.
        by_outgoing: how many of ``commits`` the outgoing operator authored.
        score: its recent-activity score (ADR 0038; 0 when only corrections name it).
        access_level: the most restricted access level of the commits, files and corrections it
            names (what its lines in a brief reveal).
    """

    component: str
    corrections: int
    commits: int
    files: tuple[str, ...]
    latest_commits: tuple[tuple[str, str], ...]
    by_outgoing: int = 0
    score: float = 0.0
    access_level: AccessLevel = AccessLevel.PUBLIC


@dataclass(frozen=True)
class PredecessorProfile:
    """The outgoing operator's profile in one shift window (docs/design.md §6).

    Attributes:
        operator: the outgoing operator, or None when unknown.
        corrections: how many of their corrections the window holds.
        patterns: typical corrections, most frequent first.
        zones: attention zones, most attention first.
    """

    operator: str | None
    corrections: int
    patterns: tuple[CorrectionPattern, ...] = ()
    zones: tuple[AttentionZone, ...] = field(default_factory=tuple)


def build_profile(
    operator: str | None,
    corrections: Sequence[Record],
    activity: RecentActivity,
    *,
    max_zones: int = 8,
    files_per_zone: int = 5,
) -> PredecessorProfile:
    """The predecessor's profile from their corrections and the ranked recent activity.

    Args:
        operator: the outgoing operator (None when unknown).
        corrections: their ``correction_pattern`` records in the window (attributes
            ``correction_class``, ``category``, ``outcome``; ``component`` on the record).
        activity: the mission's ranked recent activity (:func:`~mission_memory.handover.activity.rank_activity`).
        max_zones: at most this many zones.
        files_per_zone: at most this many files named per zone.

    Returns:
        The profile; zones ranked by (corrections, activity score), descending.
    """
    by_pattern: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for record in corrections:
        key = (str(record.attributes.get("correction_class") or "unclassified"),
               str(record.attributes.get("category") or "uncategorised"))
        by_pattern[key].append(record)
    patterns = []
    for (klass, category), items in by_pattern.items():
        outcomes = Counter(str(r.attributes.get("outcome") or "unknown") for r in items)
        comps = Counter(r.component for r in items if r.component)
        newest = sorted(items, key=lambda r: r.provenance.time, reverse=True)
        patterns.append(CorrectionPattern(
            klass, category, len(items), dict(outcomes),
            tuple(c for c, _ in comps.most_common()), tuple(r.provenance.ref for r in newest),
            tuple(dict.fromkeys(" ".join(r.title.split()) for r in newest if r.title.strip()))[:3],
            most_restricted((r.access_level for r in items), AccessLevel.PUBLIC),
        ))
    patterns.sort(key=lambda p: (-p.count, p.correction_class, p.category))

    corrected: Counter[str] = Counter(r.component for r in corrections if r.component)
    active = {c.component: c for c in activity.components}
    zones = []
    for comp in set(corrected) | set(active):
        a = active.get(comp)
        named = [f for f in activity.files if f.component == comp][:files_per_zone]
        files = tuple(f.path for f in named)
        level = most_restricted([*(f.access_level for f in named), *([a.access_level] if a else []),
                                 *(r.access_level for r in corrections if r.component == comp)], AccessLevel.PUBLIC)
        recent = tuple((sha, f"{when.date().isoformat()} {author or 'unknown'}: {subject}")
                       for sha, subject, author, when in a.recent) if a and a.recent else (
            ((a.last_sha, a.last_subject),) if a else ())
        zones.append(AttentionZone(comp, corrected[comp], a.commits if a else 0, files, recent,
                                   a.by_outgoing if a else 0, a.score if a else 0.0, level))
    zones.sort(key=lambda z: (-z.corrections, -z.score, z.component))
    return PredecessorProfile(operator, len(corrections), tuple(patterns), tuple(zones[:max_zones]))
