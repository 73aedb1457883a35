"""The fence: the nonce envelope around every piece of untrusted text an agent is shown (ADR 0021, 0054).

Text from repositories, trackers, events and operators is data, never instructions. Each quoted
excerpt sits between an opening and a closing marker that carry a per-digest nonce; marker-like runs
inside the text are neutralised first, so the text can neither close the fence it sits in nor imitate
a marker of its own. The digest (:mod:`mission_memory.retrieval.digest`), the crisis timeline and the
rotation brief all fence with these functions.

Marker-like runs are found after Unicode normalisation (ADR 0054): a character counts as ``<`` when
its NFKC form is ``<`` (fullwidth ``＜``, small ``﹤``) or when it is one of the angle-bracket
lookalikes of Unicode's confusables list (``‹``, ``❮``, ``˂``, ``ᐸ``, ``〈``, ``⟨``, ``«`` …), and
format and default-ignorable characters (zero-width joiners, bidi overrides, variation selectors)
and combining marks between them do not break a run. Names (a mission, a sector) printed outside a
fence go through :func:`quote_name`: one quoted line with every invisible character escaped.
"""

from __future__ import annotations

import re
import secrets
import unicodedata

from mission_memory.errors import InputError

__all__ = ["MAX_NAME_CHARS", "check_mission_name", "check_name", "close_marker", "cut_outside_fences", "invisible", "listed_name", "name_problem", "neutralise_headings", "neutralise_markers", "new_nonce", "open_marker", "quote_name"]


def new_nonce() -> str:
    """A fresh envelope nonce: 12 decimal digits from :mod:`secrets` (about 40 bits), one per digest.

    Decimal, not hex: ``cl100k_base`` splits a run of digits into groups of three, so every nonce
    costs the same tokens (4) wherever it stands. With hex the cost of one marker ranged over 6–15
    tokens, so which entries fit a budget, and whether the last one was dropped, changed from one
    rendering of the same digest to the next.
    """
    return f"{secrets.randbelow(10**12):012d}"


# Characters that read as "<" or ">": the ASCII ones, those whose NFKC form is one of them (tested
# against the whole code space in tests/security/test_marker_lookalikes.py), and the angle-bracket
# lookalikes of Unicode's confusables.txt (UTS #39) and of CJK and mathematical brackets.
LESS_THAN_LIKE = "<\ufe64\uff1c\u2039\u276e\u02c2\u1438\u16b2\u3008\u2329\u27e8\u276c\u2770\u29fc\u00ab\u27ea\u300a\u226a\u22d8\u226e\U0001d236"
GREATER_THAN_LIKE = ">\ufe65\uff1e\u203a\u276f\u02c3\u1433\u3009\u232a\u27e9\u276d\u2771\u29fd\u00bb\u27eb\u300b\u226b\u22d9\u226f\U0001d237"

# Format characters (general category Cf, Unicode 14) and the other default-ignorable code points of
# DerivedCoreProperties.txt: invisible, so they must neither split a marker run nor hide in a name.
_INVISIBLE_RANGES = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
# Combining marks of the blocks that overlay any base character (a "<" with a mark still reads as "<").
_COMBINING_RANGES = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_INVISIBLE = re.compile(f"[{_INVISIBLE_RANGES}]")
_GAP = f"[{_INVISIBLE_RANGES}{_COMBINING_RANGES}]*"
_MARKER_RUN = re.compile(
    f"[{LESS_THAN_LIKE}](?:{_GAP}[{LESS_THAN_LIKE}]){{2,}}|[{GREATER_THAN_LIKE}](?:{_GAP}[{GREATER_THAN_LIKE}]){{2,}}"
)
_ANGLE = re.compile(f"[{LESS_THAN_LIKE}{GREATER_THAN_LIKE}]")


def invisible(char: str) -> bool:
    """Whether ``char`` is a format or default-ignorable character (zero-width, bidi control, variation selector)."""
    return _INVISIBLE.fullmatch(char) is not None


def _neutral(run: re.Match[str]) -> str:
    text = run.group(0)
    arrow = "<" if text[0] in LESS_THAN_LIKE else ">"
    count = len(_ANGLE.findall(text))
    return f"({count}×{arrow})"


def neutralise_markers(text: str) -> str:
    """``text`` with every marker-like run replaced by a note of what it was: ``<<<`` -> ``(3×<)``.

    A run is three or more ``<``-like (or ``>``-like) characters in a row, lookalikes and invisible
    characters between them included (module docstring): ``＜＜＜``, ``‹‹‹`` and ``<`` + zero-width
    joiner + ``<`` + zero-width joiner + ``<`` are runs as ``<<<`` is. The envelope's markers open
    with ``<<<`` and close with ``>>>``, so after this stored text holds nothing that reads as a
    marker, whatever nonce it guesses (ADR 0021, 0054). The note itself holds one angle bracket, so
    neutralising is idempotent. Everything else in ``text`` is unchanged.
    """
    if _ANGLE.search(text) is None:
        return text
    return _MARKER_RUN.sub(_neutral, text)


_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)", re.MULTILINE)


def neutralise_headings(text: str) -> str:
    """``text`` with every Markdown ATX heading line escaped (``## Context`` -> ``\\## Context``).

    Quoted text sits between the envelope's markers, but a stored ``### 3. decision · score 0.99``
    line still reads like the digest's own entry headings to a model skimming the digest; escaped,
    it reads as the quoted line it is (a Markdown renderer shows the ``#`` characters literally).
    Idempotent; nothing else changes.
    """
    if "#" not in text:
        return text
    return _HEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def quote_name(name: str | None, limit: int = 80) -> str:
    """A stored name as it is printed outside a fence: one quoted line, nothing hidden (ADR 0054).

    ``'north'`` for ``north``; a backslash, a quote, a newline, a control, format or
    default-ignorable character is escaped (``\\n``, ``\\u200d``), marker-like runs are
    neutralised (:func:`neutralise_markers`) and the result is clipped to ``limit`` characters
    with ``…``. So a name can add no line, no heading and no marker to the text around it, and what
    it holds stays visible.
    """
    out = []
    for char in name or "":
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif not char.isprintable() or invisible(char):
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    shown = neutralise_markers("".join(out))
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return f"'{shown}'"


_PLAIN_NAME = re.compile(r"[\w.@:/+-]{1,80}")


def listed_name(name: str) -> str:
    """A name in a comma-separated list of names: bare when it is plain (letters, digits and
    ``._@:/+-``, at most 80 characters, ``uploader``), else :func:`quote_name` (ADR 0054)."""
    if _PLAIN_NAME.fullmatch(name) and not any(invisible(c) for c in name) and neutralise_markers(name) == name:
        return name
    return quote_name(name)


def open_marker(index: int, nonce: str) -> str:
    """The line that opens excerpt ``index``'s fence: ``<<<excerpt 3 nonce=…>>>`` (ADR 0021)."""
    return f"<<<excerpt {index} nonce={nonce}>>>"


def cut_outside_fences(text: str, limit: int, note: str = "\n\n[digest truncated]\n") -> str:
    """``text`` cut to at most ``limit`` characters at a line boundary, ending with ``note`` when cut.

    A cut that would fall inside an excerpt's fence drops that whole entry (from its ``### `` heading)
    instead, so the text never ends with stored text whose fence is left open (ADR 0021).
    """
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit - len(note))
    head = text[: cut if cut > 0 else limit - len(note)]
    opened = head.rfind("<<<excerpt ")
    if opened > head.rfind("<<<end excerpt "):
        entry = head.rfind("\n### ", 0, opened)
        head = head[: entry if entry > 0 else opened].rstrip()
    return head + note


def close_marker(index: int, nonce: str) -> str:
    """The line that closes excerpt ``index``'s fence: ``<<<end excerpt 3 nonce=…>>>`` (ADR 0021)."""
    return f"<<<end excerpt {index} nonce={nonce}>>>"


# -- the name rule: names reach an agent only as one line of printable text (ADR 0054) --

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
