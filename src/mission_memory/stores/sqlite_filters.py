"""The SQLite backend's three readings of a :class:`~mission_memory.stores.filters.SearchFilter`.

The rules live in :data:`~mission_memory.stores.filters.FILTER_FIELDS`; this module only
translates each :class:`~mission_memory.stores.filters.Comparison` into a SQL clause over the
``records`` table, a boolean NumPy mask over the vector cache, and (through
:func:`~mission_memory.stores.filters.matches`) the Python predicate used on rows already read.
A property test holds all three equal on random records and filters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mission_memory.records import Layer, RecordKind
from mission_memory.stores.filters import FILTER_FIELDS, Comparison, SearchFilter

if TYPE_CHECKING:  # NumPy is imported where a mask is made: opening a store (``status``) loads none
    import numpy as np
    import numpy.typing as npt

    from mission_memory.stores.vector_table import VectorTable

__all__ = [
    "CODED_COLUMNS", "FILTER_COLUMNS", "KIND_CODES", "KIND_NAMES", "LAYER_CODES", "NUMERIC_COLUMNS", "filter_mask",
    "filter_sql",
]

LAYER_CODES: dict[Layer, int] = {layer: i for i, layer in enumerate(Layer)}
KIND_NAMES: tuple[str, ...] = tuple(kind.value for kind in RecordKind)
"""Record kinds in the order of their codes in the vector table (docs/adr/0050)."""
KIND_CODES: dict[RecordKind, int] = {kind: i for i, kind in enumerate(RecordKind)}
NUMERIC_COLUMNS: tuple[str, ...] = tuple(dict.fromkeys(f.column for f in FILTER_FIELDS if f.numeric))
CODED_COLUMNS: tuple[str, ...] = tuple(dict.fromkeys(f.column for f in FILTER_FIELDS if not f.numeric))
FILTER_COLUMNS: tuple[str, ...] = ("layer", *NUMERIC_COLUMNS, *CODED_COLUMNS)
"""Every ``records`` column a filter reads, in the order :func:`row_columns` expects."""


def filter_sql(where: SearchFilter, alias: str) -> tuple[list[str], list[Any]]:
    """SQL clauses (AND-ed) and their parameters for ``where`` over ``records AS alias``."""
    marks = ",".join("?" * len(where.layers))
    clauses = [f"{alias}.layer IN ({marks})"]
    params: list[Any] = [layer.value for layer in where.layers]
    for spec, value in where.active():
        column = f"{alias}.{spec.column}"
        match spec.comparison:
            case Comparison.EQUALS:
                clauses.append(f"{column} = ?")
                params.append(value)
            case Comparison.EQUALS_OR_UNSET:
                clauses.append(f"({column} IS NULL OR {column} = ?)")
                params.append(value)
            case Comparison.AT_LEAST:
                clauses.append(f"{column} >= ?")
                params.append(value)
            case Comparison.AT_MOST:
                clauses.append(f"{column} <= ?")
                params.append(value)
            case Comparison.LAYER_RESTRICTED:
                assert spec.layer is not None
                clauses.append(f"({alias}.layer != ? OR {column} = ?)")
                params.extend([spec.layer.value, value])
            case Comparison.RANK_AT_MOST:
                allowed = spec.allowed(value)
                clauses.append(f"{column} IN ({','.join('?' * len(allowed))})")
                params.extend(allowed)
    return clauses, params


def filter_mask(table: VectorTable, where: SearchFilter) -> npt.NDArray[np.bool_] | None:
    """Rows of ``table`` passing the filters of ``where`` (layers not applied), or None for all rows."""
    import numpy as np

    mask: npt.NDArray[np.bool_] | None = None
    for spec, value in where.active():
        match spec.comparison:
            case Comparison.EQUALS:
                extra = table.codes[spec.column] == table.code_of(spec.column, value)
            case Comparison.EQUALS_OR_UNSET:
                codes = table.codes[spec.column]
                extra = (codes == -1) | (codes == table.code_of(spec.column, value))
            case Comparison.AT_LEAST:
                extra = table.numbers[spec.column] >= value
            case Comparison.AT_MOST:
                extra = table.numbers[spec.column] <= value
            case Comparison.LAYER_RESTRICTED:
                assert spec.layer is not None
                extra = (table.layer != LAYER_CODES[spec.layer]) | (
                    table.codes[spec.column] == table.code_of(spec.column, value)
                )
            case Comparison.RANK_AT_MOST:
                wanted = [table.code_of(spec.column, v) for v in spec.allowed(value)]
                extra = np.isin(table.codes[spec.column], [c for c in wanted if c >= 0])
        mask = extra if mask is None else mask & extra
    return mask


def row_columns(row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of ``SELECT <FILTER_COLUMNS>`` as the column mapping :func:`matches` reads."""
    return dict(zip(FILTER_COLUMNS, row, strict=True))
