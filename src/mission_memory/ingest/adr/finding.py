"""Finding ADR files among a repository's tracked files: folder names (``adr``, ``decisions``, ...) and
folders of numbered ``NNNN-title.md`` files, minus READMEs, indexes and templates (issue 2 item 5).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

__all__ = ["find_adr_paths", "is_adr_path"]

_ADR_DIR_NAMES = frozenset(
    {
        "adr",
        "adrs",
        "decisions",
        "architecture-decision-records",
        "architecture-decision-record",
        "architecture_decision_records",
        "architecture_decision_record",
    }
)
_MARKDOWN_SUFFIXES = (".md", ".markdown")
_NUMBERED_FILE = re.compile(r"^(?!\d{4}-\d{2}-\d{2})(?:adr[-_]?)?\d{3,4}[-_].+\.(?:md|markdown)$", re.IGNORECASE)
"""``0012-title.md`` or ``adr-012-title.md``; not a date-named file (``2025-06-01.md``, a diary's day), which a folder of
numbered files would otherwise turn into decisions."""
_NOT_A_RECORD = frozenset({"readme", "index", "_index", "toc", "summary", "_sidebar"})
_TEMPLATE_WORDS = frozenset({"template", "modele", "modèle", "plantilla", "vorlage", "шаблон"})
"""A file named for a template in English, French, Spanish, German or Ukrainian (``0000-modele-adr.md``)."""
_NUMBER_PREFIX = re.compile(r"^(?:adr[-_ ]?)?(\d{1,5})(?=[-_. ]|$)", re.IGNORECASE)


def _is_record_name(name: str) -> bool:
    """False for README / index / template files, which sit beside ADRs but are not decisions."""
    lowered = name.lower()
    if not lowered.endswith(_MARKDOWN_SUFFIXES):
        return False
    stem = lowered.rsplit(".", 1)[0]
    if stem in _NOT_A_RECORD:
        return False
    unnumbered = _NUMBER_PREFIX.sub("", stem).lstrip("-_. ")
    words = re.split(r"[-_. ]+", unnumbered)
    return not (
        words[0] in _TEMPLATE_WORDS or words[-1] in _TEMPLATE_WORDS or (len(words) > 1 and words[1] in _TEMPLATE_WORDS
                                                                         and words[0] in ("adr", "ladr", "madr"))
        or stem in ("template", "adr-template")
    )


def find_adr_paths(paths: Iterable[str]) -> list[str]:
    """Pick the ADRs out of a repository's tracked files.

    A path is an ADR when it is a Markdown file (``.md``, ``.markdown``) that is not a README, index or
    template file, and either lies at any depth under a folder named ``adr``, ``adrs``, ``decisions``,
    ``architecture-decision-records`` or ``architecture-decision-record`` (case-insensitive; this covers
    ``doc/adr``, ``docs/adr`` and ``docs/decisions``), or is a numbered ``NNN-title.md`` /
    ``NNNN-title.md`` file in a folder holding at least two such files (issue 2 item 5).

    Args:
        paths: repository-relative POSIX paths of tracked files.

    Returns:
        The ADR paths, sorted, without duplicates.
    """
    unique = sorted(set(paths))
    numbered_per_folder: dict[str, int] = {}
    for path in unique:
        folder, _, name = path.rpartition("/")
        if _NUMBERED_FILE.match(name):
            numbered_per_folder[folder] = numbered_per_folder.get(folder, 0) + 1
    found: list[str] = []
    for path in unique:
        folder, _, name = path.rpartition("/")
        if not _is_record_name(name):
            continue
        in_adr_folder = any(part.lower() in _ADR_DIR_NAMES for part in folder.split("/") if part)
        numbered = bool(_NUMBERED_FILE.match(name)) and numbered_per_folder.get(folder, 0) >= 2
        if in_adr_folder or numbered:
            found.append(path)
    return found


def is_adr_path(path: str, siblings: Collection[str] | None = None) -> bool:
    """Tell whether one path is an ADR, judged as `find_adr_paths` would among ``siblings``.

    Args:
        path: a repository-relative POSIX path.
        siblings: the other tracked paths (needed for the "folder of numbered files" rule); None judges
            the path by its folder name only.

    Returns:
        True when ``find_adr_paths`` would list ``path``.
    """
    return path in find_adr_paths([path, *(siblings or ())])
