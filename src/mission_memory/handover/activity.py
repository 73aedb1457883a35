"""Where the work is: files and components ranked by recent activity, for the rotation brief (ADR 0038).

The incoming operator's next work lands, more often than not, where the work was lately, where the
outgoing operator was busy, and where the incoming operator left off. The ranking is a recency-
weighted change frequency ("frecency", as in change-history mining: files changed often and lately
are changed next) over the mission's commit records, with no I/O and nothing tuned to a repository:

* **horizon** — the shift window's commits, and at least the mission's latest
  :data:`HORIZON_COMMITS` commits (ten times the ``git log -20`` an operator would otherwise read),
  plus the incoming operator's own latest :data:`OWN_COMMITS` commits however old they are;
* **weight of a commit** — ``0.5 ** (rank / HALF_LIFE_COMMITS)`` where ``rank`` is its position,
  newest first, among the horizon's commits that touch files (so the last 20 commits weigh at
  least half as much as the newest); the incoming operator's own commits take
  ``min(rank, own rank)`` ("where you left off" counts as recent work);
  a commit of the outgoing operator counts :data:`OUTGOING_FACTOR` times (the handover's subject);
  a bulk commit touching more than :data:`BULK_FILES` files shares ``BULK_FILES / files`` of its
  weight (renames and reformatting say little about any one file);
* **score of a file** — the sum of the weights of the horizon commits touching it; of a component
  (the top-level folder, ``(root)`` for top-level files) the sum of its files' scores.

Ties are broken by the latest touch, newest first, then by path.

Amended by ADR 0060: files that no longer exist in the tree memory last ingested are not ranked
(``exists``); when one top-level folder holds :data:`DOMINANT_SHARE` or more of the score (a
repository that is all ``terraform/``), its files are charged to their second-level folder
(``terraform/projects``) so the zones say where in it the work is; each component keeps its latest
:data:`RECENT_PER_COMPONENT` commits with subject and author, merge commits only when it has no
others (a merge's subject names a branch, not the change).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from mission_memory.records import AccessLevel, Record
from mission_memory.teams.access_control import most_restricted

__all__ = [
    "BULK_FILES",
    "HALF_LIFE_COMMITS",
    "HORIZON_COMMITS",
    "OUTGOING_FACTOR",
    "OWN_COMMITS",
    "RECENT_COMMITS",
    "ComponentActivity",
    "FileActivity",
    "RecentActivity",
    "component_of_path",
    "rank_activity",
]

HORIZON_COMMITS = 200
"""At least this many of the mission's latest commits are read (ten times ``git log -20``)."""
HALF_LIFE_COMMITS = 20
"""A commit 20 positions older weighs half as much: the latest 20 commits weigh at least half."""
OUTGOING_FACTOR = 2.0
"""The outgoing operator's commits count this many times: their work is what is handed over."""
OWN_COMMITS = 20
"""The incoming operator's own latest commits join the horizon at their own rank ("where you left off")."""
BULK_FILES = 10
"""A commit touching more files than this shares its weight among them."""

DOMINANT_SHARE = 0.8
"""A top-level folder with this share of the activity score is split into its sub-folders: a zone
naming nearly the whole repository tells the incoming operator nothing."""
RECENT_PER_COMPONENT = 3
"""Latest commits kept per component, with subject and author, for the brief's zones."""

RECENT_COMMITS = 2 * HALF_LIFE_COMMITS
"""The latest commits that still weigh a quarter or more: a file one of them touched is "recently
touched" (a decision linked to the active work, ADR 0060)."""

ROOT_COMPONENT = "(root)"


def component_of_path(path: str) -> str:
    """The component a repository path belongs to: its top-level folder, or ``(root)``."""
    path = path.strip("/")
    return path.split("/", 1)[0] if "/" in path else ROOT_COMPONENT


@dataclass(frozen=True)
class FileActivity:
    """One file's recent activity.

    Attributes:
        path: the repository path.
        component: its component.
        score: the sum of the weights of the horizon commits touching it (unitless, > 0).
        commits: how many horizon commits touched it.
        by_outgoing, by_incoming: how many of those the outgoing / incoming operator authored.
        last_sha, last_time: the newest commit touching it (provenance).
        access_level: the most restricted access level of the commits counted (what naming the
            file, its counts and its latest commit reveal).
    """

    path: str
    component: str
    score: float
    commits: int
    by_outgoing: int
    by_incoming: int
    last_sha: str
    last_time: datetime
    access_level: AccessLevel = AccessLevel.PUBLIC


@dataclass(frozen=True)
class ComponentActivity:
    """One component's recent activity.

    Attributes:
        component: the top-level folder, or ``(root)``.
        score: the sum of its files' scores.
        commits: horizon commits touching a file in it.
        files: how many of its files the horizon touched.
        by_outgoing: commits of the outgoing operator touching it.
        last_sha, last_subject, last_time: its newest commit (provenance).
    """

    component: str
    score: float
    commits: int
    files: int
    by_outgoing: int
    last_sha: str
    last_subject: str
    last_time: datetime
    recent: tuple[tuple[str, str, str, datetime], ...] = field(default=())
    """Its latest commits, newest first: ``(sha, subject, author, time)``."""
    access_level: AccessLevel = AccessLevel.PUBLIC
    """The most restricted access level of the commits counted (what its line in a brief reveals)."""


@dataclass(frozen=True)
class RecentActivity:
    """The ranked activity of a mission before a handover.

    Attributes:
        files: files, highest score first.
        components: components, highest score first.
        horizon: how many commits were read.
        oldest: the oldest horizon commit's time, or None when there were none.
        recent_since: the time of the :data:`RECENT_COMMITS`-th newest horizon commit (the
            commits that weigh at least a quarter); a file touched since was "recently touched" (ADR 0060).
        older: see below.
    """

    files: tuple[FileActivity, ...]
    components: tuple[ComponentActivity, ...]
    horizon: int
    oldest: datetime | None
    recent_since: datetime | None = None
    older: tuple[FileActivity, ...] = ()
    """Files in the tree that only commits older than the horizon touched, newest first (score 0):
    what the brief lists after the ranked files when its budget has room (ADR 0060)."""

    def file(self, path: str) -> FileActivity | None:
        """The activity of ``path``, or None when the horizon did not touch it."""
        for f in self.files:
            if f.path == path:
                return f
        return None


def _files(commit: Record) -> list[str]:
    files = commit.attributes.get("files")
    return [str(f) for f in files if str(f).strip()] if isinstance(files, list) else []


def _is_merge(commit: Record) -> bool:
    return commit.attributes.get("merge") is True or len(commit.attributes.get("parents") or ()) > 1


def _latest_commits(commits: Sequence[Record]) -> list[Record]:
    """The component's latest commits for the zones, merges last: a merge's subject ("Merge pull request
    #235 from …", "Merge branch 'master' into …") says less than the commits it brings in."""
    own = [c for c in commits if not _is_merge(c)]
    return (own + [c for c in commits if _is_merge(c)])[:RECENT_PER_COMPONENT]


def _author(commit: Record) -> str:
    author = commit.attributes.get("author")
    return author if isinstance(author, str) else ""


def rank_activity(
    commits: Sequence[Record],
    *,
    window_commits: int = 0,
    outgoing: str | None = None,
    incoming: str | None = None,
    exists: Callable[[str], bool] | None = None,
) -> RecentActivity:
    """Rank files and components by the rule of this module's docstring.

    Args:
        commits: the mission's ``commit`` records before the handover, newest first (attributes
            ``files``, ``author``, ``sha``); more than the horizon may be passed, the rest is only
            searched for the incoming operator's own commits.
        window_commits: how many of ``commits`` fall in the shift window (the horizon holds them all).
        outgoing, incoming: the operators, matched on the commit author; None when unknown.
        exists: whether a path is still in the tree (None: every path counts); others are not ranked.

    Returns:
        The ranking; empty when no commit names files.
    """
    horizon_size = max(HORIZON_COMMITS, window_commits)
    with_files = [c for c in commits if _files(c)]
    chosen: dict[str, tuple[int, Record]] = {}
    for rank, commit in enumerate(with_files[:horizon_size]):
        chosen[commit.id] = (rank, commit)
    if incoming:
        own = [c for c in with_files if _author(c) == incoming][:OWN_COMMITS]
        for own_rank, commit in enumerate(own):
            rank = chosen[commit.id][0] if commit.id in chosen else own_rank
            chosen[commit.id] = (min(rank, own_rank), commit)
    order = {c.id: i for i, c in enumerate(with_files)}
    horizon = sorted(chosen.values(), key=lambda rc: order[rc[1].id])  # newest first

    score: dict[str, float] = {}
    touches: dict[str, int] = {}
    out_touches: dict[str, int] = {}
    in_touches: dict[str, int] = {}
    last: dict[str, Record] = {}
    levels: dict[str, set[AccessLevel]] = {}
    horizon_files: list[tuple[Record, list[str]]] = []
    for rank, commit in horizon:
        files = sorted(set(_files(commit)))
        author = _author(commit)
        weight = 0.5 ** (rank / HALF_LIFE_COMMITS)
        if outgoing and author == outgoing:
            weight *= OUTGOING_FACTOR
        if len(files) > BULK_FILES:
            weight *= BULK_FILES / len(files)
        for path in files:
            if exists is not None and not exists(path):
                continue
            score[path] = score.get(path, 0.0) + weight
            touches[path] = touches.get(path, 0) + 1
            out_touches[path] = out_touches.get(path, 0) + (1 if outgoing and author == outgoing else 0)
            in_touches[path] = in_touches.get(path, 0) + (1 if incoming and author == incoming else 0)
            last.setdefault(path, commit)
            levels.setdefault(path, set()).add(commit.access_level)
        horizon_files.append((commit, files))

    def sha(commit: Record) -> str:
        return str(commit.attributes.get("sha") or commit.provenance.ref)

    total = sum(score.values()) or 1.0
    top_score: dict[str, float] = {}
    for p, v in score.items():
        top_score[component_of_path(p)] = top_score.get(component_of_path(p), 0.0) + v
    dominant = {c for c, v in top_score.items() if c != ROOT_COMPONENT and v / total >= DOMINANT_SHARE}

    def comp_of(path: str) -> str:
        top = component_of_path(path)
        parts = path.strip("/").split("/")
        return "/".join(parts[:2]) if top in dominant and len(parts) > 2 else top

    comp_commits: dict[str, list[Record]] = {}
    for commit, files in horizon_files:
        for comp in {comp_of(p) for p in files if p in score}:
            comp_commits.setdefault(comp, []).append(commit)
    files_ranked = sorted(
        (FileActivity(p, comp_of(p), score[p], touches[p], out_touches[p], in_touches[p],
                      sha(last[p]), last[p].provenance.time, most_restricted(levels[p], AccessLevel.PUBLIC))
         for p in score),
        key=lambda f: (-f.score, -f.last_time.timestamp(), f.path),
    )
    comp_score: dict[str, float] = {}
    comp_files: dict[str, int] = {}
    for f in files_ranked:
        comp_score[f.component] = comp_score.get(f.component, 0.0) + f.score
        comp_files[f.component] = comp_files.get(f.component, 0) + 1
    components = sorted(
        (ComponentActivity(comp, comp_score[comp], len(cs), comp_files[comp],
                           sum(1 for c in cs if outgoing and _author(c) == outgoing),
                           sha(cs[0]), cs[0].title, cs[0].provenance.time,
                           tuple((sha(c), c.title, _author(c), c.provenance.time) for c in _latest_commits(cs)),
                           most_restricted((c.access_level for c in cs), AccessLevel.PUBLIC))
         for comp, cs in comp_commits.items()),
        key=lambda c: (-c.score, -c.last_time.timestamp(), c.component),
    )
    oldest = min((c.provenance.time for _, c in horizon), default=None)
    recent_since = horizon[min(RECENT_COMMITS, len(horizon)) - 1][1].provenance.time if horizon else None
    older_touches: dict[str, int] = {}
    older_last: dict[str, Record] = {}
    older_levels: dict[str, set[AccessLevel]] = {}
    for commit in with_files:  # newest first
        if commit.id in chosen:
            continue
        for path in set(_files(commit)):
            if path in score or (exists is not None and not exists(path)):
                continue
            older_touches[path] = older_touches.get(path, 0) + 1
            older_last.setdefault(path, commit)
            older_levels.setdefault(path, set()).add(commit.access_level)
    older = tuple(FileActivity(p, comp_of(p), 0.0, older_touches[p], 0, 0, sha(older_last[p]),
                               older_last[p].provenance.time, most_restricted(older_levels[p], AccessLevel.PUBLIC))
                  for p in sorted(older_last, key=lambda p: (-older_last[p].provenance.time.timestamp(), p)))
    return RecentActivity(tuple(files_ranked), tuple(components), len(horizon), oldest, recent_since, older)
