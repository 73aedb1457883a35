"""The pull flow behind ``Memory.query``: check the request, scope it to a mission, run it, explain an empty store.

:func:`~mission_memory.retrieval.query.run_query` answers one query in named steps; this module is
what comes before and after it for a caller: the client and the budget checked against the settings,
the mission the query answers from (docs/design.md §4, ADR 0029), a component the store does not hold
refused with the known ones, and the digest of an empty store saying what to do first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from mission_memory.config import Settings
from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError
from mission_memory.fence import listed_name, quote_name
from mission_memory.mission_scope import MissionScopeReason, resolve_mission_scope
from mission_memory.retrieval.digest import Digest, explain_empty
from mission_memory.retrieval.filters import QueryFilters, Scope
from mission_memory.retrieval.query import run_query
from mission_memory.retrieval_events import Client, process_session_id
from mission_memory.stores.base import DescribedStore, MemoryStore, stored_mission_names
from mission_memory.tokens import Tokenizer

__all__ = ["pull"]


def pull(
    store: MemoryStore,
    seen: MemoryStore,
    embedder: Embedder,
    tokenizer: Tokenizer,
    settings: Settings,
    task_description: str,
    scope: Scope,
    token_budget: int | None,
    filters: QueryFilters,
    *,
    client: Client | str,
    session_id: str | None,
    default_mission: str | None,
    operator: str | None,
    timeline: bool,
    now: datetime | None = None,
    empty_store_note: Callable[[Client], str | None] | None = None,
) -> Digest:
    """One pull query for a caller; see ``Memory.query`` for the arguments' meaning.

    Args:
        store: the whole store (mission names, components).
        seen: the store as the caller may see it (an access-scoped view on a team server).
        embedder, tokenizer, settings: the memory's.
        task_description, scope, token_budget, filters: the request (``token_budget`` None: the
            settings' default).
        client, session_id, operator: who asks, logged with the retrieval event.
        default_mission: the mission asked from, used when ``filters`` name none and it is stored.
        timeline: put the crisis timeline first even in normal mode.
        now: the clock the digest is answered at (UTC; None: now): escalation, triage, the timeline
            and ages are evaluated at it (a replayed history can be asked about).
        empty_store_note: asked only when the store is empty, with the asking shell: a closing line to
            give instead of "Nothing is ingested yet" (the data dir holds another backend's store), or
            None; like that line, it gives the CLI its commands and an agent none (issue 36).

    Raises:
        InputError: an unknown client, a budget above ``settings.max_token_budget``, a mission or
            a component the store does not hold, a bad task description.
        BudgetError: the budget cannot hold the digest header.
    """
    try:
        asking = Client(client)
    except ValueError:
        raise InputError(f"client {client!r} is not one of: {', '.join(c.value for c in Client)}") from None
    budget = settings.default_token_budget if token_budget is None else token_budget
    if budget > settings.max_token_budget:
        raise InputError(
            f"token_budget {budget} is above the maximum of {settings.max_token_budget} tokens"
            " (setting MISSION_MEMORY_MAX_TOKEN_BUDGET)"
        )
    stored = stored_mission_names(store)  # names only: counting reads every record (ADR 0049)
    try:
        missions = resolve_mission_scope(filters.mission, default_mission, stored)
    except InputError as exc:
        note = empty_store_note(asking) if not stored and empty_store_note is not None else None
        if note is None:  # say where this process looked: it may have been given no MISSION_MEMORY_DATA_DIR
            raise InputError(f"{exc}; {opened_store(settings, store)}") from None
        raise InputError(f"{exc}. {note}") from None  # the backend was switched: its data is elsewhere
    checked = filters.model_copy(update={"mission": missions.mission})
    if checked.component is not None and not _has_component(seen, checked.component, checked.mission):
        components = _components(seen, checked.mission, limit=30)
        if components or seen is not store:
            shown = ", ".join(listed_name(c) for c in components) or "none you may read"
            raise InputError(
                f"no component named {quote_name(checked.component)} is stored (components, most records "
                f"first: {shown})"
            )
    digest = run_query(
        store=seen,
        embedder=embedder,
        tokenizer=tokenizer,
        task_description=task_description,
        scope=scope,
        token_budget=budget,
        filters=checked,
        max_entry_tokens=settings.max_entry_tokens,
        max_entries=settings.max_digest_entries,
        client=asking,
        session_id=session_id or process_session_id(),
        operator=operator,
        scope_note=missions.header_line(asking.value) if stored else None,
        timeline=timeline,
        now=now,
    )
    digest = replace(digest, mission_scope=missions.to_json())
    if not digest.entries and not digest.omitted and not stored:
        missing = missions.default_mission if missions.reason is MissionScopeReason.DEFAULT_NOT_STORED else None
        note = (empty_store_note(asking) if empty_store_note is not None else None) or nothing_ingested(
            asking, missing, opened_store(settings, store))
        digest = explain_empty(digest, note, tokenizer)
    return digest


def _has_component(seen: MemoryStore, component: str, mission: str | None) -> bool:
    """Whether ``component`` is stored in ``mission`` (None: in any) and, in an access-scoped view,
    holds a record the caller may see
    (:meth:`~mission_memory.teams.access_control.AccessScopedStore.has_component`)."""
    return seen.has_component(component, mission=mission)


def _components(seen: MemoryStore, mission: str | None, limit: int) -> list[str]:
    """The components stored in ``mission`` (None: in any), most records first; in a scoped view only
    those holding a record the caller may see
    (:meth:`~mission_memory.teams.access_control.AccessScopedStore.components`). Another mission's
    components are no suggestion for this one."""
    return list(seen.components(limit=limit, mission=mission))


def opened_store(settings: Settings, store: MemoryStore) -> str:
    """Where this process looked, for an answer that found no mission: ``this process opened data dir
    '/srv/mm', store sqlite · /srv/mm/memory.db``. The path is shown escaped
    (:func:`~mission_memory.fence.quote_name`: a folder name is nobody's instruction); the store's
    description never holds a credential (:class:`~mission_memory.stores.base.DescribedStore`)."""
    where = f"data dir {quote_name(str(settings.data_dir), limit=400)}"
    if isinstance(store, DescribedStore):
        description, location = store.description, store.location
        shown = description if not location or location in description else f"{description} · {location}"
        where += f", store {quote_name(shown, limit=400)[1:-1]}"
    return f"this process opened {where}"


def nothing_ingested(client: Client, mission: str | None = None, opened: str = "") -> str:
    """The closing line of a digest from an empty store, in the asking shell's words: the CLI's command
    for ``cli``; for an agent (MCP, the SessionStart hook, the API) what to ask for, since it has no
    command line to run (issue 36).

    Args:
        client: the asking shell.
        mission: the mission asked for (or defaulted) that is not stored, or None; shown escaped.
        opened: where the process looked (:func:`opened_store`), or "".

    An agent's server gets only the environment its MCP client passes it, so a data dir set in the
    user's shell may not reach it: the line says where it looked and which variable moves it.
    """
    missing = f"mission {quote_name(mission)} is not stored, " if mission else ""
    where = f" ({missing}{opened})" if opened else (f" ({missing.removesuffix(', ')})" if missing else "")
    if client is Client.CLI:
        return (f"Nothing is ingested yet{where}: run `mission-memory ingest PATH` on the mission's repository "
                "first, or set MISSION_MEMORY_DATA_DIR to the data dir that holds it.")
    return (f"Nothing is ingested yet{where}: the memory holds no records until an operator ingests the mission's "
            "repository; if it is in another data dir, this process was not given MISSION_MEMORY_DATA_DIR (an MCP "
            "client passes a server only the environment its configuration sets, e.g. "
            "`claude mcp add -e MISSION_MEMORY_DATA_DIR=...`).")
