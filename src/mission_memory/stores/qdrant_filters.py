"""The Qdrant backend's reading of a :class:`~mission_memory.stores.filters.SearchFilter`.

The rules live in :data:`~mission_memory.stores.filters.FILTER_FIELDS`; this module translates
each :class:`~mission_memory.stores.filters.Comparison` into a Qdrant payload condition over the
filter columns every record point (and every vector point) carries
(:func:`~mission_memory.stores.filters.filter_columns`, unset values stored as ``null``), and names
the payload indexes those conditions need (:data:`PAYLOAD_INDEXES`). A test holds this reading
equal to :func:`~mission_memory.stores.filters.matches` on random records and filters.
"""

from __future__ import annotations

from typing import Any

from qdrant_client import models

from mission_memory.records import Layer
from mission_memory.stores.filters import FILTER_FIELDS, Comparison, SearchFilter

__all__ = ["PAYLOAD_INDEXES", "equals", "search_filter"]

PAYLOAD_INDEXES: dict[str, models.PayloadSchemaType] = {
    "layer": models.PayloadSchemaType.KEYWORD,
    "kind": models.PayloadSchemaType.KEYWORD,
    "record_id": models.PayloadSchemaType.KEYWORD,
    "source_key": models.PayloadSchemaType.KEYWORD,
    "vector_model": models.PayloadSchemaType.KEYWORD,
    **{
        spec.column: models.PayloadSchemaType.FLOAT if spec.numeric else models.PayloadSchemaType.KEYWORD
        for spec in FILTER_FIELDS
    },
}
"""Every payload field a record-point filter reads, with its index type (every filter field of
:data:`~mission_memory.stores.filters.FILTER_FIELDS`, plus the keys the store looks records up by)."""


def equals(key: str, value: Any) -> models.FieldCondition:
    """``key == value`` (a keyword or an integer)."""
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _is_null(key: str) -> models.IsNullCondition:
    return models.IsNullCondition(is_null=models.PayloadField(key=key))


def search_filter(where: SearchFilter, layers: tuple[Layer, ...] | None = None) -> models.Filter:
    """The Qdrant filter of ``where``, over ``layers`` (default: ``where.layers``).

    Each :class:`Comparison` becomes one condition, AND-ed: ``EQUALS`` a match (``null`` never
    matches), ``EQUALS_OR_UNSET`` null-or-match, ``AT_LEAST``/``AT_MOST`` a range, ``RANK_AT_MOST``
    a match on any allowed value, ``LAYER_RESTRICTED`` "another layer, or a match".
    """
    scope = layers if layers is not None else where.layers
    must: list[models.Condition] = [
        models.FieldCondition(key="layer", match=models.MatchAny(any=[layer.value for layer in scope]))
    ]
    for spec, value in where.active():
        key = spec.column
        match spec.comparison:
            case Comparison.EQUALS:
                must.append(equals(key, value))
            case Comparison.EQUALS_OR_UNSET:
                must.append(models.Filter(should=[_is_null(key), equals(key, value)]))
            case Comparison.AT_LEAST:
                must.append(models.FieldCondition(key=key, range=models.Range(gte=value)))
            case Comparison.AT_MOST:
                must.append(models.FieldCondition(key=key, range=models.Range(lte=value)))
            case Comparison.LAYER_RESTRICTED:
                assert spec.layer is not None
                must.append(models.Filter(should=[
                    models.Filter(must_not=[equals("layer", spec.layer.value)]),
                    equals(key, value),
                ]))
            case Comparison.RANK_AT_MOST:
                must.append(models.FieldCondition(key=key, match=models.MatchAny(any=list(spec.allowed(value)))))
    return models.Filter(must=must)
