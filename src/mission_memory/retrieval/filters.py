"""Query filters and scope: validated once at the boundary, from CLI flags or an MCP ``filters`` object."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mission_memory.errors import InputError
from mission_memory.records import Layer
from mission_memory.utc import as_utc

__all__ = ["QueryFilters", "Scope", "layers_in_scope", "parse_filters", "parse_scope"]


class Scope(StrEnum):
    """Which layers a pull query searches (DESIGN.md §4)."""

    ALL = "all"
    DOMAIN = "domain"
    WORKFLOW = "workflow"
    PRACTITIONER = "practitioner"


def layers_in_scope(scope: Scope) -> tuple[Layer, ...]:
    """The layers a scope covers, in digest order (workflow, domain, practitioner)."""
    if scope is Scope.ALL:
        return (Layer.WORKFLOW, Layer.DOMAIN, Layer.PRACTITIONER)
    return (Layer(scope.value),)


def parse_scope(value: str) -> Scope:
    """A :class:`Scope` from text.

    Raises:
        InputError: ``value`` is not one of all, domain, workflow, practitioner.
    """
    try:
        return Scope(value.strip().lower())
    except ValueError:
        raise InputError(f"scope {value!r} is not one of: all, domain, workflow, practitioner") from None


class QueryFilters(BaseModel):
    """Structured restrictions of a pull query (the MCP tool's ``filters`` object).

    Attributes:
        component: only records of this component (a top-level folder, a service).
        min_criticality: only records with criticality ≥ this, in [0, 1]. ``criticality`` is
            accepted as an alias.
        since, until: only records whose source time lies in this range; a date means the whole
            day (``until`` inclusive), naive times are UTC.
        mission: only records of this mission.
        mission_type: only records of missions of this type.
        outcome: only practitioner records with this outcome (accepted, rejected, modified).
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        populate_by_name=True,
        json_schema_extra={"description": "Restrictions of a memory query; every field is optional."},
    )

    component: str | None = None
    min_criticality: float | None = Field(default=None, ge=0.0, le=1.0, alias="criticality")
    since: datetime | None = None
    until: datetime | None = None
    mission: str | None = None
    mission_type: str | None = None
    outcome: Literal["accepted", "rejected", "modified"] | None = None

    @field_validator("since", "until", mode="before")
    @classmethod
    def _dates(cls, value: Any, info: Any) -> Any:
        if isinstance(value, int | float):  # pydantic would read a number as Unix seconds
            raise ValueError("a number is not accepted here, only an ISO 8601 string")
        if isinstance(value, str) and len(value.strip()) == 10:
            day = date.fromisoformat(value.strip())
            moment = time.max if info.field_name == "until" else time.min
            return datetime.combine(day, moment, tzinfo=UTC)
        if isinstance(value, date) and not isinstance(value, datetime):
            moment = time.max if info.field_name == "until" else time.min
            return datetime.combine(value, moment, tzinfo=UTC)
        return value

    @field_validator("since", "until")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return as_utc(value) if value is not None else None

    def as_dict(self) -> dict[str, Any]:
        """The filters that are set, JSON-ready (times as ISO 8601)."""
        return self.model_dump(mode="json", exclude_none=True)


def parse_filters(raw: dict[str, Any] | QueryFilters | None) -> QueryFilters:
    """Validate a ``filters`` object.

    Raises:
        InputError: an unknown key or a bad value; the message names each one.
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
            shown = f" {err['input']!r}" if field in ("since", "until", "criticality", "min_criticality") else ""
            problems.append(f"{field}{shown}: {err['msg']}{hint}")
        raise InputError(f"invalid filters ({'; '.join(problems)})") from None
    return _checked_range(filters)


def _checked_range(filters: QueryFilters) -> QueryFilters:
    if filters.since and filters.until and filters.since > filters.until:
        raise InputError(f"filters: since ({filters.since.date()}) is after until ({filters.until.date()})")
    return filters
