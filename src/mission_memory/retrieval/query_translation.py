"""Word-by-word translation of a Cyrillic task into the records' own words, by the embedder itself.

A Ukrainian task over English records gives BM25 nothing to match, so its ranking rests on the dense
list alone while the English version of the same task has both; the two then put different decisions
first. The multilingual embedder places a word near its translation ("бібліотеку" next to "library",
"метадані" next to "metadata"), so each Cyrillic word of the task is replaced, for BM25, by the
nearest word of a small English vocabulary — the words of the titles of the records the dense search
found — when their cosine reaches a threshold (docs/adr/0071). It is the nearest-neighbour word
translation of cross-lingual embedding spaces (Mikolov, Le and Sutskever, "Exploiting Similarities
among Languages for Machine Translation", 2013; Conneau et al., "Word Translation Without Parallel
Data", ICLR 2018), with the vocabulary restricted to the candidates, as query translation for
cross-language retrieval restricts it to the collection (Ballesteros and Croft, SIGIR 1997).

Words are embedded as e5 queries (``query: <word>``), one at a time, and kept in a bounded in-process
cache (:data:`CACHE_WORDS`), so a long-lived server pays for a title word once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from mission_memory.embeddings import Embedder
from mission_memory.embeddings.base import Vector
from mission_memory.retrieval.query_terms import term_words

__all__ = ["CACHE_WORDS", "translated_terms", "vocabulary"]

CACHE_WORDS = 20_000
"""Word vectors kept in memory (about 30 MB at 384 dimensions)."""

MIN_WORD_CHARS = 3
"""Shorter words are neither translated nor offered as translations (abbreviations match as they are)."""

_cache: OrderedDict[tuple[str, str], Vector] = OrderedDict()
_lock = threading.Lock()


def _cyrillic(word: str) -> bool:
    return any("\u0400" <= c <= "\u04ff" for c in word)


def vocabulary(titles: Sequence[str], limit: int = 200) -> list[str]:
    """The distinct Latin-script words of ``titles`` (stop words and words under
    :data:`MIN_WORD_CHARS` characters dropped), in first-seen order, at most ``limit``."""
    out: dict[str, None] = {}
    for title in titles:
        for word in term_words(title):
            if len(word) >= MIN_WORD_CHARS and not _cyrillic(word) and word.isalpha():
                out.setdefault(word)
                if len(out) >= limit:
                    return list(out)
    return list(out)


def _word_vectors(embedder: Embedder, words: Sequence[str]) -> Vector:
    """Row-aligned unit vectors of ``words`` embedded as queries, from the cache when there."""
    rows: list[Vector] = []
    for word in words:
        key = (embedder.model_id, word)
        with _lock:
            vector = _cache.get(key)
            if vector is not None:
                _cache.move_to_end(key)
        if vector is None:
            vector = embedder.embed_query(word)
            with _lock:
                _cache[key] = vector
                while len(_cache) > CACHE_WORDS:
                    _cache.popitem(last=False)
        rows.append(vector)
    return np.stack(rows) if rows else np.zeros((0, embedder.dim), dtype=np.float32)


def translated_terms(
    embedder: Embedder, terms: Sequence[str], candidates: Sequence[str], threshold: float, *, mutual: bool = True
) -> list[str]:
    """The English words the Cyrillic ``terms`` translate to, within ``candidates``.

    Args:
        embedder: the multilingual embedder whose space is shared by both languages.
        terms: the task's BM25 terms (:func:`~mission_memory.retrieval.query_terms.query_terms`);
            only Cyrillic ones of at least :data:`MIN_WORD_CHARS` characters are translated.
        candidates: the vocabulary to translate into (:func:`vocabulary` of the found records' titles).
        threshold: the least cosine between a word and its translation (0.90 measured, ADR 0071).
        mutual: keep a translation only when the task word is also the candidate's nearest task word
            (mutual nearest neighbours, which drops the "hub" words near everything).

    Returns:
        Distinct translations, in the order of the words they translate; words whose nearest
        candidate is below ``threshold`` have none.

    Raises:
        BackendUnavailable: the embedder fails.
    """
    source = [t for t in terms if _cyrillic(t) and len(t) >= MIN_WORD_CHARS]
    if not source or not candidates:
        return []
    similarity = _word_vectors(embedder, source) @ _word_vectors(embedder, candidates).T
    nearest_source = np.argmax(similarity, axis=0)  # for each candidate, the task word nearest to it
    out: dict[str, None] = {}
    for index, row in enumerate(similarity):
        best = int(np.argmax(row))
        # mutual nearest neighbours only: a word near everything ("users") is no one's translation
        if float(row[best]) >= threshold and (not mutual or int(nearest_source[best]) == index):
            out.setdefault(candidates[best])
    return list(out)
