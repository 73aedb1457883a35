"""The Qdrant backend's lexical side: BM25 term weights as sparse vectors, tokenised as SQLite does.

Qdrant has no BM25 of its own over payload text; it scores sparse vectors, and with the ``idf``
modifier it multiplies each query term by the term's inverse document frequency over the
collection, computed server-side (Qdrant docs, "Sparse vectors", IDF modifier). A record's sparse
vector therefore holds the BM25 term-frequency part (Robertson & Zaragoza, "The Probabilistic
Relevance Framework: BM25 and Beyond", 2009) and the server supplies the IDF part:

    score(q, d) = Σ_{t ∈ q} idf(t) · f(t, d)·(k1 + 1) / (f(t, d) + k1·(1 − b + b·|d| / avgdl))

with the same column weights as the SQLite path's ``bm25(records_fts, 2.0, 1.0)``: ``f`` counts a
title occurrence twice and a text occurrence once, ``|d|`` is the record's token count, and
``k1 = 1.2``, ``b = 0.75`` as FTS5 uses. Two differences from FTS5 remain, both documented in
docs/adr/0043-qdrant-backend-what-lives-where.md: ``avgdl`` is a constant (:data:`AVERAGE_TOKENS`),
since a stored vector cannot follow a changing average, and Qdrant's IDF is
``ln(1 + (N − n + 0.5)/(n + 0.5))`` where FTS5 uses ``ln((N − n + 0.5)/(n + 0.5))``.

Tokens are made by SQLite's own FTS5 tokenizer with the same settings as the store's index
(``porter unicode61 remove_diacritics 2``), in an in-memory database, so both backends see the same
words, stems and diacritics folding. A token becomes a sparse index by a 32-bit BLAKE2b hash (no
vocabulary to keep in sync between replicas; a collision merges two terms, about one pair in
2^32 / vocabulary² — negligible for vocabularies under a million terms).
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "AVERAGE_TOKENS",
    "FTS_TOKENIZE",
    "K1",
    "TITLE_WEIGHT",
    "B",
    "SparseTerms",
    "TermEncoder",
    "term_index",
]

FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"
"""The FTS5 tokenizer of the SQLite store (stores/sqlite_migrations.py), used here as well."""

K1 = 1.2
B = 0.75
TITLE_WEIGHT = 2.0
AVERAGE_TOKENS = 82.0
"""The ``avgdl`` of the sparse weights: a record's title and text tokens, on average.

Measured on the shared corpus (a repository with 39 ADRs, 669 commits, its documents: 1,178
records, 82.0 tokens on average). With it, 27 of the corpus's 32 evaluation questions get the same
digest entries in the same order as on SQLite, against 14 with 120 (docs/adr/0043); a store whose
records are much longer or shorter ranks a little differently from FTS5."""

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


@functools.lru_cache(maxsize=200_000)
def term_index(token: str) -> int:
    """The sparse index of a token: the first 4 bytes of its BLAKE2b digest, as an unsigned int."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big")


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
                (TITLE_WEIGHT,),
            ).fetchall()
            self._conn.execute("DELETE FROM t")
        out: list[tuple[dict[str, float], int]] = [({}, 0) for _ in pairs]
        for doc, term, weight, n in rows:
            weights, length = out[doc - 1]
            weights[term] = weight
            out[doc - 1] = (weights, length + n)
        return out

    def document_vectors(self, pairs: Sequence[tuple[str, str]]) -> list[SparseTerms]:
        """The BM25 term-frequency weights of each ``(title, text)`` (see the module docstring)."""
        counted: list[tuple[dict[str, float], int]] = []
        for start in range(0, len(pairs), _BATCH):
            counted.extend(self._counts_batch(pairs[start : start + _BATCH]))
        out = []
        for weights, length in counted:
            norm = K1 * (1.0 - B + B * length / AVERAGE_TOKENS)
            by_index: dict[int, float] = {}
            for token, f in weights.items():
                index = term_index(token)
                by_index[index] = by_index.get(index, 0.0) + f * (K1 + 1.0) / (f + norm)
            ordered = sorted(by_index.items())
            out.append(SparseTerms([i for i, _ in ordered], [v for _, v in ordered]))
        return out

    def query_vector(self, terms: Sequence[str]) -> SparseTerms:
        """The query side: each distinct token of ``terms`` with weight 1 (the terms are OR-ed)."""
        tokens = self.tokens([("", " ".join(terms))])[0][1]
        indices = sorted({term_index(token) for token in tokens})
        return SparseTerms(indices, [1.0] * len(indices))

    def close(self) -> None:
        """Close the in-memory database."""
        with self._lock:
            self._conn.close()
