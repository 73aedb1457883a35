"""The predecessor's profile: their typical corrections and their attention zones (DESIGN.md §6).

Computed from records only, no I/O:

* typical corrections — the outgoing operator's correction patterns in the shift window, counted by
  correction class and semantic category (the practitioner records of the corrections pipeline);
* attention zones — the components that drew the most corrections *and* activity in the window.
  A file's component is its top-level folder (``(root)`` for files at the top). Components are
  ranked by corrections first (where the operator had to step in), then by the commits that touched
  them, then by files touched; each zone names its most-touched files and its latest commits, so an
  incoming operator knows where the work is (ADR 0026).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from mission_memory.records import Record

__all__ = ["AttentionZone", "CorrectionPattern", "PredecessorProfile", "build_profile", "component_of_path"]

ROOT_COMPONENT = "(root)"


def component_of_path(path: str) -> str:
    """The component a repository path belongs to: its top-level folder, or ``(root)``."""
    path = path.strip("/")
    return path.split("/", 1)[0] if "/" in path else ROOT_COMPONENT


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


@dataclass(frozen=True)
class AttentionZone:
    """A component that drew corrections and activity in the window.

    Attributes:
        component: the component (top-level folder, or ``(root)``).
        corrections: the predecessor's corrections concerning it.
        commits: commits in the window touching a file in it.
        files: its touched files, most touched first (ties: latest touched first).
        latest_commits: ``(sha, subject)`` of its latest commits, newest first.
    """

    component: str
    corrections: int
    commits: int
    files: tuple[str, ...]
    latest_commits: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class PredecessorProfile:
    """The outgoing operator's profile in one shift window (DESIGN.md §6).

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


def _commit_files(commit: Record) -> list[str]:
    files = commit.attributes.get("files")
    return [str(f) for f in files] if isinstance(files, list) else []


def build_profile(
    operator: str | None,
    corrections: Sequence[Record],
    commits: Sequence[Record],
    *,
    max_zones: int = 8,
    files_per_zone: int = 20,
) -> PredecessorProfile:
    """The predecessor's profile from their corrections and the window's commits.

    Args:
        operator: the outgoing operator (None when unknown).
        corrections: their ``correction_pattern`` records in the window (attributes
            ``correction_class``, ``category``, ``outcome``; ``component`` on the record).
        commits: ``commit`` records in the window, newest first (attribute ``files``).
        max_zones: at most this many zones.
        files_per_zone: at most this many files named per zone.

    Returns:
        The profile; zones ranked by (corrections, commits, files touched), descending.
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
        ))
    patterns.sort(key=lambda p: (-p.count, p.correction_class, p.category))

    corrected: Counter[str] = Counter(r.component for r in corrections if r.component)
    touched_commits: Counter[str] = Counter()
    file_touches: Counter[str] = Counter()
    file_latest: dict[str, int] = {}
    latest: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for order, commit in enumerate(commits):  # newest first
        files = _commit_files(commit)
        touched = {component_of_path(f) for f in files}
        if not files and commit.component:
            touched = {commit.component}
        for comp in touched:
            touched_commits[comp] += 1
            latest[comp].append((str(commit.attributes.get("sha") or commit.provenance.ref), commit.title))
        for f in files:
            file_touches[f] += 1
            file_latest.setdefault(f, order)
    zones = []
    for comp in set(corrected) | set(touched_commits):
        files = sorted((f for f in file_touches if component_of_path(f) == comp),
                       key=lambda f: (-file_touches[f], file_latest[f], f))
        zones.append(AttentionZone(comp, corrected[comp], touched_commits[comp], tuple(files[:files_per_zone]),
                                   tuple(latest[comp][:3])))
    zones.sort(key=lambda z: (-z.corrections, -z.commits, -len(z.files), z.component))
    return PredecessorProfile(operator, len(corrections), tuple(patterns), tuple(zones[:max_zones]))
