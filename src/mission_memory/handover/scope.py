"""``query(scope="handover")``: which mission a handover query answers for, and the rotation brief as a digest.

A handover query answers with the rotation brief (:mod:`mission_memory.handover.brief`) instead of a
pull; these are its rules, so ``Memory.query`` only dispatches to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mission_memory.retrieval.digest import Digest
from mission_memory.retrieval.filters import QueryFilters, Scope
from mission_memory.stores.base import MemoryStore, stored_mission_names

if TYPE_CHECKING:
    from mission_memory.handover.brief import RotationBrief
    from mission_memory.teams.access_control import AccessContext

__all__ = ["brief_as_digest", "handover_filters"]


def handover_filters(
    store: MemoryStore, filters: QueryFilters, default_mission: str | None, access: AccessContext | None
) -> QueryFilters:
    """The filters of a handover query with its mission chosen.

    Without a mission (or with ``*``), the brief is of ``default_mission`` when it is stored: the
    server's mission (``serve --mission``), not the folder its process runs in (docs/adr/0055). Then,
    still without one, an ``access`` context scoped to a single mission names it.

    Args:
        store: the whole store (its stored mission names are read only when needed).
        filters: the query's checked filters; ``mission``, ``operator`` (the outgoing operator) and
            ``since`` (the window's start) are what the brief reads.
        default_mission: the mission asked from, or None.
        access: who asks on a team server, or None for the local user.

    Returns:
        ``filters``, with ``mission`` replaced when one was chosen (a copy; ``filters`` is not changed).
    """
    if filters.mission in (None, "*") and default_mission in stored_mission_names(store):
        filters = filters.model_copy(update={"mission": default_mission})
    if access is not None and filters.mission is None and len(access.missions) == 1:
        filters = filters.model_copy(update={"mission": next(iter(access.missions))})
    return filters


def brief_as_digest(task_description: str, filters: QueryFilters, brief: RotationBrief) -> Digest:
    """The rotation brief wrapped as the :class:`~mission_memory.retrieval.digest.Digest` a query returns.

    The digest holds the brief's text, budget and token count (tokens), its omitted count and its
    retrieval event; no ranked entries. ``extra["brief"]`` is :meth:`RotationBrief.to_json`.
    """
    return Digest(
        query=task_description, scope=Scope.HANDOVER.value, token_budget=brief.token_budget,
        filters=filters.as_dict(), entries=(), omitted=brief.omitted, duplicates_suppressed=0,
        tokens_used=brief.tokens_used, text=brief.text, retrieval_event_id=brief.retrieval_event_id,
        extra={"brief": brief.to_json()},
    )
