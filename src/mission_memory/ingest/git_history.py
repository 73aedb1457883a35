"""Reading a git repository: commits with their files and diffstat, tracked files, last changes.

Everything goes through the ``git`` command line (one ``git log`` per pass, not one call per
commit), and git's failures are translated here, at the backend boundary, into
:class:`~mission_memory.errors.BackendUnavailable` or :class:`~mission_memory.errors.InputError`.

A history git cannot read whole does not stop the reading (issue 21): when ``git log --numstat``
fails because a blob is missing (a damaged clone), or in a partial clone (whose missing blobs git
would fetch one by one), the commits are read again from their
trees (``--raw``, which needs no blob), the missing blobs are found with ``rev-list --missing=print``
(which fetches nothing), and only the diffstat of the files whose blob is missing is left out; the
caller names them (:class:`UnreadableObject`). A shallow clone is told by :meth:`GitRepository.is_shallow`.
"""

from __future__ import annotations

import re
import secrets
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from mission_memory.errors import InputError
from mission_memory.fence import usable_name
from mission_memory.git_runner import run_git, run_git_text
from mission_memory.trackers.keys import extract_tracker_keys

__all__ = [
    "Commit",
    "GitRepository",
    "History",
    "UnreadableObject",
    "extract_tracker_keys",
]

# Record, unit and group separators of `git log --format` output. A commit message or author name may
# hold the bare control characters (a message with \x1e was split in two and the commit silently lost),
# never this process's random token: the separators carry it.
_TOKEN = secrets.token_hex(8)
_RS, _US, _GS = f"\x1e{_TOKEN}\x1e", f"\x1f{_TOKEN}\x1f", f"\x1d{_TOKEN}\x1d"
_LOG = ("log", "--reverse", "--topo-order", "--no-renames", "--diff-merges=first-parent")
_FORMAT = f"--format={_RS}%H{_US}%P{_US}%an{_US}%aI{_US}%cI{_US}%s{_US}%b{_GS}"
_NO_OBJECT = "0" * 40


@dataclass(frozen=True)
class Commit:
    """One commit as ingested.

    Attributes:
        sha: full 40-hex sha.
        parents: parent shas (two or more for a merge).
        author: author name (e-mail addresses are not kept).
        authored_at, committed_at: timezone-aware datetimes.
        subject, body: the message's first line and the rest.
        files: paths touched (against the first parent for merges), repository-relative.
        insertions, deletions: line counts from ``--numstat`` (binary files count 0).
    """

    sha: str
    parents: tuple[str, ...]
    author: str
    authored_at: datetime
    committed_at: datetime
    subject: str
    body: str
    files: tuple[str, ...] = field(default_factory=tuple)
    insertions: int = 0
    deletions: int = 0

    @property
    def is_merge(self) -> bool:
        """True for a merge commit."""
        return len(self.parents) > 1

    @property
    def tracker_keys(self) -> list[str]:
        """Tracker keys named in the message."""
        return extract_tracker_keys(f"{self.subject}\n{self.body}")

    @property
    def component(self) -> str | None:
        """The top-level folder most of the touched files live in, or None for root-level changes (and
        when that folder's name breaks the name rule, :func:`~mission_memory.fence.usable_name`)."""
        tops = Counter(f.split("/", 1)[0] for f in self.files if "/" in f)
        return usable_name(tops.most_common(1)[0][0]) if tops else None


@dataclass(frozen=True)
class UnreadableObject:
    """A blob of the history git could not read: the file's diffstat in that commit is left out.

    Attributes:
        commit: the commit whose change needs the blob (full sha).
        path: the file, repository-relative.
        object: the missing blob's sha.
    """

    commit: str
    path: str
    object: str

    def to_json(self) -> dict[str, str]:
        """``{"commit", "path", "object"}``."""
        return {"commit": self.commit, "path": self.path, "object": self.object}


@dataclass(frozen=True)
class History:
    """Commits read from a repository, and the blobs git could not read while reading them.

    Attributes:
        commits: oldest first (see :meth:`GitRepository.commits`).
        unreadable: one entry per commit and file whose blob is missing; empty for a sound history.
    """

    commits: list[Commit]
    unreadable: list[UnreadableObject] = field(default_factory=list)


class GitRepository:
    """A git work tree read through the ``git`` command.

    Args:
        path: any folder inside the work tree.

    Raises:
        InputError: ``path`` does not exist, or is not inside a git work tree.
        BackendUnavailable: the ``git`` command is missing.
    """

    def __init__(self, path: Path) -> None:
        if not path.exists():
            raise InputError(f"ingest path {path} does not exist")
        top = run_git_text(path if path.is_dir() else path.parent, "rev-parse", "--show-toplevel", check=False)
        if top is None:
            raise InputError(f"{path} is not inside a git work tree")
        self.root = Path(top.strip())
        self._web_base = self._web_base_url()

    @staticmethod
    def is_git_work_tree(path: Path) -> bool:
        """True when ``path`` is a folder inside a git work tree."""
        if not path.is_dir():
            return False
        return run_git_text(path, "rev-parse", "--is-inside-work-tree", check=False) == "true\n"

    def git(self, *args: str, check: bool = True, stdin: bytes | None = None) -> str | None:
        """Run ``git ARGS`` in the work tree (``stdin`` fed to it); stdout as text, or None when it
        failed and not ``check``."""
        return run_git_text(self.root, *args, check=check, stdin=stdin)

    def head(self) -> str | None:
        """The sha HEAD points to, or None in a repository without commits."""
        out = self.git("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
        return out.strip() if out else None

    def is_ancestor(self, older: str, newer: str) -> bool:
        """True when ``older`` is an ancestor of (or equal to) ``newer``."""
        return self.git("merge-base", "--is-ancestor", older, newer, check=False) is not None

    def tracked_files(self) -> list[str]:
        """Repository-relative paths of the files git tracks, as in the index.

        Names that are not UTF-8 keep their bytes as surrogate escapes (as `os.fsdecode` does), so such
        a file can still be named exactly; `ingest_repository` reports it rather than guess a name.
        """
        out = run_git(self.root, "ls-files", "-z").decode("utf-8", "surrogateescape")
        return [p for p in out.split("\0") if p]

    def commits(self, since: str | None = None) -> list[Commit]:
        """Commits reachable from HEAD, oldest first; only those after ``since`` when given.

        Merges are included, with files and diffstat taken against their first parent. A missing
        blob leaves out only that file's diffstat (see :meth:`history`, which also names it).
        """
        return self.history(since).commits

    def history(self, since: str | None = None) -> History:
        """:meth:`commits`, and the blobs git could not read on the way (a damaged or partial clone).

        Raises:
            BackendUnavailable: git failed for another reason than a missing blob (a missing commit
                or tree, a timeout).
        """
        head = self.head()
        if head is None:
            return History([])
        rev = f"{since}..{head}" if since else head
        # A partial clone would fetch every missing blob from its remote, one request at a time, to
        # count lines: read it the way a damaged clone is read, from what is here.
        out = None if self.is_partial() else self.git(*_LOG, "--numstat", _FORMAT, rev, check=False)
        if out is not None:
            return History([c for c in (_parse_commit(chunk) for chunk in out.split(_RS)) if c is not None])
        return self._history_around_missing_blobs(rev)

    def _history_around_missing_blobs(self, rev: str) -> History:
        """The history of ``rev`` read from trees (``--raw`` reads no blob), with diffstats taken
        where every blob is there: one ``git log --no-walk`` for the sound commits, one
        ``diff-tree`` per commit that touches a missing blob, leaving those files out."""
        raw = self.git(*_LOG, "--raw", "--no-abbrev", _FORMAT, rev) or ""
        listed = self.git("rev-list", "--objects", "--missing=print", rev) or ""
        missing = {line[1:].strip() for line in listed.splitlines() if line.startswith("?")}
        commits: list[Commit] = []
        unreadable: list[UnreadableObject] = []
        damaged: dict[str, list[str]] = {}
        for chunk in raw.split(_RS):
            commit = _parse_commit(chunk)
            if commit is None:
                continue
            files: list[str] = []
            for line in chunk.partition(_GS)[2].splitlines():
                meta, tab, name = line.partition("\t")
                if not line.startswith(":") or not tab:
                    continue
                fields = meta[1:].split()
                files.append(name)
                lost = sorted({fields[2], fields[3]} & missing - {_NO_OBJECT}) if len(fields) >= 4 else []
                if lost:
                    unreadable.append(UnreadableObject(commit.sha, name, lost[0]))
                    damaged.setdefault(commit.sha, []).append(name)
            commits.append(replace(commit, files=tuple(files)))
        stats = self._numstat_of_sound([c.sha for c in commits if c.sha not in damaged])
        for c in commits:
            if c.sha in damaged:
                stats[c.sha] = self._numstat_without(c, damaged[c.sha])
        return History(
            [replace(c, insertions=stats.get(c.sha, (0, 0))[0], deletions=stats.get(c.sha, (0, 0))[1])
             for c in commits],
            unreadable,
        )

    def _numstat_of_sound(self, shas: list[str]) -> dict[str, tuple[int, int]]:
        """``{sha: (insertions, deletions)}`` of commits whose blobs are all there, in one ``git log``."""
        if not shas:
            return {}
        out = self.git(
            "log", "--no-walk=unsorted", "--stdin", "--no-renames", "--diff-merges=first-parent", "--numstat",
            f"--format={_RS}%H", stdin="\n".join(shas).encode() + b"\n",
        ) or ""
        stats: dict[str, tuple[int, int]] = {}
        for chunk in out.split(_RS):
            sha, _, lines = chunk.strip().partition("\n")
            if sha:
                stats[sha] = _line_counts(lines)
        return stats

    def _numstat_without(self, commit: Commit, paths: list[str]) -> tuple[int, int]:
        """``(insertions, deletions)`` of one commit against its first parent, leaving ``paths`` out."""
        against = [commit.parents[0], commit.sha] if commit.parents else ["--root", commit.sha]
        excluded = [f":(exclude,literal){p}" for p in paths]
        out = self.git("diff-tree", "-r", "--no-renames", "--numstat", *against, "--", ".", *excluded) or ""
        return _line_counts(out)

    def is_partial(self) -> bool:
        """True for a partial clone (``git clone --filter=blob:none``): blobs may be left on its remote."""
        found = self.git("config", "--get-regexp", r"^(extensions\.partialclone|remote\..*\.promisor)$", check=False)
        return any(line.split()[-1:] != ["false"] for line in (found or "").splitlines())

    def is_shallow(self) -> bool:
        """True for a shallow clone (``git clone --depth N``): history before its boundary is not there."""
        return (self.git("rev-parse", "--is-shallow-repository", check=False) or "").strip() == "true"

    def last_changes(self) -> dict[str, tuple[str, datetime]]:
        """For every path ever touched: the sha and commit time of the newest commit that changed it."""
        if self.head() is None:
            return {}
        out = self.git("log", "--no-renames", "--name-only", f"--format={_RS}%H{_US}%cI", "HEAD") or ""
        latest: dict[str, tuple[str, datetime]] = {}
        for chunk in out.split(_RS):
            if not chunk.strip():
                continue
            header, _, names = chunk.partition("\n")
            sha, _, when = header.partition(_US)
            moment = datetime.fromisoformat(when.strip())
            for name in names.splitlines():
                name = name.strip()
                if name and name not in latest:
                    latest[name] = (sha, moment)
        return latest

    # -- URIs -----------------------------------------------------------------------------------

    def _web_base_url(self) -> str | None:
        remote = (self.git("remote", "get-url", "origin", check=False) or "").strip()
        match = re.match(r"^(?:https?://|git@|ssh://git@)(github\.com|gitlab\.com|codeberg\.org)[/:](.+?)(?:\.git)?/?$", remote)
        return f"https://{match.group(1)}/{match.group(2)}" if match else None

    def commit_uri(self, sha: str) -> str:
        """A URI for a commit: the forge's web page when ``origin`` is a known forge, else a file URI."""
        if self._web_base:
            return f"{self._web_base}/commit/{sha}"
        return f"{self.root.as_uri()}#commit={sha}"

    def file_uri(self, path: str, anchor: str = "", commit: str | None = None) -> str:
        """A URI for a file (and heading anchor): the forge's page at ``commit`` when known, else a file URI."""
        fragment = f"#{quote(anchor)}" if anchor else ""
        if self._web_base and commit:
            return f"{self._web_base}/blob/{commit}/{quote(path)}{fragment}"
        return (self.root / path).as_uri() + fragment


def _line_counts(numstat: str) -> tuple[int, int]:
    """Lines added and removed in ``--numstat`` output (binary files, ``-``, count 0)."""
    insertions = deletions = 0
    for line in numstat.splitlines():
        cols = line.split("\t")
        if len(cols) == 3:
            insertions += int(cols[0]) if cols[0].isdigit() else 0
            deletions += int(cols[1]) if cols[1].isdigit() else 0
    return insertions, deletions


def _parse_commit(chunk: str) -> Commit | None:
    if not chunk.strip():
        return None
    header, _, stats = chunk.partition(_GS)
    parts = header.split(_US)
    if len(parts) < 7:
        return None
    sha, parents, author, authored, committed, subject, body = parts[:7]
    files: list[str] = []
    insertions = deletions = 0
    for line in stats.splitlines():
        cols = line.split("\t")
        if len(cols) != 3:
            continue
        added, removed, name = cols
        files.append(name)
        insertions += int(added) if added.isdigit() else 0
        deletions += int(removed) if removed.isdigit() else 0
    return Commit(
        sha=sha.strip(),
        parents=tuple(parents.split()),
        author=author,
        authored_at=datetime.fromisoformat(authored),
        committed_at=datetime.fromisoformat(committed),
        subject=subject.strip(),
        body=body.strip(),
        files=tuple(files),
        insertions=insertions,
        deletions=deletions,
    )
