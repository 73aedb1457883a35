"""Building the rotation brief and archiving it: the whole flow behind ``Memory.rotation_brief``.

Resolves the shift window (who hands over to whom, since when), collects the brief's items, packs
them within the budget, then archives the brief as a ``handover_brief`` record at the most
restricted access level of what it quotes, and logs the retrieval event of scope ``handover``
(docs/design.md §6, docs/adr/0026).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

from mission_memory.errors import InputError
from mission_memory.handover.acknowledgement import acknowledgement_of
from mission_memory.handover.archive import brief_record, shift_key
from mission_memory.handover.brief import RotationBrief, collect_brief_items, pack_brief
from mission_memory.handover.shift_window import resolve_shift
from mission_memory.handover.sources import repository_watch_items
from mission_memory.retrieval.filters import Scope
from mission_memory.retrieval_events import Client, NewRetrievalEvent, process_session_id, resolve_operator
from mission_memory.stores.base import MemoryStore
from mission_memory.teams.access_control import AccessContext, AccessScopedStore, most_restricted
from mission_memory.tokens import Tokenizer

__all__ = ["build_rotation_brief"]


def operator_is_known(store: MemoryStore, operator: str, mission: str) -> bool:
    """Whether ``operator`` left anything on ``mission``: a retrieval event, or a record of any kind they own."""
    from mission_memory.records import RecordKind

    if store.retrieval_events_matching(operator=operator, mission=mission, limit=1):
        return True
    return bool(store.records_of_kind([kind.value for kind in RecordKind], mission=mission, operator=operator, limit=1))


def build_rotation_brief(
    store: MemoryStore,
    tokenizer: Tokenizer,
    mission: str,
    *,
    from_operator: str | None,
    for_operator: str | None,
    since: datetime | None,
    token_budget: int,
    max_token_budget: int,
    now: datetime,
    repository: Path | None,
    archive: bool,
    client: Client | str,
    session_id: str | None,
    access: AccessContext | None,
) -> RotationBrief:
    """The rotation brief of ``mission`` at ``now``, archived and logged unless ``archive`` is False.

    Args:
        store: the whole store (the brief is archived there).
        tokenizer: counts the brief's tokens.
        mission: a stored mission's name.
        from_operator, for_operator: outgoing and incoming operator (defaults: the shift window's
            rule, and :func:`~mission_memory.retrieval_events.resolve_operator`).
        since: the window's start (None: the outgoing operator's latest stretch, at least 7 days).
        token_budget: bound on the brief, in tokens, within ``1..max_token_budget``.
        now: the window's end (UTC).
        repository: the mission's checkout, to warn when memory is behind it.
        archive: store the brief and log the retrieval event (never on a read-only store).
        client, session_id: logged with the retrieval event.
        access: who asks on a team server (ADR 0045); None: the local user.

    Raises:
        InputError: a budget out of range, an unknown client, a brief for another operator asked by
            a non-lead, a mission outside the caller's missions.
        BudgetError: the budget cannot hold the brief's header.
    """
    try:
        asking = Client(client)
    except ValueError:
        raise InputError(f"client {client!r} is not one of: {', '.join(c.value for c in Client)}") from None
    if token_budget < 1 or token_budget > max_token_budget:
        raise InputError(
            f"token_budget {token_budget} is outside 1..{max_token_budget} tokens"
            " (setting MISSION_MEMORY_MAX_TOKEN_BUDGET)"
        )
    if access is not None:
        access.check_mission(mission)
        if for_operator not in (None, access.operator) and not access.is_lead:
            raise InputError(
                f"operator {access.operator!r} may build a rotation brief only for themselves, not for {for_operator!r}"
            )
        for_operator = for_operator or access.operator
    incoming = for_operator or resolve_operator(repository)
    window = resolve_shift(store, mission, now=now, from_operator=from_operator, to_operator=incoming, since=since)
    seen: MemoryStore = (
        AccessScopedStore(store, access.for_handover_from(window.from_operator)) if access is not None else store
    )
    watch = repository_watch_items(seen, mission, repository) if repository is not None else []
    # A named outgoing operator memory has never seen (a typo) gets the brief, saying so, but it is not
    # archived: the next brief would call it the last handover, and `brief ack` could acknowledge it.
    known = from_operator is None or operator_is_known(seen, from_operator, mission)
    items, counts, profile = collect_brief_items(seen, window, extra_watch=watch, tokenizer=tokenizer,
                                                 from_operator_known=known, token_budget=token_budget)
    text, entries, tokens, omitted = pack_brief(items, token_budget, tokenizer)
    brief = RotationBrief(window, counts, token_budget, tokens, text, tuple(entries), omitted, profile,
                          from_operator_known=known)
    if not archive or store.read_only or not known:
        return brief
    quoted_ids = tuple(dict.fromkeys(r for item, _ in entries for r in item.record_ids))
    quoted = store.get(list(quoted_ids))
    record = brief_record(brief)
    # Stamped with the most restricted level of what the packed entries quote (records) and reveal
    # (file paths, commit subjects, counts): a reader below it must not be served the brief.
    level = most_restricted([*(q.access_level for q in quoted.values()), *(item.access_level for item, _ in entries)])
    record = record.model_copy(update={"access_level": level})
    store.upsert_records([record])
    event = store.log_retrieval_event(NewRetrievalEvent(
        query=f"handover brief for {incoming or 'unknown'} from {window.from_operator or 'unknown'}",
        scope=Scope.HANDOVER.value,
        filters={"mission": mission, "since": window.since.isoformat()},
        token_budget=token_budget,
        tokens_used=tokens,
        record_ids=quoted_ids,
        scores=tuple(1.0 for _ in quoted_ids),
        omitted=omitted,
        model_id="",
        session_id=session_id or process_session_id(),
        operator=access.operator if access is not None else incoming,
        mission=mission,
        client=asking,
    ))
    ack = acknowledgement_of(store, mission, shift_key(mission, window.from_operator, incoming, window.since.isoformat()))
    return replace(brief, archived_id=record.id, retrieval_event_id=event.id, acknowledged=ack)
