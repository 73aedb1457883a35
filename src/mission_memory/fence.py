"""The fence: the nonce envelope around every piece of untrusted text an agent is shown (ADR 0021).

Text from repositories, trackers, events and operators is data, never instructions. Each quoted
excerpt sits between an opening and a closing marker that carry a per-digest nonce; marker-like runs
inside the text are neutralised first, so the text can neither close the fence it sits in nor imitate
a marker of its own. The digest (:mod:`mission_memory.retrieval.digest`), the crisis timeline and the
rotation brief all fence with these functions.
"""

from __future__ import annotations

import re
import secrets

__all__ = ["close_marker", "neutralise_markers", "new_nonce", "open_marker"]


def new_nonce() -> str:
    """A fresh envelope nonce: 12 hex digits from :mod:`secrets` (48 bits), one per digest."""
    return secrets.token_hex(6)


_MARKER_RUN = re.compile(r"<{3,}|>{3,}")


def neutralise_markers(text: str) -> str:
    """``text`` with every run of three or more ``<`` or ``>`` turned into ``‹`` / ``›`` of the same length.

    The envelope's markers open with ``<<<`` and close with ``>>>``; after this, stored text holds
    neither, so it can neither close the fence it sits in nor imitate a marker of its own, whatever
    nonce it guesses (ADR 0021).
    """
    return _MARKER_RUN.sub(lambda m: ("‹" if m.group(0)[0] == "<" else "›") * len(m.group(0)), text)


def open_marker(index: int, nonce: str) -> str:
    """The line that opens excerpt ``index``'s fence: ``<<<excerpt 3 nonce=…>>>`` (ADR 0021)."""
    return f"<<<excerpt {index} nonce={nonce}>>>"


def close_marker(index: int, nonce: str) -> str:
    """The line that closes excerpt ``index``'s fence: ``<<<end excerpt 3 nonce=…>>>`` (ADR 0021)."""
    return f"<<<end excerpt {index} nonce={nonce}>>>"
