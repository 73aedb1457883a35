"""The corpus repository (tests/corpora/tdr-docs.bundle: a real documentation repository with 39 ADRs) ingests cleanly and answers by topic."""

from __future__ import annotations

import pytest

from mission_memory.api import Memory
from tests.conftest import IngestedCorpus


@pytest.fixture(scope="module")
def tdr(tdr_corpus: IngestedCorpus) -> tuple[Memory, dict]:
    """The shared corpus's memory and ingest report (ingested once per session, tests/conftest.py)."""
    return tdr_corpus.memory, tdr_corpus.report


def test_the_corpus_ingests_cleanly_with_every_adr_and_commit(tdr: tuple[Memory, dict]) -> None:
    memory, report = tdr
    assert report["by_kind"]["added"]["decision"] == 39
    assert report["by_kind"]["added"]["commit"] == 669
    assert report["by_kind"]["added"]["doc_chunk"] > 300
    assert report["skipped"]["count"] == 0
    assert memory.store.integrity_check() == "ok"


@pytest.mark.parametrize(
    ("task", "adr"),
    [
        ("Which frontend framework should the web application use?", "0003"),
        ("How do users log in and which identity provider do we run?", "0005"),
        ("Pick a library to generate Excel spreadsheets for metadata", "0031"),
        ("Increase the SQS message visibility timeout for the file check lambdas", "0020"),
        ("Disable Keycloak users who have been inactive for a long time", "0037"),
        ("Which software identifies the file format of uploaded records?", "0010"),
        ("Як користувачі входять у систему і який провайдер ідентичності ми використовуємо?", "0005"),
        ("Яку бібліотеку обрати для генерації таблиць Excel?", "0031"),
        ("Вимкнути неактивних користувачів Keycloak", "0037"),
        ("Який сервіс безперервної інтеграції ми використовуємо?", "0024"),
        ("Як ми перевіряємо метадані CSV файлів?", "0035"),
        ("Чому ми використовуємо AWS Step Functions для перевірок файлів?", "0027"),
        ("Як налаштувати GOV.UK Notify для різних середовищ?", "0014"),
        ("як ми автентифікуємо користувачів?", "0005"),
        ("який фронтенд-фреймворк ми обрали?", "0003"),
        ("Should we monitor requests with AWS X-Ray?", "0029"),
        ("How are judgment transfer URLs structured?", "0023"),
    ],
)
def test_a_task_on_an_adr_topic_finds_that_adr_near_the_top(tdr: tuple[Memory, dict], task: str, adr: str) -> None:
    memory, _ = tdr
    digest = memory.query(task, token_budget=6000)
    decisions = [e.record.provenance.ref.rsplit("/", 1)[-1][:4] for e in digest.entries if e.record.kind.value == "decision"]
    assert adr in decisions[:3], decisions
    assert digest.tokens_used <= 6000
