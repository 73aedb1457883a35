"""Which query terms are worth a BM25 query over the SQLite FTS5 index: document frequencies of terms.

FTS5 scores every row a query matches before it can return the best, so a query term found in
a large share of the records (``file`` is in every commit's file list) makes each query cost a
scan of most of the index while adding little to the ranking: its inverse document frequency is
small (below log 4 ≈ 1.4 at 20 % of the records, against 4.6 at 1 %) and FTS5 floors it to 10⁻⁶
at half of the records. :func:`rare_terms` leaves such terms out of the query as long as rarer
terms remain (docs/adr/0033). A term's frequency is that of its index tokens: the query's words are
tokenized by a temporary FTS5 table with the same tokenizer (Porter stemming, so ``files`` counts
as ``file``), and their document counts read through ``fts5vocab``; both are cached per store
state.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["COMMON_SHARE", "TOKENIZER", "FtsTermStats", "FtsTotals", "TermPlan", "fts_totals"]

COMMON_SHARE = 0.5
"""Terms found in more than this share of the records are left out while rarer ones remain.

At 0.5 this changes no BM25 score above FTS5's IDF floor (such terms score 10⁻⁶), so the best
rows stay the same; lower shares are faster but change the ranking (figures in docs/adr/0033)."""
TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The tokenizer of ``records_fts`` (migration ``0001_initial``): stems must be the index's."""


@dataclass(frozen=True)
class FtsTotals:
    """FTS5's table-wide BM25 statistics, as ``bm25()`` reads them.

    Attributes:
        rows: rows in the FTS table (``xRowCount``, the ``N`` of the IDF), all missions.
        tokens: tokens in the table over both columns (``xColumnTotalSize(-1)``).
        raw: the record they were read from, to tell one state of the index from another.
    """

    rows: int
    tokens: int
    raw: bytes

    @property
    def avgdl(self) -> float:
        """Average row length in tokens, as FTS5 computes it (``(double)nToken / (double)nRow``)."""
        return float(self.tokens) / float(self.rows) if self.rows else 0.0


def fts_totals(conn: sqlite3.Connection) -> FtsTotals:
    """FTS5's ``averages`` record of ``records_fts``: row count and token totals per column.

    The record is ``records_fts_data`` row 1: SQLite varints, the row count then one total per
    column (``sqlite3Fts5IndexGetAverages`` in SQLite's ``fts5_index.c``).

    Raises:
        sqlite3.Error: the table cannot be read.
    """
    row = conn.execute("SELECT block FROM records_fts_data WHERE id = 1").fetchone()
    raw = bytes(row[0]) if row is not None and row[0] is not None else b""
    values = _varints(raw)
    if not values:
        return FtsTotals(0, 0, raw)
    return FtsTotals(values[0], sum(values[1:]), raw)


def _varints(data: bytes) -> list[int]:
    """The SQLite varints in ``data`` (big-endian 7 bits a byte; a ninth byte gives all 8 bits)."""
    out: list[int] = []
    i = 0
    while i < len(data):
        value = 0
        for n in range(9):
            if i >= len(data):
                return out
            byte = data[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        out.append(value)
    return out


@dataclass(frozen=True)
class TermPlan:
    """What a BM25 query will cost, before it runs.

    Attributes:
        terms: the query terms kept (see :meth:`FtsTermStats.rare_terms`).
        postings: the summed document counts of the kept terms' index tokens: an upper bound of
            the rows FTS5 will score (a row holding two terms counts twice), the cost's measure.
        records: rows in the index.
        tokens: the index tokens of each kept term (one for a word, several for a phrase, none
            for a word without letters or digits), aligned with ``terms``.
        docs: document counts of those tokens, in the whole index (all missions).
        totals: FTS5's row count and token total read in the same state as ``docs``
            (docs/adr/0048 scores BM25 from them).
    """

    terms: list[str]
    postings: int
    records: int
    tokens: list[list[str]] = field(default_factory=list)
    docs: list[list[int]] = field(default_factory=list)
    totals: FtsTotals = field(default_factory=lambda: FtsTotals(0, 0, b""))


class FtsTermStats:
    """Document frequencies of query terms in ``records_fts``, cached until the records change.

    The cache is keyed by the highest record row id and FTS5's ``averages`` record (row count and
    token totals): row ids only grow (``AUTOINCREMENT``) and a record is never changed in place, so
    any insert changes the first and any delete the second, and a cached frequency is always the
    index's current one. Safe to share between threads; each call uses the caller's connection.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: tuple[int, bytes] | None = None
        self._totals = FtsTotals(0, 0, b"")
        self._records = 0
        self._docs: dict[str, int] = {}

    def rare_terms(self, conn: sqlite3.Connection, terms: Sequence[str], common_share: float) -> list[str]:
        """``terms`` without those found in more than ``common_share`` of the records.

        Args:
            conn: a connection to the store (its temp schema gets two helper tables).
            terms: query terms (words, not FTS5 syntax).
            common_share: a share in (0, 1]; 1.0 or more keeps every term.

        Returns:
            The kept terms in their order: all of them when every term is common, when
            ``common_share >= 1`` or when there is at most one term. A word whose tokens are not
            all common is kept.
        """
        if common_share >= 1.0 or len(terms) < 2:
            return list(terms)
        return self.plan(conn, terms, common_share).terms

    def plan(self, conn: sqlite3.Connection, terms: Sequence[str], common_share: float) -> TermPlan:
        """The kept terms (as :meth:`rare_terms` keeps them) and how many postings they have.

        Args: as :meth:`rare_terms`.

        Returns:
            A :class:`TermPlan`; its ``postings`` lets the caller choose how to run the query
            (docs/adr/0047 splits a large ranking across threads).
        """
        if not terms:
            return TermPlan([], 0, 0)
        tokens = self._tokens(conn, terms)
        with self._lock:
            totals = fts_totals(conn)
            state = (int(conn.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0]), totals.raw)
            if state != self._state:
                self._records = totals.rows
                self._totals = totals
                self._docs = {}
                self._state = state
            missing = sorted({t for ts in tokens for t in ts} - self._docs.keys())
            if missing:
                marks = ",".join("?" * len(missing))
                found = dict(conn.execute(
                    f"SELECT term, doc FROM temp.mm_records_vocab WHERE term IN ({marks})", missing
                ).fetchall())
                self._docs.update({t: int(found.get(t, 0)) for t in missing})
            bound = common_share * self._records
            keep_all = common_share >= 1.0 or len(terms) < 2
            common = [not keep_all and bool(ts) and all(self._docs[t] > bound for t in ts) for ts in tokens]
            if all(common):
                common = [False] * len(terms)
            postings = sum(self._docs[t] for ts, c in zip(tokens, common, strict=True) if not c for t in ts)
            records = self._records
            kept_tokens = [ts for ts, c in zip(tokens, common, strict=True) if not c]
            docs = [[self._docs[t] for t in ts] for ts in kept_tokens]
            totals = self._totals
        kept = [term for term, is_common in zip(terms, common, strict=True) if not is_common]
        return TermPlan(kept, postings, records, kept_tokens, docs, totals)

    @staticmethod
    def _tokens(conn: sqlite3.Connection, terms: Sequence[str]) -> list[list[str]]:
        """The index tokens of each term (usually one: its stem)."""
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.mm_query_terms USING fts5(term, tokenize='{TOKENIZER}')"
        )
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mm_query_vocab USING fts5vocab(temp, mm_query_terms, instance)"
        )
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.mm_records_vocab USING fts5vocab(main, records_fts, row)")
        conn.execute("DELETE FROM temp.mm_query_terms")
        conn.executemany(
            "INSERT INTO temp.mm_query_terms (rowid, term) VALUES (?, ?)", list(enumerate(terms, start=1))
        )
        out: list[list[str]] = [[] for _ in terms]
        for token, doc in conn.execute("SELECT term, doc FROM temp.mm_query_vocab ORDER BY doc, offset"):
            out[int(doc) - 1].append(str(token))
        conn.execute("DELETE FROM temp.mm_query_terms")
        return out
