"""Reading a git repository: commits with their files and diffstat, tracked files, last changes.

Everything goes through the ``git`` command line (one ``git log`` per pass, not one call per
commit), and git's failures are translated here, at the backend boundary, into
:class:`~mission_memory.errors.BackendUnavailable` or :class:`~mission_memory.errors.InputError`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from mission_memory.errors import InputError
from mission_memory.git_runner import run_git, run_git_text
from mission_memory.trackers.keys import extract_tracker_keys

__all__ = [
    "Commit",
    "GitRepository",
    "extract_tracker_keys",
]

_RS, _US, _GS = "\x1e", "\x1f", "\x1d"


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
        """The top-level folder most of the touched files live in, or None for root-level changes."""
        tops = Counter(f.split("/", 1)[0] for f in self.files if "/" in f)
        return tops.most_common(1)[0][0] if tops else None


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

    def git(self, *args: str, check: bool = True) -> str | None:
        """Run ``git ARGS`` in the work tree; stdout as text, or None when it failed and not ``check``."""
        return run_git_text(self.root, *args, check=check)

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

        Merges are included, with files and diffstat taken against their first parent.
        """
        head = self.head()
        if head is None:
            return []
        rev = f"{since}..{head}" if since else head
        out = self.git(
            "log", "--reverse", "--topo-order", "--no-renames", "--diff-merges=first-parent", "--numstat",
            f"--format={_RS}%H{_US}%P{_US}%an{_US}%aI{_US}%cI{_US}%s{_US}%b{_GS}", rev,
        ) or ""
        return [c for c in (_parse_commit(chunk) for chunk in out.split(_RS)) if c is not None]

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
