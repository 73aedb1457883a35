"""The LLM spend ledger kept in the store, so every process sees one daily total.

Tokens are counted per UTC day under ``ingest_state`` mission ``__refresh__``, key
``llm_tokens:<YYYY-MM-DD>``. It implements the ``SpendLedger`` protocol of
:mod:`mission_memory.refresh.summarizers`.
"""

from __future__ import annotations

from datetime import date

from mission_memory.stores.base import StateStore

__all__ = ["REFRESH_MISSION", "StoreSpendLedger"]

REFRESH_MISSION = "__refresh__"


class StoreSpendLedger:
    """Daily LLM token spend stored in the store's state table.

    Args:
        store: the store shared with pull; the refresher is its only writer of these keys.
    """

    def __init__(self, store: StateStore) -> None:
        self.store = store

    @staticmethod
    def _key(day: date) -> str:
        return f"llm_tokens:{day.isoformat()}"

    def spent_on(self, day: date) -> int:
        """Tokens spent on ``day`` (UTC), 0 when none."""
        value = self.store.get_state(REFRESH_MISSION, self._key(day))
        return int(value) if value else 0

    def add(self, day: date, tokens: int) -> None:
        """Add ``tokens`` (≥ 0) to the spend of ``day``."""
        if tokens <= 0:
            return
        self.store.set_state(REFRESH_MISSION, self._key(day), str(self.spent_on(day) + tokens))
