"""The retrieval-caused share per period and its Wilson interval."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mission_memory.corrections.practitioner_records import (
    Correction,
    CorrectionLabel,
    CorrectionSource,
    Outcome,
    RetrievalCaused,
    correction_id_for,
)
from mission_memory.corrections.rate import correction_rate, wilson_interval
from mission_memory.errors import InputError


def _correction(day: int, label: str) -> Correction:
    return Correction(
        correction_id=correction_id_for(CorrectionSource.EXPLICIT, None, f"{day}-{label}-{id(object())}"),
        correction_class="missed-decision", category="data", outcome=Outcome.MODIFIED, summary="s",
        source=CorrectionSource.EXPLICIT, mission="m", time=datetime(2025, 3, day, 12, tzinfo=UTC),
        label=CorrectionLabel(retrieval_caused=RetrievalCaused(label)),
    )


def test_wilson_interval_matches_the_published_values() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, table I: 81/263 -> 0.2553 to 0.3662
    low, high = wilson_interval(81, 263) or (0, 0)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    low, high = wilson_interval(0, 10) or (0, 0)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(("args", "message"), [((3, 2), "successes 3 and trials 2"), ((1, 2, 1.5), "confidence")])
def test_wilson_interval_refuses_impossible_counts(args: tuple[float, ...], message: str) -> None:
    with pytest.raises(InputError, match=message):
        wilson_interval(*args)  # type: ignore[arg-type]


def test_weeks_start_on_monday_and_unknown_labels_stay_out_of_the_share() -> None:
    # 2025-03-03 is a Monday; 3..9 one week, 10.. the next
    corrections = [
        _correction(3, "true"), _correction(5, "false"), _correction(9, "unknown"),
        _correction(10, "false"), _correction(12, "false"), _correction(14, "true"),
    ]
    rate = correction_rate(corrections, by="week")
    assert [(p.start.isoformat(), p.true, p.false, p.unknown) for p in rate.periods] == [
        ("2025-03-03", 1, 1, 1), ("2025-03-10", 1, 2, 0),
    ]
    assert rate.periods[0].share == 0.5 and rate.periods[1].share == pytest.approx(1 / 3)
    assert rate.total is not None and (rate.total.true, rate.total.false, rate.total.unknown) == (2, 3, 1)
    by_day = correction_rate(corrections, by="day")
    assert len(by_day.periods) == 6 and by_day.periods[2].share is None and by_day.periods[2].low is None
    with pytest.raises(InputError, match="--by 'month' is not one of: day, week"):
        correction_rate(corrections, by="month")
