"""The ranking evaluation in CI size: quality on the shared corpus and adr-tools stays at today's figures.

The full evaluation (both repositories plus log4brains, every ranking side by side) is
``benchmarks/bench_ranking.py``; ADR 0031 records the figures. Here the same questions
(``benchmarks/eval/``) run through today's ranking, and each set's figures must not drop below
what ADR 0031 measured (less one question, so a rounding difference in the embedder cannot flip it).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import Layer, RecordKind
from mission_memory.retrieval.query import rank_candidates
from mission_memory.retrieval.ranking import RankingParams
from mission_memory.retrieval.ranking_eval import (
    EvalQuestion,
    ExactDense,
    PreparedQuestion,
    SetScore,
    language_agreement,
    load_questions,
    prepare_question,
    replay_questions,
    score_ranking,
)
from tests.conftest import GitRepo, IngestedCorpus, built_once, copy_tree

EVAL = Path(__file__).resolve().parents[2] / "benchmarks" / "eval"
LAYERS = (Layer.DOMAIN, Layer.WORKFLOW, Layer.PRACTITIONER)
REPLAY_SAMPLE = 40
# Today's figures (ADR 0031, ADR 0050 for the shared corpus' ADR topics, `benchmarks/bench_ranking.py`),
# as shares in [0, 1].
TDR_HIT3, TDR_MRR, TDR_CURRENT_FIRST = 0.969, 0.909, 6
# A decision's vector sums three views of it (ADR 0075): hit@1 0.875 -> 0.938 on the 32 questions.
TDR_HIT1 = 0.938
# English/Ukrainian pairs of adr-tools whose first three decisions agree: 3 of 10 -> 6 of 10 (ADR 0075).
ADR_TOOLS_AGREE = 6
# The replay sample's figures fell with dense candidates per kind (ADR 0050: 0.775 / 0.664 before;
# decisions that the per-layer cut used to hide now reach fusion and sometimes rank first).
REPLAY_HIT3, REPLAY_MRR = 0.725, 0.615
ADR_TOOLS_HIT1, ADR_TOOLS_HIT3, ADR_TOOLS_MRR = 0.737, 0.947, 0.846

def _memory(root: Path, bundle: Path, name: str) -> Memory:
    subprocess.run(["git", "clone", "-q", str(bundle), str(root / name)], check=True)
    memory = Memory.open(load_settings(data_dir=root / f"data-{name}"))
    memory.ingest_repository(root / name, mission=name)
    return memory


def _ingested_once(tmp_path_factory: pytest.TempPathFactory, bundle: Path, name: str) -> Memory:
    """:func:`_memory` made once per test run (tests.conftest.built_once: the pytest-xdist workers that
    run this module's tests share it) and copied for this module: the queries write retrieval events."""
    template = built_once(tmp_path_factory, f"eval-{name}", lambda folder: _memory(folder, bundle, name).close())
    root = tmp_path_factory.mktemp(name)
    copy_tree(template / f"data-{name}", root / f"data-{name}")
    return Memory.open(load_settings(data_dir=root / f"data-{name}"))


def _prepared(memory: Memory, questions: list) -> list[PreparedQuestion]:
    exact = ExactDense(memory.store, memory.embedder.model_id)
    return [prepare_question(memory.store, memory.embedder, q, LAYERS, exact) for q in questions]


@pytest.fixture(scope="module")
def tdr(tdr_corpus: IngestedCorpus) -> tuple[Memory, Path]:
    """The shared corpus's memory and clone (ingested once per session, tests/conftest.py)."""
    return tdr_corpus.memory, tdr_corpus.repo


def _at_least(score: SetScore, hit3: float, mrr: float) -> None:
    slack = 1 / score.questions
    assert score.hit3 >= hit3 - slack - 1e-9, (score.as_row(), score.ranks)
    assert score.mrr >= mrr - slack - 1e-9, (score.as_row(), score.ranks)


def test_adr_topic_questions_of_the_shared_corpus_rank_their_adr_as_well_as_today(
    tdr: tuple[Memory, Path],
) -> None:
    """Every one of the 17 questions of tests/test_shared_corpus.py ranks its ADR among the first
    three decisions; the whole set (32, with current-vs-old questions) keeps today's figures."""
    memory, _ = tdr
    score = score_ranking(_prepared(memory, load_questions(EVAL / "questions-tdr-docs.jsonl")), LAYERS, RankingParams())
    _at_least(score, hit3=TDR_HIT3, mrr=TDR_MRR)
    assert score.hit1 >= TDR_HIT1 - 1 / score.questions - 1e-9, (score.as_row(), score.ranks)
    original = {f"tdr-{i:02d}" for i in range(1, 18)}
    assert all(rank is not None and rank <= 3 for q, rank in score.ranks.items() if q in original), score.ranks
    assert score.current_first >= TDR_CURRENT_FIRST, score.ranks


def test_a_ukrainian_question_no_word_of_which_matches_scores_its_answer_as_likely(tdr: tuple[Memory, Path]) -> None:
    """Six Ukrainian questions of the shared corpus share no word with any record (BM25 finds nothing);
    the top candidate is their ADR for five of them. Their calibrated top scores averaged 0.012, a
    fortieth of their English twins' (0.52), because an absent BM25 list counted as a lost one
    (docs/adr/0076); now 0.12."""
    memory, _ = tdr
    prepared = _prepared(memory, [q for q in load_questions(EVAL / "questions-tdr-docs.jsonl") if q.lang == "uk"])
    absent = [p for p in prepared if not any(hits for by in p.lists.bm25.values() for hits in by.values())]
    assert len(absent) >= 5
    tops = [rank_candidates(p.lists, LAYERS, RankingParams())[0] for p in absent]
    right = sum(absent[i].paths.get(top.record_id) in absent[i].question.targets for i, top in enumerate(tops))
    assert right >= len(absent) - 2
    mean_top = sum(top.score for top in tops) / len(tops)
    assert mean_top >= 0.06, [round(top.score, 3) for top in tops]


def test_history_replay_of_the_shared_corpus_finds_the_touched_documents(tdr: tuple[Memory, Path]) -> None:
    memory, repo = tdr
    questions = replay_questions(repo, limit=REPLAY_SAMPLE)
    assert len(questions) == REPLAY_SAMPLE
    score = score_ranking(_prepared(memory, questions), LAYERS, RankingParams())
    _at_least(score, hit3=REPLAY_HIT3, mrr=REPLAY_MRR)


@pytest.fixture(scope="module")
def adr_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    memory = _ingested_once(tmp_path_factory, EVAL / "adr-tools.bundle", "adr-tools")
    yield memory
    memory.close()


def test_adr_tools_questions_in_english_and_ukrainian_rank_their_adr_near_the_top(adr_tools: Memory) -> None:
    questions = load_questions(EVAL / "questions-adr-tools.jsonl")
    assert {q.lang for q in questions} == {"en", "uk"}
    prepared = _prepared(adr_tools, questions)
    score = score_ranking(prepared, LAYERS, RankingParams())
    agreement = language_agreement(prepared, LAYERS, RankingParams())
    _at_least(score, hit3=ADR_TOOLS_HIT3, mrr=ADR_TOOLS_MRR)
    assert score.hit1 >= ADR_TOOLS_HIT1 - 1 / score.questions, (score.as_row(), score.ranks)
    # Less one pair, as the other figures allow one question.
    assert agreement.agree >= ADR_TOOLS_AGREE - 1, agreement


@pytest.mark.parametrize("question", ["Why do we keep a log of architecture decisions at all?",
                                      "Навіщо ми ведемо журнал архітектурних рішень?"])
def test_the_digest_keeps_adr_tools_first_adr_though_its_newer_template_repeats_it(
    adr_tools: Memory, question: str
) -> None:
    # src/init.md is the template `adr init` writes as ADR 0001: its "Decision" section is a near
    # duplicate of the decision record, and two years newer; the digest must show the decision.
    digest = adr_tools.query(question, token_budget=4000, filters={"mission": "adr-tools"})
    first = [e.record.provenance.ref for e in digest.entries if e.record.kind is RecordKind.DECISION][:3]
    assert "doc/adr/0001-record-architecture-decisions.md" in first, [e.record.provenance.ref for e in digest.entries]


_MONITORING_ADR = "docs/adr/0001-prometheus-and-grafana-for-monitoring.md"


def test_a_decision_crowded_out_of_the_dense_list_by_commits_reaches_fusion_with_per_kind_candidates(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path
) -> None:
    """docs/adr/0050: when the layer's best 60 dense hits are commits, the ADR enters only when every
    kind gets its own share, and then ranks first. (On the shared corpus tdr-27 was such a case until
    decisions were embedded by three views, ADR 0075; this repository makes one on purpose: seventy
    commits whose subjects are the task's own words.)"""
    repo = make_git_repo("svc")
    repo.commit("ADR 1: monitoring", "2024-02-01T10:00:00+00:00", {_MONITORING_ADR: (
        "# 1. Prometheus and Grafana for monitoring\n\nDate: 2024-02-01\n\n## Status\n\nAccepted\n\n"
        "## Context\n\nServices need metrics, dashboards and paging when they fail.\n\n## Decision\n\n"
        "We will use Prometheus for metrics and Grafana for dashboards and alerts.\n\n## Consequences\n\n"
        "Each service exposes /metrics.\n")})
    for i in range(70):
        repo.commit(f"Which observability and alerting tool did we choose for service {i}?",
                    f"2024-03-{1 + i % 28:02d}T10:{i % 60:02d}:00+00:00", {f"svc{i}.txt": f"{i}\n"})
    question = EvalQuestion(id="q", question="Which observability and alerting tool did we choose?", lang="en",
                            targets=(_MONITORING_ADR,), among="decision")
    with Memory.open(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.ingest_repository(repo.root, mission="svc")

        def dense_decisions(params: RankingParams) -> tuple[PreparedQuestion, list[str]]:
            prepared = prepare_question(memory.store, memory.embedder, question, LAYERS, None, params)
            return prepared, [prepared.paths[h.record_id] for by_kind in prepared.lists.dense.values()
                              for h in by_kind.get(RecordKind.DECISION, [])]

        _, per_layer = dense_decisions(RankingParams(per_kind_candidates=False))
        prepared, per_kind = dense_decisions(RankingParams())
    assert per_layer == []
    assert per_kind == [_MONITORING_ADR]
    assert score_ranking([prepared], LAYERS, RankingParams()).ranks[question.id] == 1


def test_a_ukrainian_question_on_the_observability_adr_ranks_it_among_the_first_three(
    tdr: tuple[Memory, Path],
) -> None:
    """tdr-27, the case ADR 0050 was measured on, in the shared corpus."""
    memory, _ = tdr
    question = next(q for q in load_questions(EVAL / "questions-tdr-docs.jsonl") if q.id == "tdr-27")
    prepared = prepare_question(memory.store, memory.embedder, question, LAYERS, None, RankingParams())
    rank = score_ranking([prepared], LAYERS, RankingParams()).ranks[question.id]
    assert rank is not None and rank <= 3


def test_rocchio_feedback_moves_only_ukrainian_questions_and_ranks_them_at_least_as_well(
    tdr: tuple[Memory, Path],
) -> None:
    """docs/adr/0050: a question in another script than the records (Ukrainian over English ADRs)
    gets its dense search run again from a vector moved toward the best hits; an English one is
    searched exactly as without feedback. On the shared corpus' 16 Ukrainian ADR questions the
    feedback ranks the ADR first as often or more often, and among the first three as often."""
    memory, _ = tdr
    questions = load_questions(EVAL / "questions-tdr-docs.jsonl")
    without = RankingParams(vector_feedback_docs=0)

    def lists(question: object, params: RankingParams) -> PreparedQuestion:
        return prepare_question(memory.store, memory.embedder, question, LAYERS, None, params)  # type: ignore[arg-type]

    english = next(q for q in questions if q.lang == "en")
    assert lists(english, RankingParams()).lists.dense == lists(english, without).lists.dense
    ukrainian = [q for q in questions if q.lang == "uk"]
    with_feedback = [lists(q, RankingParams()) for q in ukrainian]
    assert any(p.lists.dense != lists(p.question, without).lists.dense for p in with_feedback[:3])
    moved = score_ranking(with_feedback, LAYERS, RankingParams())
    plain = score_ranking([lists(q, without) for q in ukrainian], LAYERS, without)
    assert moved.hit1 >= plain.hit1 and moved.hit3 >= plain.hit3, (moved.ranks, plain.ranks)
