"""The ``Embedder`` protocol every engine implements, and the vector type it returns.

E5 models embed queries and passages with different prefixes (``query:`` / ``passage:``); the
protocol keeps the two apart. Every stored vector is tagged with :attr:`Embedder.model_id`, and
vectors of different models are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "SupportsClose", "Vector", "normalised"]

Vector = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors."""

    model_id: str
    dim: int

    def embed_query(self, text: str) -> Vector:
        """One query vector, shape ``(dim,)``, unit length."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> Vector:
        """Passage vectors, shape ``(len(texts), dim)``, unit length each."""
        ...


@runtime_checkable
class SupportsClose(Protocol):
    """An embedder holding resources (connections) that its owner releases with ``close()``."""

    def close(self) -> None:
        """Release the resources."""
        ...




def normalised(matrix: Vector) -> Vector:
    """Rows of ``matrix`` (shape ``(n, dim)``) scaled to unit L2 length; zero rows stay zero."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Vector = (matrix / norms).astype(np.float32)
    return unit


