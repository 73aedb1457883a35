"""Access levels at ingest: from where a record comes from (docs/design.md §10, ADR 0045).

Three sources, and the most restricted of those that speak wins (a file cannot declassify itself out
of a folder the settings protect):

* a path-pattern mapping in the settings (``MISSION_MEMORY_ACCESS_PATHS='{"docs/security/**":
  "restricted"}'``), ``.gitignore``-style patterns read with ``pathspec`` like the ingest globs;
* ``access: restricted`` in a document's or an ADR's front matter (YAML ``---`` or TOML ``+++``);
* a tracker label ``access:restricted`` (also ``access/restricted`` and ``access=restricted``) on a
  task, for the task and its comments.

A commit takes the most restricted level of the files it touches, by the same two file rules (the
path mapping, and the front matter of the files as ingested now): its message and its file list name
them, so a lower clearance would otherwise learn restricted file names and messages through history
(:meth:`AccessRules.commit_level`).

None speaking: ``internal`` (:class:`~mission_memory.records.AccessLevel`'s default). A record whose
level is not ``internal`` carries it in ``attributes["access"]`` too, so its content-derived id
changes with its level and a re-ingest after a settings change re-stores it with the new level
(an unchanged id would be skipped as already stored).
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pathspec
import yaml

from mission_memory.errors import ConfigError, InputError
from mission_memory.front_matter import load_text_yaml, split_front_matter
from mission_memory.records import AccessLevel, Record, RecordKind, record_id_for
from mission_memory.stores.filters import ACCESS_ORDER

__all__ = ["AccessRules", "front_matter_access", "label_access", "with_access", "with_label_access"]

_LABEL = re.compile(r"^\s*access\s*[:/=]\s*(\S+)\s*$", re.IGNORECASE)
_FILE_KINDS = frozenset({RecordKind.DOC_CHUNK, RecordKind.DECISION, RecordKind.PRINCIPLE})


def _level(value: Any, where: str) -> AccessLevel:
    try:
        return AccessLevel(str(value).strip().lower())
    except ValueError:
        raise InputError(
            f"{where}: access level {value!r} is not one of: {', '.join(a.value for a in AccessLevel)}"
        ) from None


def _most_restricted(levels: Sequence[AccessLevel | None]) -> AccessLevel | None:
    known = [level for level in levels if level is not None]
    return max(known, key=lambda level: ACCESS_ORDER.index(level.value)) if known else None


def with_access(record: Record, level: AccessLevel | None) -> Record:
    """``record`` at ``level`` (None or ``internal``: unchanged), its id re-derived with the level."""
    if level is None or level is AccessLevel.INTERNAL:
        return record
    attributes = {**record.attributes, "access": level.value}
    return record.model_copy(update={
        "access_level": level,
        "attributes": attributes,
        "id": record_id_for(
            record.source_key, record.title, record.text, attributes, record.criticality, record.component
        ),
    })


def front_matter_access(text: str, path: str) -> AccessLevel | None:
    """The ``access`` key of a document's front matter, or None when it has none.

    Raises:
        InputError: the key holds something other than an access level (the message names the file).
    """
    body, _ = split_front_matter(text)
    if body is None or "access" not in body.lower():
        return None
    try:
        parsed: Any = tomllib.loads(body) if text.lstrip().startswith("+++") else load_text_yaml(body)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError):
        parsed = None
    if not isinstance(parsed, dict):
        return None
    value = next((v for k, v in parsed.items() if str(k).strip().lower() == "access"), None)
    return None if value is None else _level(value, f"{path} (front matter)")


def label_access(labels: Sequence[str], source: str) -> AccessLevel | None:
    """The most restricted ``access:LEVEL`` label among ``labels``, or None.

    Raises:
        InputError: an ``access:`` label with an unknown level (the message names ``source``).
    """
    found = []
    for label in labels:
        match = _LABEL.match(label)
        if match:
            found.append(_level(match.group(1), f"{source} (label {label!r})"))
    return _most_restricted(found)


def with_label_access(records: list[Record], labels: Sequence[str], source: str) -> list[Record]:
    """``records`` (a tracker task's and its comments') at the level its labels give.

    Raises:
        InputError: see :func:`label_access`.
    """
    level = label_access(labels, source)
    return [with_access(r, level) for r in records]


class AccessRules:
    """The path-pattern mapping of the settings, compiled once.

    Args:
        paths: ``{pattern: level}``; patterns are ``.gitignore``-style.

    Raises:
        ConfigError: a pattern ``pathspec`` cannot read (the message names the setting and the pattern).
    """

    def __init__(self, paths: Mapping[str, AccessLevel | str]) -> None:
        self._rules: list[tuple[pathspec.GitIgnoreSpec, AccessLevel]] = []
        self._mapping: list[tuple[str, str]] = []
        for pattern, level in paths.items():
            try:
                spec = pathspec.GitIgnoreSpec.from_lines([pattern])
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"MISSION_MEMORY_ACCESS_PATHS: pattern {pattern!r} is invalid ({exc})") from None
            try:
                resolved = AccessLevel(level)
            except ValueError:
                raise ConfigError(
                    f"MISSION_MEMORY_ACCESS_PATHS: {pattern!r} maps to {level!r}, not one of: "
                    f"{', '.join(a.value for a in AccessLevel)}"
                ) from None
            self._rules.append((spec, resolved))
            self._mapping.append((pattern, resolved.value))

    def path_level(self, path: str) -> AccessLevel | None:
        """The most restricted level of the patterns ``path`` matches, or None."""
        return _most_restricted([level for spec, level in self._rules if spec.match_file(path)])

    def assign(self, records: list[Record], texts: Mapping[str, str]) -> list[Record]:
        """Give each file record (document chunk, decision, principle) its file's level.

        Args:
            records: the records of one ingest run.
            texts: file text by repository-relative path (for the front matter).

        Raises:
            InputError: a file's front matter names an unknown level; nothing is stored then.
        """
        levels: dict[str, AccessLevel | None] = {}
        out = []
        for record in records:
            path = record.attributes.get("path")
            if record.kind not in _FILE_KINDS or not isinstance(path, str):
                out.append(record)
                continue
            if path not in levels:
                front = front_matter_access(texts[path], path) if path in texts else None
                levels[path] = _most_restricted([self.path_level(path), front])
            out.append(with_access(record, levels[path]))
        return out

    def mentioned_level(self, text: str) -> AccessLevel | None:
        """The most restricted level the path mapping gives a path named in ``text``, or None.

        Path-like words (with a ``/`` inside, quotes and trailing punctuation stripped) are matched
        against the patterns, so an operator's words naming ``docs/security/keys.md`` count as
        restricted when that folder is (the correction summaries' sending rule, ADR 0045).
        """
        words = {w.strip("`'\"()[]{}<>,;:!?").rstrip(".").lstrip("./") for w in text.split() if "/" in w}
        return _most_restricted([self.path_level(w) for w in words if w])

    @staticmethod
    def file_levels(records: Iterable[Record]) -> dict[str, AccessLevel]:
        """The level of each file among ``records`` (as :meth:`assign` gave them) that is not ``internal``.

        Returns:
            ``{repository-relative path: level}``; files at ``internal`` are left out.
        """
        return {
            path: r.access_level for r in records
            if r.kind in _FILE_KINDS and isinstance(path := r.attributes.get("path"), str)
            and r.access_level is not AccessLevel.INTERNAL
        }

    def commit_level(self, files: Iterable[str], file_levels: Mapping[str, AccessLevel]) -> AccessLevel | None:
        """The most restricted level of the files a commit touches, or None when none is classified.

        Args:
            files: the commit's repository-relative paths (every one, not the record's capped list).
            file_levels: :meth:`file_levels` of this ingest's file records (front matter included), so a
                commit touching a document whose front matter says ``access: restricted`` is restricted too.
        """
        return _most_restricted([level for f in files for level in (self.path_level(f), file_levels.get(f))])

    def fingerprint(self, file_levels: Mapping[str, AccessLevel]) -> str:
        """Digests of the path mapping and of the classified files, as JSON: when it changes, commit levels may change.

        ``ingest`` keeps it per repository and re-reads the whole history when it differs, so a new
        mapping or a new ``access:`` front matter reclassifies the commits stored before. Digests,
        not the mapping: the state is exported with the memory, and the patterns name restricted
        folders.
        """
        files = sorted((path, level.value) for path, level in file_levels.items())
        return json.dumps({"paths": self._digest(sorted(self._mapping)), "files": self._digest(files)}, sort_keys=True)

    @staticmethod
    def _digest(value: object) -> str:
        return hashlib.sha256(json.dumps(value).encode("utf-8")).hexdigest()

    def mapping_change(self, previous: str | None) -> str | None:
        """A warning when the mapping differs from the one a :meth:`fingerprint` recorded, else None.

        An ingest run without ``MISSION_MEMORY_ACCESS_PATHS`` (another shell, a cron job) would
        otherwise lower the levels of everything the mapping protected without a word.
        """
        try:
            before = json.loads(previous)["paths"] if previous else None
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(before, str) or before == self._digest(sorted(self._mapping)):
            return None
        now = json.dumps(dict(sorted(self._mapping))) if self._mapping else "none"
        return (f"MISSION_MEMORY_ACCESS_PATHS differs from the mapping of the last ingest of this repository "
                f"(now: {now}): records and commits are reclassified; if that was not meant, set the "
                "mapping of the last ingest again and ingest again")
