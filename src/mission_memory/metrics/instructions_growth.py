"""Growth of a project's agent instructions file (CLAUDE.md / AGENTS.md) over its git history.

The paper ("Експеримент 2"; docs/design.md §9) measures the instructions file's size in characters at
every commit that changed it and fits a least-squares line over commit time: CLAUDE.md grew
216.7 characters/day with R² = 0.87 over 25 commits in 85 days. This module reproduces that
from any git repository by running ``git`` in subprocesses; git is the canonical source, nothing
is stored.

Commit time is the committer date (``%ct``). Size is the number of Unicode characters of the file
decoded as UTF-8 (invalid bytes replaced); a commit that deletes the file records size 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from mission_memory.errors import InputError
from mission_memory.git_runner import run_git, run_git_text

__all__ = [
    "DEFAULT_INSTRUCTIONS_FILES",
    "FileVersion",
    "InstructionsGrowth",
    "LinearFit",
    "fit_line",
    "measure_instructions_growth",
]

DEFAULT_INSTRUCTIONS_FILES = ("CLAUDE.md", "AGENTS.md")
"""Paths tried, in order, when none is given: the first with any history is measured."""

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class FileVersion:
    """The instructions file as one commit left it.

    Attributes:
        commit: full sha.
        time: committer date (UTC).
        chars: size in characters (0 if the commit deleted the file).
        lines: number of lines.
    """

    commit: str
    time: datetime
    chars: int
    lines: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "commit": self.commit,
            "time": self.time.isoformat(),
            "chars": self.chars,
            "lines": self.lines,
        }


@dataclass(frozen=True)
class LinearFit:
    """Least-squares line ``y = intercept + slope * x``.

    Attributes:
        slope: units of y per unit of x.
        intercept: y at x = 0.
        r2: coefficient of determination in [0, 1]; None when y does not vary.
    """

    slope: float
    intercept: float
    r2: float | None


@dataclass(frozen=True)
class InstructionsGrowth:
    """How an instructions file grew.

    Attributes:
        repo: the repository's top-level folder.
        path: the file, relative to the repository.
        versions: one entry per commit that changed the file, oldest first.
        chars_per_day: least-squares slope of size over commit time (characters/day); None with
            fewer than 2 versions or all at one instant.
        r2: R² of that fit; None when undefined.
        intercept_chars: the fitted size on the day of the first version (characters), or None.
    """

    repo: str
    path: str
    versions: tuple[FileVersion, ...]
    chars_per_day: float | None
    r2: float | None
    intercept_chars: float | None

    @property
    def first_chars(self) -> int:
        """Size of the first version (characters)."""
        return self.versions[0].chars

    @property
    def last_chars(self) -> int:
        """Size of the latest version (characters)."""
        return self.versions[-1].chars

    @property
    def days(self) -> float:
        """Days between the first and the latest version."""
        return (self.versions[-1].time - self.versions[0].time).total_seconds() / SECONDS_PER_DAY

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form with ``versions``, ``chars_per_day``, ``r2``, first and last size."""
        return {
            "repo": self.repo,
            "path": self.path,
            "commits": len(self.versions),
            "days": self.days,
            "first_chars": self.first_chars,
            "last_chars": self.last_chars,
            "first_lines": self.versions[0].lines,
            "last_lines": self.versions[-1].lines,
            "chars_per_day": self.chars_per_day,
            "r2": self.r2,
            "intercept_chars": self.intercept_chars,
            "versions": [v.to_dict() for v in self.versions],
        }


def measure_instructions_growth(repo: Path, path: str | None = None) -> InstructionsGrowth:
    """Size of the instructions file at every commit that changed it, and its linear growth.

    Args:
        repo: a folder inside a git working tree (or a bare repository).
        path: the file relative to the repository root; default: the first of
            :data:`DEFAULT_INSTRUCTIONS_FILES` that has any history.

    Returns:
        The versions (oldest first) with the least-squares slope in characters/day and R².

    Raises:
        InputError: ``repo`` is not a git repository, or the file has no history in it.
        BackendUnavailable: the ``git`` executable cannot be run.
    """
    if not repo.is_dir():
        raise InputError(f"repository {str(repo)!r} is not a folder")
    bare = run_git_text(repo, "rev-parse", "--is-bare-repository", failure=InputError)
    if bare.strip() == "true":
        top = repo
    else:
        top = Path(run_git_text(repo, "rev-parse", "--show-toplevel", failure=InputError).strip())
    candidates = (path,) if path else DEFAULT_INSTRUCTIONS_FILES
    for candidate in candidates:
        log = run_git_text(top, "log", "--format=%H %ct", "--reverse", "--", candidate, failure=InputError)
        entries = [line.split() for line in log.splitlines() if line.strip()]
        if entries:
            versions = tuple(_version(top, sha, int(stamp), candidate) for sha, stamp in entries)
            return _growth(top, candidate, versions)
    tried = " or ".join(candidates)
    raise InputError(f"no commit in {str(top)!r} touches {tried}")


def fit_line(x: Sequence[float], y: Sequence[float]) -> LinearFit | None:
    """Ordinary least squares of ``y`` on ``x``.

    Returns:
        The fit, or None with fewer than 2 points or when ``x`` does not vary.
    """
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xs.size < 2 or float(np.ptp(xs)) == 0.0:
        return None
    dx, dy = xs - xs.mean(), ys - ys.mean()
    slope = float(np.dot(dx, dy) / np.dot(dx, dx))
    intercept = float(ys.mean() - slope * xs.mean())
    total = float(np.dot(dy, dy))
    residual = ys - (intercept + slope * xs)
    r2 = 1.0 - float(np.dot(residual, residual)) / total if total > 0 else None
    return LinearFit(slope=slope, intercept=intercept, r2=r2)


def _growth(top: Path, path: str, versions: tuple[FileVersion, ...]) -> InstructionsGrowth:
    start = versions[0].time
    days = [(v.time - start).total_seconds() / SECONDS_PER_DAY for v in versions]
    fit = fit_line(days, [v.chars for v in versions])
    return InstructionsGrowth(
        repo=str(top),
        path=path,
        versions=versions,
        chars_per_day=fit.slope if fit else None,
        r2=fit.r2 if fit else None,
        intercept_chars=fit.intercept if fit else None,
    )


def _version(top: Path, sha: str, stamp: int, path: str) -> FileVersion:
    time = datetime.fromtimestamp(stamp, tz=UTC)
    listed = run_git_text(top, "ls-tree", "--name-only", sha, "--", path, failure=InputError)
    if not listed.strip():
        return FileVersion(commit=sha, time=time, chars=0, lines=0)
    content = run_git(top, "show", f"{sha}:{path}", failure=InputError)
    text = content.decode("utf-8", errors="replace")
    return FileVersion(commit=sha, time=time, chars=len(text), lines=len(text.splitlines()))
