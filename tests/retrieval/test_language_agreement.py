"""English/Ukrainian parity of the first three decisions (issue 25 item 6, docs/adr/0071): pairs are
formed by target, and a pair agrees only when both versions put the same decision records first.

The candidate lists are built by hand (the function ranks them with the real ``rank_candidates``);
the benchmark runs the same function on the real evaluation sets.
"""

from __future__ import annotations

from mission_memory.records import Layer, RecordKind
from mission_memory.retrieval.candidates import CandidateLists
from mission_memory.retrieval.ranking import RankingParams
from mission_memory.retrieval.ranking_eval import EvalQuestion, PreparedQuestion, language_agreement
from mission_memory.stores.base import Hit, RecordPriors

LAYERS = (Layer.WORKFLOW,)


def _prepared(qid: str, lang: str, target: str, dense: list[str], commits: tuple[str, ...] = ()) -> PreparedQuestion:
    decisions = [Hit(rid, 0.9 - 0.01 * i, RecordKind.DECISION) for i, rid in enumerate(dense)]
    commit_hits = [Hit(rid, 0.95 - 0.01 * i, RecordKind.COMMIT) for i, rid in enumerate(commits)]
    priors = {
        **{rid: RecordPriors(Layer.WORKFLOW, RecordKind.DECISION, False, 0.5, False) for rid in dense},
        **{rid: RecordPriors(Layer.WORKFLOW, RecordKind.COMMIT, False, 0.5, False) for rid in commits},
    }
    lists = CandidateLists(
        dense={Layer.WORKFLOW: {RecordKind.DECISION: decisions, **({RecordKind.COMMIT: commit_hits} if commits else {})}},
        bm25={}, critical={}, priors=priors,
    )
    return PreparedQuestion(
        question=EvalQuestion(id=qid, question=qid, lang=lang, targets=(target,)),
        lists=lists, paths={rid: f"adr/{rid}.md" for rid in [*dense, *commits]}, exact_top=(),
    )


def test_pairs_agree_only_when_both_languages_rank_the_same_first_three_decisions() -> None:
    prepared = [
        _prepared("en-1", "en", "adr/a.md", ["a", "b", "c", "d"], commits=["x"]),
        _prepared("uk-1", "uk", "adr/a.md", ["b", "a", "c", "e"]),  # same three, other order: agrees
        _prepared("en-2", "en", "adr/d.md", ["d", "e", "f"]),
        _prepared("uk-2", "uk", "adr/d.md", ["d", "e", "g"]),  # third differs: does not agree
        _prepared("uk-3", "uk", "adr/z.md", ["z"]),  # no English version: no pair
    ]
    result = language_agreement(prepared, LAYERS, RankingParams())
    assert (result.pairs, result.agree, result.both_hit) == (2, 1, 2)
    assert result.disagreeing == (("en-2", "uk-2"),)
    assert abs(result.overlap - (1.0 + 2 / 3) / 2) < 1e-9
    assert result.as_row()["en=uk@3"] == "1/2"
