"""``Memory``: the one core API. The CLI, the MCP server, the hooks and the refresher call only this.

Example::

    from mission_memory import Memory

    with Memory.open() as memory:                       # settings from MISSION_MEMORY_* variables
        report = memory.ingest_repository("path/to/repo")
        digest = memory.query("add retries to the upload proxy", token_budget=4000)
        print(digest.text)
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from mission_memory.config import Settings, load_settings
from mission_memory.embeddings import Embedder, SupportsClose, configured_model_id, make_embedder
from mission_memory.errors import InputError
from mission_memory.query_origin import process_session_id, resolve_operator
from mission_memory.retrieval.digest import Digest, explain_empty
from mission_memory.retrieval.filters import QueryFilters, Scope, parse_filters, parse_scope
from mission_memory.retrieval.query import run_query
from mission_memory.retrieval_events import Client, RetrievalEvent
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.registry import open_store
from mission_memory.tokens import TiktokenTokenizer, Tokenizer

if TYPE_CHECKING:
    from mission_memory.ingest.repository import IngestReport, ProgressFn
    from mission_memory.refresh.orchestrator import RefreshReport
    from mission_memory.refresh.summarizers import Summarizer
    from mission_memory.retrieval.ranking_tune import TuneReport
    from mission_memory.trackers.base import Tracker

__all__ = ["Memory"]


class Memory:
    """A mission memory backed by the store ``settings.store`` names (default: SQLite in ``settings.data_dir``).

    The embedder and the tokenizer load on first use, so ``status`` and other bookkeeping stay
    fast. One ``Memory`` may be used from several threads.

    Args:
        settings: where the data lives and how retrieval is tuned.
        embedder: overrides the embedder named in the settings.
        tokenizer: overrides the default ``cl100k_base`` tokenizer.
        store: overrides the store named in the settings.

    Raises:
        ConfigError: the settings name an unknown store backend.
        BackendUnavailable: the store cannot be opened.
    """

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        tokenizer: Tokenizer | None = None,
        store: MemoryStore | None = None,
    ) -> None:
        self.settings = settings
        self.store: MemoryStore = store if store is not None else open_store(settings.store, settings.data_dir)
        self._embedder = embedder
        self._owns_embedder = embedder is None
        self._tokenizer = tokenizer
        self._lock = threading.Lock()

    @classmethod
    def open(cls, settings: Settings | None = None, **overrides: Any) -> Memory:
        """Open the memory named by ``settings`` (or by the environment, with ``overrides`` winning)."""
        return cls(settings or load_settings(**overrides))

    def close(self) -> None:
        """Close the store's connections and those of an embedder this memory made."""
        self.store.close()
        if self._owns_embedder and isinstance(self._embedder, SupportsClose):
            self._embedder.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def embedder(self) -> Embedder:
        """The embedder (loaded on first use)."""
        with self._lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.settings.embedder, self.settings)
            return self._embedder

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer (loaded on first use)."""
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = TiktokenTokenizer(self.settings.token_safety_margin)
            return self._tokenizer

    # -- ingest ---------------------------------------------------------------------------------

    def ingest_repository(
        self,
        path: str | Path,
        mission: str | None = None,
        mission_type: str | None = None,
        progress: ProgressFn | None = None,
    ) -> IngestReport:
        """Ingest a git repository (commits, ADRs, principles, documents) or a folder of documents.

        See :func:`mission_memory.ingest.repository.ingest_repository`.
        """
        from mission_memory.ingest.repository import ingest_repository  # parsers load only to ingest

        return ingest_repository(
            self.store, self.embedder, Path(path), mission=mission, mission_type=mission_type,
            max_file_bytes=self.settings.max_file_bytes, progress=progress,
        )

    # -- pull -----------------------------------------------------------------------------------

    def query(
        self,
        task_description: str,
        scope: str | Scope = Scope.ALL,
        token_budget: int | None = None,
        filters: dict[str, Any] | QueryFilters | None = None,
        *,
        client: Client | str = Client.API,
        session_id: str | None = None,
    ) -> Digest:
        """Pull: a digest of the records relevant to a task, within ``token_budget`` tokens.

        Args:
            task_description: the task or situation in natural language (any language).
            scope: ``all``, ``domain``, ``workflow`` or ``practitioner``.
            token_budget: bound on the digest, in tokens; defaults to the settings' budget, and may
                not exceed ``settings.max_token_budget`` (200,000 by default).
            filters: ``component``, ``min_criticality`` (alias ``criticality``), ``since``,
                ``until``, ``mission``, ``mission_type``, ``outcome``, ``operator``, ``max_access``.
            client: the shell asking (``cli``, ``mcp``, ``hook``; ``api`` for direct use), logged
                with the retrieval event.
            session_id: the agent session asking (Claude Code's ``session_id``); default: one
                id per process. The operator is resolved by :func:`~mission_memory.query_origin.resolve_operator`.

        Raises:
            InputError: bad scope, filters, budget, client or task description; a budget above
                the maximum; a mission or a component the store does not hold (the message lists
                the known ones). An empty store is not an error: the digest says nothing is ingested yet.
            BudgetError: the budget cannot hold the digest header.
        """
        checked = parse_filters(filters)
        try:
            asking = Client(client)
        except ValueError:
            raise InputError(f"client {client!r} is not one of: {', '.join(c.value for c in Client)}") from None
        budget = self.settings.default_token_budget if token_budget is None else token_budget
        if budget > self.settings.max_token_budget:
            raise InputError(
                f"token_budget {budget} is above the maximum of {self.settings.max_token_budget} tokens"
                " (setting MISSION_MEMORY_MAX_TOKEN_BUDGET)"
            )
        if checked.mission is not None:
            known = self.store.missions()
            if checked.mission not in known:
                names = ", ".join(sorted(known)) or "none yet: run `mission-memory ingest PATH`"
                raise InputError(f"no mission named {checked.mission!r} is stored (missions: {names})")
        if checked.component is not None and not self.store.has_component(checked.component):
            components = self.store.components(limit=30)
            if components:
                shown = ", ".join(components)
                raise InputError(
                    f"no component named {checked.component!r} is stored (components, most records first: {shown})"
                )
        digest = run_query(
            store=self.store,
            embedder=self.embedder,
            tokenizer=self.tokenizer,
            task_description=task_description,
            scope=scope if isinstance(scope, Scope) else parse_scope(scope),
            token_budget=budget,
            filters=checked,
            max_entry_tokens=self.settings.max_entry_tokens,
            max_entries=self.settings.max_digest_entries,
            client=asking,
            session_id=session_id or process_session_id(),
            operator=resolve_operator(),
        )
        if not digest.entries and not digest.omitted and not self.store.missions():
            note = "Nothing is ingested yet: run `mission-memory ingest PATH` on the mission's repository first."
            digest = explain_empty(digest, note, self.tokenizer)
        return digest

    def retrieval_events(self, limit: int = 100) -> list[RetrievalEvent]:
        """The latest retrieval events, newest first (DESIGN.md §4, docs/adr/0016)."""
        return self.store.retrieval_events(limit)

    # -- push ---------------------------------------------------------------------------------

    def refresh_once(
        self,
        tracker: Tracker,
        repo_path: str | Path | None = None,
        now: datetime | None = None,
        summarizer: Summarizer | None = None,
        *,
        label: str | None = None,
        mission: str | None = None,
    ) -> RefreshReport:
        """Push: one refresh pass over the tracker's labelled tasks, as of ``now`` (default: now).

        Args:
            tracker: where the tasks come from (see :func:`mission_memory.trackers.registry.make_tracker`).
            repo_path: the mission's git repository, or None for tasks only.
            now: the pass's clock; a naive datetime is taken as UTC.
            summarizer: overrides the summarizer the settings configure.
            label: the refresh label; defaults to the settings' (``LONG-TERM``).
            mission: the artifacts' mission; defaults to the repository folder's name.

        See :func:`mission_memory.refresh.orchestrator.refresh_once` (DESIGN.md §5).
        """
        from mission_memory.refresh.orchestrator import refresh_once  # the refresher loads only to refresh

        return refresh_once(
            self.store, self.embedder, tracker, Path(repo_path) if repo_path is not None else None,
            now if now is not None else datetime.now(UTC), self.settings, summarizer,
            label=label, mission=mission,
        )

    def refresh_status(self, now: datetime | None = None) -> dict[str, Any]:
        """The refresh queue (next due per task) as of ``now``, the latest refreshes and LLM spend vs the cap.

        See :func:`mission_memory.refresh.orchestrator.refresh_status`.
        """
        from mission_memory.refresh.orchestrator import refresh_status

        return refresh_status(self.store, self.settings, now)

    # -- ranking ------------------------------------------------------------------------------

    def tune_ranking(
        self, pairs: str | Path | None = None, *, holdout: float = 0.3, seed: int = 0, dry_run: bool = False
    ) -> TuneReport:
        """Fit pull's fusion weights on retrieval-correction pairs; adopt them only if held-out recall rises.

        Args:
            pairs: a JSON Lines file of pairs (``mission-memory corrections pairs -o FILE``); None
                builds them from the store's correction records that name missed records.
            holdout: share of the pairs held out to judge the fit, in (0, 1).
            seed: seed of the split.
            dry_run: measure and report without storing the weights.

        See :func:`mission_memory.retrieval.ranking_tune.tune_fusion_weights` (ADR 0032).

        Raises:
            InputError: unreadable or malformed pairs, a bad holdout, too few usable pairs.
        """
        from mission_memory.retrieval.ranking_tune import pairs_from_store, read_pairs, tune_fusion_weights

        found = read_pairs(Path(pairs).expanduser()) if pairs is not None else pairs_from_store(self.store)
        return tune_fusion_weights(
            self.store, self.embedder, found, holdout=holdout, seed=seed,
            max_entries=self.settings.max_digest_entries, dry_run=dry_run,
        )

    # -- maintenance ----------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Data dir, counts per layer and kind, missions, vectors per model, schema version, and
        ``read_only`` (true when the data dir is not writable: queries answer but are not logged)."""
        counts = self.store.counts()
        return {
            "data_dir": str(self.settings.data_dir),
            "database": str(self.settings.database_path),
            "schema_version": self.store.schema_version,
            "embedding_model": configured_model_id(self.settings),
            "records": sum(sum(kinds.values()) for kinds in counts.values()),
            "layers": counts,
            "missions": self.store.missions(),
            "components": self.store.components(),
            "vectors_by_model": self.store.vector_models(),
            "retrieval_events": self.store.count_retrieval_events(),
            "read_only": self.store.read_only,
        }

    def reindex(self, progress: ProgressFn | None = None, batch: int = 64) -> dict[str, Any]:
        """Re-embed every record from its stored text with the current embedder.

        Vectors of other models are deleted first, so vector spaces are never mixed; records that
        already have a vector of the current model are left alone, so an interrupted reindex
        resumes where it stopped.

        Returns:
            ``{"model_id", "removed_vectors", "embedded"}``.
        """
        embedder = self.embedder
        removed = self.store.delete_vectors_not_of(embedder.model_id)
        total = sum(sum(k.values()) for k in self.store.counts().values()) - self.store.vector_models().get(
            embedder.model_id, 0
        )
        done = 0
        while True:
            ids = self.store.ids_without_vector(embedder.model_id, batch)
            if not ids:
                break
            records = self.store.get(ids)
            present = [r for r in ids if r in records]
            vectors = embedder.embed_passages([records[r].embedding_text for r in present])
            self.store.put_vectors(present, vectors, embedder.model_id)
            done += len(present)
            if progress:
                progress("embed", done, max(total, done))
        return {"model_id": embedder.model_id, "removed_vectors": removed, "embedded": done}

