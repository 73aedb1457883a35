"""The crisis timeline as a digest section: the fenced summary first, then the event entries.

The timeline itself (cascades, trends, the report and its rendering) is
:mod:`mission_memory.operations.crisis_timeline`; this module places it in a digest's layout
(docs/adr/0040).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from mission_memory.fence import close_marker, listed_name, neutralise_markers, open_marker
from mission_memory.operations.crisis_timeline import (
    TIMELINE_SHARE,
    TIMELINE_TITLE,
    crisis_report,
    render_timeline,
)
from mission_memory.operations.escalation import EscalationState
from mission_memory.operations.escalation_state import current_state
from mission_memory.records import Layer, RecordKind
from mission_memory.retrieval.digest import DigestSection, ranked_section
from mission_memory.retrieval.ranking import Candidate
from mission_memory.stores.base import MemoryStore
from mission_memory.tokens import Tokenizer

__all__ = ["MAX_TIMELINE_TOKENS", "MIN_TIMELINE_TOKENS", "digest_sections", "timeline_section"]

MAX_TIMELINE_TOKENS = 1500
"""Most tokens the timeline's summary may take in a digest."""
MIN_TIMELINE_TOKENS = 60
"""Below this room the summary is left out and only the event entries are shown."""


def _fenced(text: str, nonce: str) -> str:
    return f"{open_marker(0, nonce)}\n{neutralise_markers(text)}\n{close_marker(0, nonce)}"


def timeline_section(
    store: MemoryStore,
    mission: str,
    state: EscalationState,
    at: datetime,
    *,
    nonce: str,
    tokenizer: Tokenizer,
    token_budget: int,
) -> DigestSection:
    """The digest's timeline section: the rendered timeline fenced as excerpt 0, then the event entries.

    The section holds every domain-event candidate (so events appear here instead of among the
    domain layer's documents); its summary takes at most :data:`TIMELINE_SHARE` of ``token_budget``
    (and :data:`MAX_TIMELINE_TOKENS`), and is left out when that is under 60 tokens.

    Args:
        store, mission, state, at: see :func:`crisis_report`.
        nonce: the digest's envelope nonce (the summary quotes event and decision text).
        tokenizer: the digest's tokenizer.
        token_budget: the digest's budget, in tokens.
    """
    room = min(int(token_budget * TIMELINE_SHARE), MAX_TIMELINE_TOKENS)
    lead = ""
    if room >= MIN_TIMELINE_TOKENS:
        frame = tokenizer.count(_fenced("", nonce))
        body = render_timeline(crisis_report(store, mission, state, at), tokenizer, room - frame)
        lead = _fenced(body, nonce)

    def is_event(cand: Candidate) -> bool:
        return cand.record is not None and cand.record.kind is RecordKind.DOMAIN_EVENT

    # The heading is outside the fence: the mission's name is escaped there (ADR 0054).
    return DigestSection(f"{TIMELINE_TITLE} · mission {listed_name(mission)}", includes=is_event, lead=lead)


def digest_sections(
    store: MemoryStore,
    *,
    degraded_mission: str | None,
    asked_mission: str | None,
    layers: Sequence[Layer],
    requested: bool,
    nonce: str,
    tokenizer: Tokenizer,
    token_budget: int,
    now: datetime | None = None,
) -> list[DigestSection] | None:
    """The digest layout with the timeline section first, or None for the default layout.

    The timeline is shown when the query's mission is degraded (``degraded_mission``, from the
    triage) or when the caller asks for it (``requested``: ``query --timeline``, the MCP tool's
    ``timeline``). Its mission is the degraded one, else the one asked about, else the only mission
    holding events; with none of these (or, unasked, when the domain layer is out of scope) the
    layout stays the default, so normal-mode digests are unchanged.

    Args:
        degraded_mission: the mission pull triages for (None in normal mode).
        asked_mission: the query's mission filter (None: every mission).
        layers: the layers in scope.
        requested: the caller asked for the timeline.
        nonce, tokenizer, token_budget: the digest's.
        now: the clock (default: now).
    """
    if degraded_mission is None and not requested:
        return None
    if not requested and Layer.DOMAIN not in layers:
        return None
    mission = degraded_mission or asked_mission
    if mission is None:
        holding = [m for m in sorted(store.missions()) if store.count_kind(m, RecordKind.DOMAIN_EVENT.value)]
        if len(holding) != 1:
            return None
        mission = holding[0]
    clock = now or datetime.now(UTC)
    section = timeline_section(store, mission, current_state(store, mission, clock), clock, nonce=nonce,
                               tokenizer=tokenizer, token_budget=token_budget)
    return [section, ranked_section(layers)]
