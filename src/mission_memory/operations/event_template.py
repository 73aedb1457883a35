"""The text template of an event and the kind key stored with it (docs/adr/0057, 0088).

:func:`event_template` masks an event text's variable parts; :func:`kind_key` is the short key of an
event's *kind* — its source fingerprint, else its type, sector and template — which intake stores in
the record's ``kind_key`` attribute, so a store counts the kinds of a window of any size in one
aggregate query instead of reading the events (:meth:`~mission_memory.stores.base.EventKindIndex.event_kinds`).
The module has no dependencies inside the package: the event model (:mod:`~mission_memory.operations.domain_events`)
and the grouping (:mod:`~mission_memory.operations.event_groups`) both use it.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

__all__ = ["event_template", "kind_key"]

_MASKS = (
    re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE),  # URLs
    re.compile(r"(?<![\w/])(?:[\w.-]*/)+[\w.@:-]+"),  # paths, host/ip pairs, class paths with slashes
    re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE),  # UUIDs
    re.compile(r"\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}\b", re.IGNORECASE),  # IPv6
    re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"),  # IPv4 with an optional port
    re.compile(r"\b0x[0-9a-f]+\b|\b[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b", re.IGNORECASE),  # hex
    re.compile(r"\S*\d\S*"),  # any token holding a digit: counters, ids, ports, times
)
_MASK = "<*>"


@lru_cache(maxsize=32_768)
def event_template(text: str) -> str:
    """``text`` with its variable parts replaced by ``<*>``, whitespace collapsed, lower-cased.

    Kept for the last 32,768 texts seen: a flood repeats its texts, and every degraded pull groups the
    same events again (docs/adr/0057).

    Args:
        text: an event's text (any language; only ASCII digits, hex, addresses and paths are masked).

    Returns:
        The template; two repeats of one message differing only in numbers, ids, hexadecimal values,
        IP addresses or paths have the same one.
    """
    out = text
    for mask in _MASKS:
        out = mask.sub(_MASK, out)
    out = re.sub(r"(?:<\*>[\s,:;=/-]*)+<\*>", _MASK, out)  # runs of masks are one variable part
    return " ".join(out.split()).lower()


def kind_key(event_type: str, sector: str, text: str, fingerprint: str | None = None) -> str:
    """The key of an event's kind: 20 hexadecimal digits of a BLAKE2b digest.

    Events sharing a source ``fingerprint`` (an alert's notifications) share a key whatever their
    wording; other events share one when their type, sector (whitespace-normalised) and
    :func:`event_template` are the same.

    Example: ``kind_key("io_error", "storage", "I/O error, sector 8")`` equals
    ``kind_key("io_error", "storage", "I/O error, sector 16")``.
    """
    if fingerprint:
        basis = f"f\x1f{fingerprint}"
    else:
        basis = f"k\x1f{' '.join(event_type.split())}\x1f{' '.join(sector.split())}\x1f{event_template(text)}"
    return hashlib.blake2b(basis.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()
