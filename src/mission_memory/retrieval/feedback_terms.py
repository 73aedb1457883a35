"""Pseudo-relevance feedback for a query in another script than the store: English terms from the dense hits.

A Ukrainian task over English documents gives BM25 nothing to match, so the lexical half of the
fusion is empty and a rare, decisive English term cannot help. The dense retriever, which is
multilingual, still finds the neighbourhood. This module takes the records the dense search ranked
best, weighs their words as a relevance model does (Lavrenko and Croft, "Relevance-Based Language
Models", SIGIR 2001: ``P(t | R) ∝ Σ_d P(t | d) · P(q | d)``, here with ``P(q | d)`` the record's
cosine share and ``P(t | d)`` the word's share of the record), and returns the heaviest words as
extra BM25 terms: pseudo-relevance feedback applied across languages, as Ballesteros and Croft
("Phrasal translation and query expansion techniques for cross-language information retrieval",
SIGIR 1997) did after dictionary translation. It applies only when the query shares (almost) no
script with the feedback records (:func:`is_cross_script`), so queries in the store's own
language are left as they are. Measured, and whether it is on by default, in docs/adr/0050.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from mission_memory.retrieval.query_terms import term_words

__all__ = ["feedback_terms", "is_cross_script"]

_TEXT_CHARS = 1500
"""Characters of a record read for its words (its title and opening, where an ADR states its subject)."""


def _cyrillic_share(words: Sequence[str]) -> float:
    letters = [w for w in words if any(c.isalpha() for c in w)]
    if not letters:
        return 0.0
    return sum(any("\u0400" <= c <= "\u04ff" for c in w) for w in letters) / len(letters)


def is_cross_script(task_terms: Sequence[str], feedback_texts: Sequence[str]) -> bool:
    """True when the task is written in Cyrillic and the records found for it in Latin script.

    Args:
        task_terms: the task's BM25 terms (:func:`~mission_memory.retrieval.query_terms.query_terms`).
        feedback_texts: the texts of the best dense hits.

    Returns:
        True when at least half of the task's words are Cyrillic and at most a fifth of the
        feedback texts' words are (so the two share next to no words).
    """
    if not task_terms or not feedback_texts or _cyrillic_share(task_terms) < 0.5:
        return False
    words = [w for text in feedback_texts for w in term_words(text[:_TEXT_CHARS])]
    return bool(words) and _cyrillic_share(words) <= 0.2


def feedback_terms(texts: Sequence[str], cosines: Sequence[float], count: int) -> list[str]:
    """The ``count`` heaviest words of the feedback records under a relevance model, heaviest first.

    Args:
        texts: each feedback record's title and text.
        cosines: each record's cosine similarity with the task (same order), its weight.
        count: how many words to return.

    Returns:
        Words (lower case, stop words dropped) ordered by ``Σ_d w_d · tf(t, d) / |d|`` with
        ``w_d = cos_d / Σ cos``; ties in first-seen order.
    """
    total = sum(max(c, 0.0) for c in cosines) or 1.0
    weight: dict[str, float] = {}
    for text, cosine in zip(texts, cosines, strict=True):
        words = term_words(text[:_TEXT_CHARS])
        if not words:
            continue
        share = max(cosine, 0.0) / total / len(words)
        for word, tf in Counter(words).items():
            weight[word] = weight.get(word, 0.0) + share * tf
    return [w for w, _ in sorted(weight.items(), key=lambda item: -item[1])[:count]]
