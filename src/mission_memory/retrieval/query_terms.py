"""Turning a task description into BM25 query terms (English and Ukrainian stop words dropped)."""

from __future__ import annotations

import re

__all__ = ["query_terms", "term_words"]

_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*", re.UNICODE)

_STOP_WORDS = frozenset(
    """
    a an and are as at be been being but by can could did do does doing for from had has have having how i
    if in into is it its me my no not of on or our should so than that the their them then there these they
    this those to too was we were what when where which while who whom why will with would you your about
    after again all also any because before between both each few further here more most must need now only
    other out over own same some such up very via want wants let lets make use using used get set add new
    please task tasks work working
    і й та а але або в у на з із зі до від для по про при за як що це цей ця ці той та те ті чи не ні так
    він вона воно вони ми ви я ти його її їх нам вам мені тобі був була було були бути є буде будуть
    який яка яке які щоб коли де там тут вже ще лише тільки також може можна треба потрібно має мають
    """.split()  # noqa: SIM905
)


def term_words(text: str) -> list[str]:
    """Every lower-cased word of ``text`` worth matching, repeats kept, in order (see :func:`query_terms`)."""
    out: list[str] = []
    for match in _WORD.finditer(text.lower()):
        for word in re.split(r"[-'’]", match.group(0)):
            if len(word) < 2 or word in _STOP_WORDS or (word.isdigit() and len(word) < 3):
                continue
            out.append(word)
    return out


def query_terms(text: str, limit: int = 24) -> list[str]:
    """Distinct lower-cased words of ``text`` worth matching, in order of first appearance.

    Words of one character, numbers of one or two digits and stop words (English and Ukrainian)
    are dropped; at most ``limit`` terms are returned.
    """
    out: list[str] = []
    seen: set[str] = set()
    for match in _WORD.finditer(text.lower()):
        for word in re.split(r"[-'’]", match.group(0)):
            if len(word) < 2 or word in _STOP_WORDS or (word.isdigit() and len(word) < 3) or word in seen:
                continue
            seen.add(word)
            out.append(word)
            if len(out) >= limit:
                return out
    return out
