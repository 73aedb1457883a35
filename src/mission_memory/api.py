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
from datetime import UTC, datetime, timedelta
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
    from collections.abc import Sequence

    from mission_memory.corrections.practitioner_records import Correction
    from mission_memory.corrections.rate import CorrectionRate
    from mission_memory.corrections.recording import CorrectionImport
    from mission_memory.ingest.repository import IngestReport, ProgressFn
    from mission_memory.refresh.orchestrator import RefreshReport
    from mission_memory.refresh.summarizers import Summarizer
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

    # -- corrections ----------------------------------------------------------------------------

    def record_correction(
        self,
        *,
        correction_class: str,
        category: str,
        outcome: str,
        summary: str,
        component: str | None = None,
        expected: Sequence[str] = (),
        session_id: str | None = None,
        mission: str | None = None,
        operator: str | None = None,
        time: datetime | None = None,
    ) -> Correction:
        """Record one explicit operator correction as a labelled practitioner record (DESIGN.md §3, §6).

        Args:
            correction_class: how the agent was corrected, a lower-case slug (``wrong-approach``).
            category: the semantic category, a lower-case slug (``data``, ``tests``).
            outcome: ``accepted``, ``rejected`` or ``modified``.
            summary: one sentence (at most 300 characters, one line) saying what was corrected; it is
                stored as written, so it should hold no secrets or raw content.
            component: the affected component; must be one the memory holds.
            expected: records the agent should have had (record ids, paths, commit shas, ``ADR-N``).
            session_id: the agent session the correction belongs to (links it to that session's
                retrieval events).
            mission: default: the only stored mission, or the one named like the working directory.
            operator: default: as for queries (:func:`~mission_memory.query_origin.resolve_operator`).
            time: when it happened; default now (UTC).

        Returns:
            The correction with its label; recording the same correction at the same time again
            changes nothing.

        Raises:
            InputError: a field is invalid, or names a mission, component or record that is not
                stored; nothing is written then.
        """
        from mission_memory.corrections.pipeline import explicit_correction
        from mission_memory.corrections.recording import check_explicit, explicit_mission, store_corrections

        correction = explicit_correction(
            correction_class=correction_class, category=category, outcome=outcome, summary=summary,
            component=component, expected=expected, session_id=session_id,
            mission=explicit_mission(self.store, mission), operator=operator or resolve_operator(),
            time=time if time is not None else datetime.now(UTC),
        )
        check_explicit(self.store, correction)
        labelled, _ = store_corrections(self.store, self.embedder, [correction], **self._signal_settings())
        return labelled[0]

    def import_corrections(
        self,
        *,
        prompts: str | Path | None = None,
        transcripts: Sequence[str | Path] = (),
        mission: str | None = None,
        operator: str | None = None,
    ) -> CorrectionImport:
        """Import corrections from the prompt corpus and from Claude Code transcripts (DESIGN.md §6).

        Each correction found (see :mod:`mission_memory.corrections.detector`) is stored as a
        labelled practitioner record holding abstractions only; ids are stable, so a re-run adds
        nothing.

        Args:
            prompts: a prompt repository (the hook's ``prompts.git``); None with no ``transcripts``
                means ``<data dir>/prompts.git``.
            transcripts: transcript files or folders (searched for ``*.jsonl``).
            mission: the mission of every imported correction; default: the prompt's repository or
                the session's working-directory folder name.
            operator: the operator of transcript sessions, and of prompts that name none; default
                as for queries.

        Raises:
            InputError: a path does not exist, or a stored prompt document is invalid.
            BackendUnavailable: git cannot read the prompt repository.
        """
        from mission_memory.corrections.pipeline import (
            DerivedCorrections,
            prompt_corrections,
            transcript_corrections,
        )
        from mission_memory.corrections.recording import CorrectionImport, SourceCounts, store_corrections
        from mission_memory.metrics.transcript_sessions import read_sessions
        from mission_memory.prompts.corpus import PromptCorpus, default_prompt_repo

        who = operator or resolve_operator()
        derived: dict[str, DerivedCorrections] = {}
        if prompts is not None or not transcripts:
            repo = Path(prompts) if prompts is not None else default_prompt_repo(self.settings.data_dir)
            if prompts is not None and not repo.exists():
                raise InputError(f"prompt repository {str(repo)!r} does not exist")
            captured = PromptCorpus(repo).prompts()
            derived["prompt"] = prompt_corrections(
                captured, known_component=self.store.has_component, mission=mission, operator=who
            )
        if transcripts:
            sessions, _ = read_sessions([Path(p) for p in transcripts])
            derived["transcript"] = transcript_corrections(
                sessions, known_component=self.store.has_component, mission=mission, operator=who
            )
        report = CorrectionImport()
        for source, found in derived.items():
            labelled, outcome = store_corrections(self.store, self.embedder, found.corrections, **self._signal_settings())
            report.sources[source] = SourceCounts(
                found=len(found.corrections), added=len(outcome.added), unchanged=len(outcome.unchanged),
                replaced=len(outcome.replaced), skipped=dict(found.skipped),
            )
            for c in labelled:
                key = c.label.retrieval_caused.value
                report.labels[key] = report.labels.get(key, 0) + 1
        return report

    def corrections(
        self, *, mission: str | None = None, operator: str | None = None,
        since: datetime | None = None, until: datetime | None = None,
    ) -> list[Correction]:
        """The stored corrections (practitioner records read back), oldest first."""
        from mission_memory.corrections.recording import stored_corrections

        return stored_corrections(self.store, mission=mission, operator=operator, since=since, until=until)

    def label_corrections(self, *, mission: str | None = None) -> dict[str, int]:
        """Label the stored corrections again (after more queries, ingests or a new threshold).

        A correction whose label changes gets a new record id under the same source key and the
        same ``correction_id`` (docs/adr/0024); one whose label holds is left unchanged.

        Returns:
            ``{"true": n, "false": n, "unknown": n, "changed": n}``.
        """
        from mission_memory.corrections.recording import store_corrections

        current = self.corrections(mission=mission)
        labelled, outcome = store_corrections(self.store, self.embedder, current, **self._signal_settings())
        counts = {"true": 0, "false": 0, "unknown": 0}
        for c in labelled:
            counts[c.label.retrieval_caused.value] += 1
        return {**counts, "changed": len(outcome.replaced)}

    def correction_rate(
        self, *, by: str = "week", operator: str | None = None, mission: str | None = None,
        confidence: float = 0.95,
    ) -> CorrectionRate:
        """The share of retrieval-caused corrections per day or week, with counts and a Wilson interval.

        See :func:`mission_memory.corrections.rate.correction_rate` (DESIGN.md §6).

        Raises:
            InputError: ``by`` is not ``day`` or ``week``; a confidence outside (0, 1).
        """
        from mission_memory.corrections.rate import correction_rate

        return correction_rate(self.corrections(mission=mission, operator=operator), by=by, confidence=confidence)

    def correction_pairs(self, *, mission: str | None = None) -> list[dict[str, Any]]:
        """The "retrieved X, should have served Y" pairs of the retrieval-caused corrections, oldest first.

        See :mod:`mission_memory.corrections.pairs` for the shape (fixed by the shared interface).
        """
        from mission_memory.corrections.pairs import correction_pairs

        return list(correction_pairs(self.store, self.corrections(mission=mission)))

    def _signal_settings(self) -> dict[str, Any]:
        return {
            "window": timedelta(minutes=self.settings.correction_link_window_minutes),
            "threshold": self.settings.correction_relevance_threshold,
        }

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

