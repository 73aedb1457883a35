"""Conversational memory: query-time variants of the dense and BM25 scores on REALTALK, from one built store.

Where ``bench_dialog_recall.py`` scores the pull as it is, this benchmark asks what the two
first-stage signals could give at best when combined otherwise, without re-embedding a turn: every
turn's stored vector is read, each question is embedded once, and its cosine to *every* turn of its
conversation (no dense window) and its BM25 score (the store's own FTS5 index, top 300) are
combined by each variant below. Same data, ids and metric as ``bench_dialog_recall.py`` (REALTALK,
Lee et al., 2025; fractional recall over evidence turns at 5, 10 and 25; one mission per
conversation); the store is the one that benchmark builds under ``--data-root`` (built here when
absent).

Variants (``s`` = cosine, ``b`` = BM25, per conversation; ``s⁻``/``s⁺`` the previous/next turn's
cosine in the same session):

* ``dense``, ``bm25``: each signal alone;
* ``convex w=W b=R wb=B``: the pull's fusion (:func:`mission_memory.retrieval.ranking.fuse`'s
  ``convex``): ``max(0, 1 − (best − s)/W)`` for cosines within ``W`` of the best, plus
  ``B × b / best_b`` for BM25 scores of at least ``R × best_b`` (the defaults are W 0.045, R 0.35,
  B 1);
* ``neighbours λ``: ``s + λ × max(s⁻, s⁺)`` (a turn scored with the turns around it; score
  propagation over the conversation, instead of embedding the neighbourhood, docs/adr/0070);
* ``session μ``: ``s + μ × mean of the session's three best cosines`` (hierarchical retrieval:
  session first, then turn; Wu et al., "LongMemEval", ICLR 2025, measured session and round keys);
* ``rocchio k β``: the dense search again from ``q + β × mean of the k best turns`` (Rocchio, 1971;
  what ADR 0050 does for a cross-script task);
* ``learned, two folds by conversation``: a logistic model over ten features of the fused list's
  first 100 turns (the fused score, the cosine below the best, the log of its dense rank, the BM25
  score as a share of the best and whether BM25 found it, the neighbours' and the session's best
  cosines below the best, the turn's length in words, whether it and the turn before it end with a
  question mark), fitted on the even conversations and scored on the odd ones and the other way
  round (pointwise learning to rank; Liu, "Learning to Rank for Information Retrieval", 2009);
* ``ceiling … top N``: not a ranking but its bound: the recall a perfect reranker of the union of
  the dense and BM25 lists' first ``N`` turns would reach (evidence found there, at most ``k``);
* ``centred a``: cosines after subtracting ``a ×`` the conversation's mean vector from the turns
  and the question (the embedding space's common direction removed; Mu and Viswanath, "All-but-the-
  Top", ICLR 2018), alone and fused as the pull fuses.

``--passages NAME,...`` also embeds every turn again from another passage text and scores its
cosines alone (``NAME dense``) and fused (``NAME + bm25``); the store's vectors are those of
:attr:`mission_memory.records.Record.embedding_text` (for an event: its title ``[type] sector:
first line`` and then its text, here ``Speaker: message`` twice after the conversation's name):

* ``text``: the record's text alone (``Speaker: message``);
* ``no-speaker``: the message without its speaker (what an intake that keeps the speaker only as the
  event's ``source`` would embed);
* ``type-text``: ``[message] Speaker: message`` (the title's type, not the conversation's name, and
  the message once).

Each takes one embedding pass over the 8,944 turns (about three minutes on two cores).

Usage::

    .venv/bin/python benchmarks/bench_dialog_variants.py --realtalk /path/to/REALTALK [--data-root DIR]
        [--passages text,no-speaker,type-text] [--json]

Prints one row per variant, best R@5 first; writes ``benchmarks/out/bench_dialog_variants.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mission_memory.api import Memory
from mission_memory.records import Layer, Record
from mission_memory.retrieval.query_terms import query_terms
from mission_memory.stores.filters import QueryFilters, SearchFilter

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dialog_recall import evidence_ids, opened_store, turns_of  # noqa: E402
from bench_pull import log  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "out"
KS = (5, 10, 25)
BM25_DEPTH = 300
CEILING_DEPTHS = (10, 25, 50)
_TURN = re.compile(r"D(\d+):(\d+)$")

Scores = npt.NDArray[np.float64]


def convex(s: Scores, b: Scores, window: float = 0.045, ratio: float = 0.35, bm25_weight: float = 1.0) -> Scores:
    """The pull's convex fusion of one conversation's full cosine and BM25 arrays (see the module docstring)."""
    best = float(s.max())
    dense = np.where(s >= best - window, 1.0 - (best - s) / window, 0.0)
    top_b = float(b.max())
    sparse = np.where(b >= ratio * top_b, b / top_b, 0.0) if top_b > 0 else np.zeros_like(b)
    return dense + bm25_weight * sparse + 1e-6 * s  # the cosine breaks ties, as a per-kind rank would


def unit(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    out: npt.NDArray[np.float64] = x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)
    return out


class Conversation:
    """One conversation's turns in order: record ids, event ids, sessions and vectors (``(n, 384)``)."""

    def __init__(self, memory: Memory, name: str, rows: list[tuple[str, str]]) -> None:
        ordered = sorted(rows, key=lambda r: tuple(int(x) for x in _TURN.search(r[1]).groups()))  # type: ignore[union-attr]
        self.ids = [rid for rid, _ in ordered]
        self.event_ids = [eid for _, eid in ordered]
        self.session = np.array([int(_TURN.search(e).group(1)) for e in self.event_ids])  # type: ignore[union-attr]
        vectors = memory.store.vectors_for(self.ids, memory.embedder.model_id)
        missing = [rid for rid in self.ids if rid not in vectors]
        if missing:
            raise SystemExit(f"{name}: {len(missing)} turns have no vector of {memory.embedder.model_id}")
        self.vectors = np.stack([vectors[rid] for rid in self.ids]).astype(np.float64)
        self.position = {rid: i for i, rid in enumerate(self.ids)}
        self.where = SearchFilter((Layer.DOMAIN,), QueryFilters(mission=name))
        same_prev = np.concatenate([[False], self.session[1:] == self.session[:-1]])
        self.same_prev, self.same_next = same_prev, np.concatenate([same_prev[1:], [False]])
        self.mean = self.vectors.mean(axis=0)
        records = memory.store.get(self.ids)
        self.texts = [records[rid].text for rid in self.ids]
        self.words = np.array([len(t.split()) for t in self.texts], dtype=np.float64)

    def neighbour_max(self, s: Scores) -> Scores:
        prev = np.where(self.same_prev, np.roll(s, 1), -np.inf)
        nxt = np.where(self.same_next, np.roll(s, -1), -np.inf)
        best = np.maximum(prev, nxt)
        return np.where(np.isfinite(best), best, s)

    def session_best(self, s: Scores, top: int = 3) -> Scores:
        out = np.empty_like(s)
        for sid in np.unique(self.session):
            mask = self.session == sid
            out[mask] = np.sort(s[mask])[::-1][:top].mean()
        return out


PASSAGES: dict[str, Callable[[Record], str]] = {
    "text": lambda r: r.text,
    "no-speaker": lambda r: r.text.split(": ", 1)[1] if ": " in r.text else r.text,
    "type-text": lambda r: f"[{r.attributes.get('event_type', 'message')}] {r.text}",
}
"""Other passage texts of a turn's record for ``--passages`` (the stored vectors embed ``embedding_text``)."""


def variants(conv: Conversation, q: npt.NDArray[np.float64], s: Scores, b: Scores) -> dict[str, Scores]:
    """Every variant's scores for one question (higher is better)."""
    out: dict[str, Scores] = {"dense": s, "bm25": b + 1e-6 * s}
    for window in (0.045, 0.07, 0.1):
        for bw in (0.5, 1.0):
            out[f"convex w={window} b=0.35 wb={bw}"] = convex(s, b, window, 0.35, bw)
    near = conv.neighbour_max(s)
    for lam in (0.1, 0.3):
        out[f"neighbours {lam}"] = s + lam * near
        out[f"neighbours {lam} + bm25"] = convex(s + lam * near, b, 0.045 * (1 + lam))
    sessions = conv.session_best(s)
    for mu in (0.5, 1.0):
        out[f"session {mu}"] = s + mu * sessions
        out[f"session {mu} + bm25"] = convex(s + mu * sessions, b, 0.045 * (1 + mu))
    order = np.argsort(-s)
    for k, beta in ((5, 0.2), (5, 0.4)):
        moved = unit(q + beta * conv.vectors[order[:k]].mean(axis=0))
        out[f"rocchio {k} {beta}"] = conv.vectors @ moved
    for a in (0.5, 0.8):
        centred = unit(conv.vectors - a * conv.mean) @ unit(q - a * conv.mean)
        out[f"centred {a}"] = centred
        out[f"centred {a} + bm25"] = convex(centred, b, 0.045 / (1 - 0.5 * a))
    return out


POOL = 100
"""Turns of the fused list the learned variant re-orders."""


def pool_features(conv: Conversation, s: Scores, b: Scores, fused: Scores, pool: npt.NDArray[np.int64]) -> Scores:
    """The learned variant's features of the turns ``pool`` (shape ``(len(pool), 10)``, see the module docstring)."""
    rank = np.empty(len(s))
    rank[np.argsort(-s)] = np.arange(len(s))
    top_b = float(b.max()) or 1.0
    best = float(s.max())
    asks = np.array([t.rstrip().endswith("?") for t in conv.texts], dtype=np.float64)
    asked_before = np.where(conv.same_prev, np.roll(asks, 1), 0.0)
    return np.stack([
        fused[pool], s[pool] - best, np.log1p(rank[pool]), b[pool] / top_b, (b[pool] > 0).astype(np.float64),
        conv.neighbour_max(s)[pool] - best, conv.session_best(s)[pool] - best, np.log1p(conv.words[pool]),
        asks[pool], asked_before[pool],
    ], axis=1)


def fit_logistic(x: Scores, y: Scores, l2: float = 1.0, steps: int = 500) -> tuple[Scores, Scores, Scores]:
    """A class-balanced L2 logistic regression by gradient descent on standardised ``x`` ((n, d)).

    Returns:
        The weights (d,), and the mean and scale (d,) the features are standardised by.
    """
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    weight = np.where(y > 0.5, 0.5 / max(y.mean(), 1e-9), 0.5 / max(1 - y.mean(), 1e-9)) / len(y)
    beta = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -30, 30)))
        grad = z.T @ (weight * (p - y)) + l2 / len(y) * np.r_[beta[:-1], 0.0]
        beta -= 2.0 * grad
    return beta, mean, scale


def learned_recall(pools: list[tuple[int, Scores, Scores, set[str], list[str]]]) -> dict[int, float]:
    """Summed recall at :data:`KS` of the learned variant: fitted on one half of the conversations, scored on the other."""
    sums = dict.fromkeys(KS, 0.0)
    for held_out in (0, 1):
        train = [(f, y) for c, f, y, _, _ in pools if c % 2 != held_out]
        beta, mean, scale = fit_logistic(np.vstack([f for f, _ in train]), np.concatenate([y for _, y in train]))
        for c, f, _, known, event_ids in pools:
            if c % 2 == held_out:
                order = np.argsort(-(((f - mean) / scale) @ beta[:-1]), kind="stable")
                for k in KS:
                    sums[k] += len(known & {event_ids[i] for i in order[:k]}) / len(known)
    return sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realtalk", type=Path, required=True, help="REALTALK checkout or bare clone")
    parser.add_argument("--data-root", type=Path, default=Path("/tmp/dialog-recall"),
                        help="the folder bench_dialog_recall.py builds its store in (DATA_ROOT/store)")
    parser.add_argument("--passages", default="", help=f"comma-separated passage variants: {', '.join(PASSAGES)}")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    passages = [p.strip() for p in args.passages.split(",") if p.strip()]
    unknown = [p for p in passages if p not in PASSAGES]
    if unknown:
        raise SystemExit(f"--passages: unknown {', '.join(unknown)} (known: {', '.join(PASSAGES)})")

    memory, conversations = opened_store(args.realtalk, args.data_root)
    data = args.data_root / "store"
    by_mission: dict[str, list[tuple[str, str]]] = {}
    alternative: dict[str, dict[str, npt.NDArray[np.float64]]] = {p: {} for p in passages}
    for batch in memory.store.iterate():
        turns = [r for r in batch if r.layer is Layer.DOMAIN and _TURN.search(str(r.attributes.get("event_id", "")))]
        for record in turns:
            by_mission.setdefault(record.provenance.mission, []).append((record.id, str(record.attributes["event_id"])))
        for p in passages:
            if turns:
                vectors = memory.embedder.embed_passages([PASSAGES[p](r) for r in turns]).astype(np.float64)
                alternative[p].update({r.id: vectors[i] for i, r in enumerate(turns)})
    if passages:
        log(f"embedded {sum(len(v) for v in by_mission.values())} turns again for {', '.join(passages)}")
    sums: dict[str, dict[int, float]] = {}
    pools: list[tuple[int, Scores, Scores, set[str], list[str]]] = []
    asked = 0
    for number, (name, raw) in enumerate(conversations):
        if name not in by_mission:
            raise SystemExit(f"{data}: conversation {name} is not stored (build the store with bench_dialog_recall.py)")
        conv = Conversation(memory, name, by_mission[name])
        stored = {t["dia_id"] for t in turns_of(raw)}
        for question in (x for x in raw.get("qa", []) if x.get("evidence")):
            known = {f"{name}:{e}" for e in evidence_ids(question["evidence"]) if e in stored}
            if not known:
                continue
            asked += 1
            q = memory.embedder.embed_query(question["question"]).astype(np.float64)
            s = conv.vectors @ q
            b = np.zeros(len(conv.ids))
            hits = memory.store.bm25_search_by_layer(query_terms(question["question"]), conv.where, BM25_DEPTH)
            for hit in hits.get(Layer.DOMAIN, []):
                if hit.record_id in conv.position:
                    b[conv.position[hit.record_id]] = hit.score
            scored = variants(conv, q, s, b)
            fused = scored["convex w=0.045 b=0.35 wb=1.0"]
            pool = np.argsort(-fused, kind="stable")[:POOL]
            labels = np.array([conv.event_ids[i] in known for i in pool], dtype=np.float64)
            pools.append((number, pool_features(conv, s, b, fused, pool), labels, known,
                          [conv.event_ids[i] for i in pool]))
            for p in passages:
                other = np.stack([alternative[p][rid] for rid in conv.ids]) @ q
                scored[f"{p} dense"] = other
                scored[f"{p} + bm25"] = convex(other, b)
            for vname, scores in scored.items():
                order = np.argsort(-scores, kind="stable")
                row = sums.setdefault(vname, dict.fromkeys(KS, 0.0))
                for k in KS:
                    row[k] += len(known & {conv.event_ids[i] for i in order[:k]}) / len(known)
            for depth in CEILING_DEPTHS:  # a perfect reranker of the two lists' first `depth` turns
                reachable = {conv.event_ids[i] for i in np.argsort(-s)[:depth]}
                reachable |= {conv.event_ids[i] for i in np.argsort(-b)[:depth] if b[i] > 0}
                found = len(known & reachable)
                row = sums.setdefault(f"ceiling: perfect reranking of dense ∪ bm25 top {depth}", dict.fromkeys(KS, 0.0))
                for k in KS:
                    row[k] += min(found, k) / len(known)
        log(f"{name}: {asked} questions so far")
    sums["learned, two folds by conversation"] = learned_recall(pools)
    figures = {n: {f"R@{k}": round(100 * v[k] / max(asked, 1), 1) for k in KS} for n, v in sums.items()}
    ranked: list[tuple[str, dict[str, Any]]] = sorted(figures.items(), key=lambda kv: -kv[1]["R@5"])
    OUT_DIR.mkdir(exist_ok=True)
    result = {"questions": asked, "figures": dict(ranked)}
    (OUT_DIR / "bench_dialog_variants.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"REALTALK: {asked} questions; full cosines and BM25 top {BM25_DEPTH}, per conversation")
    print("| variant | R@5 | R@10 | R@25 |")
    print("|---|---|---|---|")
    for vname, fig in ranked:
        print(f"| {vname} | {fig['R@5']} | {fig['R@10']} | {fig['R@25']} |")


if __name__ == "__main__":
    main()
