"""Rotation in the metrics: sessions right after an operator change against the others.

The paper measures what a rotation costs (docs/design.md §1: "+136 % dialogue rounds" when the operator
changes). This module owns the split: sessions are grouped by mission (their working directory),
ordered by start time, and a session is *after a rotation* when its operator differs from the
operator of the mission's previous session. The two groups are then compared with
:func:`~mission_memory.metrics.session_comparison.compare_session_groups` (relative change, Hedges' g,
bootstrap interval of the median difference).

Operators come from a mapping (session id -> operator) given as a file, or from the prompt corpus,
whose prompts carry the operator and the session id they were captured in.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from mission_memory.errors import InputError
from mission_memory.metrics.session_comparison import GroupComparison, compare_session_groups
from mission_memory.metrics.session_metrics import SessionMetrics

__all__ = [
    "RotationSplit",
    "compare_rotation",
    "load_operator_mapping",
    "operators_from_prompts",
    "split_by_rotation",
]


@dataclass(frozen=True)
class RotationSplit:
    """Sessions split by whether the operator changed just before them.

    Attributes:
        after_rotation: sessions whose operator differs from the previous session's on the mission.
        same_operator: sessions whose operator is the previous session's.
        first_of_mission: ids of each mission's first session (no predecessor: in neither group).
        unknown_operator: ids of sessions with no operator in the mapping (in neither group, and
            not a predecessor either).
        no_start: ids of sessions without a timestamp (cannot be ordered; in neither group).
        rotations: ``(mission, from operator, to operator, session id)`` for each rotation, in time order.
    """

    after_rotation: tuple[SessionMetrics, ...]
    same_operator: tuple[SessionMetrics, ...]
    first_of_mission: tuple[str, ...]
    unknown_operator: tuple[str, ...]
    no_start: tuple[str, ...]
    rotations: tuple[tuple[str, str, str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready counts and the rotations found."""
        return {
            "after_rotation": len(self.after_rotation),
            "same_operator": len(self.same_operator),
            "first_of_mission": len(self.first_of_mission),
            "unknown_operator": len(self.unknown_operator),
            "no_start": len(self.no_start),
            "rotations": [
                {"mission": m, "from": a, "to": b, "session_id": s} for m, a, b, s in self.rotations
            ],
        }


def split_by_rotation(
    sessions: Iterable[SessionMetrics],
    operator_of: Mapping[str, str],
    mission_of: Mapping[str, str],
) -> RotationSplit:
    """Split measured sessions into "right after an operator change" and "same operator as before".

    Args:
        sessions: measured sessions.
        operator_of: session id -> operator; sessions missing here are left out and counted.
        mission_of: session id -> mission (for transcripts: the working directory); a session
            missing here is filed under the mission ``""``.

    Returns:
        The split; each mission's first known-operator session belongs to neither group.
    """
    by_mission: dict[str, list[SessionMetrics]] = defaultdict(list)
    unknown: list[str] = []
    no_start: list[str] = []
    for session in sessions:
        if session.start is None:
            no_start.append(session.session_id)
        elif not operator_of.get(session.session_id):
            unknown.append(session.session_id)
        else:
            by_mission[mission_of.get(session.session_id, "")].append(session)
    after: list[SessionMetrics] = []
    same: list[SessionMetrics] = []
    first: list[str] = []
    rotations: list[tuple[str, str, str, str]] = []
    for mission in sorted(by_mission):
        ordered = sorted(by_mission[mission], key=lambda s: (s.start, s.session_id))
        first.append(ordered[0].session_id)
        for previous, current in pairwise(ordered):
            before, now = operator_of[previous.session_id], operator_of[current.session_id]
            if before != now:
                after.append(current)
                rotations.append((mission, before, now, current.session_id))
            else:
                same.append(current)
    return RotationSplit(
        after_rotation=tuple(after),
        same_operator=tuple(same),
        first_of_mission=tuple(first),
        unknown_operator=tuple(unknown),
        no_start=tuple(no_start),
        rotations=tuple(rotations),
    )


def compare_rotation(
    split: RotationSplit, *, confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0
) -> GroupComparison:
    """Compare sessions after a rotation (group a) with same-operator sessions (group b).

    Raises:
        InputError: one of the groups is empty; the message says how many of each were found.
    """
    if not split.after_rotation or not split.same_operator:
        raise InputError(
            f"comparing rotation needs sessions on both sides: {len(split.after_rotation)} right after an "
            f"operator change, {len(split.same_operator)} with the same operator as before "
            f"({len(split.unknown_operator)} sessions had no operator, {len(split.first_of_mission)} were "
            "the first of their mission)"
        )
    return compare_session_groups(
        split.after_rotation,
        split.same_operator,
        label_a="after rotation",
        label_b="same operator",
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )


def load_operator_mapping(path: Path) -> dict[str, str]:
    """Read a session -> operator mapping.

    Accepted forms: a JSON object ``{"<session id>": "<operator>", ...}``, or CSV / TSV lines
    ``session_id,operator`` (an optional header row naming ``session_id`` is skipped).

    Raises:
        InputError: the file cannot be read, or a row or value is malformed (named with its line).
    """
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"operator mapping {path}: cannot read it ({exc})") from exc
    if raw.lstrip().startswith("{"):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(f"operator mapping {path}: not valid JSON ({exc})") from exc
        bad = [k for k, v in data.items() if not isinstance(v, str) or not v.strip()]
        if bad:
            raise InputError(f"operator mapping {path}: the operator of session {bad[0]!r} is not a name")
        return {str(k): v.strip() for k, v in data.items()}
    delimiter = "\t" if "\t" in raw.split("\n", 1)[0] else ","
    mapping: dict[str, str] = {}
    for number, row in enumerate(csv.reader(raw.splitlines(), delimiter=delimiter), start=1):
        if not row or not "".join(row).strip():
            continue
        if len(row) != 2 or not row[0].strip() or not row[1].strip():
            raise InputError(
                f"operator mapping {path} line {number}: expected 'session_id{delimiter}operator', got {row!r}"
            )
        if number == 1 and row[0].strip().lower() in ("session_id", "session"):
            continue
        mapping[row[0].strip()] = row[1].strip()
    return mapping


def operators_from_prompts(prompts: Sequence[Any]) -> dict[str, str]:
    """Session id -> its operator, from captured prompts (the most frequent operator per session).

    Args:
        prompts: :class:`~mission_memory.prompts.corpus.CapturedPrompt` objects (anything with
            ``session_id`` and ``operator`` attributes).
    """
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for prompt in prompts:
        if prompt.session_id and prompt.operator:
            seen[prompt.session_id][prompt.operator] += 1
    return {session: counts.most_common(1)[0][0] for session, counts in seen.items()}
