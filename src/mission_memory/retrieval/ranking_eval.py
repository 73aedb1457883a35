"""Scoring the pull ranking against labelled questions: hit@1/@3, MRR, current-before-old, recall vs exact.

An evaluation set is a JSON Lines file of questions, each naming the repository path of the record
that decides it (``benchmarks/eval/README.md`` describes the format). :func:`prepare_question`
runs the candidate search once per question (the expensive part: one query embedding, one dense
and one BM25 search) and keeps everything a ranking needs; :func:`score_ranking` then ranks the
same candidate lists under any :class:`~mission_memory.retrieval.ranking.RankingParams`, so several
rankings are measured side by side on identical inputs (issue 12 item 2).

Metrics, per set: ``hit@1`` and ``hit@3`` (share of questions whose target is first / among the
first three of the records it is counted among: decisions, or decisions and document chunks),
``MRR`` (mean reciprocal rank, 0 for a miss), ``current_first`` (of the questions naming an older
record on the same subject, the share whose target ranks above it), and ``recall@10`` of the final
ranking against the exact dense ranking (a brute-force cosine scan over every vector), so a change
to the search that loses what exact search finds shows up here.

Cross-lingual parity (:func:`language_agreement`): the questions of a set that ask about the same
target in English and in Ukrainian form pairs (every English question with every Ukrainian one of
that target); a pair agrees when both versions put the same decisions first — the same set of the
first three decision records (docs/adr/0071).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError
from mission_memory.git_runner import run_git_text
from mission_memory.records import Layer, Record, RecordKind, source_key_for
from mission_memory.retrieval.candidates import CandidateLists
from mission_memory.retrieval.commit_successors import replaced_among
from mission_memory.retrieval.filters import QueryFilters
from mission_memory.retrieval.query import rank_candidates, search_candidates
from mission_memory.retrieval.ranking import Candidate, RankingParams
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.filters import SearchFilter

__all__ = [
    "EvalQuestion",
    "ExactDense",
    "LanguageAgreement",
    "PreparedQuestion",
    "SetScore",
    "language_agreement",
    "load_questions",
    "prepare_question",
    "replay_questions",
    "score_ranking",
]

_AMONG = {
    "decision": frozenset({RecordKind.DECISION}),
    "document": frozenset({RecordKind.DECISION, RecordKind.DOC_CHUNK}),
}


@dataclass(frozen=True)
class EvalQuestion:
    """One labelled question.

    Attributes:
        id: stable id, ``<set>-NN``.
        question: the task description sent to pull.
        lang: ``en`` or ``uk``.
        targets: repository paths of the records that decide it (any one counts as a hit).
        among: ``decision`` or ``document``: which record kinds the target's rank is counted among.
        stale: an older record on the same subject the target replaces, or None.
    """

    id: str
    question: str
    lang: str
    targets: tuple[str, ...]
    among: str = "decision"
    stale: str | None = None


def load_questions(path: Path) -> list[EvalQuestion]:
    """Read an evaluation set (JSON Lines, ``benchmarks/eval/README.md``).

    Raises:
        InputError: the file is missing, or a line is not a JSON object with ``id``, ``question``,
            ``lang`` and ``target`` (the message names the file and line).
    """
    if not path.is_file():
        raise InputError(f"evaluation set {path} does not exist")
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            target = row["target"]
            targets = (target,) if isinstance(target, str) else tuple(target)
            among = row.get("among", "decision")
            if among not in _AMONG:
                raise ValueError(f"among must be one of {sorted(_AMONG)}, got {among!r}")
            out.append(
                EvalQuestion(
                    id=str(row["id"]), question=str(row["question"]), lang=str(row["lang"]),
                    targets=targets, among=among, stale=row.get("stale"),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{path}:{number}: not an evaluation question ({exc})") from exc
    return out


def replay_questions(repo: Path, limit: int = 0, min_words: int = 4) -> list[EvalQuestion]:
    """The history replay set of a repository: commit subject -> the Markdown files it touched.

    Every non-merge commit whose subject has at least ``min_words`` words and that touched a
    Markdown file still present at HEAD becomes a question (targets: those files, counted among
    decisions and document chunks). ``limit`` > 0 keeps an evenly spaced sample of that many,
    oldest first.

    Raises:
        BackendUnavailable: git failed in ``repo``.
    """
    present = set(run_git_text(repo, "ls-files", "*.md").splitlines())
    log = run_git_text(repo, "log", "--no-merges", "--reverse", "--name-only", "--format=\x1e%h\x1f%s")
    out = []
    for block in log.split("\x1e")[1:]:
        head, _, files = block.partition("\n")
        sha, _, subject = head.partition("\x1f")
        touched = tuple(sorted({f for f in files.splitlines() if f in present}))
        if touched and len(subject.split()) >= min_words:
            out.append(EvalQuestion(id=f"replay-{sha}", question=subject, lang="en", targets=touched, among="document"))
    if 0 < limit < len(out):
        step = len(out) / limit
        out = [out[int(i * step)] for i in range(limit)]
    return out


class ExactDense:
    """Exact dense ranking by a brute-force cosine scan over every stored vector (the reference).

    Args:
        store: the store to scan (read once, at construction).
        model_id: the embedder whose vectors to scan.
        exclude: record ids left out of the reference (bare merge commits, which pull drops too).
    """

    def __init__(self, store: MemoryStore, model_id: str, exclude: set[str] | None = None) -> None:
        ids: list[str] = []
        for batch in store.iterate():
            ids.extend(r.id for r in batch if not (exclude and r.id in exclude))
        vectors = store.vectors_for(ids, model_id)
        self.ids = [i for i in ids if i in vectors]
        self.matrix: npt.NDArray[np.float32] = (
            np.stack([vectors[i] for i in self.ids]) if self.ids else np.zeros((0, 1), dtype=np.float32)
        )

    def top(self, query_vector: npt.NDArray[np.float32], k: int) -> list[str]:
        """Ids of the ``k`` records most similar to ``query_vector`` (unit vector), best first."""
        if not self.ids:
            return []
        scores = self.matrix @ query_vector
        order = np.argsort(-scores, kind="stable")[:k]
        return [self.ids[i] for i in order]


@dataclass(frozen=True)
class PreparedQuestion:
    """A question with its candidate lists searched once, ready to be ranked any number of ways.

    Attributes:
        question: the question.
        lists: step 1's output (:func:`~mission_memory.retrieval.query.search_candidates`).
        paths: repository path (provenance ref before ``#``) of every candidate, by record id.
        exact_top: the exact dense ranking's best ids (the reference for recall).
    """

    question: EvalQuestion
    lists: CandidateLists
    paths: dict[str, str]
    exact_top: tuple[str, ...]


def prepare_question(
    store: MemoryStore,
    embedder: Embedder,
    question: EvalQuestion,
    layers: tuple[Layer, ...],
    exact: ExactDense | None = None,
    params: RankingParams | None = None,
    k: int = 10,
) -> PreparedQuestion:
    """Run the candidate search for ``question`` once and record what scoring needs."""
    where = SearchFilter(layers, QueryFilters())
    lists = search_candidates(store, embedder, question.question, where, params or RankingParams())
    ids = list(lists.priors)
    records = store.get(ids)
    lists, decisions = _with_decisions_of_sections(store, lists, records)
    paths = {rid: rec.provenance.ref.split("#", 1)[0] for rid, rec in {**records, **decisions}.items()}
    exact_top: tuple[str, ...] = ()
    if exact is not None:
        exact_top = tuple(exact.top(embedder.embed_query(question.question), k))
    return PreparedQuestion(question=question, lists=lists, paths=paths, exact_top=exact_top)


def _with_decisions_of_sections(
    store: MemoryStore, lists: CandidateLists, records: dict[str, Record]
) -> tuple[CandidateLists, dict[str, Record]]:
    """``lists`` with :attr:`CandidateLists.decision_of` filled for every ADR section among the
    candidates (and the priors of decisions that were not candidates), and those decisions' records,
    and with the generated documents and replaced commits among them, so that
    :func:`~mission_memory.retrieval.query.rank_candidates` folds and demotes as pull does
    (docs/adr/0066, 0068)."""
    keys = {rid: source_key_for(r.provenance.mission, RecordKind.DECISION, r.attributes["path"])
            for rid, r in records.items()
            if r.kind is RecordKind.DOC_CHUNK and isinstance(r.attributes.get("path"), str)}
    found = store.ids_by_source_keys(sorted(set(keys.values()))) if keys else {}
    decision_of = {rid: found[key] for rid, key in keys.items() if key in found}
    missing = sorted({d for d in decision_of.values() if d not in lists.priors})
    priors = {**lists.priors, **store.priors_of(missing)} if missing else lists.priors
    generated = frozenset(rid for rid, r in records.items() if r.attributes.get("generated"))
    replaced = replaced_among(list(records.values()))
    return (replace(lists, decision_of=decision_of, priors=priors, generated=generated, replaced=replaced),
            store.get(missing) if missing else {})


@dataclass(frozen=True)
class SetScore:
    """A ranking's figures on one evaluation set.

    Attributes:
        questions: how many questions were scored.
        hit1, hit3: share of questions whose target ranks first / among the first three, in [0, 1].
        mrr: mean reciprocal rank of the target, in [0, 1] (a miss counts 0).
        in_digest: share of questions whose target ranks among the first ``top_n`` candidates of
            all kinds (what the digest is packed from), in [0, 1].
        current_first: of the questions with a stale record named, how many rank the target above it.
        current_total: how many questions name a stale record.
        recall_at_k: mean share of the exact dense top ``k`` found in the final ranking's top ``k``.
        ranks: the target's 1-based rank (None = not ranked) per question id.
    """

    questions: int
    hit1: float
    hit3: float
    mrr: float
    in_digest: float
    current_first: int
    current_total: int
    recall_at_k: float
    ranks: dict[str, int | None]

    def as_row(self) -> dict[str, float | int | str]:
        """The figures as a flat dict for tables and JSON (rates in percent, one decimal)."""
        return {
            "n": self.questions,
            "hit@1": round(100 * self.hit1, 1),
            "hit@3": round(100 * self.hit3, 1),
            "MRR": round(self.mrr, 3),
            "in-digest": round(100 * self.in_digest, 1),
            "current>old": f"{self.current_first}/{self.current_total}",
            "recall@10": round(self.recall_at_k, 3),
        }


RankFn = Callable[[CandidateLists, Sequence[Layer], RankingParams], list[Candidate]]


def _rank_of(
    ranked: Sequence[Candidate], prepared: PreparedQuestion, paths: Sequence[str], any_kind: bool = False
) -> int | None:
    kinds = _AMONG[prepared.question.among]
    position = 0
    for cand in ranked:
        prior = prepared.lists.priors.get(cand.record_id)
        if prior is None or (prior.kind not in kinds and not any_kind):
            continue
        position += 1
        if prepared.paths.get(cand.record_id) in paths:
            return position
    return None


def score_ranking(
    prepared: Sequence[PreparedQuestion],
    layers: Sequence[Layer],
    params: RankingParams,
    rank: RankFn = rank_candidates,
    k: int = 10,
    top_n: int = 10,
) -> SetScore:
    """Rank every prepared question with ``rank`` under ``params`` and score the results.

    ``top_n`` is the digest's entry count (settings ``max_digest_entries``): ``in_digest`` counts
    the targets ranked among the first ``top_n`` candidates of every kind.
    """
    ranks: dict[str, int | None] = {}
    in_top = 0
    current_first = current_total = 0
    recalls = []
    for prep in prepared:
        ranked = rank(prep.lists, layers, params)
        position = _rank_of(ranked, prep, prep.question.targets)
        ranks[prep.question.id] = position
        overall = _rank_of(ranked, prep, prep.question.targets, any_kind=True)
        in_top += overall is not None and overall <= top_n
        if prep.question.stale:
            current_total += 1
            stale_position = _rank_of(ranked, prep, (prep.question.stale,))
            if position is not None and (stale_position is None or position < stale_position):
                current_first += 1
        if prep.exact_top:
            top = {c.record_id for c in ranked[:k]}
            recalls.append(len(top & set(prep.exact_top[:k])) / min(k, len(prep.exact_top)))
    n = len(prepared) or 1
    return SetScore(
        questions=len(prepared),
        hit1=sum(1 for r in ranks.values() if r == 1) / n,
        hit3=sum(1 for r in ranks.values() if r is not None and r <= 3) / n,
        mrr=sum(1 / r for r in ranks.values() if r) / n,
        in_digest=in_top / n,
        current_first=current_first,
        current_total=current_total,
        recall_at_k=float(np.mean(recalls)) if recalls else float("nan"),
        ranks=ranks,
    )


@dataclass(frozen=True)
class LanguageAgreement:
    """How often the English and the Ukrainian version of a question rank the same decisions first.

    Attributes:
        pairs: English/Ukrainian question pairs of the set (same target).
        agree: pairs whose first ``k`` decisions are the same records (in any order).
        overlap: mean share of the English version's first ``k`` decisions that the Ukrainian one
            also has among its first ``k``, in [0, 1].
        both_hit: pairs where both versions have the target among their first ``k`` decisions.
        disagreeing: the pairs that do not agree, as ``(English id, Ukrainian id)``.
    """

    pairs: int
    agree: int
    overlap: float
    both_hit: int
    disagreeing: tuple[tuple[str, str], ...]

    def as_row(self) -> dict[str, float | int | str]:
        """The figures as a flat dict (``en=uk@3``: agreeing pairs / pairs; overlap in percent)."""
        return {
            "pairs": self.pairs,
            "en=uk@3": f"{self.agree}/{self.pairs}",
            "agree%": round(100 * self.agree / self.pairs, 1) if self.pairs else float("nan"),
            "overlap%": round(100 * self.overlap, 1),
            "both-hit": f"{self.both_hit}/{self.pairs}",
        }


def language_agreement(
    prepared: Sequence[PreparedQuestion],
    layers: Sequence[Layer],
    params: RankingParams,
    rank: RankFn = rank_candidates,
    k: int = 3,
) -> LanguageAgreement:
    """Rank both versions of every English/Ukrainian pair of ``prepared`` and compare their first decisions.

    Pairs are formed by target: each English question with each Ukrainian question whose targets are
    the same. Decisions are the candidates of kind ``decision``, in ranked order.

    Args:
        prepared: one set's prepared questions (both languages).
        layers, params, rank: the ranking to apply (as in :func:`score_ranking`).
        k: how many first decisions are compared.

    Returns:
        The set's agreement figures (zero pairs when the set has no question asked in both languages).
    """
    firsts: dict[str, tuple[str, ...]] = {}
    for prep in prepared:
        ranked = rank(prep.lists, layers, params)
        decisions = [
            c.record_id for c in ranked
            if (prior := prep.lists.priors.get(c.record_id)) is not None and prior.kind is RecordKind.DECISION
        ]
        firsts[prep.question.id] = tuple(decisions[:k])
    by_id = {p.question.id: p for p in prepared}
    english = [p for p in prepared if p.question.lang == "en"]
    ukrainian = [p for p in prepared if p.question.lang == "uk"]
    pairs = agree = both_hit = 0
    overlaps: list[float] = []
    disagreeing: list[tuple[str, str]] = []
    for en in english:
        for uk in ukrainian:
            if set(en.question.targets) != set(uk.question.targets):
                continue
            pairs += 1
            a, b = firsts[en.question.id], firsts[uk.question.id]
            if set(a) == set(b):
                agree += 1
            else:
                disagreeing.append((en.question.id, uk.question.id))
            overlaps.append(len(set(a) & set(b)) / max(1, len(a)))
            hit = [
                any(by_id[q].paths.get(rid) in by_id[q].question.targets for rid in firsts[q])
                for q in (en.question.id, uk.question.id)
            ]
            both_hit += all(hit)
    return LanguageAgreement(
        pairs=pairs, agree=agree, overlap=float(np.mean(overlaps)) if overlaps else float("nan"),
        both_hit=both_hit, disagreeing=tuple(disagreeing),
    )
