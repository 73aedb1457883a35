"""Settings of the push refresher: the LLM endpoint and its daily cap, the label, tracker credentials.

Read from ``MISSION_MEMORY_*`` environment variables, like the core :class:`~mission_memory.config.Settings`
(which this module leaves alone): precedence is flag > environment > default.
"""

from __future__ import annotations

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from mission_memory.errors import ConfigError
from mission_memory.trackers.base import DEFAULT_LABEL

__all__ = ["RefreshSettings", "load_refresh_settings"]


class RefreshSettings(BaseSettings):
    """Refresher settings, read from ``MISSION_MEMORY_*`` variables.

    Attributes:
        llm_base_url: base URL of an OpenAI-compatible chat-completions endpoint
            (``http://localhost:11434/v1`` for Ollama); None means the extractive summarizer.
        llm_model: the model name sent to the endpoint; required with ``llm_base_url``.
        llm_api_key: bearer key for the endpoint, or None (local servers need none).
        llm_daily_token_cap: LLM tokens (prompt + completion, as the endpoint reports them) the
            refresher may spend per UTC day; past it, artifacts fall back to extractive and say so.
        refresh_label: the tracker label that marks a task for refresh (case-insensitive).
        plane_api_key: Plane ``X-API-Key``.
        github_token: GitHub token (optional for public repositories; raises the rate limit).
    """

    model_config = SettingsConfigDict(env_prefix="MISSION_MEMORY_", extra="ignore")

    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_daily_token_cap: int = Field(default=200_000, ge=0)
    refresh_label: str = DEFAULT_LABEL
    plane_api_key: str | None = None
    github_token: str | None = None

    @property
    def llm_configured(self) -> bool:
        """True when both an endpoint and a model are set."""
        return bool(self.llm_base_url and self.llm_model)


def load_refresh_settings(**overrides: object) -> RefreshSettings:
    """Read refresher settings from the environment, with non-None ``overrides`` winning.

    Raises:
        ConfigError: a variable or an override has an invalid value.
    """
    clean = {k: v for k, v in overrides.items() if v is not None}
    try:
        return RefreshSettings(**clean)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors())
        raise ConfigError(f"invalid refresh setting ({problems})") from exc
