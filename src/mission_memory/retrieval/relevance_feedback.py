"""Pseudo-relevance feedback for a task in another script than the records it finds (docs/adr/0050).

A Ukrainian task over English documents gives BM25 nothing to match, and the multilingual dense
retriever places it less well than the same task in English. The records the dense search ranked
best are taken as (pseudo-)relevant, and fed back in one of two ways:

* :func:`rocchio_query` (adopted): the query vector moved toward the centroid of their vectors,
  ``q' = (q + β · mean(d)) / ‖…‖`` (Rocchio, "Relevance feedback in information retrieval", The
  SMART Retrieval System, 1971; applied to dense retrievers as "Vector PRF" by Li, Mourad, Zhuang,
  Koopman and Zuccon, "Pseudo Relevance Feedback with Deep Language Models and Dense Retrievers:
  Successes and Pitfalls", ACM TOIS 2023), and the dense search run again with it. The centroid is
  in the documents' own language, so the second search is an English query in effect.
* :func:`feedback_terms` (measured, off): their heaviest words as extra BM25 terms, weighed as a
  relevance model does (Lavrenko and Croft, "Relevance-Based Language Models", SIGIR 2001:
  ``P(t | R) ∝ Σ_d P(t | d) · P(q | d)``, here with ``P(q | d)`` the record's cosine share and
  ``P(t | d)`` the word's share of the record): feedback across languages as Ballesteros and Croft
  ("Phrasal translation and query expansion techniques for cross-language information retrieval",
  SIGIR 1997) applied it after dictionary translation.

Both apply only when the task shares (almost) no script with the feedback records
(:func:`is_cross_script`), so tasks in the store's own language are left as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from mission_memory.retrieval.query_terms import term_words

__all__ = ["feedback_terms", "is_cross_script", "rocchio_query", "written_in_cyrillic"]

_TEXT_CHARS = 1500
"""Characters of a record read for its words (its title and opening, where an ADR states its subject)."""


def _cyrillic_share(words: Sequence[str]) -> float:
    letters = [w for w in words if any(c.isalpha() for c in w)]
    if not letters:
        return 0.0
    return sum(any("\u0400" <= c <= "\u04ff" for c in w) for w in letters) / len(letters)


def written_in_cyrillic(task_terms: Sequence[str]) -> bool:
    """True when at least half of a task's words (its BM25 terms) are Cyrillic: the first half of
    :func:`is_cross_script`, which needs no record."""
    return bool(task_terms) and _cyrillic_share(task_terms) >= 0.5


def is_cross_script(task_terms: Sequence[str], feedback_texts: Sequence[str]) -> bool:
    """True when the task is written in Cyrillic and the records found for it in Latin script.

    Args:
        task_terms: the task's BM25 terms (:func:`~mission_memory.retrieval.query_terms.query_terms`).
        feedback_texts: the texts of the best dense hits.

    Returns:
        True when at least half of the task's words are Cyrillic and at most a fifth of the
        feedback texts' words are (so the two share next to no words).
    """
    if not feedback_texts or not written_in_cyrillic(task_terms):
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


def rocchio_query(
    query: npt.NDArray[np.float32], feedback: Sequence[npt.NDArray[np.float32]], weight: float
) -> npt.NDArray[np.float32]:
    """The query vector moved toward the feedback records: ``(q + weight · mean(feedback))``, unit length.

    Args:
        query: shape ``(dim,)``, unit.
        feedback: the feedback records' vectors, each shape ``(dim,)``, unit.
        weight: β, the centroid's weight against the query's 1.

    Returns:
        Shape ``(dim,)`` float32, unit; ``query`` itself when there is no feedback.

    Raises:
        ValueError: a feedback vector's shape differs from the query's.
    """
    if not feedback or weight == 0:
        return query
    vectors = np.stack(feedback)
    if vectors.shape[1:] != query.shape:
        raise ValueError(f"feedback vectors have shape {vectors.shape[1:]}, the query {query.shape}")
    moved = query.astype(np.float64) + weight * vectors.mean(axis=0, dtype=np.float64)
    norm = float(np.linalg.norm(moved))
    return query if norm == 0 else (moved / norm).astype(np.float32)
