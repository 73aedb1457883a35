"""Which files an ingest leaves out: the ``.mission-memory-ignore`` file at the repository root and a run's
``--include``/``--exclude`` globs, in ``.gitignore`` syntax (read with `pathspec`, the matcher many Python tools use for ``.gitignore``), and, for
a plain folder that is not a git work tree, its ``.gitignore`` files plus the usual build and tool folders.
A git work tree needs no ``.gitignore`` handling here: only tracked files are ingested there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pathspec

from mission_memory.errors import InputError
from mission_memory.ingest.file_reading import read_inside

__all__ = ["IGNORE_FILE", "IngestExclusion", "PathGlobs", "folder_files"]

IGNORE_FILE = ".mission-memory-ignore"
"""Name of the file, at the repository root, whose ``.gitignore``-style patterns exclude files from ingest."""

_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", "dist", "build"})


def _spec(lines: list[str], source: Path) -> pathspec.GitIgnoreSpec:
    """Patterns compiled, or an InputError naming the file and the line that is not a valid pattern."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:
        for number, line in enumerate(lines, start=1):
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except ValueError as exc:
                raise InputError(f"{source}, line {number}: {line!r} is not a .gitignore pattern ({exc})") from exc
        raise


_PATTERN_FILE_BYTES = 1_000_000


def _read_patterns(path: Path, root: Path) -> pathspec.GitIgnoreSpec | None:
    """The patterns of ``path`` (a file under ``root``), read only if it is a regular file inside ``root``."""
    if not os.path.lexists(path):
        return None
    read = read_inside(root, path.relative_to(root).as_posix(), _PATTERN_FILE_BYTES)
    if read.data is None:
        raise InputError(f"{path} cannot be read as a pattern file ({read.reason})")
    try:
        lines = read.data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text: {exc}") from exc
    return _spec(lines, path)


class IngestExclusion:
    """The ``.mission-memory-ignore`` patterns of one repository.

    Args:
        root: the repository (or folder) root; the patterns are read from ``root/.mission-memory-ignore``
            when it exists, relative to ``root`` as in ``.gitignore``.

    Raises:
        InputError: the file cannot be read as UTF-8, or a line is not a valid pattern (named with its
            line number).
    """

    def __init__(self, root: Path) -> None:
        self.source = root / IGNORE_FILE
        self._spec = _read_patterns(self.source, root)

    def excludes(self, path: str) -> bool:
        """True when the repository-relative POSIX ``path`` matches the ignore patterns."""
        return self._spec is not None and self._spec.match_file(path)

    def kept(self, paths: Iterable[str]) -> list[str]:
        """``paths`` without the excluded ones, in their order."""
        return [path for path in paths if not self.excludes(path)]


class PathGlobs:
    """A run's ``--include`` and ``--exclude`` globs, in ``.gitignore`` syntax (``docs/``, ``*.md``,
    ``diary/**``), applied to repository-relative POSIX paths on top of ``.mission-memory-ignore``.

    Args:
        include: when not empty, only paths matching one of these are kept.
        exclude: paths matching one of these are left out (also when they match ``include``).

    Raises:
        InputError: a glob is not a valid pattern (the message names the option and the glob).
    """

    def __init__(self, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> None:
        self.include = self._compile(list(include), "--include")
        self.exclude = self._compile(list(exclude), "--exclude")

    @staticmethod
    def _compile(globs: list[str], option: str) -> pathspec.GitIgnoreSpec | None:
        if not globs:
            return None
        for glob in globs:
            if not glob.strip():
                raise InputError(f"{option} glob {glob!r} is empty")
            try:
                pathspec.GitIgnoreSpec.from_lines([glob])
            except ValueError as exc:
                raise InputError(f"{option} glob {glob!r} is not a .gitignore pattern ({exc})") from exc
        return pathspec.GitIgnoreSpec.from_lines(globs)

    def keeps(self, path: str) -> bool:
        """True when ``path`` matches an include glob (or there are none) and no exclude glob."""
        if self.include is not None and not self.include.match_file(path):
            return False
        return self.exclude is None or not self.exclude.match_file(path)

    def kept(self, paths: Iterable[str]) -> list[str]:
        """``paths`` that the globs keep, in their order."""
        return [path for path in paths if self.keeps(path)]


def folder_files(root: Path) -> list[str]:
    """The files of a plain folder (not a git work tree), as git would list them if it were one.

    Hidden folders and build/tool folders (``node_modules``, ``.venv``, ``dist``, ...) are skipped, and
    every ``.gitignore`` found on the way applies to its own folder and below, as in git.

    Args:
        root: the folder.

    Returns:
        Root-relative POSIX paths, sorted by folder walk order.

    Raises:
        InputError: a ``.gitignore`` cannot be read or holds an invalid pattern.
    """
    specs: dict[str, pathspec.GitIgnoreSpec] = {}  # folder (root-relative, "" for root) -> its patterns

    def ignored(relative: str, is_dir: bool) -> bool:
        parts = relative.split("/")
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            spec = specs.get(folder)
            if spec is not None and spec.match_file("/".join(parts[depth:]) + ("/" if is_dir else "")):
                return True
        return False

    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath).relative_to(root).as_posix()
        here = "" if here == "." else here
        if ".gitignore" in filenames:
            spec = _read_patterns(Path(dirpath) / ".gitignore", root)
            if spec is not None:
                specs[here] = spec
        prefix = f"{here}/" if here else ""
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in _SKIP_DIRS and not d.startswith(".") and not ignored(prefix + d, is_dir=True)
        )
        out.extend(prefix + name for name in sorted(filenames) if not ignored(prefix + name, is_dir=False))
    return out
