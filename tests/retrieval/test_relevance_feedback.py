"""Pseudo-relevance feedback across scripts (docs/adr/0050): when it applies and which words it gives."""

from __future__ import annotations

from mission_memory.retrieval.query_terms import query_terms
from mission_memory.retrieval.relevance_feedback import feedback_terms, is_cross_script, rocchio_query

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


def test_rocchio_moves_the_query_toward_the_feedback_centroid_and_keeps_it_unit() -> None:
    import numpy as np
    import pytest

    query = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    feedback = [np.array([0.0, 1.0, 0.0], dtype=np.float32), np.array([0.0, 0.6, 0.8], dtype=np.float32)]
    moved = rocchio_query(query, feedback, 0.5)
    expected = np.array([1.0, 0.4, 0.2]) / np.linalg.norm([1.0, 0.4, 0.2])
    np.testing.assert_allclose(moved, expected, atol=1e-6)
    assert moved.dtype == np.float32 and abs(float(np.linalg.norm(moved)) - 1) < 1e-6
    assert rocchio_query(query, [], 0.5) is query and rocchio_query(query, feedback, 0.0) is query
    with pytest.raises(ValueError, match="shape"):
        rocchio_query(query, [np.zeros(4, dtype=np.float32)], 0.5)


def test_a_task_is_written_in_cyrillic_when_half_of_its_words_are() -> None:
    from mission_memory.retrieval.relevance_feedback import written_in_cyrillic

    assert written_in_cyrillic(query_terms("Як налаштувати Keycloak для користувачів?"))
    assert not written_in_cyrillic(query_terms("Configure Keycloak для users and groups"))
    assert not written_in_cyrillic([])
