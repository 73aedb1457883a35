"""Criticality triage in pull (docs/design.md §7, issue 10 item 3): in degraded mode a critical event worded
unlike the query reaches the digest, and the header states the mode, α, the rate and the window; in
normal mode the digest is byte for byte what the similarity pipeline alone produces. Real git
repository, real SQLite file, the real embedder; event times are relative to the real clock because
pull assesses at the real now."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from mission_memory.api import Memory
from mission_memory.mission_scope import resolve_mission_scope
from mission_memory.retrieval.digest import pack_digest
from mission_memory.retrieval.filters import QueryFilters, Scope, layers_in_scope
from mission_memory.retrieval.query import rank_candidates, search_candidates, select_candidates
from mission_memory.retrieval.ranking import RankingParams
from mission_memory.stores.filters import SearchFilter
from tests.conftest import GitRepo
from tests.operations.event_factory import burst, event

TASK = "How many times does the upload proxy retry a failed upload, and with what backoff?"
CRITICAL_TEXT = "Обстріл позицій у секторі Північ: двоє поранених, потрібна евакуація"


def _noise(count: int, end: datetime, start_index: int, spread: timedelta = timedelta(minutes=5)) -> list[dict[str, object]]:
    """Low-criticality events worded like the query (so similarity alone prefers them to the critical one)."""
    return [e | {"text": f"Upload proxy on relay {e['id']} retried a failed upload with backoff."}
            for e in burst(count, end, spread=spread, start_index=start_index)]


def repository_for_triage(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    """A small mission (upload proxy, storage, relay runbooks) whose documents the triage task is about."""
    repo = make_git_repo("ops")
    repo.commit("Upload proxy: retries", "2026-01-05T10:00:00+00:00", {
        "docs/upload-proxy.md": "# Upload proxy\n\n## Retries\n\nThe upload proxy retries a failed upload three "
        "times with exponential backoff starting at 200 ms.\n\n## Timeouts\n\nEach upload attempt times out after "
        "30 seconds; the proxy then retries.\n",
        "docs/storage.md": "# Storage\n\n## Buckets\n\nUploads land in the staging bucket and move to the archive "
        "bucket nightly.\n",
    })
    repo.commit("Runbook for the relay stations", "2026-01-06T10:00:00+00:00", {
        "docs/relays.md": "# Relay stations\n\n## Heartbeats\n\nEach relay station sends a heartbeat every minute.\n",
    })
    return repo


def _entry_texts(digest_entries: object) -> list[str]:
    return [e.record.text for e in digest_entries]  # type: ignore[attr-defined]


@pytest.fixture
def memory(make_git_repo: Callable[[str], GitRepo]) -> Memory:
    opened = Memory.open(event_mission="ops")
    opened.ingest_repository(repository_for_triage(make_git_repo).root, mission="ops")
    return opened


def test_a_critical_event_unrelated_to_the_query_reaches_the_digest_only_in_degraded_mode(memory: Memory) -> None:
    now = datetime.now(UTC)
    with memory:
        critical = event(999, now - timedelta(minutes=2), sector="north", type_="shelling", criticality=0.95,
                         text=CRITICAL_TEXT)
        state = memory.record_events([critical, *_noise(4, now - timedelta(minutes=1), 0)], embed=False).escalation
        memory.embed_pending()
        assert state.mode.value == "normal"
        normal = memory.query(TASK, filters={"mission": "ops"})
        assert CRITICAL_TEXT not in _entry_texts(normal.entries)
        assert "Mode: degraded" not in normal.text

        flood = _noise(36, now - timedelta(seconds=30), 100, spread=timedelta(minutes=6))
        state = memory.record_events(flood, embed=False).escalation
        memory.embed_pending()
        assert state.mode.value == "degraded" and state.rate == 41
        degraded = memory.query(TASK, filters={"mission": "ops"})
        texts = _entry_texts(degraded.entries)
        assert CRITICAL_TEXT in texts
        assert any("retries a failed upload three times" in t for t in texts)  # relevance still counts
        header = degraded.text.split("\n\n", 1)[0]
        assert re.search(r"Mode: degraded in mission ops since .* UTC · criticality triage", header)
        assert f"α {1 - 10 / 41:.2f}" in header and "rate 41 events per 10 min window" in header
        assert "escalating: east 40, north 1" not in header  # north is not flooding on its own
        assert "escalating: east 40" in header


def test_in_degraded_mode_the_critical_event_outranks_low_criticality_noise(memory: Memory) -> None:
    now = datetime.now(UTC)
    with memory:
        critical = event(999, now - timedelta(minutes=2), sector="north", criticality=0.95, text=CRITICAL_TEXT)
        memory.record_events([critical, *burst(30, now - timedelta(seconds=10), start_index=100)])
        memory.embed_pending()
        digest = memory.query("relay station heartbeat", scope="domain", filters={"mission": "ops"})
        texts = _entry_texts(digest.entries)
        assert texts[0] == CRITICAL_TEXT


def test_in_normal_mode_the_digest_is_what_the_similarity_pipeline_alone_produces(memory: Memory) -> None:
    now = datetime.now(UTC)
    with memory:
        memory.record_events([event(1, now - timedelta(minutes=3), criticality=0.95, text=CRITICAL_TEXT),
                              *_noise(5, now - timedelta(minutes=1), 10)])
        memory.embed_pending()
        digest = memory.query(TASK, filters={"mission": "ops"}, token_budget=3000)
        nonce = re.search(r"nonce=([0-9a-f]{12})", digest.text)
        assert nonce is not None
        filters = QueryFilters(mission="ops")
        layers = layers_in_scope(Scope.ALL)
        where = SearchFilter(layers, filters)
        params = RankingParams()
        lists = search_candidates(memory.store, memory.embedder, TASK, where, params)
        ranked = rank_candidates(lists, layers, params)
        candidates, _ = select_candidates(memory.store, memory.embedder.model_id, TASK, where, ranked, params,
                                          memory.settings.max_digest_entries)
        text, entries, _tokens, _omitted = pack_digest(
            TASK, "all", candidates, 3000, memory.tokenizer, memory.settings.max_entry_tokens, layers,
            nonce=nonce.group(1),
            header_lines=[resolve_mission_scope("ops", None, memory.store.missions()).header_line()],
        )
        assert digest.text == text
        assert [e.record.id for e in digest.entries] == [e.record.id for e in entries]


def test_a_flood_in_another_mission_does_not_triage_a_query_of_this_one(memory: Memory) -> None:
    now = datetime.now(UTC)
    with memory:
        memory.record_events(burst(30, now - timedelta(seconds=10)), "other-mission", embed=False)
        digest = memory.query(TASK, filters={"mission": "ops"})
        assert "Mode: degraded" not in digest.text
        widened = memory.query(TASK)
        assert "Mode: degraded in mission other-mission" in widened.text
