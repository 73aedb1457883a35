"""Query filters and scope: validated once at the boundary, from CLI flags or an MCP ``filters`` object.

:class:`QueryFilters` itself lives with the filter field table in :mod:`mission_memory.stores.filters`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import ValidationError

from mission_memory.errors import InputError, listed_problems
from mission_memory.records import Layer
from mission_memory.stores.filters import QueryFilters

__all__ = ["QueryFilters", "Scope", "layers_in_scope", "parse_filters", "parse_scope"]


class Scope(StrEnum):
    """Which layers a pull query searches (docs/design.md §4)."""

    ALL = "all"
    DOMAIN = "domain"
    WORKFLOW = "workflow"
    PRACTITIONER = "practitioner"
    HANDOVER = "handover"
    """Not a layer: the rotation brief of the mission (docs/design.md §6), built by ``Memory.rotation_brief``."""


def layers_in_scope(scope: Scope) -> tuple[Layer, ...]:
    """The layers a scope covers, in digest order (workflow, domain, practitioner).

    ``handover`` covers the layers the rotation brief reads: workflow and practitioner.
    """
    if scope is Scope.ALL:
        return (Layer.WORKFLOW, Layer.DOMAIN, Layer.PRACTITIONER)
    if scope is Scope.HANDOVER:
        return (Layer.WORKFLOW, Layer.PRACTITIONER)
    return (Layer(scope.value),)


def parse_scope(value: str) -> Scope:
    """A :class:`Scope` from text.

    Raises:
        InputError: ``value`` is not one of all, domain, workflow, practitioner, handover.
    """
    try:
        return Scope(value.strip().lower())
    except ValueError:
        raise InputError(f"scope {value!r} is not one of: {', '.join(s.value for s in Scope)}") from None


def parse_filters(raw: dict[str, Any] | QueryFilters | None) -> QueryFilters:
    """Validate a ``filters`` object.

    Raises:
        InputError: an unknown key or a bad value; the message names the first few and counts the rest.
    """
    if raw is None:
        return QueryFilters()
    if isinstance(raw, QueryFilters):
        return _checked_range(raw)  # validated already (the MCP tool's arguments), but not the range
    if not isinstance(raw, dict):
        raise InputError(f"filters must be an object, got {type(raw).__name__}")
    try:
        filters = QueryFilters.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "filters"
            hint = " (use a date like 2024-05-01 or a time like 2024-05-01T09:30:00Z)" if field in ("since", "until") else ""
            shown = f" {err['input']!r}" if field in ("since", "until", "criticality", "min_criticality", "max_access") else ""
            problems.append(f"{field}{shown}: {err['msg']}{hint}")
        raise InputError(f"invalid filters ({listed_problems(problems)})") from None
    return _checked_range(filters)


def _checked_range(filters: QueryFilters) -> QueryFilters:
    if filters.since and filters.until and filters.since > filters.until:
        raise InputError(f"filters: since ({filters.since.date()}) is after until ({filters.until.date()})")
    return filters
