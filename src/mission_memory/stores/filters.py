"""Search filters, defined once: the filter type and the one field table every backend derives from.

:class:`QueryFilters` is what a caller may restrict a pull query by (the MCP tool's ``filters``
object, the CLI's flags), validated once at the boundary. :class:`SearchFilter` is what reaches a
store: the layers in scope and the filters. :data:`FILTER_FIELDS` says, for each filter, which
record column it tests and how (:class:`Comparison`). A backend builds its SQL, its NumPy masks
and its Python predicate from that table alone (the SQLite backend: ``stores/sqlite_filters.py``),
so BM25 and dense search cannot disagree, and adding a filter is a field here plus its entry in
the table (and a migration when the column is new).

Access levels are ordered (:data:`ACCESS_ORDER`, docs/design.md §10): ``max_access="internal"`` keeps
public and internal records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mission_memory.records import AccessLevel, Layer, Record
from mission_memory.utc import as_utc

__all__ = [
    "ACCESS_ORDER",
    "FILTER_FIELDS",
    "Comparison",
    "FilterField",
    "QueryFilters",
    "SearchFilter",
    "filter_columns",
    "matches",
    "to_column_value",
]

ACCESS_ORDER: tuple[str, ...] = tuple(level.value for level in AccessLevel)
"""Access levels from least to most restricted (records.py: public < internal < restricted < secret)."""


class QueryFilters(BaseModel):
    """Structured restrictions of a pull query (the MCP tool's ``filters`` object).

    Attributes:
        component: only records of this component (a top-level folder, a service).
        min_criticality: only records with criticality ≥ this, in [0, 1]. ``criticality`` is
            accepted as an alias.
        since, until: only records whose source time lies in this range; a date means the whole
            day (``until`` inclusive), naive times are UTC.
        mission: only records of this mission.
        mission_type: only records of missions of this type (records without a type are kept).
        outcome: only practitioner records with this outcome (accepted, rejected, modified); other
            layers are not affected.
        operator: only records about this operator (records of no operator are left out).
        max_access: the reader's clearance: only records at this access level or below
            (public < internal < restricted < secret).
        practitioner_operator: only practitioner records of this operator; other layers are not
            affected (a team server sets it for non-leads, ADR 0045).
        sector: only records of this sector or service (a domain event's sector is its
            component, so this is ``component`` under the operations name).
        event_type: only domain events of this type (``shelling``, ``HighErrorRate``); records
            that are not events are left out.
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        defer_build=True,
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
    operator: str | None = None
    max_access: AccessLevel | None = None
    practitioner_operator: str | None = None
    sector: str | None = None
    event_type: str | None = None

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


class Comparison(StrEnum):
    """How a filter value is compared with a record column."""

    EQUALS = "equals"
    """column = value."""
    EQUALS_OR_UNSET = "equals-or-unset"
    """column is unset, or column = value (a record without a mission type passes every type)."""
    AT_LEAST = "at-least"
    """column ≥ value (numbers, times as seconds since the epoch)."""
    AT_MOST = "at-most"
    """column ≤ value."""
    LAYER_RESTRICTED = "layer-restricted"
    """column = value for records of ``FilterField.layer``; records of other layers pass."""
    RANK_AT_MOST = "rank-at-most"
    """column's rank in ``FilterField.ranks`` ≤ the value's rank (unranked values never pass)."""


@dataclass(frozen=True)
class FilterField:
    """One filter: the :class:`QueryFilters` field, the record column it tests, and how.

    Attributes:
        name: the :class:`QueryFilters` attribute.
        column: the record column (see :func:`filter_columns`).
        comparison: see :class:`Comparison`.
        layer: for ``LAYER_RESTRICTED``, the layer the filter applies to.
        ranks: for ``RANK_AT_MOST``, the column's values in rank order.
    """

    name: str
    column: str
    comparison: Comparison
    layer: Layer | None = None
    ranks: tuple[str, ...] = ()

    @property
    def numeric(self) -> bool:
        """True when the column holds numbers (compared by value), not names (compared by code)."""
        return self.comparison in (Comparison.AT_LEAST, Comparison.AT_MOST)

    def allowed(self, value: Any) -> tuple[str, ...]:
        """For ``RANK_AT_MOST``: the column values that pass ``value``."""
        return self.ranks[: self.ranks.index(value) + 1]


FILTER_FIELDS: tuple[FilterField, ...] = (
    FilterField("mission", "mission", Comparison.EQUALS),
    FilterField("component", "component", Comparison.EQUALS),
    FilterField("min_criticality", "criticality", Comparison.AT_LEAST),
    FilterField("since", "time", Comparison.AT_LEAST),
    FilterField("until", "time", Comparison.AT_MOST),
    FilterField("mission_type", "mission_type", Comparison.EQUALS_OR_UNSET),
    FilterField("outcome", "outcome", Comparison.LAYER_RESTRICTED, layer=Layer.PRACTITIONER),
    FilterField("operator", "operator", Comparison.EQUALS),
    FilterField("max_access", "access_level", Comparison.RANK_AT_MOST, ranks=ACCESS_ORDER),
    FilterField("practitioner_operator", "operator", Comparison.LAYER_RESTRICTED, layer=Layer.PRACTITIONER),
    FilterField("sector", "component", Comparison.EQUALS),
    FilterField("event_type", "event_type", Comparison.EQUALS),
)
"""Every filter; the single source of the rules (docs/design.md §3, §4, §10)."""


def to_column_value(value: Any) -> Any:
    """A filter value as the column holds it: times as seconds since the epoch, enums as text."""
    if isinstance(value, datetime):
        return as_utc(value).timestamp()
    if isinstance(value, StrEnum):
        return value.value
    return value


class SearchFilter:
    """What a store search is restricted to: the layers in scope and the :class:`QueryFilters`.

    ``SearchFilter(layers, filters)`` or, for short, ``SearchFilter(layers, component="api")``.

    Attributes:
        layers: the layers in scope (never empty).
        filters: the restrictions.
    """

    __slots__ = ("filters", "layers")

    layers: tuple[Layer, ...]
    filters: QueryFilters

    def __init__(self, layers: tuple[Layer, ...], filters: QueryFilters | None = None, **values: Any) -> None:
        if not layers:
            raise ValueError("a search needs at least one layer")
        object.__setattr__(self, "layers", tuple(layers))
        merged = {**(filters.model_dump(exclude_none=True) if filters else {}), **values}
        object.__setattr__(self, "filters", QueryFilters.model_validate(merged))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("SearchFilter is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SearchFilter) and (self.layers, self.filters) == (other.layers, other.filters)

    def __hash__(self) -> int:
        return hash((self.layers, self.filters))

    def __repr__(self) -> str:
        return f"SearchFilter(layers={self.layers!r}, filters={self.filters.as_dict()!r})"

    def active(self) -> list[tuple[FilterField, Any]]:
        """The filters that are set, with their values as the column holds them."""
        out = []
        for spec in FILTER_FIELDS:
            value = getattr(self.filters, spec.name)
            if value is not None:
                out.append((spec, to_column_value(value)))
        return out


def filter_columns(record: Record) -> dict[str, Any]:
    """The columns :data:`FILTER_FIELDS` test, read from a record (as a backend stores them)."""
    return {
        "layer": record.layer.value,
        "mission": record.provenance.mission,
        "component": record.component,
        "criticality": record.criticality,
        "time": to_column_value(record.provenance.time),
        "mission_type": record.attributes.get("mission_type"),
        "outcome": record.attributes.get("outcome"),
        "operator": record.operator,
        "access_level": record.access_level.value,
        "event_type": record.attributes.get("event_type"),
    }


def matches(where: SearchFilter, columns: Mapping[str, Any]) -> bool:
    """The Python predicate: does a record with these ``columns`` pass ``where``?"""
    if columns["layer"] not in {layer.value for layer in where.layers}:
        return False
    for spec, value in where.active():
        have = columns[spec.column]
        match spec.comparison:
            case Comparison.EQUALS:
                ok = have is not None and have == value
            case Comparison.EQUALS_OR_UNSET:
                ok = have is None or have == value
            case Comparison.AT_LEAST:
                ok = have is not None and have >= value
            case Comparison.AT_MOST:
                ok = have is not None and have <= value
            case Comparison.LAYER_RESTRICTED:
                assert spec.layer is not None
                ok = columns["layer"] != spec.layer.value or have == value
            case Comparison.RANK_AT_MOST:
                ok = have in spec.allowed(value)
        if not ok:
            return False
    return True
