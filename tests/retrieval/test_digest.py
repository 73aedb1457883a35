"""Digest packing: the exact text returned never exceeds the budget, counted by the real tokenizer."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mission_memory.errors import BudgetError
from mission_memory.records import Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval.digest import format_age, pack_digest
from mission_memory.retrieval.ranking import Candidate
from mission_memory.tokens import TiktokenTokenizer

ENGLISH = "The upload proxy retries failed multipart uploads with exponential backoff and a jitter. " * 12
UKRAINIAN = "Проксі завантаження повторює невдалі завантаження частинами з експоненційною затримкою. " * 12
LAYERS = (Layer.WORKFLOW, Layer.DOMAIN, Layer.PRACTITIONER)


def _candidates(text: str, n: int = 12) -> list[Candidate]:
    out = []
    for i in range(n):
        kind = RecordKind.DECISION if i % 3 == 0 else RecordKind.DOC_CHUNK
        record = Record.build(
            kind=kind,
            title=f"Entry {i} — запис {i}",
            text=f"{i}: {text}",
            provenance=Provenance(kind=SourceKind.DOC, ref=f"docs/f{i}.md#h", uri=f"file:///repo/docs/f{i}.md#h",
                                  mission="m", time=datetime(2024, 1, 1, tzinfo=UTC)),
            attributes={"status": "accepted", "decision": text[:200]} if kind is RecordKind.DECISION else {},
        )
        out.append(Candidate(record_id=str(i), score=1.0 - i * 0.05, record=record))
    return out


@pytest.mark.parametrize("budget", [90, 150, 400, 1000, 3000, 8000])
@pytest.mark.parametrize("text", [ENGLISH, UKRAINIAN], ids=["english", "ukrainian"])
def test_digest_never_exceeds_token_budget(budget: int, text: str) -> None:
    tokenizer = TiktokenTokenizer(safety_margin=0.1)
    candidates = _candidates(text)
    digest, entries, used, omitted = pack_digest("retry uploads / повтор завантажень", "all", candidates, budget,
                                                 tokenizer, max_entry_tokens=450, layers=LAYERS)
    assert used == tokenizer.count(digest)
    assert used <= budget
    assert len(entries) + omitted == len(candidates)
    if omitted:
        assert f"{omitted} more relevant entries omitted" in digest or "none fits" in digest


def test_entries_keep_relevance_order_within_a_section_and_show_provenance() -> None:
    tokenizer = TiktokenTokenizer()
    _, entries, _, _ = pack_digest("q", "all", _candidates(ENGLISH, 6), 8000, tokenizer, 450, LAYERS)
    for layer in LAYERS:
        scores = [e.score for e in entries if e.record.layer is layer]
        assert scores == sorted(scores, reverse=True)
    assert all(f"`{e.record.provenance.ref}`" in e.block for e in entries)
    assert all("2024-01-01 (" in e.block and "years ago)" in e.block for e in entries)


def test_a_budget_too_small_for_the_header_is_an_error_not_a_truncated_digest() -> None:
    with pytest.raises(BudgetError, match="too small"):
        pack_digest("q", "all", _candidates(ENGLISH, 3), 10, TiktokenTokenizer(), 450, LAYERS)


def test_a_long_entry_is_cut_to_the_entry_cap() -> None:
    tokenizer = TiktokenTokenizer()
    _, entries, _, _ = pack_digest("q", "all", _candidates(ENGLISH * 5, 2)[1:], 8000, tokenizer, 100, LAYERS)
    assert tokenizer.count(entries[0].text) <= 100
    assert entries[0].text.endswith("…")


def test_ages_read_as_days_weeks_months_and_years() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert format_age(now, now) == "today"
    assert format_age(datetime(2025, 12, 29, tzinfo=UTC), now) == "3 days"
    assert format_age(datetime(2025, 11, 20, tzinfo=UTC), now) == "6 weeks"
    assert format_age(datetime(2025, 3, 1, tzinfo=UTC), now) == "10 months"
    assert format_age(datetime(2020, 1, 1, tzinfo=UTC), now) == "6 years"


def test_the_best_entry_is_shortened_to_fit_a_small_budget_rather_than_dropped() -> None:
    tokenizer = TiktokenTokenizer()
    candidates = _candidates(ENGLISH * 3, 4)[1:]
    _, entries, used, _ = pack_digest("q", "all", candidates, 300, tokenizer, 450, LAYERS)
    assert entries and entries[0].record.id == candidates[0].record.id
    assert entries[0].text.endswith("…") and used <= 300
