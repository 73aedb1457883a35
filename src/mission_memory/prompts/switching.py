"""Cross-project switching in the prompt corpus: how an operator moves between repositories.

Prompts are put in time order (all sessions together: one operator's attention is one stream) and
read as a sequence of repositories (docs/design.md §8). From it:

* **transitions** ``from -> to`` between consecutive prompts (``from == to`` counts as staying);
* **switch rate**: switches (consecutive prompts in different repositories) over all transitions,
  in [0, 1]; transitions across an idle gap count too, because coming back after a break to a
  different project is still a switch;
* **dwell** per repository: a visit is a run of consecutive prompts in one repository with no pause
  longer than ``idle_gap`` (default 30 min) between them. A visit lasts from its first prompt until
  the first prompt of the next visit when that follows within ``idle_gap``, else until its own last
  prompt. Per repository: number of visits, prompts, total and median dwell in seconds.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise

__all__ = ["RepositoryDwell", "SwitchingStats", "switching_stats"]


@dataclass(frozen=True)
class RepositoryDwell:
    """Time spent in one repository.

    Attributes:
        repository: the repository (as captured: its top-level path, or its name).
        visits: number of uninterrupted runs of prompts in it.
        prompts: number of prompts in it.
        total_seconds: summed visit durations, in seconds.
        median_seconds: median visit duration, in seconds.
    """

    repository: str
    visits: int
    prompts: int
    total_seconds: float
    median_seconds: float


@dataclass(frozen=True)
class SwitchingStats:
    """Cross-project switching of one prompt stream.

    Attributes:
        repositories: repositories in order of first appearance.
        transitions: ``(from, to) -> count`` over consecutive prompts, staying included.
        switches: number of transitions with ``from != to``.
        switch_rate: ``switches / transitions``, in [0, 1]; 0 with fewer than two prompts.
        dwell: per-repository dwell, in :attr:`repositories` order.
        idle_gap_seconds: the idle gap that ends a visit, in seconds.
    """

    repositories: list[str]
    transitions: dict[tuple[str, str], int]
    switches: int
    switch_rate: float
    dwell: list[RepositoryDwell] = field(default_factory=list)
    idle_gap_seconds: float = 1800.0

    def matrix(self) -> list[list[int]]:
        """Transition counts as a square matrix, rows = from, columns = to, in :attr:`repositories` order."""
        return [[self.transitions.get((a, b), 0) for b in self.repositories] for a in self.repositories]

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (transitions as a list of ``{"from", "to", "count"}``)."""
        return {
            "repositories": self.repositories,
            "transitions": [
                {"from": a, "to": b, "count": n} for (a, b), n in sorted(self.transitions.items())
            ],
            "matrix": self.matrix(),
            "switches": self.switches,
            "switch_rate": self.switch_rate,
            "idle_gap_seconds": self.idle_gap_seconds,
            "dwell": [
                {
                    "repository": d.repository,
                    "visits": d.visits,
                    "prompts": d.prompts,
                    "total_seconds": d.total_seconds,
                    "median_seconds": d.median_seconds,
                }
                for d in self.dwell
            ],
        }


def switching_stats(
    prompts: Sequence[tuple[datetime, str]], *, idle_gap: timedelta = timedelta(minutes=30)
) -> SwitchingStats:
    """Transitions, switch rate and dwell of a prompt stream.

    Args:
        prompts: ``(timestamp, repository)`` pairs, any order (sorted here by time).
        idle_gap: a pause longer than this ends a visit at its last prompt.
    """
    stream = sorted(prompts, key=lambda p: p[0])
    repositories = list(dict.fromkeys(repo for _, repo in stream))
    transitions: Counter[tuple[str, str]] = Counter((a, b) for (_, a), (_, b) in pairwise(stream))
    switches = sum(n for (a, b), n in transitions.items() if a != b)
    total = max(len(stream) - 1, 0)
    visits: dict[str, list[float]] = {repo: [] for repo in repositories}
    counts: Counter[str] = Counter(repo for _, repo in stream)
    start = 0
    for i in range(1, len(stream) + 1):
        gap_before_next = stream[i][0] - stream[i - 1][0] if i < len(stream) else None
        if gap_before_next is not None and gap_before_next <= idle_gap and stream[i][1] == stream[start][1]:
            continue
        # the visit ends when the next one starts, unless an idle gap comes first
        end = (
            stream[i][0] if gap_before_next is not None and gap_before_next <= idle_gap else stream[i - 1][0]
        )
        visits[stream[start][1]].append((end - stream[start][0]).total_seconds())
        start = i
    dwell = [
        RepositoryDwell(
            repository=repo,
            visits=len(visits[repo]),
            prompts=counts[repo],
            total_seconds=round(sum(visits[repo]), 3),
            median_seconds=round(statistics.median(visits[repo]), 3) if visits[repo] else 0.0,
        )
        for repo in repositories
    ]
    return SwitchingStats(
        repositories=repositories,
        transitions=dict(transitions),
        switches=switches,
        switch_rate=round(switches / total, 4) if total else 0.0,
        dwell=dwell,
        idle_gap_seconds=idle_gap.total_seconds(),
    )
