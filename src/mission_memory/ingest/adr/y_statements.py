"""Y-statements ("In the context of ..., facing ..., we decided for ... and neglected ..., to achieve
..., accepting ..."), in English and Ukrainian, read into their parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mission_memory.ingest.adr.plain_text import _FENCED_BLOCK, _plain


@dataclass(frozen=True)
class _YPhrases:
    """The connecting phrases of a Y-statement in one language (Zdun et al., "Sustainable architectural
    design decisions", 2013)."""

    opening: re.Pattern[str]
    facing: re.Pattern[str]
    decided: re.Pattern[str]
    neglected: re.Pattern[str]
    achieve: re.Pattern[str]
    accepting: re.Pattern[str]
    because: re.Pattern[str]


_Y_LANGUAGES = (
    _YPhrases(
        opening=re.compile(r"\bin the context of\s+", re.IGNORECASE),
        facing=re.compile(r",?\s*facing\s+", re.IGNORECASE),
        decided=re.compile(r",?\s*we\s+(?:decided|chose)\s+(?:for|on|to)?\s*", re.IGNORECASE),
        neglected=re.compile(r",?\s+and\s+(?:neglected|against)\s+", re.IGNORECASE),
        achieve=re.compile(r",?\s*to\s+achieve\s+", re.IGNORECASE),
        accepting=re.compile(r",?\s*accepting\s+(?:that\s+)?", re.IGNORECASE),
        because=re.compile(r",?\s+because\s+", re.IGNORECASE),
    ),
    _YPhrases(
        opening=re.compile(r"(?<!\w)у\s+контексті\s+", re.IGNORECASE),
        facing=re.compile(r",\s*(?:зіткнувшись|стикаючись)\s+(?:з|із)\s+", re.IGNORECASE),
        decided=re.compile(r",?\s*ми\s+(?:вирішили|обрали)\s+", re.IGNORECASE),
        neglected=re.compile(r",?\s+(?:і|та)\s+(?:відхилили|знехтували)\s+", re.IGNORECASE),
        achieve=re.compile(r",?\s*щоб\s+(?:досягти|забезпечити)\s+", re.IGNORECASE),
        accepting=re.compile(r",?\s*(?:погоджуючись|приймаючи)\s+(?:на\s+|що\s+)?", re.IGNORECASE),
        because=re.compile(r",?\s+(?:тому що|бо)\s+", re.IGNORECASE),
    ),
)
_Y_WINDOW = 3000  # characters a Y-statement may span from its opening phrase
_Y_ATTEMPTS = 10  # opening phrases tried per language; bounds the work on hostile text
_SENTENCE_END = re.compile(r"\.(?:\s|$)")


def _y_parts(flat: str, start: int, phrases: _YPhrases) -> dict[str, str] | None:
    """Walk one Y-statement's phrases in order from ``start`` (linear time, no backtracking)."""
    window = flat[start : start + _Y_WINDOW]
    marks: list[tuple[str, re.Match[str]]] = []
    position = 0
    for name, pattern in (
        ("facing", phrases.facing),
        ("decision", phrases.decided),
        ("achieve", phrases.achieve),
        ("accepting", phrases.accepting),
    ):
        match = pattern.search(window, position)
        if match is None:
            return None
        marks.append((name, match))
        position = match.end()
    end_match = _SENTENCE_END.search(window, position)
    end = end_match.start() if end_match else len(window)
    parts = {"context": window[: marks[0][1].start()]}
    for index, (name, match) in enumerate(marks):
        stop = marks[index + 1][1].start() if index + 1 < len(marks) else end
        parts[name] = window[match.end() : stop]
    neglected = phrases.neglected.search(parts["decision"])
    if neglected:
        parts["neglected"] = parts["decision"][neglected.end() :]
        parts["decision"] = parts["decision"][: neglected.start()]
    because = phrases.because.search(parts["accepting"])
    if because:
        parts["because"] = parts["accepting"][because.end() :]
        parts["accepting"] = parts["accepting"][: because.start()]
    cleaned = {key: value.strip(" ,\"'«»“”") for key, value in parts.items()}
    return cleaned if all(cleaned.get(key) for key in ("context", "decision")) else None


def _y_statement(text: str) -> dict[str, str] | None:
    """The parts of the first Y-statement in the text (English or Ukrainian), or None.

    Keys: context, facing, decision, neglected (optional), achieve, accepting, because (optional).
    """
    flat = _plain(_FENCED_BLOCK.sub(" ", text))
    for phrases in _Y_LANGUAGES:
        for attempt, opening in enumerate(phrases.opening.finditer(flat)):
            if attempt >= _Y_ATTEMPTS:
                break
            parts = _y_parts(flat, opening.end(), phrases)
            if parts is not None:
                return parts
    return None
