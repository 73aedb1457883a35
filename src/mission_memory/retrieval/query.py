"""The pull query (docs/design.md §4): task description in, token-budgeted digest out.

Named steps, each a function:

1. :func:`search_candidates` — search the layers in scope with both retrievers under the same
   structured filters: BM25 (one query, split by layer) starts at once and runs while the task is
   embedded, then the dense search (one pass over all vectors, split by layer and record kind,
   docs/adr/0050) uses the vector; a task in another script than the records it finds (Ukrainian
   over English) has its dense search run again from a vector moved toward the best hits (Rocchio
   feedback, :mod:`~mission_memory.retrieval.relevance_feedback`);
   optionally also take the most critical records matching the filters; read every hit's priors;
   drop bare merge commits.
2. :func:`rank_candidates` — the ranking policy: per layer and record kind, cut each list to the
   plausibly relevant and fuse the lists (convex score fusion by default, ADR 0031; weights
   fitted by ``ranking tune``, ADR 0032); apply the record priors (criticality; superseded
   decisions demoted) to every candidate.
3. :func:`select_candidates` — read the best in full, weight down generated documents and commits
   a later one reverted or overtook (docs/adr/0068), fold each ADR's sections into its decision
   record (one unit per decision, docs/adr/0066), put records the task names first, put each
   stale record's current successor in its place (:mod:`~mission_memory.retrieval.staleness`), drop
   near-duplicates keeping the newest (:mod:`~mission_memory.retrieval.near_duplicates`).
4. Rendering — pack by relevance until the token budget (:func:`~mission_memory.retrieval.digest.pack_digest`),
   count what was omitted, and log the query as a retrieval event.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from mission_memory.decisions import DecisionAttributes
from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError
from mission_memory.fence import new_nonce
from mission_memory.operations.escalation import CRITICAL_CRITICALITY
from mission_memory.operations.event_groups import group_key_of_record
from mission_memory.records import Layer, RecordKind, source_key_for
from mission_memory.retrieval.calibration import CALIBRATION, Calibration, calibrate
from mission_memory.retrieval.candidates import CandidateLists
from mission_memory.retrieval.commit_successors import replaced_among
from mission_memory.retrieval.digest import Digest, capped_note, pack_digest
from mission_memory.retrieval.filters import QueryFilters, Scope, layers_in_scope
from mission_memory.retrieval.near_duplicates import suppress_near_duplicates
from mission_memory.retrieval.query_terms import query_terms
from mission_memory.retrieval.ranking import (
    Candidate,
    RankingParams,
    after_the_records_they_name,
    apply_priors,
    demote_boilerplate,
    fold_sections,
    fuse,
    is_superseded,
    tuned_params,
)
from mission_memory.retrieval.relevance_feedback import (
    feedback_terms,
    is_cross_script,
    rocchio_query,
    written_in_cyrillic,
)
from mission_memory.retrieval.staleness import replace_stale
from mission_memory.retrieval.timeline_section import digest_sections
from mission_memory.retrieval.triage import triage_for
from mission_memory.retrieval_events import Client, NewRetrievalEvent
from mission_memory.stores.base import Hit, MemoryStore, RecordPriors
from mission_memory.stores.filters import SearchFilter, filter_columns, matches
from mission_memory.stores.write_path import vector_backlog
from mission_memory.tokens import Tokenizer
from mission_memory.trackers.keys import extract_tracker_keys

__all__ = [
    "MAX_TASK_CHARS",
    "fuse_per_kind",
    "named_references",
    "rank_candidates",
    "run_query",
    "search_candidates",
    "select_candidates",
]

MAX_TASK_CHARS = 20_000
_PER_LIST = 60
_HEAD_SPARE = 30
"""Ranked candidates read beyond ``max_entries`` for selection to drop from (duplicates, stale records,
handover notes): at least this many, and as many as ``max_entries`` at a larger cap (docs/adr/0067)."""

_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mm-pull")


def run_query(
    *,
    store: MemoryStore,
    embedder: Embedder,
    tokenizer: Tokenizer,
    task_description: str,
    scope: Scope,
    token_budget: int,
    filters: QueryFilters,
    max_entry_tokens: int,
    max_entries: int,
    params: RankingParams | None = None,
    log_event: bool = True,
    client: Client = Client.API,
    session_id: str | None = None,
    operator: str | None = None,
    scope_note: str | None = None,
    timeline: bool = False,
    now: datetime | None = None,
) -> Digest:
    """Answer one pull query; see the module docstring for the steps.

    Args:
        task_description: the task or situation, any language, at most :data:`MAX_TASK_CHARS`.
        scope: the layers to search.
        token_budget: the digest's bound, in tokens.
        filters: structured restrictions.
        max_entry_tokens: cap on one entry's excerpt, in tokens.
        max_entries: at most this many relevant candidates are considered.
        log_event: log the query as a retrieval event (never on a read-only store).
        client, session_id, operator: who asked and from where, for the retrieval event.
        scope_note: one line for the digest header saying which missions the query answers from.
        timeline: put the crisis timeline section first even in normal mode (it is there whenever
            the mission is degraded; :func:`~mission_memory.retrieval.timeline_section.digest_sections`).
        now: the clock escalation, triage, the timeline and ages are evaluated at (timezone-aware;
            default: now), e.g. the time of a replayed history (docs/adr/0058).

    Raises:
        InputError: empty or oversized task description, budget < 1.
        BudgetError: the budget cannot hold the digest header.
    """
    started = time.perf_counter()
    task = task_description.strip()
    if not task:
        raise InputError("task_description is empty: describe the task or situation in a sentence")
    if len(task) > MAX_TASK_CHARS:
        raise InputError(f"task_description has {len(task)} characters; at most {MAX_TASK_CHARS} are accepted")
    if token_budget < 1:
        raise InputError(f"token_budget must be a positive number of tokens, got {token_budget}")
    params = params or tuned_params(store)
    layers = layers_in_scope(scope)
    where = SearchFilter(layers, filters)
    clock = now or datetime.now(UTC)
    triage = triage_for(store, filters.mission, now=clock)  # docs/design.md §7: degraded mode triages by criticality
    lists = triage.widen(store, search_candidates(store, embedder, task, where, params), where, task)
    ranked = triage.rescore(rank_candidates(lists, layers, params), lists, params)
    candidates, duplicates = select_candidates(store, embedder.model_id, task, where, ranked, params, max_entries)
    candidates = triage.annotate(candidates)
    capped = _capped_critical(store, ranked, candidates, lists, max_entries)
    cap_left = _left_by_the_cap(ranked, candidates, duplicates, max_entries)

    nonce = new_nonce()
    sections = digest_sections(  # docs/design.md §7: the crisis timeline, when degraded or asked for
        store, degraded_mission=triage.mission if triage.degraded else None, asked_mission=filters.mission,
        layers=layers, requested=timeline, nonce=nonce, tokenizer=tokenizer, token_budget=token_budget, now=clock,
    )
    text, entries, tokens_used, omitted = pack_digest(
        task, scope.value, candidates, token_budget, tokenizer, max_entry_tokens, layers, now=clock,
        header_lines=(*([scope_note] if scope_note else []), *triage.header_lines()), sections=sections, nonce=nonce,
        footer_note="\n".join(note for note in (capped_note(*capped, max_entries, client.value), triage.footer_line(candidates),
                                                 _queue_note(store, embedder.model_id, layers, clock, filters.mission)) if note),
        cap_left=cap_left, cap=max_entries,
    )
    duration_ms = (time.perf_counter() - started) * 1000
    event_id = ""
    if log_event and not store.read_only:  # a read-only store answers without logging the query
        missions = sorted({e.record.provenance.mission for e in entries})
        event_id = store.log_retrieval_event(
            NewRetrievalEvent(
                query=task,
                scope=scope.value,
                filters=filters.as_dict(),
                token_budget=token_budget,
                tokens_used=tokens_used,
                record_ids=tuple(e.record.id for e in entries),
                scores=tuple(round(e.score, 4) for e in entries),
                omitted=omitted,
                duration_ms=duration_ms,
                model_id=embedder.model_id,
                session_id=session_id,
                operator=operator,
                mission=filters.mission or (missions[0] if len(missions) == 1 else None),
                client=client,
            )
        ).id
    return Digest(
        query=task,
        scope=scope.value,
        token_budget=token_budget,
        filters=filters.as_dict(),
        entries=tuple(entries),
        omitted=omitted,
        duplicates_suppressed=duplicates,
        tokens_used=tokens_used,
        text=text,
        retrieval_event_id=event_id,
        duration_ms=duration_ms,
        model_id=embedder.model_id,
    )


_BACKLOG_SECONDS = 10.0
"""A pull reuses the vector backlog counted at most this long ago: counting and dating it cost about
260 ms at 100k records under load (``benchmarks/bench_vector_backlog.py``, docs/adr/0063)."""
_BACKLOG_READ = 1000
"""Records without a vector a pull reads to date the oldest waiting event (the queue's front)."""


def _queue_note(store: MemoryStore, model_id: str, layers: Sequence[Layer], now: datetime, mission: str | None) -> str:
    """The footer's line saying how far behind the event vector queue is, when events of the mission
    asked (None: of any) wait for their vector and the domain layer is searched (issue 21); else empty."""
    if Layer.DOMAIN not in layers:
        return ""
    line = vector_backlog(store, model_id, read=_BACKLOG_READ, max_age_seconds=_BACKLOG_SECONDS,
                          mission=mission).queue_line(now)
    return f"_Event vector queue: {line}._" if line else ""


def _left_by_the_cap(ranked: Sequence[Candidate], selected: Sequence[Candidate], duplicates: int,
                     max_entries: int) -> int:
    """How many ranked candidates the entry cap left unconsidered (0 when fewer than ``max_entries``
    were selected): those neither selected, nor folded into a selected decision, nor dropped as
    near-duplicates (docs/adr/0067)."""
    if len(selected) < max_entries:
        return 0
    shown = {c.record_id for c in selected} | {s for c in selected for s in c.sections}
    return max(0, sum(1 for c in ranked if c.record_id not in shown) - duplicates)


def _capped_critical(
    store: MemoryStore, ranked: Sequence[Candidate], selected: Sequence[Candidate], lists: CandidateLists,
    max_entries: int,
) -> tuple[int, int]:
    """Critical domain events among the candidates that no selected entry shows or stands for, only when
    the entry cap was reached: ``(events, distinct kinds)`` (docs/adr/0058). Resolved events have
    criticality 0 and do not count."""
    if len(selected) < max_entries:
        return 0, 0
    shown = {c.record_id for c in selected}
    critical = [c.record_id for c in ranked[:200] if c.record_id not in shown
                and (p := lists.priors.get(c.record_id)) is not None
                and p.kind is RecordKind.DOMAIN_EVENT and p.criticality >= CRITICAL_CRITICALITY]
    if not critical:
        return 0, 0
    kept = {group_key_of_record(c.record) for c in selected if c.record is not None}
    records = store.get(critical)
    left = [k for rid in critical if rid in records and (k := group_key_of_record(records[rid])) not in kept]
    return len(left), len(set(left))


def search_candidates(
    store: MemoryStore, embedder: Embedder, task: str, where: SearchFilter, params: RankingParams
) -> CandidateLists:
    """Step 1, candidate search: dense and BM25 hits (and, when asked, the most critical records).

    BM25 (and the critical records) run on the worker pool while the task is embedded, and the
    dense search follows the embedding; each retriever covers every layer in scope in one pass.
    Bare merge commits ("Merge branch 'x'") say nothing of their own and would crowd the rank
    lists, so they leave the lists here.
    """
    terms = query_terms(task)
    # What needs no query vector runs while the task is embedded (docs/adr/0047): BM25 with its
    # hits' priors, and the critical records.
    bm25_future = _pool.submit(_bm25_with_priors, store, terms, where)
    critical_future = (
        _pool.submit(store.most_critical, where, params.critical_candidates) if params.critical_candidates else None
    )
    query_vector = embedder.embed_query(task)
    dense_hits: dict[Layer, list[Hit]] = store.dense_search_by_layer(
        query_vector, embedder.model_id, where, _PER_LIST, per_kind=params.per_kind_candidates
    )
    if params.per_kind_candidates:
        dense_hits = {layer: _within_dense_window(hits, params.dense_window) for layer, hits in dense_hits.items()}
    bm25_hits, priors = bm25_future.result()
    critical_hits = critical_future.result() if critical_future is not None else []
    priors = {
        **priors,
        **store.priors_of(
            [h.record_id for hits in (*dense_hits.values(), critical_hits) for h in hits if h.record_id not in priors]
        ),
    }
    if params.vector_feedback_docs > 0:  # docs/adr/0050: a task in another script than its records
        moved = _rocchio_dense(store, embedder.model_id, terms, where, query_vector, dense_hits, priors, params)
        if moved is not None:
            dense_hits = moved
            priors = {**priors, **store.priors_of(
                [h.record_id for hits in dense_hits.values() for h in hits if h.record_id not in priors])}
    if params.feedback_docs > 0:
        expanded = _cross_script_feedback(store, terms, where, dense_hits, priors, params)
        if expanded is not None:
            bm25_hits, more_priors = expanded
            priors = {**more_priors, **priors}

    def by_kind(hits: list[Hit]) -> dict[RecordKind, list[Hit]]:
        out: dict[RecordKind, list[Hit]] = {}
        for h in hits:
            prior = priors.get(h.record_id)
            if prior is not None and not prior.bare_merge:
                out.setdefault(prior.kind, []).append(h)
        return out

    in_dense = {h.record_id for hits in dense_hits.values() for h in hits}
    outside = [h.record_id for hits in bm25_hits.values() for h in hits if h.record_id not in in_dense]
    embedded = store.vectors_for(outside, embedder.model_id) if outside else {}
    critical_by_layer: dict[Layer, list[Hit]] = {}
    for h in critical_hits:
        if h.record_id in priors:
            critical_by_layer.setdefault(priors[h.record_id].layer, []).append(h)
    return CandidateLists(
        dense={layer: by_kind(hits) for layer, hits in dense_hits.items()},
        bm25={layer: by_kind(hits) for layer, hits in bm25_hits.items()},
        critical={layer: by_kind(hits) for layer, hits in critical_by_layer.items()},
        priors=priors,
        unembedded=frozenset(rid for rid in outside if rid not in embedded),
        bm25_floor={layer: hits[-1].score for layer, hits in bm25_hits.items() if len(hits) >= _PER_LIST},
    )


def _within_dense_window(hits: list[Hit], window: float) -> list[Hit]:
    """The per-kind dense hits fusion will keep: those within ``window`` of their kind's best
    (:func:`~mission_memory.retrieval.ranking.fuse` cuts the same way), so that priors are read
    only for them (docs/adr/0050). Commits are all kept: a bare merge commit that is its kind's
    best leaves the list with its priors, and the cut then starts from the next commit."""
    best: dict[RecordKind, float] = {}
    for h in hits:  # best first
        if h.kind is not None:
            best.setdefault(h.kind, h.score)
    return [h for h in hits if h.kind is None or h.kind is RecordKind.COMMIT or h.score >= best[h.kind] - window]


def _feedback_records(
    store: MemoryStore, terms: list[str], dense_hits: dict[Layer, list[Hit]], priors: dict[str, RecordPriors],
    count: int,
) -> list[tuple[Hit, str]] | None:
    """The ``count`` best dense hits (bare merges left out) with their title and text, when the task
    is in another script than they are (:func:`~mission_memory.retrieval.relevance_feedback.is_cross_script`);
    else None."""
    if not written_in_cyrillic(terms):  # decided without reading any record
        return None
    best = sorted(
        (h for hits in dense_hits.values() for h in hits
         if h.record_id in priors and not priors[h.record_id].bare_merge),
        key=lambda h: -h.score,
    )[:count]
    records = store.get([h.record_id for h in best])
    found = [(h, f"{records[h.record_id].title}\n{records[h.record_id].text}") for h in best if h.record_id in records]
    return found if is_cross_script(terms, [text for _, text in found]) else None


def _rocchio_dense(
    store: MemoryStore,
    model_id: str,
    terms: list[str],
    where: SearchFilter,
    query_vector: npt.NDArray[np.float32],
    dense_hits: dict[Layer, list[Hit]],
    priors: dict[str, RecordPriors],
    params: RankingParams,
) -> dict[Layer, list[Hit]] | None:
    """The dense search again with the query vector moved toward the best dense hits, for a task in
    another script than they are (:func:`~mission_memory.retrieval.relevance_feedback.rocchio_query`,
    docs/adr/0050); None when it does not apply."""
    found = _feedback_records(store, terms, dense_hits, priors, params.vector_feedback_docs)
    if found is None:
        return None
    vectors = store.vectors_for([h.record_id for h, _ in found], model_id)
    if not vectors:
        return None
    moved = rocchio_query(query_vector, list(vectors.values()), params.vector_feedback_weight)
    hits = store.dense_search_by_layer(moved, model_id, where, _PER_LIST, per_kind=params.per_kind_candidates)
    if params.per_kind_candidates:
        hits = {layer: _within_dense_window(layer_hits, params.dense_window) for layer, layer_hits in hits.items()}
    return hits


def _cross_script_feedback(
    store: MemoryStore,
    terms: list[str],
    where: SearchFilter,
    dense_hits: dict[Layer, list[Hit]],
    priors: dict[str, RecordPriors],
    params: RankingParams,
) -> tuple[dict[Layer, list[Hit]], dict[str, RecordPriors]] | None:
    """BM25 again with feedback terms from the best dense hits, for a task in another script than
    the records it finds (:func:`~mission_memory.retrieval.relevance_feedback.feedback_terms`); None
    when it does not apply."""
    found = _feedback_records(store, terms, dense_hits, priors, params.feedback_docs)
    if found is None:
        return None
    texts = [text for _, text in found]
    extra = [t for t in feedback_terms(texts, [h.score for h, _ in found], params.feedback_terms) if t not in terms]
    return _bm25_with_priors(store, [*terms, *extra], where)


def _bm25_with_priors(
    store: MemoryStore, terms: list[str], where: SearchFilter
) -> tuple[dict[Layer, list[Hit]], dict[str, RecordPriors]]:
    """BM25 hits of each layer and their records' priors (one task for the pull's worker pool)."""
    hits = store.bm25_search_by_layer(terms, where, _PER_LIST)
    return hits, store.priors_of([h.record_id for layer_hits in hits.values() for h in layer_hits])


def fuse_per_kind(lists: CandidateLists, layers: Sequence[Layer], params: RankingParams) -> list[Candidate]:
    """Each layer's lists fused per record kind (:func:`~mission_memory.retrieval.ranking.fuse`), kinds
    concatenated in no particular order; scores are per kind, in [0, 1], before calibration and priors.

    When BM25 found nothing at all (a Ukrainian task over English records shares no word with them),
    the dense lists are the only evidence, and each kind is normalised by the lists that found
    something (:attr:`RankingParams.normalize_present`): its best dense hit scores 1.0, as it would
    with BM25 agreeing, instead of the dense weight's share. The order is the same either way;
    calibration reads the score (docs/adr/0076).
    """
    if not params.normalize_present and not any(hits for by_kind in lists.bm25.values() for hits in by_kind.values()):
        params = replace(params, normalize_present=True)
    fused: list[Candidate] = []
    for layer in layers:
        dense, bm25, critical = lists.dense.get(layer, {}), lists.bm25.get(layer, {}), lists.critical.get(layer, {})
        for kind in dense.keys() | bm25.keys() | critical.keys():
            fused.extend(fuse(dense.get(kind, []), bm25.get(kind, []), params, critical.get(kind, []),
                              lists.unembedded))
    return fused


def rank_candidates(
    lists: CandidateLists, layers: Sequence[Layer], params: RankingParams, calibration: Calibration = CALIBRATION
) -> list[Candidate]:
    """Step 2, the ranking policy: fuse the lists per layer and record kind, apply the priors, then put
    every kind on one scale.

    Lists are fused per record kind: similarity scores of short commit subjects, long ADRs and
    document sections are not comparable, but within their own kind they are, once each list's
    scores are normalised within its cut (:func:`~mission_memory.retrieval.ranking.fuse`). The priors
    (criticality, superseded decisions demoted) apply to every fused candidate before anything is
    cut, from :attr:`CandidateLists.priors`, so no record is read in full yet. Each kind's best then
    scores near 1.0 whatever it matched, so ``calibration`` maps every candidate to the probability
    that it is relevant, keeping each kind's order and comparing kinds by how well each kind's best
    matched (:mod:`~mission_memory.retrieval.calibration`, docs/adr/0072; when ``params.calibrated``).
    When the lists know which candidates are sections of an ADR (:attr:`CandidateLists.decision_of`, the ranking
    evaluation's lists), those fold into their decision here (docs/adr/0066); pull folds them in
    :func:`select_candidates`, after reading its best candidates.
    """
    ranked = apply_priors(fuse_per_kind(lists, layers, params), params, lists.priors)
    if params.calibrated:
        ranked = calibrate(ranked, lists, calibration)
    if lists.generated or lists.replaced:
        ranked = demote_boilerplate(ranked, lists.generated, lists.replaced, params,
                                    calibration.demoted if params.calibrated else None)
    if params.fold_sections and lists.decision_of:
        absent = {d: lists.priors[d].superseded for d in set(lists.decision_of.values()) if d in lists.priors}
        ranked = fold_sections(ranked, lists.decision_of, absent, params)
    return ranked


def select_candidates(
    store: MemoryStore,
    model_id: str,
    task: str,
    where: SearchFilter,
    ranked: Sequence[Candidate],
    params: RankingParams,
    max_entries: int,
) -> tuple[list[Candidate], int]:
    """Step 3, selection: the records a task names first, then the best by final score, with each
    stale record replaced by its current successor and without near-duplicates; at most ``max_entries``.

    Only the best ``max_entries`` ranked candidates (by final score, priors applied) and as many
    again (at least :data:`_HEAD_SPARE`) are read in full. A refresh artifact replaced by a later
    refresh of the same task and kind, or a decision superseded by another, gives way to its
    successor, which takes the better score; a superseded decision stays, marked, when the task asks about history or names it (ADR 0030).
    Near-duplicate suppression then keeps the newest of each group, and a correction follows the
    records it names (:func:`~mission_memory.retrieval.ranking.after_the_records_they_name`).

    Returns:
        The selected candidates (records attached, best first) and how many duplicates were dropped.
    """
    head = list(ranked[: max_entries + max(_HEAD_SPARE, max_entries)])
    records = store.get([c.record_id for c in head])
    notes_wanted = asks_about_handover(task)
    candidates = [replace(c, record=records[c.record_id]) for c in head if c.record_id in records
                  and (notes_wanted or records[c.record_id].kind is not RecordKind.HANDOVER_NOTE)]
    candidates = _demoted(candidates, params)
    if params.fold_sections:
        candidates = _fold_adr_sections(store, where, candidates, params)
    candidates = _named_first(store, task, where, candidates)
    candidates, replaced = replace_stale(store, task, where, candidates, named_references(task)[0])
    vectors = store.vectors_for([c.record_id for c in candidates], model_id)
    kept, dropped = suppress_near_duplicates(
        candidates, vectors, params.duplicate_cosine, keep=max_entries, exempt=frozenset(replaced.kept_superseded)
    )
    return after_the_records_they_name(kept), dropped


def _demoted(candidates: list[Candidate], params: RankingParams) -> list[Candidate]:
    """The read candidates with generated documents and replaced commits weighted down
    (:func:`~mission_memory.retrieval.ranking.demote_boilerplate`, docs/adr/0068)."""
    records = [c.record for c in candidates if c.record is not None]
    generated = {r.id for r in records if r.attributes.get("generated")} if params.generated_factor != 1.0 else set()
    replaced = replaced_among(records) if params.replaced_commits else {}
    if not generated and not replaced:
        return candidates
    return demote_boilerplate(candidates, generated, replaced, params, CALIBRATION.demoted if params.calibrated else None)


def _fold_adr_sections(
    store: MemoryStore, where: SearchFilter, candidates: list[Candidate], params: RankingParams
) -> list[Candidate]:
    """The read candidates with every ADR section folded into its file's decision record
    (:func:`~mission_memory.retrieval.ranking.fold_sections`, docs/adr/0066).

    A document chunk's decision is found by source key (``mission:decision:path``, docs/adr/0006);
    a decision that was not among the candidates is read and enters only if it passes the query's
    filters (else its sections stay as they are).
    """
    keys = {
        c.record_id: source_key_for(c.record.provenance.mission, RecordKind.DECISION, c.record.attributes["path"])
        for c in candidates
        if c.record is not None and c.record.kind is RecordKind.DOC_CHUNK
        and isinstance(c.record.attributes.get("path"), str)
    }
    if not keys:
        return candidates
    found = store.ids_by_source_keys(sorted(set(keys.values())))
    decision_of = {rid: found[key] for rid, key in keys.items() if key in found}
    if not decision_of:
        return candidates
    have = {c.record_id for c in candidates}
    read = store.get(sorted({d for d in decision_of.values() if d not in have}))
    entering = {rid: r for rid, r in read.items()
                if r.kind is RecordKind.DECISION and matches(where, filter_columns(r))}
    folded = fold_sections(candidates, decision_of, {rid: is_superseded(r) for rid, r in entering.items()}, params)
    chunks = {c.record_id: c.record for c in candidates if c.record_id in decision_of}
    out = []
    for c in folded:
        if c.record is None:
            c = replace(c, record=entering[c.record_id])
        if c.sections and (best := chunks.get(c.sections[0])) is not None:
            heading = best.title.rsplit(" › ", 1)[-1]
            first, _, rest = best.text.partition("\n")
            body = rest if first.lstrip().startswith("#") else best.text  # the chunk repeats its heading line
            c = replace(c, section_excerpt=f"{heading}: {' '.join(body.split())}")
        out.append(c)
    return out


HANDOVER_CUES = ("handover", "hand over", "hand-over", "handed over", "handing over", "shift", "predecessor",
                 "outgoing operator", "previous operator", "передач", "передав", "передал", "попередник")
"""Words by which a pull task asks about the handover itself; only then are handover notes pull results."""


def asks_about_handover(task: str) -> bool:
    """Whether a pull task asks about the handover itself (:data:`HANDOVER_CUES`, case-insensitive).

    Handover notes belong to the rotation brief (ADR 0060); in an ordinary pull they are noise that
    matches the topic words of whatever the outgoing operator wrote.
    """
    low = " ".join(task.lower().split())
    return any(cue in low for cue in HANDOVER_CUES)


_ADR_REFERENCE = re.compile(r"\bADR[\s\-_#]*0*(\d{1,5})\b", re.IGNORECASE)


def named_references(task: str) -> tuple[list[int], list[str]]:
    """ADR numbers (``ADR-5``, ``ADR 0005``) and tracker keys (``TDR-1234``, ``#45``) a task names."""
    numbers = list(dict.fromkeys(int(m.group(1)) for m in _ADR_REFERENCE.finditer(task)))
    keys = [k for k in extract_tracker_keys(task) if not k.startswith("#")]
    return numbers, keys


def _named_first(store: MemoryStore, task: str, where: SearchFilter, candidates: list[Candidate]) -> list[Candidate]:
    """Put the decisions and commits a task names outright at the top of the candidates.

    A task that says "update ADR-0005" or "fix TDR-1234" means those records, whatever their
    similarity; they get score 1.0, superseded or not (a superseded one is still marked).
    """
    numbers, keys = named_references(task)
    if not numbers and not keys:
        return candidates
    ids = store.phrase_search([f"adr {n:04d}" for n in numbers], where, 10, title_only=True)
    ids += store.phrase_search(keys, where, 10)
    found = store.get(ids)
    named = {
        rid: record for rid, record in found.items()
        if (record.kind is RecordKind.DECISION and DecisionAttributes.read(record.attributes).number in numbers)
        or (record.kind is RecordKind.DECISION and set(DecisionAttributes.read(record.attributes).task_ids) & set(keys))
        or (record.kind is RecordKind.COMMIT and set(record.attributes.get("tracker_keys", [])) & set(keys))
    }
    if not named:
        return candidates
    rest = [c for c in candidates if c.record_id not in named]
    first = [
        Candidate(record_id=rid, score=1.0, record=record, superseded=is_superseded(record))
        for rid, record in named.items()
    ]
    return first + rest
