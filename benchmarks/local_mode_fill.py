"""Filling Qdrant's client local mode with a million points in linear time, for benchmarks only.

Local mode (``qdrant_client.local.local_collection.LocalCollection._add_point``) grows its deletion
masks with ``np.append`` once per point, which copies the whole mask each time: inserting ``n``
points costs O(n²) bytes copied (qdrant-client 1.x; measured by ``bench_backends.py`` at 1M records:
114 points/s at 40k points and falling). A 1M-record memory would take many hours to import, which
says nothing about a Qdrant server (its segments are Rust and append in O(1)).

:func:`amortised_appends` swaps, for the duration of a ``with`` block, the ``np`` that module sees
for a proxy whose ``append`` of one scalar to a 1-D array writes into spare capacity of a buffer it
owns (doubling when full) and returns a view of the filled part, which is what ``np.append`` would
return: same values, same dtype, same length. Every other attribute is NumPy's own, and searches run
after the block with NumPy itself, so no search path is changed.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["amortised_appends"]


class _AmortisedNumpy:
    """NumPy, except that ``append(array_1d, scalar)`` is amortised O(1) (see the module docstring)."""

    def __init__(self) -> None:
        self._owned: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    def append(self, arr: Any, values: Any, axis: Any = None) -> Any:
        if axis is not None or not isinstance(arr, np.ndarray) or arr.ndim != 1 or np.ndim(values) != 0:
            return np.append(arr, values, axis=axis)
        value = np.asarray(values)
        dtype = np.result_type(arr, value)  # what np.append's concatenate gives
        base = arr.base
        if (
            isinstance(base, np.ndarray)
            and self._owned.get(id(base)) is base
            and base.dtype == dtype
            and arr.size < base.size
            and arr.__array_interface__["data"][0] == base.__array_interface__["data"][0]
        ):
            base[arr.size] = value
            return base[: arr.size + 1]
        grown = np.empty(max(16, 2 * (arr.size + 1)), dtype=dtype)
        grown[: arr.size] = arr
        grown[arr.size] = value
        self._owned[id(grown)] = grown
        return grown[: arr.size + 1]


@contextlib.contextmanager
def amortised_appends() -> Iterator[None]:
    """Within the block, local mode's per-point ``np.append`` is amortised O(1); restored after."""
    from qdrant_client.local import local_collection

    original = local_collection.np
    local_collection.np = _AmortisedNumpy()  # type: ignore[assignment]
    try:
        yield
    finally:
        local_collection.np = original
