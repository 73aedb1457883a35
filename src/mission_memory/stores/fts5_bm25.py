"""FTS5's BM25, defined once: the constants and the arithmetic both store backends score with.

SQLite's own ranking is ``bm25(records_fts, 2.0, 1.0)`` (``fts5Bm25Function`` in SQLite's
``ext/fts5/fts5_aux.c``; Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25 and
Beyond", 2009). The SQLite store's inverted index (:mod:`~mission_memory.stores.sqlite_bm25_index`,
docs/adr/0048) and the Qdrant store's rescoring (:mod:`~mission_memory.stores.qdrant_terms`,
docs/adr/0043) both reproduce it to the last bit, so both call these functions, whose float
operations run in FTS5's order:

    score(q, d) = Σ_{phrases i, in query order} idf_i · f_i(d)·(k1 + 1) / (f_i(d) + k1·(1 − b + b·|d|/avgdl))

with ``f`` = 2 × title hits + 1 × text hits, ``|d|`` the row's tokens over both columns, ``avgdl``
all tokens over all rows; FTS5 returns the negated sum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # annotations only: the arithmetic works on floats and arrays alike, and needs no import
    import numpy as np
    import numpy.typing as npt

__all__ = ["IDF_FLOOR", "K1", "TEXT_WEIGHT", "TITLE_WEIGHT", "B", "idf", "term_score"]

K1 = 1.2
"""BM25's term frequency saturation, FTS5's constant ``k1``."""
B = 0.75
"""BM25's length normalisation, FTS5's constant ``b``."""
TITLE_WEIGHT = 2
"""Column weight of ``title`` in ``bm25(records_fts, 2.0, 1.0)``."""
TEXT_WEIGHT = 1
"""Column weight of ``text`` in ``bm25(records_fts, 2.0, 1.0)``."""
IDF_FLOOR = 1e-6
"""FTS5's IDF of a phrase found in half of the rows or more."""

Value = TypeVar("Value", float, "npt.NDArray[np.float64]")


def idf(rows: int, docs: int) -> float:
    """FTS5's IDF of a phrase found in ``docs`` of ``rows`` rows: ``ln((N − n + 0.5) / (n + 0.5))``,
    :data:`IDF_FLOOR` when not positive (``fts5Bm25GetData``)."""
    value = math.log((rows - docs + 0.5) / (docs + 0.5))
    return value if value > 0.0 else IDF_FLOOR


def term_score(term_idf: float, freqs: Value, lengths: Value, avgdl: float) -> Value:
    """One phrase's share of BM25 in each row: ``idf × (f (k1 + 1)) / (f + k1 (1 − b + b |d| / avgdl))``.

    Works on one row (floats) or many (float64 arrays of equal shape) with the same float64
    results, the operations in ``fts5Bm25Function``'s order; FTS5 sums the shares over the query's
    phrases in query order, starting from 0.0.

    Args:
        term_idf: the phrase's :func:`idf`.
        freqs: weighted frequencies ``f`` of the phrase in the rows.
        lengths: the rows' token counts ``|d|``, aligned with ``freqs``.
        avgdl: the table's tokens per row.
    """
    return term_idf * ((freqs * (K1 + 1.0)) / (freqs + K1 * ((1 - B) + B * lengths / avgdl)))


def occurrences(tokens: Sequence[str], wanted: Sequence[str]) -> int:
    """How many times the token sequence ``wanted`` starts in ``tokens``, overlapping ones included (as
    FTS5 counts a phrase): the phrase frequency the backends without FTS5 score a phrase by."""
    n = len(wanted)
    return sum(1 for i in range(len(tokens) - n + 1) if list(tokens[i : i + n]) == list(wanted))

