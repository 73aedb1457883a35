"""The one rule every stored name obeys: a mission, a sector, an event type, a component, an operator, a label.

Names are printed where stored text is not: in digest headers and section headings, in errors, in
the tool's description. So every intake that takes a name checks it with :func:`name_problem` /
:func:`check_name` before anything is stored (ADR 0054): a name is one line of printable text —
no control character (newlines and tabs included), no format or default-ignorable character
(zero-width joiners, bidi overrides, variation selectors: :func:`~mission_memory.fence.invisible`),
no other non-printable character (Python's ``str.isprintable``: unassigned, private-use, separators
other than the ASCII space), no surrounding blanks, no run of three ``<`` or ``>`` or their
lookalikes (it could pass for a fence marker) — of at most :data:`MAX_NAME_CHARS` characters.
Letters of every script, digits, punctuation and inner spaces are fine (``Північ``, ``HighErrorRate``,
``alice@example.org``). Names stored before the rule are still shown safely: outside a fence every
name goes through :func:`~mission_memory.fence.quote_name`.
"""

from __future__ import annotations

import unicodedata

from mission_memory.errors import InputError
from mission_memory.fence import invisible, neutralise_markers, quote_name

__all__ = ["MAX_NAME_CHARS", "check_mission_name", "check_name", "name_problem"]

MAX_NAME_CHARS = 200
"""Longest name, in characters (a folder name, an alert name, an e-mail address fit easily)."""


def name_problem(name: str) -> str | None:
    """What breaks the name rule in ``name`` (module docstring), as a phrase; None when it is fine."""
    if not name.strip():
        return "is empty"
    if name != name.strip():
        return "has surrounding blanks"
    for char in name:
        if invisible(char) or not char.isprintable():
            label = unicodedata.name(char, unicodedata.category(char))
            return (f"has control characters or format characters (U+{ord(char):04X} {label}); a name is one line of "
                    "printable text")
    if len(name) > MAX_NAME_CHARS:
        return f"is {len(name):,} characters long; at most {MAX_NAME_CHARS} are accepted"
    if neutralise_markers(name) != name:
        return "holds a run of three angle brackets or their lookalikes, which could pass for a fence marker"
    return None


def check_name(name: str, what: str) -> str:
    """``name`` when it obeys the name rule, else a clear error.

    Args:
        name: the name as given.
        what: what it names, for the message (``mission``, ``sector``, ``--operator``).

    Raises:
        InputError: ``<what> '<name, escaped>' <problem>``, e.g. ``mission 'X\\n## …' has control characters or
            format characters (U+000A …)``.
    """
    problem = name_problem(name)
    if problem is not None:
        raise InputError(f"{what} {quote_name(name)} {problem}")
    return name


def check_mission_name(name: str, what: str = "mission name") -> str:
    """A mission name as given, or a clear error: the name rule, and not the all-missions wildcard ``*``
    (ADR 0029).

    Raises:
        InputError: the name is empty, ``*``, or breaks the name rule.
    """
    if not name.strip():
        raise InputError(f"{what} is empty; give one with --mission")
    if name.strip() == "*":
        raise InputError(f"{what} '*' is the all-missions wildcard; give a mission its own name")
    return check_name(name, what)
