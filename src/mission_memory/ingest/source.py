"""Where ingested files come from: a git work tree (tracked files, the commit and time of each) or a plain folder."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from mission_memory.ingest.exclusion import IngestExclusion, PathGlobs, folder_files
from mission_memory.ingest.git_history import GitRepository

__all__ = ["RepositorySource"]


class RepositorySource:
    """Where files come from: a git work tree (tracked files, commit info) or a plain folder.

    Args:
        root: the folder given to ingest; inside a git work tree, :attr:`root` becomes its top level.
        globs: the run's ``--include`` / ``--exclude`` patterns, or None.
    """

    def __init__(self, root: Path, globs: PathGlobs | None = None) -> None:
        self.globs = globs
        self.git: GitRepository | None = GitRepository(root) if GitRepository.is_git_work_tree(root) else None
        self.root = self.git.root if self.git else root
        self.last_changes: dict[str, tuple[str, datetime]] = self.git.last_changes() if self.git else {}

    def files(self) -> list[str]:
        """The files to consider: tracked ones (or, in a plain folder, those its ``.gitignore`` files
        keep), minus those ``.mission-memory-ignore`` excludes, narrowed by the run's globs."""
        listed = self.git.tracked_files() if self.git else folder_files(self.root)
        kept = IngestExclusion(self.root).kept(listed)
        return self.globs.kept(kept) if self.globs is not None else kept

    def changed(self, path: str) -> tuple[str | None, datetime]:
        if path in self.last_changes:
            sha, moment = self.last_changes[path]
            return sha, moment
        try:
            return None, datetime.fromtimestamp((self.root / path).stat().st_mtime, tz=UTC)
        except OSError:
            return None, datetime.now(UTC)

    def uri(self, path: str, anchor: str = "", commit: str | None = None) -> str:
        if self.git:
            return self.git.file_uri(path, anchor, commit)
        return (self.root / path).as_uri() + (f"#{anchor}" if anchor else "")
