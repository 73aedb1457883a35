"""Pseudo-relevance feedback across scripts (docs/adr/0050): when it applies and which words it gives."""

from __future__ import annotations

from mission_memory.retrieval.feedback_terms import feedback_terms, is_cross_script
from mission_memory.retrieval.query_terms import query_terms

ADR = "Observability\nWe will use Grafana for dashboards and alerting; Grafana alerts go to Slack."
COMMIT = "Add Grafana dashboard for the upload lambdas"


def test_a_ukrainian_task_over_english_records_is_cross_script_and_an_english_one_is_not() -> None:
    assert is_cross_script(query_terms("Який інструмент спостережуваності та сповіщень ми обрали?"), [ADR, COMMIT])
    assert not is_cross_script(query_terms("Which observability tool did we choose?"), [ADR, COMMIT])
    ukrainian_record = "Спостережуваність: ми обрали Grafana для панелей і сповіщень."
    assert not is_cross_script(query_terms("Який інструмент спостережуваності ми обрали?"), [ukrainian_record])
    assert not is_cross_script([], [ADR]) and not is_cross_script(["сповіщення"], [])


def test_feedback_words_are_weighted_by_the_records_similarity_and_their_frequency() -> None:
    words = feedback_terms([ADR, COMMIT], [0.9, 0.3], 3)
    assert words[0] == "grafana"  # in both records, twice in the closer one
    assert set(words) <= set(query_terms(ADR + " " + COMMIT, limit=100))
    assert feedback_terms([COMMIT, ADR], [0.9, 0.1], 1) == ["grafana"]
    assert feedback_terms([ADR], [0.5], 0) == [] and feedback_terms(["the of"], [0.5], 3) == []
