"""The PostgreSQL store's dense search plan: exact behind a B-tree, per-mission partial HNSW above a size.

A pull searches one mission's vectors (docs/design.md §10). Below :data:`HNSW_MIN_ROWS` vectors of
one model in one mission, the exact inner product of every one of them is computed (pgvector's
``<#>``), found through the B-tree on ``vectors (model_id, mission)``: recall 1, and at that size
as fast as an index (docs/adr/0084 has the measurements). From that size on, the mission gets a
partial HNSW index of its own, on ``embedding::vector(dim)`` with ``vector_ip_ops``, ``WHERE
model_id = … AND mission = …`` (one global index with a post-filter would find almost nothing of a
small mission: recall 0.09 measured), built by ``CREATE INDEX CONCURRENTLY`` after the write that
crosses the size commits (not inside it: the build takes tens of seconds and would hold the store's
write lock), and named in the ``vector_indexes`` table once valid; until then the exact scan serves.

Below that size, a search restricted to a mission (and layers or kinds) does not sort every row by
its float32 inner product: per group it takes the best rows by the inner product of their
``halfvec`` copies (``vector_halves``: half the bytes, through a ``(model_id, mission, layer,
kind)`` B-tree, a bounded top-k instead of a full sort), then rescores those in float32
(:meth:`VectorPlanner.two_pass`; the SQLite store's int8 scan and rescoring, ADR 0049, in SQL).

The index serves a search restricted to that mission and to layers and kinds only (``vectors``
holds each record's mission, layer and kind); a search with any other filter (component, time,
operator, access …) stays exact, since an approximate index under a post-filter loses the rows a
filter keeps. HNSW is approximate: ``ef_search`` is :data:`EF_SEARCH_FACTOR` × the rows asked
for (at least :data:`EF_SEARCH_MIN`); ``benchmarks/bench_pull.py --store postgres`` reports its
recall against the exact scan.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from psycopg import sql

from mission_memory.records import LAYER_OF_KIND, Layer, RecordKind
from mission_memory.stores.filters import SearchFilter
from mission_memory.stores.sqlite_filters import filter_sql

__all__ = [
    "EF_SEARCH_FACTOR", "EF_SEARCH_MIN", "FIRST_PASS_FACTOR", "FIRST_PASS_MIN", "HALF_MAX", "HNSW_MIN_ROWS",
    "INDEX_BUILD_MEMORY", "INDEX_DEADLINE_SECONDS", "IndexBuild", "VectorPlanner", "half_text", "vector_text",
]

HNSW_MIN_ROWS = 40_000
"""Vectors of one model in one mission from which the mission is searched through its own HNSW
index; below, an exact scan (recall 1). Measured on real e5 embeddings (docs/adr/0084: 16,384
commit messages and document paragraphs, 20 real queries, the pull's per-layer-and-kind call, load
~18): exact p50 137 ms at 16k rows against 148 ms through the index (recall@60 0.97); at 50k
(real rows plus noisy copies) 473 against 189 ms (recall 0.96); at 100k 589 against 231 ms (recall
0.95). The exact scan is kept while it costs at most twice the index (recall 1 is worth that):
the ratio crosses 2 near 40k rows. Random vectors, HNSW's worst case, gave recall 0.41 at 100k."""
FIRST_PASS_MIN = 120
"""The fewest rows per group the ``halfvec`` first pass keeps for exact float32 rescoring."""
FIRST_PASS_FACTOR = 2
"""The ``halfvec`` first pass keeps this many times the rows asked for per group (at least
:data:`FIRST_PASS_MIN`). Measured on real e5 embeddings (docs/adr/0084: 16,384 real rows, 100k with
noisy copies, 20 real queries, the pull's best 60 per layer and kind): keeping 120 gave recall@60
1.0 against the float32 scan (a group of at most that many rows is exact by construction)."""
HALF_MAX = 65504.0
"""The largest finite ``halfvec`` value: the copy clips beyond it (the rescoring reads the float32)."""
EF_SEARCH_MIN = 100
"""The smallest HNSW candidate list (``hnsw.ef_search``)."""
EF_SEARCH_FACTOR = 4
"""``hnsw.ef_search`` is this many times the rows asked for (at most 1,000, pgvector's limit)."""

INDEX_BUILD_MEMORY = "512MB"
"""``maintenance_work_mem`` of one HNSW index build: pgvector builds far faster when the graph fits
in it (100k vectors of 384 dimensions take about 200 MB; the default 64 MB spills to disk)."""
INDEX_DEADLINE_SECONDS = 900.0
"""The ``statement_timeout`` of one HNSW index build (it runs once per mission, after the write that
crosses :data:`HNSW_MIN_ROWS` commits: longer than one ordinary statement's deadline, still bounded)."""

@dataclass(frozen=True)
class IndexBuild:
    """A mission's partial HNSW index to build (:meth:`VectorPlanner.build_index`): the vectors of
    ``model_id`` in ``mission``, of ``dim`` dimensions."""

    model_id: str
    mission: str
    dim: int


Row = tuple[str, str, str, float]
"""A dense hit as the planner returns it: ``(record id, layer, kind, cosine)``."""


class VectorPlanner:
    """Chooses exact scan or a mission's HNSW index for a dense search, and creates the indexes.

    Args:
        hnsw_min_rows: vectors of one model in one mission from which it gets an HNSW index.
    """

    def __init__(self, hnsw_min_rows: int = HNSW_MIN_ROWS) -> None:
        self.hnsw_min_rows = hnsw_min_rows

    @staticmethod
    def index_name(model_id: str, mission: str) -> str:
        """The partial index of ``mission``'s vectors of ``model_id`` (a hash: any names fit)."""
        return "vectors_hnsw_" + hashlib.sha256(f"{model_id}\0{mission}".encode()).hexdigest()[:24]

    def after_write(self, tx: Any, model_id: str, missions: set[str], dim: int) -> list[IndexBuild]:
        """The indexes to build once the caller's write transaction ``tx`` has committed: one for each
        of ``missions`` that has reached :attr:`hnsw_min_rows` vectors of ``model_id`` and has no
        valid index recorded. Builds nothing: a build inside the write would hold the store's write
        lock (every other writer waiting) for as long as it takes (tens of seconds at 40k vectors,
        docs/adr/0084); :meth:`build_index` runs it after the commit."""
        wanted = []
        for mission in sorted(missions):
            if tx.execute("SELECT 1 FROM vector_indexes WHERE model_id = %s AND mission = %s",
                          (model_id, mission)).fetchone():
                continue
            count = tx.execute("SELECT count(*) FROM vectors WHERE model_id = %s AND mission = %s",
                               (model_id, mission)).fetchone()[0]
            if int(count) >= self.hnsw_min_rows:
                wanted.append(IndexBuild(model_id, mission, dim))
        return wanted

    def build_index(self, conn: Any, build: IndexBuild) -> bool:
        """Build ``build``'s partial HNSW index by ``CREATE INDEX CONCURRENTLY`` and record it; whether
        it is now valid and recorded.

        ``conn`` is a connection in autocommit mode outside any transaction (``CONCURRENTLY`` cannot
        run in one). The build takes no lock that stops writers or readers; until it is recorded,
        :meth:`search` keeps the exact scan for the mission. A session advisory lock per index makes
        one process build it: another finding the lock taken returns False (that build will record
        it). An invalid index of that name (a build whose process ended or whose statement was
        cancelled half way) is dropped and built again. The build's ``statement_timeout`` is
        :data:`INDEX_DEADLINE_SECONDS`, its ``maintenance_work_mem`` :data:`INDEX_BUILD_MEMORY`.

        Raises:
            psycopg.Error: the build failed (the invalid index it leaves is replaced by the next).
        """
        name = self.index_name(build.model_id, build.mission)
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
        if not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
            return False
        try:
            if conn.execute("SELECT 1 FROM vector_indexes WHERE name = %s", (name,)).fetchone():
                return True
            state = conn.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", (name,)).fetchone()
            if state is not None and not state[0]:
                conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL("SET statement_timeout = {}").format(sql.Literal(f"{round(INDEX_DEADLINE_SECONDS)}s")))
            conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(INDEX_BUILD_MEMORY)))
            try:
                conn.execute(sql.SQL(
                    "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON vectors USING hnsw"
                    " ((embedding::vector({dim})) vector_ip_ops) WHERE model_id = {model} AND mission = {mission}"
                ).format(name=sql.Identifier(name), dim=sql.Literal(build.dim), model=sql.Literal(build.model_id),
                         mission=sql.Literal(build.mission)))
            finally:
                conn.execute("RESET statement_timeout")
                conn.execute("RESET maintenance_work_mem")
            recorded = conn.execute(  # recorded only once valid: a search reads it only then
                "INSERT INTO vector_indexes (name, model_id, mission, dim) SELECT %s, %s, %s, %s FROM pg_index"
                " WHERE indexrelid = to_regclass(%s) AND indisvalid ON CONFLICT DO NOTHING RETURNING 1",
                (name, build.model_id, build.mission, build.dim, name)).fetchone()
            return recorded is not None or bool(
                conn.execute("SELECT 1 FROM vector_indexes WHERE name = %s", (name,)).fetchone())
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    @staticmethod
    def indexed(conn: Any) -> list[tuple[str, str]]:
        """``(model id, mission)`` of every partial HNSW index, sorted."""
        rows = conn.execute("SELECT model_id, mission FROM vector_indexes ORDER BY model_id, mission").fetchall()
        return [(str(model), str(mission)) for model, mission in rows]

    def drop_other_models(self, tx: Any, model_id: str) -> None:
        """Drop the HNSW indexes of every model but ``model_id``."""
        for (name,) in tx.execute("SELECT name FROM vector_indexes WHERE model_id <> %s", (model_id,)).fetchall():
            tx.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(str(name))))
        tx.execute("DELETE FROM vector_indexes WHERE model_id <> %s", (model_id,))

    def search(
        self, conn: Any, query: npt.NDArray[np.float32], model_id: str, where: SearchFilter, limit: int,
        per_kind: bool,
    ) -> list[Row]:
        """The best ``limit`` vectors of ``model_id`` per layer (per layer and kind with ``per_kind``)
        among the records passing ``where``: through the mission's HNSW index when ``where`` names
        a mission that has one and no filter but the mission; else, with no filter but the mission,
        by :meth:`two_pass`; else exactly."""
        mission = where.filters.mission
        clauses, params = filter_sql(where, alias="r")
        condition = " AND ".join(clauses).replace("?", "%s")
        only_scope = all(spec.name == "mission" for spec, _ in where.active())
        if mission is not None and only_scope:
            found = conn.execute(  # a recorded index still valid (a model's indexes may be dropped meanwhile)
                "SELECT x.dim FROM vector_indexes x JOIN pg_index i ON i.indexrelid = to_regclass(x.name)"
                " WHERE x.model_id = %s AND x.mission = %s AND i.indisvalid", (model_id, mission)).fetchone()
            if found is not None and int(found[0]) == int(query.shape[0]):
                return self._hnsw(conn, query, model_id, mission, int(found[0]), where.layers, limit, per_kind)
            return self.two_pass(conn, query, model_id, mission, where.layers, limit, per_kind)
        return self.exact(conn, query, model_id, condition, params, limit, per_kind)

    def exact(
        self, conn: Any, query: npt.NDArray[np.float32], model_id: str, condition: str, params: list[Any],
        limit: int, per_kind: bool,
    ) -> list[Row]:
        """The exact best rows (:meth:`search`): every passing vector's inner product, ranked per group."""
        groups = "layer, kind" if per_kind else "layer"
        rows = conn.execute(  # the distance computed once per row, then ranked per group
            "SELECT id, layer, kind, -d FROM (SELECT id, layer, kind, d, row_number() OVER"
            f" (PARTITION BY {groups} ORDER BY d, seq) AS n FROM (SELECT r.seq, r.id, r.layer, r.kind,"
            " v.embedding <#> %s::vector AS d FROM vectors v JOIN records r ON r.seq = v.seq"
            f" WHERE v.model_id = %s AND {condition}) scored) ranked WHERE n <= %s",
            (vector_text(query), model_id, *params, limit),
        ).fetchall()
        return [(str(rid), str(layer), str(kind), float(score)) for rid, layer, kind, score in rows]

    @staticmethod
    def first_pass_sql(per_kind: bool) -> str:
        """The statement of :meth:`two_pass`; its parameters: the query (pgvector text), the groups'
        layers and kinds (``text[]``, kinds NULL without ``per_kind``), model id, mission, the query
        again, the rows kept per group, the rows returned per group."""
        kind = " AND h.kind = g.kind" if per_kind else ""
        return (
            "SELECT r.id, r.layer, r.kind, -d FROM (SELECT seq, d, row_number() OVER"
            " (PARTITION BY layer, kind ORDER BY d, seq) AS n FROM (SELECT c.seq, g.layer, g.kind,"
            " v.embedding <#> %s::vector AS d FROM unnest(%s::text[], %s::text[]) AS g(layer, kind)"
            " CROSS JOIN LATERAL (SELECT h.seq FROM vector_halves h WHERE h.model_id = %s AND h.mission = %s"
            f" AND h.layer = g.layer{kind} ORDER BY h.half <#> %s::halfvec, h.seq LIMIT %s) c"
            " JOIN vectors v ON v.seq = c.seq) rescored) best JOIN records r ON r.seq = best.seq WHERE n <= %s"
        )

    def two_pass(
        self, conn: Any, query: npt.NDArray[np.float32], model_id: str, mission: str, layers: Sequence[Layer],
        limit: int, per_kind: bool,
    ) -> list[Row]:
        """The exact best rows of ``mission`` (:meth:`search`) by a compact first pass and exact rescoring.

        For each group (layer, or layer and kind the mission holds), the best
        max(:data:`FIRST_PASS_MIN`, :data:`FIRST_PASS_FACTOR` × ``limit``) rows by the inner product
        of their ``halfvec`` copies (``vector_halves``, read through its ``(model_id, mission, layer,
        kind)`` B-tree, a bounded top-k per group instead of sorting every row), then their float32
        inner product, ranked per group: scores are the exact scan's; a row the half-precision ranking
        puts below the kept ones is missed (none at the measured sizes, docs/adr/0084)."""
        groups = self._groups(conn, mission, layers, per_kind)
        text = vector_text(query)
        rows = conn.execute(self.first_pass_sql(per_kind), (
            text, [layer for layer, _ in groups], [kind for _, kind in groups], model_id, mission, text,
            max(FIRST_PASS_MIN, FIRST_PASS_FACTOR * limit), limit,
        )).fetchall()
        return [(str(rid), str(layer), str(kind), float(score)) for rid, layer, kind, score in rows]

    @staticmethod
    def _groups(conn: Any, mission: str, layers: Sequence[Layer], per_kind: bool) -> list[tuple[str, str | None]]:
        """The ``(layer, kind)`` groups a search of ``mission`` ranks: per kind, only the kinds the
        mission holds (read by one index seek per kind); else ``(layer, None)`` per layer."""
        if not per_kind:
            return [(layer.value, None) for layer in layers]
        held = {str(row[0]) for row in conn.execute(
            "WITH RECURSIVE k(kind) AS (SELECT min(kind) FROM records WHERE mission = %s UNION ALL"
            " SELECT (SELECT min(kind) FROM records WHERE mission = %s AND kind > k.kind) FROM k"
            " WHERE k.kind IS NOT NULL) SELECT kind FROM k WHERE kind IS NOT NULL", (mission, mission)).fetchall()}
        return [(layer.value, kind.value) for layer in layers for kind in RecordKind
                if LAYER_OF_KIND[kind] is layer and kind.value in held]

    def _hnsw(
        self, conn: Any, query: npt.NDArray[np.float32], model_id: str, mission: str, dim: int,
        layers: Sequence[Layer], limit: int, per_kind: bool,
    ) -> list[Row]:
        """The best rows through the mission's partial HNSW index: one index scan per layer (and kind).

        Per kind, only the kinds the mission holds are scanned (read by one index seek per kind):
        a scan for a kind it lacks would walk the index to ``hnsw.max_scan_tuples`` finding nothing."""
        groups = self._groups(conn, mission, layers, per_kind)
        vector = sql.SQL("embedding::vector({})").format(sql.Literal(dim))
        out: list[Row] = []
        with conn.transaction():
            conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(
                sql.Literal(min(1000, max(EF_SEARCH_MIN, EF_SEARCH_FACTOR * limit)))))
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            for layer, kind in groups:
                rows = conn.execute(sql.SQL(
                    "SELECT r.id, r.layer, r.kind, -d FROM (SELECT v.seq, {vector} <#> %s::vector({dim}) AS d"
                    " FROM vectors v WHERE v.model_id = %s AND v.mission = %s AND v.layer = %s"
                    " AND (%s::text IS NULL OR v.kind = %s) ORDER BY {vector} <#> %s::vector({dim}) LIMIT %s) top"
                    " JOIN records r ON r.seq = top.seq ORDER BY d, r.seq"
                ).format(vector=vector, dim=sql.Literal(dim)), (
                    vector_text(query), model_id, mission, layer, kind, kind, vector_text(query), limit,
                )).fetchall()
                out.extend((str(rid), str(lay), str(kin), float(score)) for rid, lay, kin, score in rows)
        return out


def vector_text(vector: npt.NDArray[np.float32]) -> str:
    """pgvector's text form of a float32 vector; each value's shortest repr gives back the same float32."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


def half_text(vector: npt.NDArray[np.float32]) -> str:
    """pgvector's text form of ``vector`` as ``halfvec``: each value rounded to float16, clipped to
    ±:data:`HALF_MAX` (the first pass only ranks by it; scores come from the float32 vector)."""
    half = np.clip(np.asarray(vector, dtype=np.float32), -HALF_MAX, HALF_MAX).astype(np.float16)
    return "[" + ",".join(repr(float(x)) for x in half) + "]"
