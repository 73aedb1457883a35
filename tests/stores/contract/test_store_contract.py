"""The store contract: every behaviour the core relies on, run against every registered backend.

A new backend (Qdrant next) passes this suite unchanged before the core may use it
(docs/design.md §10, docs/adr/0016-store-boundary-and-retrieval-events.md).
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
import pytest

from mission_memory.errors import InputError
from mission_memory.records import AccessLevel, Layer, Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval_events import Client, NewRetrievalEvent
from mission_memory.stores.base import MemoryStore, SearchFilter

ALL = SearchFilter(tuple(Layer))


def _record(ref: str, text: str, *, kind: RecordKind = RecordKind.DOC_CHUNK, component: str | None = None,
            criticality: float = 0.5, mission: str = "m", when: datetime | None = None,
            operator: str | None = None, access: AccessLevel = AccessLevel.INTERNAL) -> Record:
    return Record.build(
        kind=kind, title=ref, text=text,
        provenance=Provenance(kind=SourceKind.DOC, ref=ref, uri=f"file:///{ref}", mission=mission,
                              time=when or datetime(2025, 1, 1, tzinfo=UTC)),
        component=component, criticality=criticality, operator=operator, access_level=access,
    )


def _unit(rows: int, dim: int = 8, seed: int = 0) -> npt.NDArray[np.float32]:
    v = np.random.default_rng(seed).normal(size=(rows, dim)).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def test_upserting_the_same_records_twice_adds_nothing(store: MemoryStore) -> None:
    records = [_record(f"a{i}.md", f"text number {i}") for i in range(3)]
    first = store.upsert_records(records)
    second = store.upsert_records(records)
    assert sorted(first.added) == sorted(r.id for r in records) and not first.unchanged
    assert sorted(second.unchanged) == sorted(r.id for r in records) and not second.added
    assert store.counts()["domain"] == {"doc_chunk": 3}


def test_a_changed_source_replaces_the_record_holding_its_source_key(store: MemoryStore) -> None:
    old = _record("a.md", "the old wording")
    new = _record("a.md", "the new wording")
    store.upsert([old], _unit(1), "model-a")
    outcome = store.upsert([new], _unit(1, seed=1), "model-a")
    assert outcome.replaced == [new.id]
    assert store.get([old.id, new.id]) == {new.id: new}
    assert store.known_ids([old.id, new.id]) == {new.id}
    assert store.vector_models() == {"model-a": 1}
    assert store.ids_by_source_keys([new.source_key, "m:doc_chunk:nowhere"]) == {new.source_key: new.id}


def test_a_merge_decides_what_replaces_the_stored_record_and_may_keep_it(store: MemoryStore) -> None:
    old = _record("a.md", "the old wording")
    store.upsert_records([old])
    seen: list[tuple[str, str]] = []

    def both(stored: Record, new: Record) -> Record:
        seen.append((stored.text, new.text))
        return _record("a.md", stored.text + " | " + new.text)

    outcome = store.upsert_records([_record("a.md", "the new wording")], merge=both)
    assert seen == [("the old wording", "the new wording")]
    (kept,) = store.get(outcome.replaced).values()
    assert kept.text == "the old wording | the new wording"
    again = store.upsert_records([_record("a.md", "a third wording")], merge=lambda stored, new: stored)
    assert again.unchanged == [kept.id] and not again.replaced
    assert store.ids_by_source_keys([kept.source_key]) == {kept.source_key: kept.id}
    fresh = store.upsert_records([_record("b.md", "nothing stored here")], merge=both)
    assert len(fresh.added) == 1 and len(seen) == 1  # a merge is asked only when a record is stored


def test_delete_removes_records_their_vectors_and_their_index_entries(store: MemoryStore) -> None:
    keep, gone = _record("keep.md", "alpha bravo"), _record("gone.md", "alpha charlie")
    store.upsert([keep, gone], _unit(2), "model-a")
    assert store.delete([gone.id, "not-stored"]) == 1
    assert store.get([keep.id, gone.id]) == {keep.id: keep}
    assert [h.record_id for h in store.bm25_search(["alpha"], ALL, 10)] == [keep.id]
    assert set(store.vectors_for([keep.id, gone.id], "model-a")) == {keep.id}


def test_relocate_points_stored_records_to_a_new_uri_and_keeps_their_ids(store: MemoryStore) -> None:
    a, b = _record("a.md", "alpha"), _record("b.md", "beta")
    store.upsert_records([a, b])
    assert store.relocate({a.id: "file:///moved/a.md", "0" * 32: "file:///nowhere"}) == 1
    got = store.get([a.id, b.id])
    assert got[a.id].provenance.uri == "file:///moved/a.md" and got[b.id].provenance.uri == "file:///b.md"
    assert store.relocate({a.id: "file:///moved/a.md"}) == 0  # idempotent
    assert store.known_ids([a.id, b.id]) == {a.id, b.id}


def test_iterate_yields_every_record_once_in_batches(store: MemoryStore) -> None:
    records = [_record(f"r{i}.md", f"text {i}") for i in range(7)]
    store.upsert_records(records)
    batches = list(store.iterate(batch=3))
    assert [len(b) for b in batches] == [3, 3, 1]
    assert sorted(r.id for b in batches for r in b) == sorted(r.id for r in records)


def test_lexical_search_honours_layers_and_every_kind_of_filter(store: MemoryStore) -> None:
    api = _record("api.md", "upload proxy retries", component="api", criticality=0.9, operator="alice",
                  access=AccessLevel.PUBLIC, when=datetime(2024, 5, 1, tzinfo=UTC))
    web = _record("web.md", "upload proxy retries", component="web", criticality=0.2, operator="bob",
                  access=AccessLevel.SECRET, when=datetime(2025, 5, 1, tzinfo=UTC))
    decision = _record("0001.md", "upload proxy decision", kind=RecordKind.DECISION)
    store.upsert_records([api, web, decision])

    def ids(where: SearchFilter) -> set[str]:
        return {h.record_id for h in store.bm25_search(["proxy"], where, 10)}

    domain = (Layer.DOMAIN,)
    assert ids(ALL) == {api.id, web.id, decision.id}
    assert ids(SearchFilter((Layer.WORKFLOW,))) == {decision.id}
    assert ids(SearchFilter(domain, component="api")) == {api.id}
    assert ids(SearchFilter(domain, min_criticality=0.5)) == {api.id}
    assert ids(SearchFilter(domain, since=datetime(2025, 1, 1, tzinfo=UTC))) == {web.id}
    assert ids(SearchFilter(domain, until=datetime(2025, 1, 1, tzinfo=UTC))) == {api.id}
    assert ids(SearchFilter(domain, operator="bob")) == {web.id}
    assert ids(SearchFilter(domain, max_access="internal")) == {api.id}
    assert ids(SearchFilter(domain, mission="elsewhere")) == set()
    by_layer = store.bm25_search_by_layer(["proxy"], ALL, 10)
    assert {h.record_id for h in by_layer[Layer.WORKFLOW]} == {decision.id}
    assert store.phrase_search(["proxy decision"], ALL, 5) == [decision.id]


def test_vectors_are_written_and_searched_by_record_id(store: MemoryStore) -> None:
    records = [_record(f"v{i}.md", f"vector text {i}", component="api" if i % 2 else "web") for i in range(4)]
    store.upsert_records(records)
    assert sorted(store.ids_without_vector("model-a", 10)) == sorted(r.id for r in records)
    vectors = _unit(4)
    store.put_vectors([r.id for r in records], vectors, "model-a")
    assert store.ids_without_vector("model-a", 10) == []
    hits = store.dense_search_by_layer(vectors[1], "model-a", ALL, 2)[Layer.DOMAIN]
    assert hits[0].record_id == records[1].id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    only_web = store.dense_search_by_layer(vectors[1], "model-a", SearchFilter((Layer.DOMAIN,), component="web"), 4)
    assert {h.record_id for h in only_web[Layer.DOMAIN]} == {records[0].id, records[2].id}
    stored = store.vectors_for([records[3].id], "model-a")
    np.testing.assert_allclose(stored[records[3].id], vectors[3], atol=1e-6)
    store.put_vectors([records[0].id], vectors[3:4], "model-a")  # replaced, not added
    assert store.vector_models() == {"model-a": 4}


def test_vectors_of_different_models_are_never_mixed(store: MemoryStore) -> None:
    a, b = _record("a.md", "alpha"), _record("b.md", "bravo")
    store.upsert([a], _unit(1, dim=8), "model-a")
    store.upsert([b], _unit(1, dim=4, seed=3), "model-b")
    query = _unit(1, dim=8)[0]
    assert [h.record_id for h in store.dense_search_by_layer(query, "model-a", ALL, 5)[Layer.DOMAIN]] == [a.id]
    assert set(store.vectors_for([a.id, b.id], "model-b")) == {b.id}
    assert store.delete_vectors_not_of("model-b") == 1
    assert store.vector_models() == {"model-b": 1}
    assert store.dense_search_by_layer(query, "model-a", ALL, 5)[Layer.DOMAIN] == []


def test_retrieval_events_round_trip_with_who_and_where(store: MemoryStore) -> None:
    sent = NewRetrievalEvent(
        query="why sqlite?", scope="all", filters={"component": "api"}, token_budget=800, tokens_used=120,
        record_ids=("r1", "r2"), scores=(0.9, 0.5), omitted=1, duration_ms=12.5, model_id="model-a",
        session_id="s-1", operator="alice@example.org", mission="m", client=Client.MCP,
    )
    logged = store.log_retrieval_event(sent)
    store.log_retrieval_event(sent.model_copy(update={"query": "later"}))
    events = store.retrieval_events(10)
    assert [e.query for e in events] == ["later", "why sqlite?"]
    assert events[1] == logged
    assert events[1].model_dump(exclude={"id", "time"}) == sent.model_dump()
    assert store.count_retrieval_events() == 2


def test_state_round_trips_per_mission_and_key(store: MemoryStore) -> None:
    assert store.get_state("m", "git_head") is None
    store.set_state("m", "git_head", "abc")
    store.set_state("m", "git_head", "def")
    store.set_state("other", "git_head", "xyz")
    assert store.get_state("m", "git_head") == "def"
    assert store.get_state("other", "git_head") == "xyz"


def test_state_is_replaced_only_while_it_holds_the_expected_value(store: MemoryStore) -> None:
    """A compare-and-set: a read-modify-write (the stored incident, docs/adr/0091) loses no other writer's change."""
    assert store.replace_state("m", "incident", None, "v1") is True
    assert store.replace_state("m", "incident", None, "v2") is False  # it exists now
    assert store.replace_state("m", "incident", "stale", "v2") is False
    assert store.get_state("m", "incident") == "v1"
    assert store.replace_state("m", "incident", "v1", "v2") is True
    assert store.get_state("m", "incident") == "v2"
    assert store.replace_state("other", "incident", "v2", "x") is False  # per mission
    assert store.get_state("other", "incident") is None


def test_delete_missing_keeps_only_the_named_source_keys(store: MemoryStore) -> None:
    keep, stale = _record("keep.md", "k"), _record("stale.md", "s")
    store.upsert_records([keep, stale])
    assert store.delete_missing("m", ["doc_chunk"], [keep.source_key]) == 1
    assert store.known_ids([keep.id, stale.id]) == {keep.id}
    assert store.count_kind("m", "doc_chunk") == 1
    assert store.missions() == {"m": 1}


def test_delete_missing_keeps_what_spare_keeps_judging_the_record_as_stored(store: MemoryStore) -> None:
    stale, spared = _record("stale.md", "s"), _record("spared.md", "p")
    store.upsert_records([stale, spared])
    judged: list[str] = []

    def spare(record: Record) -> bool:
        judged.append(record.id)
        return record.text == "p"

    assert store.delete_missing("m", ["doc_chunk"], [], spare=spare) == 1
    assert sorted(judged) == sorted([stale.id, spared.id])
    assert store.known_ids([stale.id, spared.id]) == {spared.id}


def test_a_fresh_store_is_sound_writable_and_at_the_current_schema(store: MemoryStore) -> None:
    store.ensure_sound()
    assert store.read_only is False
    assert store.schema_version >= 2
    with pytest.raises(InputError, match="one row for each"):
        store.put_vectors(["x"], _unit(2), "model-a")  # two vectors for one id: rejected, nothing written


def test_priors_are_read_without_the_records_and_mark_superseded_decisions(store: MemoryStore) -> None:
    old = Record.build(
        kind=RecordKind.DECISION, title="ADR-0001", text="use postgres",
        provenance=Provenance(kind=SourceKind.ADR, ref="0001.md", uri="file:///0001.md", mission="m",
                              time=datetime(2024, 1, 1, tzinfo=UTC)),
        criticality=0.7, attributes={"status": "accepted", "superseded_by": ["0002"]},
    )
    doc = _record("guide.md", "a guide", criticality=0.4)
    store.upsert_records([old, doc])
    priors = store.priors_of([old.id, doc.id, "missing"])
    assert set(priors) == {old.id, doc.id}
    assert (priors[old.id].layer, priors[old.id].kind, priors[old.id].superseded) == (
        Layer.WORKFLOW, RecordKind.DECISION, True)
    assert (priors[doc.id].criticality, priors[doc.id].superseded, priors[doc.id].bare_merge) == (0.4, False, False)


def test_priors_say_when_a_record_was_stored_not_only_when_it_happened(store: MemoryStore) -> None:
    """The event vector queue's age is counted from when its oldest event was stored (issue 37): an
    event from 2015 stored now has waited seconds, not eleven years."""
    before = datetime.now(UTC)
    event = _record("line-1", "Notification time out: 3200", kind=RecordKind.DOMAIN_EVENT,
                    when=datetime(2015, 7, 29, 17, 41, tzinfo=UTC))
    store.upsert_records([event])
    after = datetime.now(UTC)
    prior = store.priors_of([event.id])[event.id]
    assert prior.time == datetime(2015, 7, 29, 17, 41, tzinfo=UTC)
    assert prior.stored is not None and before.timestamp() - 1 <= prior.stored.timestamp() <= after.timestamp() + 1


def test_priors_mark_a_probably_superseded_decision_as_superseded(store: MemoryStore) -> None:
    probable, live = (
        Record.build(
            kind=RecordKind.DECISION, title=f"ADR-000{n}", text=f"use haproxy {n}",
            provenance=Provenance(kind=SourceKind.ADR, ref=f"000{n}.md", uri=f"file:///000{n}.md", mission="m",
                                  time=datetime(2024, 1, 1, tzinfo=UTC)),
            criticality=0.7, attributes=attributes,
        )
        for n, attributes in ((8, {"status": "accepted", "probably_superseded_by": ["0021"]}),
                              (9, {"status": "accepted", "superseded_by": [], "probably_superseded_by": []}))
    )
    store.upsert_records([probable, live])
    priors = store.priors_of([probable.id, live.id])
    assert (priors[probable.id].superseded, priors[live.id].superseded) == (True, False)


def test_most_critical_returns_the_most_critical_records_passing_the_filter(store: MemoryStore) -> None:
    records = [_record(f"c{i}.md", f"text {i}", criticality=c, component="api" if i < 3 else "web")
               for i, c in enumerate([0.2, 0.9, 0.5, 1.0])]
    store.upsert_records(records)
    assert [h.record_id for h in store.most_critical(ALL, 2)] == [records[3].id, records[1].id]
    api = store.most_critical(SearchFilter((Layer.DOMAIN,), component="api"), 10)
    assert [(h.record_id, h.score) for h in api] == [(records[1].id, 0.9), (records[2].id, 0.5), (records[0].id, 0.2)]


def test_has_component_tells_a_stored_component_from_an_unknown_one(store: MemoryStore) -> None:
    store.upsert_records([_record("a.md", "text a", component="api"), _record("b.md", "text b")])
    assert store.has_component("api") is True
    assert store.has_component("web") is False
    assert store.components() == {"api": 1}


def test_records_of_kind_filters_by_kind_mission_operator_and_time_newest_first(store: MemoryStore) -> None:
    def at(day: int) -> datetime:
        return datetime(2025, 3, day, tzinfo=UTC)

    old = _record("c1", "first", kind=RecordKind.CORRECTION_PATTERN, operator="alice", when=at(1))
    new = _record("c2", "second", kind=RecordKind.CORRECTION_PATTERN, operator="alice", when=at(5))
    bob = _record("c3", "third", kind=RecordKind.CORRECTION_PATTERN, operator="bob", when=at(3))
    other = _record("c4", "fourth", kind=RecordKind.CORRECTION_PATTERN, operator="alice", when=at(4), mission="n")
    doc = _record("d1", "a document", when=at(6))
    store.upsert_records([old, new, bob, other, doc])
    kind = [RecordKind.CORRECTION_PATTERN.value]
    assert [r.id for r in store.records_of_kind(kind)] == [new.id, other.id, bob.id, old.id]
    assert [r.id for r in store.records_of_kind(kind, mission="m", operator="alice")] == [new.id, old.id]
    assert [r.id for r in store.records_of_kind(kind, since=at(3), until=at(5))] == [other.id, bob.id]
    assert [r.id for r in store.records_of_kind(kind, limit=1)] == [new.id]
    assert store.records_of_kind([]) == []


def test_retrieval_events_matching_narrows_by_origin_and_time(store: MemoryStore) -> None:
    def event(session: str, operator: str, mission: str) -> NewRetrievalEvent:
        return NewRetrievalEvent(query="q", scope="all", token_budget=100, tokens_used=10, model_id="m",
                                 session_id=session, operator=operator, mission=mission, client=Client.CLI)

    first = store.log_retrieval_event(event("s1", "alice", "m"))
    second = store.log_retrieval_event(event("s2", "alice", "m"))
    third = store.log_retrieval_event(event("s1", "bob", "n"))
    assert [e.id for e in store.retrieval_events_matching(session_id="s1")] == [third.id, first.id]
    assert [e.id for e in store.retrieval_events_matching(operator="alice", mission="m")] == [second.id, first.id]
    assert [e.id for e in store.retrieval_events_matching(operator="alice", limit=1)] == [second.id]
    assert store.retrieval_events_matching(until=first.time) == []
    assert {e.id for e in store.retrieval_events_matching(since=first.time)} == {first.id, second.id, third.id}


def test_delete_mission_removes_its_records_vectors_events_and_state_only(store: MemoryStore) -> None:
    gone, kept = _record("a.md", "alpha words", mission="gone"), _record("b.md", "alpha words", mission="kept")
    store.upsert([gone, kept], _unit(2), "model-a")
    for mission in ("gone", "kept"):
        store.log_retrieval_event(NewRetrievalEvent(query="q", scope="all", token_budget=1, tokens_used=0,
                                                    model_id="m", mission=mission))
        store.set_state(mission, "bookmark", "x")
    assert store.delete_mission("gone") == {"records": 1, "retrieval_events": 1, "state": 1}
    assert store.missions() == {"kept": 1}
    assert store.get([gone.id, kept.id]) == {kept.id: kept}
    assert store.vector_models() == {"model-a": 1}
    assert [h.record_id for h in store.bm25_search(["alpha"], ALL, 10)] == [kept.id]
    assert store.get_state("gone", "bookmark") is None and store.get_state("kept", "bookmark") == "x"
    assert store.count_retrieval_events() == 1
    assert store.delete_mission("gone") == {"records": 0, "retrieval_events": 0, "state": 0}


def test_events_put_as_they_are_keep_id_and_time_and_are_stored_once(store: MemoryStore) -> None:
    from mission_memory.retrieval_events import RetrievalEvent

    def moved(n: int, month: int) -> RetrievalEvent:
        return RetrievalEvent(query=f"q{n}", scope="all", token_budget=10, tokens_used=1, model_id="m", mission="m",
                              id=f"{n:032x}", time=datetime(2024, month, 1, tzinfo=UTC))

    older, newer = moved(1, 3), moved(2, 6)
    assert store.put_retrieval_events([older, newer, older]) == 2
    assert store.put_retrieval_events([newer]) == 0
    assert store.retrieval_events(10) == [newer, older]
    assert store.retrieval_events_matching(until=datetime(2024, 4, 1, tzinfo=UTC)) == [older]


def test_state_items_list_every_value_sorted_and_narrow_by_mission(store: MemoryStore) -> None:
    store.set_state("n", "b", "2")
    store.set_state("m", "z", "3")
    store.set_state("n", "a", "1")
    assert store.state_items() == [("m", "z", "3"), ("n", "a", "1"), ("n", "b", "2")]
    assert store.state_items("n") == [("n", "a", "1"), ("n", "b", "2")]


def test_dense_search_per_kind_gives_a_small_kind_its_own_share_of_the_layer(store: MemoryStore) -> None:
    # docs/adr/0050: 30 commits all closer to the query than the 3 decisions of the same layer.
    query = np.zeros(8, dtype=np.float32)
    query[0] = 1.0

    def near(cosine: float, seed: int) -> npt.NDArray[np.float32]:
        side = _unit(1, seed=seed)[0]
        side[0] = 0.0
        side /= np.linalg.norm(side)
        return (cosine * query + np.sqrt(1 - cosine**2) * side).astype(np.float32)

    commits = [_record(f"c{i}", f"commit {i}", kind=RecordKind.COMMIT) for i in range(30)]
    decisions = [_record(f"d{i}.md", f"decision {i}", kind=RecordKind.DECISION) for i in range(3)]
    vectors = np.stack([near(0.95 - 0.001 * i, i) for i in range(30)] + [near(0.6 - 0.01 * i, 50 + i) for i in range(3)])
    store.upsert([*commits, *decisions], vectors, "model-a")
    workflow = SearchFilter((Layer.WORKFLOW,))

    by_layer = store.dense_search_by_layer(query, "model-a", workflow, 10)[Layer.WORKFLOW]
    assert [h.record_id for h in by_layer] == [c.id for c in commits[:10]]
    by_kind = store.dense_search_by_layer(query, "model-a", workflow, 10, per_kind=True)[Layer.WORKFLOW]
    assert [h.record_id for h in by_kind] == [c.id for c in commits[:10]] + [d.id for d in decisions]
    assert [h.score for h in by_kind] == sorted((h.score for h in by_kind), reverse=True)
    assert by_kind[-1].score == pytest.approx(0.58, abs=1e-5)
    assert [h.kind for h in by_kind] == [RecordKind.COMMIT] * 10 + [RecordKind.DECISION] * 3
    assert {h.kind for h in by_layer} == {None}
    # Cutting per kind never loses a hit the per-layer search had, and an empty kind adds nothing.
    assert store.dense_search_by_layer(query, "model-a", SearchFilter((Layer.PRACTITIONER,)), 10, per_kind=True) == {
        Layer.PRACTITIONER: []
    }
