"""An event the embedding queue has not reached yet ranks by its BM25 score against embedded events
(issue 21 item 3): with 30 embedded and 30 un-embedded events, the un-embedded event that alone holds
a query's unique token tied at 0.435 with an unrelated embedded one, because fusion counted it as last
of the dense list it could not be in (docs/adr/0063). Real SQLite store, real embedder."""

from __future__ import annotations

from datetime import timedelta

from mission_memory.api import Memory
from tests.operations.event_factory import T0, event

_TEXTS = (
    "Relay {i} reports battery at {p} percent in sector {s}",
    "Drone {i} lost GPS lock over the {s} ridge",
    "Convoy {i} delayed at checkpoint {s} by weather",
    "Sensor {i} temperature spike near depot {s}",
)


def _events(start: int, sector: str) -> list[dict[str, object]]:
    # Two hours apart: a quiet mission in normal mode, so the ranking alone orders the digest.
    return [
        event(start + i, T0 - timedelta(hours=2 * i, minutes=start % 60), sector=sector,
              text=_TEXTS[i % 4].format(i=start + i, p=i * 3, s=sector) + f" ref tok{start + i}x")
        for i in range(30)
    ]


def test_an_event_without_a_vector_that_alone_matches_ranks_first_and_ties_with_nothing() -> None:
    with Memory.open(event_mission="ops") as memory:
        memory.record_events(_events(0, "north"), now=T0, embed=False)
        assert memory.embed_pending() == 30
        memory.record_events(_events(100, "south"), now=T0, embed=False)
        assert memory.embedding_lag() == 30  # the queue is behind by the second batch
        for token, expected in (("tok107x", "Sensor 107"), ("tok101x", "Drone 101"), ("tok112x", "Relay 112")):
            digest = memory.query(token, scope="domain", filters={"mission": "ops"}, now=T0, client="api")
            first, second = digest.entries[0], digest.entries[1]
            assert first.record.text.startswith(expected), (token, [e.record.text for e in digest.entries[:3]])
            # No tie: a calibrated score is a probability, low for a one-token task that no text
            # matches densely (0.099 against 0.014 with the weights of docs/adr/0076), so the
            # margin is a ratio, not a fixed difference.
            assert first.score > 3 * second.score, (token, first.score, second.score)


def test_fusion_scores_a_record_without_a_vector_by_the_lists_that_could_hold_it() -> None:
    from mission_memory.retrieval.ranking import RankingParams, fuse
    from mission_memory.stores.base import Hit

    dense, bm25 = [Hit("unrelated", 0.91)], [Hit("exact", 6.0), Hit("weaker", 3.0)]
    for params in (RankingParams(), RankingParams(fusion="rrf")):
        scores = {c.record_id: c.score for c in fuse(dense, bm25, params, unembedded={"exact", "weaker"})}
        assert scores["exact"] == 1.0 and scores["unrelated"] < 0.6
        assert scores["exact"] > scores["weaker"] > 0.0
    # Every record embedded: one absent from a list gets nothing from it, as before.
    plain = {c.record_id: c.score for c in fuse(dense, bm25, RankingParams())}
    assert plain["exact"] == plain["unrelated"] == 0.5
