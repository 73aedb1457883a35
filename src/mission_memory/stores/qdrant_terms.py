"""The Qdrant backend's lexical side: FTS5's BM25 over sparse vectors, tokenised as SQLite does.

Qdrant has no BM25 of its own over payload text that could follow FTS5 (its text index has one
field, its own tokenizer and stemmer); it scores sparse vectors, and with the ``idf`` modifier it
multiplies each query term by ``ln(1 + (N − n + 0.5)/(n + 0.5))`` over the collection, computed
server-side (Qdrant docs, "Sparse vectors", IDF modifier). The target is the SQLite store's
``bm25(records_fts, 2.0, 1.0)`` (FTS5, ``fts5_aux.c``; Robertson & Zaragoza, "The Probabilistic
Relevance Framework: BM25 and Beyond", 2009):

    score(q, d) = Σ_{phrases p of q} idf(p) · f(p, d)·(k1 + 1) / (f(p, d) + k1·(1 − b + b·|d| / avgdl))
    idf(p) = ln((N − n(p) + 0.5)/(n(p) + 0.5)), floored to 10⁻⁶ when ≤ 0;  avgdl = Σ|d| / N

with ``f`` counting a title occurrence twice and a text occurrence once, ``|d|`` the record's
token count (title and text), ``k1 = 1.2``, ``b = 0.75``, ``N`` every record and ``n`` the records
holding the term. Since a stored vector cannot follow a changing ``avgdl``, exactness comes from a
rescoring (docs/adr/0043, "Lexical ranking equal to FTS5's"):

* a record's sparse vector holds BM25's term-frequency part at a fixed ``avgdl`` of
  :data:`AVERAGE_TOKENS` (it finds the candidates; the query side supplies FTS5's IDF), plus the
  :data:`PRESENCE_INDEX` term in every record so that Qdrant's ``N`` counts every record;
* the payload holds the token count ``|d|`` (:data:`TOKENS_FIELD`), so ``N`` and ``Σ|d|`` are one
  facet over it, and the raw frequencies a stored float cannot give back exactly
  (:data:`LARGE_FREQUENCIES_FIELD`, frequencies of :data:`LARGE_FREQUENCY` or more);
* a query recovers each term's ``n`` from Qdrant's own IDF (:func:`document_frequency`), the raw
  ``f`` of each candidate from its stored value (:func:`raw_frequencies`), and scores with FTS5's
  formula in FTS5's order of operations (:func:`fts5_scores`).

Tokens are made by SQLite's own FTS5 tokenizer with the same settings as the store's index
(``porter unicode61 remove_diacritics 2``), in an in-memory database, so both backends see the same
words, stems and diacritics folding. A token becomes a sparse index by a 32-bit BLAKE2b hash (no
vocabulary to keep in sync between replicas; a collision merges two terms, about one pair in
2^32 / vocabulary² — negligible for vocabularies under a million terms).
"""

from __future__ import annotations

import functools
import hashlib
import math
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mission_memory.stores.fts5_bm25 import IDF_FLOOR, K1, TITLE_WEIGHT, B, idf, term_score
from mission_memory.stores.sqlite_fts_terms import TOKENIZER

__all__ = [
    "AVERAGE_TOKENS",
    "FTS_TOKENIZE",
    "IDF_FLOOR",
    "K1",
    "LARGE_FREQUENCIES_FIELD",
    "LARGE_FREQUENCY",
    "LEXICAL_LAYOUT",
    "PRESENCE_INDEX",
    "TITLE_WEIGHT",
    "TOKENS_FIELD",
    "B",
    "DocumentTerms",
    "SparseTerms",
    "TermEncoder",
    "document_frequency",
    "fts5_idf",
    "fts5_scores",
    "raw_frequencies",
    "term_index",
    "term_weight",
]

FTS_TOKENIZE = TOKENIZER
"""The FTS5 tokenizer of the SQLite store (``sqlite_fts_terms.TOKENIZER``), used here as well."""
AVERAGE_TOKENS = 82.0
"""The ``avgdl`` of the stored sparse weights (the candidate search), not of the scores.

The shared corpus's mean (1,178 records, 82.0 tokens). Scores use the live average; the further
it is from this one, the deeper the candidate search reads (by at most the ratio of the two,
docs/adr/0043)."""
PRESENCE_INDEX = 0
"""A sparse index every record holds (weight 1), so that Qdrant's IDF counts every record in ``N``
(it counts the points that have the sparse vector); no token maps to it (:func:`term_index`)."""
TOKENS_FIELD = "bm25_tokens"
"""Payload field (integer, indexed): the record's token count ``|d|``, title and text."""
LARGE_FREQUENCIES_FIELD = "bm25_large"
"""Payload field: ``{sparse index: raw frequency}`` of the terms whose frequency a 32-bit stored
weight cannot give back exactly (:data:`LARGE_FREQUENCY` or more); absent when there are none."""
LARGE_FREQUENCY = 8192.0
"""Raw frequencies from here on are kept in the payload (a 32-bit weight gives them back up to about
52,000; this keeps a margin of six)."""
LEXICAL_LAYOUT = 2
"""The sparse layout records are written with: 1 had no presence term and no token count."""

_BATCH = 200


@dataclass(frozen=True)
class SparseTerms:
    """A sparse vector: term indices (u32, ascending) and their weights, row-aligned."""

    indices: list[int]
    values: list[float]

    @property
    def empty(self) -> bool:
        """True when the text had no tokens."""
        return not self.indices


@dataclass(frozen=True)
class DocumentTerms:
    """What a record's lexical side stores: its sparse vector, its token count and the raw
    frequencies (title × 2 + text) of :data:`LARGE_FREQUENCY` or more, by sparse index."""

    vector: SparseTerms
    tokens: int
    large: dict[int, float] = field(default_factory=dict)


@functools.lru_cache(maxsize=200_000)
def term_index(token: str) -> int:
    """The sparse index of a token: the first 4 bytes of its BLAKE2b digest, as an unsigned int
    (0 is :data:`PRESENCE_INDEX`, so a token hashing to 0 takes 1)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big") or 1


def _length_norm(tokens: int, average: float) -> float:
    """FTS5's ``k1·(1 − b + b·|d|/avgdl)``, evaluated in FTS5's order."""
    return K1 * (1 - B + B * tokens / average)


def term_weight(frequency: float, tokens: int, average: float = AVERAGE_TOKENS) -> float:
    """BM25's term-frequency part ``f·(k1 + 1)/(f + k1·(1 − b + b·|d|/avgdl))`` (dimensionless)."""
    return (frequency * (K1 + 1.0)) / (frequency + _length_norm(tokens, average))


def raw_frequencies(
    indices: Sequence[int], values: Sequence[float], tokens: int, large: Mapping[str, float] | None = None
) -> dict[int, float]:
    """Invert :func:`term_weight` at :data:`AVERAGE_TOKENS`: each stored index's raw frequency.

    Frequencies are whole numbers (title × 2 + text), so the inverse is rounded; a 32-bit stored
    weight gives them back exactly below :data:`LARGE_FREQUENCY` (the error of the inverse is
    about 10⁻⁵·f: checked exact up to f ≈ 52,000 at the worst length), and larger ones come from
    ``large`` (the payload's :data:`LARGE_FREQUENCIES_FIELD`).
    """
    norm = _length_norm(tokens, AVERAGE_TOKENS)
    out: dict[int, float] = {}
    for index, value in zip(indices, values, strict=True):
        if index == PRESENCE_INDEX:
            continue
        out[index] = float(round(value * norm / (K1 + 1.0 - value))) if value < K1 + 1.0 else LARGE_FREQUENCY
    for key, frequency in (large or {}).items():
        out[int(key)] = float(frequency)
    return out


def document_frequency(qdrant_idf: float, records: int) -> int:
    """The document count ``n`` behind Qdrant's IDF ``ln(1 + (N − n + 0.5)/(n + 0.5))`` over ``N`` records.

    ``n = (N + 0.5 − 0.5·x)/(1 + x)`` with ``x = e^idf − 1``, rounded (a 32-bit score keeps
    ``n`` exact up to about 10⁵ and within one beyond), clamped to ``[1, N]``.
    """
    x = math.expm1(qdrant_idf)
    n = (records + 0.5 - 0.5 * x) / (1.0 + x)
    return min(max(round(n), 1), max(records, 1))


def fts5_idf(records: int, documents: int) -> float:
    """FTS5's IDF of a term in ``documents`` of ``records`` records (:func:`~mission_memory.stores.fts5_bm25.idf`)."""
    return idf(records, documents)


def fts5_scores(
    phrases: Sequence[tuple[int, float]], frequencies: Mapping[int, float], tokens: int, average: float
) -> float:
    """FTS5's BM25 of one record (positive, higher is better: ``-bm25(records_fts, 2.0, 1.0)``).

    Args:
        phrases: the query's phrases in query order, as ``(sparse index, FTS5 IDF)``; a term
            given twice counts twice, as in FTS5.
        frequencies: the record's raw frequencies by sparse index (:func:`raw_frequencies`).
        tokens: the record's token count ``|d|``.
        average: ``avgdl``, all tokens over all records.
    """
    score = 0.0
    length = float(tokens)
    for index, phrase_idf in phrases:
        score += term_score(phrase_idf, frequencies.get(index, 0.0), length, average)
    return score


class TermEncoder:
    """Tokenises titles and texts with SQLite FTS5 and turns them into BM25 sparse vectors.

    Thread-safe (one in-memory database behind a lock). ``tokens`` keeps the token order, for
    exact-phrase checks.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(title, text, tokenize='{FTS_TOKENIZE}')")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")

    def tokens(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[list[str], list[str]]]:
        """``(title tokens, text tokens)`` of each ``(title, text)``, in text order."""
        out: list[tuple[list[str], list[str]]] = []
        for start in range(0, len(pairs), _BATCH):
            out.extend(self._tokens_batch(pairs[start : start + _BATCH]))
        return out

    def _tokens_batch(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[list[str], list[str]]]:
        with self._lock:
            self._conn.executemany(
                "INSERT INTO t (rowid, title, text) VALUES (?, ?, ?)",
                [(i + 1, title, text) for i, (title, text) in enumerate(pairs)],
            )
            rows = self._conn.execute("SELECT doc, col, offset, term FROM v").fetchall()
            self._conn.execute("DELETE FROM t")
        placed: list[tuple[list[tuple[int, str]], list[tuple[int, str]]]] = [([], []) for _ in pairs]
        for doc, col, offset, term in rows:
            placed[doc - 1][0 if col == "title" else 1].append((offset, term))
        return [([t for _, t in sorted(title)], [t for _, t in sorted(text)]) for title, text in placed]

    def _counts_batch(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[dict[str, float], int]]:
        """Per pair: the column-weighted frequency of each token, and the token count."""
        with self._lock:
            self._conn.executemany(
                "INSERT INTO t (rowid, title, text) VALUES (?, ?, ?)",
                [(i + 1, title, text) for i, (title, text) in enumerate(pairs)],
            )
            rows = self._conn.execute(
                "SELECT doc, term, sum(CASE col WHEN 'title' THEN ? ELSE 1.0 END), count(*) FROM v GROUP BY doc, term",
                (float(TITLE_WEIGHT),),
            ).fetchall()
            self._conn.execute("DELETE FROM t")
        out: list[tuple[dict[str, float], int]] = [({}, 0) for _ in pairs]
        for doc, term, weight, n in rows:
            weights, length = out[doc - 1]
            weights[term] = weight
            out[doc - 1] = (weights, length + n)
        return out

    def document_terms(self, pairs: Sequence[tuple[str, str]]) -> list[DocumentTerms]:
        """The lexical side of each ``(title, text)`` (see the module docstring).

        The vector holds :func:`term_weight` at :data:`AVERAGE_TOKENS` of each token's raw
        frequency (tokens sharing a sparse index summed first) and :data:`PRESENCE_INDEX` at 1.
        """
        counted: list[tuple[dict[str, float], int]] = []
        for start in range(0, len(pairs), _BATCH):
            counted.extend(self._counts_batch(pairs[start : start + _BATCH]))
        out = []
        for weights, length in counted:
            by_index: dict[int, float] = {}
            for token, f in weights.items():
                index = term_index(token)
                by_index[index] = by_index.get(index, 0.0) + f
            ordered = sorted(by_index.items())
            vector = SparseTerms(
                [PRESENCE_INDEX, *(i for i, _ in ordered)], [1.0, *(term_weight(f, length) for _, f in ordered)]
            )
            out.append(DocumentTerms(vector, length, {i: f for i, f in ordered if f >= LARGE_FREQUENCY}))
        return out

    def document_vectors(self, pairs: Sequence[tuple[str, str]]) -> list[SparseTerms]:
        """The sparse vectors of :meth:`document_terms`."""
        return [terms.vector for terms in self.document_terms(pairs)]

    def term_tokens(self, terms: Sequence[str]) -> list[list[str]]:
        """The index tokens of each query term (usually one: its stem; none for a term without letters)."""
        return [text for _, text in self.tokens([("", term) for term in terms])]

    def query_vector(self, terms: Sequence[str]) -> SparseTerms:
        """The query side: each distinct token of ``terms`` with weight 1 (the terms are OR-ed)."""
        tokens = self.tokens([("", " ".join(terms))])[0][1]
        indices = sorted({term_index(token) for token in tokens})
        return SparseTerms(indices, [1.0] * len(indices))

    def close(self) -> None:
        """Close the in-memory database."""
        with self._lock:
            self._conn.close()
