"""The text template of an event and the kind key stored with it (docs/adr/0057 and its amendment, 0088).

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

# A token: a run of characters other than spaces, brackets, quotes and the separators , ; = (so "(trace 42)"
# masks to "(trace <*>)", never "(trace <*>" because the bracket went with the number).
_TOKEN = r"[^\s()\[\]{}<>\"'`,;=]"
# A value named by its key is variable whatever its shape: the token after "pod", "trace", "span", "uuid",
# "guid" or a key ending in "id" ("id", "trace_id", "spanId", "request-id"), separated by spaces, "=" or
# ":" (a pod's suffix can be letters only, a trace id all digits or all hexadecimal letters).
_KEYED_VALUE = re.compile(
    r"(?<![\w-])((?:pod|trace|span|uuid|guid|[a-z][a-z_-]*?[_-]id|[a-z]+(?-i:Id)|id)[\"']?(?:\s*[=:]\s*|\s+)[\"']?)"
    rf"{_TOKEN}*\w", re.IGNORECASE)
_MASKS = (
    re.compile(r"[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE),  # URLs
    re.compile(r"(?<![\w/])(?:[\w.-]*/)+[\w.@:-]+"),  # paths, host/ip pairs, class paths with slashes
    re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE),  # UUIDs
    re.compile(r"\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}\b", re.IGNORECASE),  # IPv6
    re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"),  # IPv4 with an optional port
    # A generated name: a token ending in a hyphen and 5 or more letters without a vowel (Kubernetes draws
    # pod suffixes from consonants and digits, so checkout-api-cdbbb is as variable as checkout-api-x2k4p).
    re.compile(rf"{_TOKEN}*[a-z0-9]-[b-df-hj-np-tv-xz0-9]{{5,}}(?![\w-])", re.IGNORECASE),
    # A token holding a digit, whole: counters, ids, hex digests, ports, times, numbers with units
    # ("1360ms"), pod names (checkout-api-80727 and checkout-api-568f4 alike).
    re.compile(rf"{_TOKEN}*\d{_TOKEN}*"),
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
        IP addresses, paths, generated names (a Kubernetes pod's suffix of any shape) or the value of an
        id-like key ("trace", "pod", "request_id") have the same one (docs/adr/0057, amendment of 2026-12-06).
    """
    out = _KEYED_VALUE.sub(lambda m: m.group(1) + _MASK, text)
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
