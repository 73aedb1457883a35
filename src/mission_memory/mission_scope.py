"""Which mission a command, the MCP server or a hook works in, and which missions a pull query answers
from, and why (docs/design.md §4, ADR 0029): the one home of the default mission.

Every shell takes its default mission from here: :func:`mission_here` (the working directory's
repository), :func:`stored_mission_for` (a named or defaulted mission that must be stored: ``brief``,
``correct``, ``decision record``, ``handover note``) and :func:`event_mission` (where events go).

A query answers from the mission it is asked in unless it is widened on purpose. The mission of a
directory is the folder name of its git top-level, which is how ``ingest`` names a repository's
mission (:func:`mission_of_directory`); outside a repository it is the folder's own name. A shell
passes that name as the *default mission*; :func:`resolve_mission_scope` then decides: a mission
the caller names wins, :data:`ALL_MISSIONS` (``*``) widens to every mission, and otherwise the
default applies when it is stored, else the query answers across all missions and says so. The
resulting :class:`MissionScope` is shown in the digest header and in ``--json``.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from mission_memory.errors import InputError
from mission_memory.fence import listed_name, quote_name

__all__ = [
    "ALL_MISSIONS",
    "MissionScope",
    "MissionScopeReason",
    "describe_stored_missions",
    "event_mission",
    "mission_here",
    "mission_of_directory",
    "resolve_mission_scope",
    "stored_mission_for",
    "widen_hint",
]

ALL_MISSIONS = "*"
"""The ``filters.mission`` value that widens a query to every stored mission on purpose."""

_SHOWN_NAME_CHARS = 80

def widen_hint(client: str = "cli") -> str:
    """How a digest answering from its default mission says to widen it, in the asking shell's words:
    the CLI's flag for ``cli``; the ``filters.mission`` value for every other caller (an agent over MCP,
    the Python API), which has no command line."""
    if client == "cli":
        return "widen with --all-missions"
    return f'widen with filters.mission "{ALL_MISSIONS}"'


class MissionScopeReason(StrEnum):
    """Why a query answers from the missions it does."""

    ASKED = "asked"
    """The caller named the mission (``--mission``, ``filters.mission``)."""
    ALL_ASKED = "all-asked"
    """The caller widened to all missions (``--all-missions``, ``filters.mission = "*"``)."""
    DEFAULT = "default"
    """The default mission (the repository the CLI or the MCP server runs in) is stored."""
    DEFAULT_NOT_STORED = "default-not-stored"
    """The default mission is not stored, so the query answers across all missions."""
    NO_DEFAULT = "no-default"
    """No mission was named and the caller has no default (direct API use, a shared HTTP server)."""


@dataclass(frozen=True)
class MissionScope:
    """The missions one query answers from.

    Attributes:
        mission: the one mission the query is restricted to, or None for all stored missions.
        reason: why (see :class:`MissionScopeReason`).
        default_mission: the default the caller offered (the directory's mission), or None.
    """

    mission: str | None
    reason: MissionScopeReason
    default_mission: str | None = None

    def header_line(self, client: str = "cli") -> str:
        """One line for the digest header, e.g. ``Mission: 'uploader' (the repository asked from; widen with
        --all-missions)``: a default scope names how to widen it in the words of the asking ``client``
        (:func:`widen_hint`: an agent is told the filter, not a command-line flag).

        Mission names come from folder names and posted events, so they are shown escaped
        (:func:`~mission_memory.fence.quote_name`): one quoted line, clipped to 80 characters.
        """
        match self.reason:
            case MissionScopeReason.ASKED:
                return f"Mission: {_shown(self.mission)}"
            case MissionScopeReason.DEFAULT:
                return f"Mission: {_shown(self.mission)} (the repository asked from; {widen_hint(client)})"
            case MissionScopeReason.ALL_ASKED:
                return "Missions: all (widened on purpose)"
            case MissionScopeReason.DEFAULT_NOT_STORED:
                return (
                    f"Missions: all (the default mission {_shown(self.default_mission)} is not stored;"
                    " ingest it to answer from it alone)"
                )
            case MissionScopeReason.NO_DEFAULT:
                return "Missions: all"

    def to_json(self) -> dict[str, Any]:
        """``{"mission", "all_missions", "reason", "default_mission"}`` as ``query --json`` prints it."""
        return {
            "mission": self.mission,
            "all_missions": self.mission is None,
            "reason": self.reason.value,
            "default_mission": self.default_mission,
        }


def _shown(name: str | None) -> str:
    return quote_name(name, _SHOWN_NAME_CHARS)


def mission_of_directory(directory: str | Path) -> str:
    """The mission a directory belongs to: the folder name of its git top-level.

    This is the name ``ingest`` gives a repository's mission when none is given
    (``ingest/repository.py``: the git root's folder name) and the one the SessionStart hook uses.
    Outside a git work tree, or for a folder that no longer exists (a captured prompt's), it is the
    folder's own name. No git process is started.

    Args:
        directory: any folder, e.g. the current working directory.

    Returns:
        The mission name (non-empty; ``/`` for the file-system root).
    """
    from mission_memory.capture.prompt_commit import resolve_checkout  # stdlib only: walks up to ``.git``

    resolved = Path(directory).expanduser().resolve()
    if not resolved.is_dir():
        return resolved.name or str(resolved)
    repository, _, _ = resolve_checkout(str(resolved))
    return Path(repository).name or repository


def mission_here(directory: str | Path | None = None) -> str:
    """The default mission of a shell started in ``directory`` (default: the current working directory):
    :func:`mission_of_directory`, so a subfolder of a repository gives the repository's mission."""
    return mission_of_directory(Path.cwd() if directory is None else directory)


def event_mission(asked: str | None, configured: str | None, directory: str | Path | None = None) -> str:
    """The mission events are filed under: ``asked`` (``--mission``, a receiver's ``?mission=``), else
    ``configured`` (``MISSION_MEMORY_EVENT_MISSION``), else :func:`mission_here` of ``directory``."""
    return asked or configured or mission_here(directory)


def stored_mission_for(
    given: str | None, stored: Collection[str], directory: str | Path | None = None, *,
    new_store_takes_given: bool = False,
) -> str:
    """The stored mission a command works in: ``given`` when stored; else the only stored mission;
    else the stored mission of ``directory`` (:func:`mission_here`, default the working directory).

    Args:
        given: the mission the caller named, or None.
        stored: the stored missions' names.
        directory: where the command runs (default: the current working directory).
        new_store_takes_given: accept ``given`` while nothing is stored yet (a correction recorded
            before the first ingest).

    Raises:
        InputError: ``given`` is not stored, or no mission can be chosen (the message lists the stored
            ones and says to name one with ``--mission``).
    """
    if given is not None:
        if given in stored or (new_store_takes_given and not stored):
            return given
        raise unknown_mission(given, stored, none=_NONE_YET)
    if len(stored) == 1:
        return next(iter(stored))
    here = mission_here(directory)
    if here in stored:
        return here
    if not stored:
        raise InputError("no mission is stored yet: run `mission-memory ingest PATH` first, or give --mission")
    raise InputError(f"name the mission with --mission ({known_missions(here, stored)})")


def resolve_mission_scope(
    asked: str | None, default: str | None, stored: Mapping[str, int] | frozenset[str] | set[str]
) -> MissionScope:
    """Decide which missions a query answers from (docs/design.md §4, ADR 0029).

    Args:
        asked: the mission the caller named (``filters.mission``), :data:`ALL_MISSIONS`, or None.
        default: the caller's default mission (the directory it runs in), or None.
        stored: the stored missions (names, or a ``{name: record count}`` mapping).

    Returns:
        The scope: ``asked`` when given; all missions for ``*``; else ``default`` when stored; else
        all missions, with the reason saying whether a default was missing or not stored.

    Raises:
        InputError: ``asked`` names a mission that is not stored (the message lists the stored
            ones and how to widen).
    """
    if asked is not None:
        name = asked.strip()
        if name == ALL_MISSIONS:
            return MissionScope(None, MissionScopeReason.ALL_ASKED, default)
        if name not in stored:
            raise InputError(
                f"no mission named {quote_name(asked)} is stored ({known_missions(name, stored, none=_NONE_YET)}; "
                f"'{ALL_MISSIONS}' asks all of them)"
            )
        return MissionScope(name, MissionScopeReason.ASKED, default)
    if default is None:
        return MissionScope(None, MissionScopeReason.NO_DEFAULT)
    if default in stored:
        return MissionScope(default, MissionScopeReason.DEFAULT, default)
    return MissionScope(None, MissionScopeReason.DEFAULT_NOT_STORED, default)


def describe_stored_missions(stored: Mapping[str, int] | Collection[str], default: MissionScope) -> str:
    """Sentences for the MCP tool's description: the default mission and how to reach the others.

    The description is read by the model before any fence exists, so it names no stored text
    beyond the default mission (escaped, :func:`~mission_memory.fence.quote_name`; ADR 0054): the
    other missions are counted, and an unknown ``filters.mission`` is answered with their names.

    Args:
        stored: the stored missions (names, or record counts by mission).
        default: what a call without ``filters.mission`` answers from
            (:func:`resolve_mission_scope` with ``asked=None``).

    Returns:
        Two or three short sentences, e.g. ``Default mission: 'uploader' (where this server runs).
        2 missions are stored: set filters.mission to another mission's name (…), or '*' for all missions.``
    """
    match default.reason:
        case MissionScopeReason.DEFAULT:
            first = f"Default mission: {_shown(default.mission)} (where this server runs)."
        case MissionScopeReason.DEFAULT_NOT_STORED:
            first = (
                f"No mission {_shown(default.default_mission)} is stored for where this server runs, so calls "
                "without filters.mission answer across all missions."
            )
        case _:
            first = "Calls without filters.mission answer across all missions."
    if not stored:
        return f"{first} Nothing is ingested yet."
    count = "1 mission is" if len(stored) == 1 else f"{len(stored)} missions are"
    return (
        f"{first} {count} stored: set filters.mission to a mission's name (a name that is not stored is "
        f"answered with the stored ones), or '{ALL_MISSIONS}' for all missions."
    )


_NONE_YET = "none yet: run `mission-memory ingest PATH`"
_SHOWN_MISSIONS = 20
"""At most this many stored missions are named in a message."""


def known_missions(asked: str, stored: Collection[str], *, none: str = "none") -> str:
    """The stored missions as a message names them: ``missions: a, b; did you mean 'b'?``.

    Sorted, at most :data:`_SHOWN_MISSIONS` (then how many more), and the names closest to
    ``asked`` (difflib's ratio ≥ 0.6) suggested. ``none`` is said when nothing is stored. Stored
    names are escaped (:func:`~mission_memory.fence.listed_name`): an error reaches the model
    outside every fence.
    """
    if not stored:
        return f"missions: {none}"
    names = sorted(stored)
    text = "missions: " + ", ".join(listed_name(n) for n in names[:_SHOWN_MISSIONS])
    if len(names) > _SHOWN_MISSIONS:
        text += f" and {len(names) - _SHOWN_MISSIONS} more (`mission-memory status` lists them)"
    close = difflib.get_close_matches(asked, names, n=3, cutoff=0.6)
    if close:
        text += "; did you mean " + " or ".join(quote_name(c) for c in close) + "?"
    return text


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one insertion, deletion, substitution or swap of neighbours
    (Damerau–Levenshtein distance 1, the optimal-string-alignment form)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k, (x, y) in enumerate(zip(short, long_, strict=False)) if x != y), len(short))
    return short[i:] == long_[i + 1:]


def confusable_mission(name: str, stored: Collection[str]) -> str | None:
    """The stored mission ``name`` is most likely a typo of, or None when it is a name of its own.

    A typo is: the same name but for case (``Shop``), one edit away for names of three characters
    or more (``opx`` beside ``ops``, ``shpo`` beside ``shop``), or difflib's ratio ≥ 0.75
    (``north-centra`` beside ``north-central``). Events filed under a typo of a mission sit where
    no brief, digest or ``events firing --mission`` reads them.
    """
    if name in stored:
        return None
    folded = name.casefold()
    for known in sorted(stored):
        if known.casefold() == folded or (min(len(name), len(known)) >= 3 and _one_edit_apart(folded, known.casefold())):
            return known
    close = difflib.get_close_matches(name, sorted(stored), n=1, cutoff=0.75)
    return close[0] if close else None


def unknown_mission(asked: str, stored: Collection[str], *, none: str = "none") -> InputError:
    """The error for a mission name that is not stored: ``no mission named 'x' is stored (missions: …)``."""
    return InputError(f"no mission named {quote_name(asked)} is stored ({known_missions(asked, stored, none=none)})")
