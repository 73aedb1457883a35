"""The one redaction pass every intake that stores text goes through (docs/adr/0053).

Secrets never reach disk: documents, ADRs, commits, tracker items, events, handover notes, recorded
decisions, correction summaries and refresh artifacts become records through
:meth:`mission_memory.records.Record.build`, which passes their title, text and attributes through
:func:`redact_text` / :func:`redact_value` *before* the content-derived id is computed (so a
re-ingest of the same source derives the same id from the same redacted text). Records that enter
another way (an import of an export made by an older version, a record whose attributes are
rewritten) go through :func:`mission_memory.records.Record.redacted`; the stores call it on every
record they write as a last guard. Retrieval events' query text is redacted when the event is made
(:class:`mission_memory.retrieval_events.NewRetrievalEvent`). The prompt hook runs the same rules
(:func:`mission_memory.capture.redaction.redact`) on its standard-library-only path.

The rules are those of :mod:`mission_memory.capture.redaction`; redaction is idempotent, so text
redacted once is unchanged by a second pass.
"""

from __future__ import annotations

from typing import Any

from mission_memory.capture.redaction import redact

__all__ = ["redact_text", "redact_value"]

_HEX = frozenset("0123456789abcdef")
_ID_LENGTHS = frozenset((32, 40, 64))


def redact_text(text: str) -> str:
    """``text`` with every secret the rules find replaced by ``[REDACTED:<kind>]``.

    Args:
        text: any text, any length (about 0.1-0.3 s per MB on the reference machine under load).

    Returns:
        The redacted text; ``text`` itself when nothing was found.
    """
    if not text:
        return text
    redacted, counts = redact(text)
    return redacted if counts else text


def redact_value(value: Any) -> Any:
    """``value`` (a JSON-ready attribute: str, list, tuple, dict, number, None) with its strings redacted.

    Dictionary keys are kept; a string that is exactly a record id, a git object id or a SHA-256
    (32, 40 or 64 lower-case hex digits) is kept whole, since attributes cite records and commits
    by id. The same object is returned when nothing changed.
    """
    if isinstance(value, str):
        if len(value) in _ID_LENGTHS and _HEX.issuperset(value):
            return value
        return redact_text(value)
    if isinstance(value, dict):
        changed = {key: redact_value(item) for key, item in value.items()}
        return value if all(changed[k] is value[k] for k in value) else changed
    if isinstance(value, list | tuple):
        items = [redact_value(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    return value
