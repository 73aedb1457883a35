"""``Memory``: the one core API. The CLI, the MCP server, the hooks and the refresher call only this.

Example::

    from mission_memory import Memory

    with Memory.open() as memory:                       # settings from MISSION_MEMORY_* variables
        report = memory.ingest_repository("path/to/repo")
        digest = memory.query("add retries to the upload proxy", token_budget=3000)
        print(digest.text)
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from mission_memory.config import MAX_RETENTION_DAYS, Settings, finite_number, load_settings
from mission_memory.embeddings import configured_model_id
from mission_memory.errors import BackendUnavailable, InputError
from mission_memory.mission_scope import unknown_mission
from mission_memory.records import AccessLevel, Record
from mission_memory.retrieval.filters import QueryFilters, Scope, parse_filters, parse_scope
from mission_memory.retrieval_events import Client, RetrievalEvent, resolve_operator
from mission_memory.stores.base import DescribedStore, MemoryStore
from mission_memory.stores.registry import OtherStore, open_store, other_backend_store
from mission_memory.stores.write_path import (
    embed_stored,
    forget_vector_backlog,
    store_records,
    vector_backlog,
)
from mission_memory.utc import as_utc, aware_clock, parse_clock

if TYPE_CHECKING:
    from mission_memory.corrections.practitioner_records import Correction
    from mission_memory.corrections.rate import CorrectionRate
    from mission_memory.corrections.recording import CorrectionImport
    from mission_memory.decisions import RejectedAlternative
    from mission_memory.embeddings import Embedder
    from mission_memory.handover.acknowledgement import Acknowledgement
    from mission_memory.handover.brief import RotationBrief
    from mission_memory.ingest.recorded_decisions import RecordedDecision
    from mission_memory.ingest.repository import IngestReport, ProgressFn
    from mission_memory.ingest.tracker_items import TrackerIngestReport
    from mission_memory.operations.alert_state import OpenAlert
    from mission_memory.operations.domain_events import DomainEvent
    from mission_memory.operations.escalation import EscalationState, FloodPolicy
    from mission_memory.operations.event_intake import EmbeddingQueue, IntakeReport
    from mission_memory.operations.incident_state import Incident
    from mission_memory.operations.retention import EventPruneReport
    from mission_memory.records import AccessLevel
    from mission_memory.refresh.artifacts import ArtifactPruneReport
    from mission_memory.refresh.orchestrator import RefreshReport
    from mission_memory.refresh.summarizers import Summarizer
    from mission_memory.retrieval.digest import Digest
    from mission_memory.retrieval.ranking_tune import TuneReport
    from mission_memory.stores.transfer import TransferSummary
    from mission_memory.teams.access_control import AccessContext
    from mission_memory.tokens import Tokenizer
    from mission_memory.trackers.base import TaskHistory, Tracker

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
        self.store: MemoryStore = store if store is not None else open_store(settings.store, settings.data_dir, settings)
        self._opened_store = store is None  # the store the settings name, so the data dir's other backend matters
        self._embedder = embedder
        self._owns_embedder = embedder is None
        self._tokenizer = tokenizer
        self._lock = threading.Lock()
        self._embedding_queue: EmbeddingQueue | None = None

    @classmethod
    def open(cls, settings: Settings | None = None, **overrides: Any) -> Memory:
        """Open the memory named by ``settings`` (or by the environment, with ``overrides`` winning)."""
        return cls(settings or load_settings(**overrides))

    def close(self) -> None:
        """Close the store's connections and those of an embedder this memory made."""
        if self._embedding_queue is not None:
            self._embedding_queue.close()
        self.store.close()
        if self._owns_embedder and self._embedder is not None:  # none made (``status``): NumPy stays unloaded
            from mission_memory.embeddings import SupportsClose

            if isinstance(self._embedder, SupportsClose):
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
                from mission_memory.embeddings import make_embedder

                self._embedder = make_embedder(self.settings.embedder, self.settings)
            return self._embedder

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer (loaded on first use)."""
        with self._lock:
            if self._tokenizer is None:
                from mission_memory.tokens import TiktokenTokenizer

                self._tokenizer = TiktokenTokenizer(self.settings.token_safety_margin)
            return self._tokenizer

    # -- ingest ---------------------------------------------------------------------------------

    def ingest_repository(
        self,
        path: str | Path,
        mission: str | None = None,
        mission_type: str | None = None,
        progress: ProgressFn | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        replace_repository: bool = False,
    ) -> IngestReport:
        """Ingest a git repository (commits, ADRs, principles, documents) or a folder of documents.

        Records get their access level from ``settings.access_paths`` and front matter ``access:``
        (:mod:`mission_memory.ingest.access_levels`; default ``internal``).

        See :func:`mission_memory.ingest.repository.ingest_repository` (``include``/``exclude``:
        ``.gitignore``-style globs narrowing the files read; ``replace_repository``: ingest into a
        mission that holds another repository's history, which it otherwise refuses).
        """
        from mission_memory.ingest.access_levels import AccessRules
        from mission_memory.ingest.repository import ingest_repository  # parsers load only to ingest

        report = ingest_repository(
            self.store, self.embedder, Path(path), mission=mission, mission_type=mission_type,
            max_file_bytes=self.settings.max_file_bytes, progress=progress, include=include, exclude=exclude,
            access_rules=AccessRules(self.settings.access_paths),
            max_records_per_file=self.settings.max_records_per_file, replace_repository=replace_repository,
        )
        self.prepare_search(progress)
        return report

    def prepare_search(self, progress: ProgressFn | None = None) -> bool:
        """Build the store's derived search state now (vector snapshot, BM25 index) rather than on the
        first query, which at 1M records would take over a minute
        (:class:`~mission_memory.stores.base.SearchPreparation`). Called by ingest, ``reindex``, import and forget.

        ``progress`` gets phase ``index``: ``(0, 1)`` before and ``(1, 1)`` after.

        Returns:
            True when anything was prepared; False for small, read-only or non-SQLite stores.
        """
        from mission_memory.stores.base import prepare_search

        if progress:
            progress("index", 0, 1)
        # the model's id, without loading the model when nothing here embeds (import)
        model_id = self._embedder.model_id if self._embedder is not None else configured_model_id(self.settings)
        prepared = prepare_search(self.store, model_id)
        if progress:
            progress("index", 1, 1)
        return prepared

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
        default_mission: str | None = None,
        access: AccessContext | None = None,
        timeline: bool = False,
        now: datetime | str | None = None,
    ) -> Digest:
        """Pull: a digest of the records relevant to a task, within ``token_budget`` tokens.

        Args:
            task_description: the task or situation in natural language (any language).
            scope: ``all``, ``domain``, ``workflow`` or ``practitioner``; ``handover`` answers with
                the rotation brief of the ``mission`` filter (see :meth:`rotation_brief`; filters
                ``operator`` = the outgoing operator, ``since`` = the window's start).
            token_budget: bound on the digest, in tokens; defaults to the settings' budget, and may
                not exceed ``settings.max_token_budget`` (:data:`~mission_memory.config.MAX_TOKEN_BUDGET` by default).
            filters: ``component``, ``min_criticality`` (alias ``criticality``), ``since``,
                ``until``, ``mission`` (``*``: all missions, on purpose), ``mission_type``,
                ``outcome``, ``operator``, ``max_access``.
            client: the shell asking (``cli``, ``mcp``, ``hook``; ``api`` for direct use), logged
                with the retrieval event.
            session_id: the agent session asking (Claude Code's ``session_id``); default: one
                id per process. The operator is resolved by :func:`~mission_memory.retrieval_events.resolve_operator`.
            default_mission: the mission asked from (the repository the CLI or the MCP server runs
                in, :func:`~mission_memory.mission_scope.mission_here`); used when
                ``filters`` name no mission and it is stored, else the query answers across all
                missions and the digest header says so (docs/design.md §4, ADR 0029). None: all missions.
            access: who asks on a team server (:class:`~mission_memory.teams.access_control.AccessContext`):
                the digest holds no record above their clearance, no other operator's practitioner
                record unless they lead, and the retrieval event carries their operator (ADR 0045).
                None: the local user, who owns the store and sees everything.
            timeline: put the crisis timeline (what is escalating, what cascades, the links, decisions
                since the escalation began, open questions; docs/adr/0040) first even in normal mode;
                a degraded mission's digest has it anyway.
            now: the clock the digest is answered at (a timezone-aware datetime or ISO 8601 text;
                default: now): escalation, triage, the timeline and ages are evaluated at it, so a
                history replayed with ``feed --now`` can be asked about. A query never stores an
                escalation state (docs/adr/0058): a replay's state is not overwritten by it.

        Returns:
            The digest; :attr:`Digest.mission_scope` says which missions it answered from and why.

        Raises:
            InputError: bad scope, filters, budget, client or task description; a mission outside
                the ``access`` context's missions; a budget above
                the maximum; a mission or a component the store does not hold (the message lists
                the known ones). An empty store is not an error: the digest says nothing is ingested yet.
            BudgetError: the budget cannot hold the digest header.
        """
        checked = parse_filters(filters)
        clock = self._clock(parse_clock(now)) if now is not None else None
        if access is not None:
            access.check_mission(checked.mission)
        if (scope if isinstance(scope, Scope) else parse_scope(scope)) is Scope.HANDOVER:
            return self._handover_digest(task_description, token_budget, checked, default_mission,
                                         client=client, session_id=session_id, access=access)
        from mission_memory.retrieval.pull import pull

        with self._pull_priority():  # the background embedding queue waits while a pull runs
            return pull(
                self.store, self._store_for(access), self.embedder, self.tokenizer, self.settings,
                task_description, scope if isinstance(scope, Scope) else parse_scope(scope), token_budget, checked,
                client=client, session_id=session_id, default_mission=default_mission,
                operator=access.operator if access is not None else resolve_operator(), timeline=timeline, now=clock,
                empty_store_note=self._empty_store_note if access is None else None,
            )

    def forget_mission(self, mission: str, progress: ProgressFn | None = None) -> dict[str, int]:
        """Delete a mission's records (their vectors and index entries with them), retrieval events
        and ingest state, in one transaction (issue 12 item 0); then prepare the search indexes
        for what remains (:meth:`prepare_search`), so the next query does not rebuild them.

        Args:
            mission: the stored mission's exact name.
            progress: gets phase ``index`` (see :meth:`prepare_search`).

        Returns:
            ``{"records", "retrieval_events", "state"}``: how many of each were deleted.

        Raises:
            InputError: no mission of that name is stored (the message lists the stored ones);
                nothing is deleted.
        """
        stored = self.store.missions()
        if mission not in stored:
            raise unknown_mission(mission, stored)
        deleted = self.store.delete_mission(mission)
        self.prepare_search(progress)
        return deleted

    def export_memory(
        self,
        out: TextIO,
        *,
        mission: str | None = None,
        max_access_level: AccessLevel | None = None,
        progress: ProgressFn | None = None,
    ) -> TransferSummary:
        """Write this memory (or one mission of it) to ``out`` as JSON Lines: records with their
        vectors and model ids, retrieval events, state (format: :mod:`mission_memory.stores.transfer`).

        Args:
            out: a text stream opened for writing.
            mission: only this mission.
            max_access_level: leave out records above this access level (and the retrieval
                events that returned them), for a reader of that clearance (docs/design.md §10).
            progress: ``progress("export", done, total)`` callbacks.

        Raises:
            InputError: ``mission`` names no stored mission.
        """
        from mission_memory.stores.transfer import export_memory

        return export_memory(self.store, out, mission=mission, max_access_level=max_access_level, progress=progress)

    @staticmethod
    def salvage_store(damaged: str | Path, data_dir: str | Path) -> dict[str, Any]:
        """Copy every readable row of a damaged SQLite store file into a new store ``data_dir/memory.db``
        (a damaged store cannot be opened as a :class:`Memory`, so this takes paths).

        Returns:
            ``{"source", "target", "complete", "tables": [{"table", "copied", "skipped": [{"after",
            "before"}], "error"}], "orphan_vectors", "records_without_vector"}``
            (:mod:`mission_memory.stores.sqlite_salvage`).

        Raises:
            InputError: ``damaged`` is not a file, or ``data_dir`` already holds a store.
        """
        from mission_memory.stores.registry import salvage_sqlite

        return salvage_sqlite(Path(damaged), Path(data_dir))

    def import_memory(
        self, path: Path, *, mission: str | None = None, progress: ProgressFn | None = None
    ) -> TransferSummary:
        """Store a memory exported by :meth:`export_memory` (or only ``mission`` of it), with its
        vectors as they were (nothing is re-embedded). Every line is checked before anything is
        stored; re-running an import adds nothing. Then, as ingest does, the store's derived search
        state is prepared (:meth:`prepare_search`, progress phase ``index``).

        Raises:
            InputError: the file is unreadable or a line is invalid (named by its number);
                nothing is stored.
            BackendUnavailable: the store is read-only or failed; running the import again finishes it.
        """
        from mission_memory.stores.transfer import import_memory

        if self.store.read_only:
            raise BackendUnavailable("the store is open read-only: nothing can be imported into it")
        summary = import_memory(self.store, Path(path), mission=mission, progress=progress)
        self.prepare_search(progress)  # as ingest: the first query after a restore builds nothing
        return summary

    def retrieval_events(self, limit: int = 100) -> list[RetrievalEvent]:
        """The latest retrieval events, newest first (docs/design.md §4, docs/adr/0016)."""
        return self.store.retrieval_events(limit)

    # -- rotation -------------------------------------------------------------------------------

    def rotation_brief(
        self,
        *,
        mission: str | None = None,
        from_operator: str | None = None,
        for_operator: str | None = None,
        since: datetime | str | None = None,
        token_budget: int | None = None,
        now: datetime | None = None,
        repository: str | Path | None = None,
        archive: bool = True,
        client: Client | str = Client.API,
        session_id: str | None = None,
        access: AccessContext | None = None,
        embed_archived: bool = True,
    ) -> RotationBrief:
        """The rotation brief handing the mission from the outgoing to the incoming operator (docs/design.md §6).

        Sections, order and defaults: :mod:`mission_memory.handover.brief` and docs/adr/0026. The
        brief is archived as a ``handover_brief`` record (one per shift: re-building replaces it)
        and logged as a retrieval event of scope ``handover``, unless the store is read-only.

        Args:
            mission: the mission; default: the only stored mission, else the one named after the
                working directory's repository.
            from_operator: the outgoing operator; default: the latest other operator on the mission.
            for_operator: the incoming operator; default: :func:`~mission_memory.retrieval_events.resolve_operator`.
            since: the window's start (datetime, ISO 8601 date/time, or ``Nd`` for N days before
                ``now``); default: the outgoing operator's latest stretch, at least 7 days.
            token_budget: bound on the brief, in tokens (default :data:`~mission_memory.handover.DEFAULT_BRIEF_TOKEN_BUDGET`; at most ``settings.max_token_budget``).
            now: the window's end (default: now); a naive datetime is taken as UTC.
            repository: the mission's checkout, to warn when memory is behind it (default: none).
            archive: store the brief as a ``handover_brief`` record and log the retrieval event.
            client, session_id: logged with the retrieval event, as for :meth:`query`.
            embed_archived: embed the archived brief now (about half a second in a fresh process, most
                of it loading the embedder); False leaves it to the embedding queue's next catch-up
                (the SessionStart hook, which otherwise never needs the embedder for a brief).
            access: who asks on a team server: the brief is built for them (``for_operator`` must be
                them unless they lead) and holds no record they may not see; the outgoing operator's
                practitioner records are the one exception, as the brief hands them over (ADR 0045).

        The archived brief takes the most restricted access level of the records it quotes.

        Raises:
            InputError: an unknown mission, a bad ``since`` or budget, an unknown client, a brief
                for another operator asked by a non-lead.
            BudgetError: the budget cannot hold the brief's header.
        """
        from mission_memory.errors import MissionMemoryError
        from mission_memory.handover import DEFAULT_BRIEF_TOKEN_BUDGET
        from mission_memory.handover.rotation import build_rotation_brief
        from mission_memory.stores.write_path import embed_stored
        from mission_memory.utc import as_utc

        moment = as_utc(now) if now is not None else datetime.now(UTC)
        brief = build_rotation_brief(
            self.store, self.tokenizer, self._brief_mission(mission),
            from_operator=from_operator, for_operator=for_operator, since=_parse_since(since, moment),
            token_budget=DEFAULT_BRIEF_TOKEN_BUDGET if token_budget is None else token_budget,
            max_token_budget=self.settings.max_token_budget, now=moment,
            repository=Path(repository) if repository is not None else None, archive=archive,
            client=client, session_id=session_id, access=access,
        )
        if brief.archived_id and embed_archived:
            # the archived brief is found by meaning at once (one short summary: tens of milliseconds);
            # if the embedder or the store fails now, the embedding queue's next catch-up embeds it
            with contextlib.suppress(MissionMemoryError):
                embed_stored(self.store, self.embedder, [brief.archived_id])
        return brief

    def handover_note(
        self,
        text: str,
        kind: str = "next-step",
        *,
        mission: str | None = None,
        operator: str | None = None,
        session_id: str | None = None,
        now: datetime | None = None,
        closes: Sequence[str] = (),
    ) -> Record:
        """Store the outgoing operator's handover note (hypothesis, next step, warning, or resolved) as a workflow record.

        Every rotation brief shows the note under "What to do first" until a later note closes it
        (``closes``; a ``resolved`` note only closes). It is embedded, but pull answers with notes
        only when the task asks about the handover (ADR 0060).

        Args:
            text: the note (1..2,000 characters).
            kind: ``hypothesis``, ``next-step``, ``warning`` or ``resolved``.
            mission: as for :meth:`rotation_brief`.
            operator: the author; default: :func:`~mission_memory.retrieval_events.resolve_operator`.
            session_id: the agent session, if any.
            now: when it was written (default: now).
            closes: ids (or 6+ character prefixes) of the open notes this one closes or replaces.

        Returns:
            The stored ``handover_note`` record.

        Raises:
            InputError: empty or over-long text, an unknown kind or mission, a ``closes`` naming no
                open note, a ``resolved`` note closing nothing.
            BackendUnavailable: the store is read-only.
        """
        from mission_memory.handover.notes import build_handover_note, resolve_closed_notes
        from mission_memory.utc import as_utc

        name = self._brief_mission(mission)
        record = build_handover_note(
            text, kind, mission=name, operator=operator or resolve_operator(),
            at=as_utc(now) if now is not None else datetime.now(UTC), session_id=session_id,
            closes=resolve_closed_notes(self.store, name, closes) if closes else (),
        )
        store_records(self.store, self.embedder, [record])
        return record

    def open_handover_notes(self, mission: str | None = None) -> list[Record]:
        """The mission's open handover notes, newest first (:func:`~mission_memory.handover.notes.open_notes`)."""
        from mission_memory.handover.notes import open_notes

        return open_notes(self.store, self._brief_mission(mission))

    def acknowledge_brief(
        self, *, for_operator: str | None = None, mission: str | None = None, now: datetime | None = None,
        read_back: str | None = None,
    ) -> Acknowledgement:
        """Record that the incoming operator read their latest rotation brief (docs/design.md §6).

        Args:
            for_operator: the incoming operator; default: :func:`~mission_memory.retrieval_events.resolve_operator`.
            mission: narrow to this mission (default: any).
            now: the acknowledgement time (default: now).
            read_back: the incoming operator's one-line read-back of the handover (at most 300
                characters), kept with the acknowledgement and shown by the next brief.

        Returns:
            ``{"operator", "time", "brief_id", "shift_key", "mission"}`` (and ``read_back``);
            acknowledging again keeps the first, adding a read-back it lacked.

        Raises:
            InputError: no brief was built for that operator; a read-back of several lines or too long.
        """
        from mission_memory.handover.acknowledgement import acknowledge, latest_brief_for
        from mission_memory.utc import as_utc

        operator = for_operator or resolve_operator()
        brief = latest_brief_for(self.store, operator, mission)
        return acknowledge(self.store, brief, operator, as_utc(now) if now is not None else datetime.now(UTC),
                           read_back=read_back)

    def _brief_mission(self, mission: str | None, access: AccessContext | None = None) -> str:
        from mission_memory.mission_scope import stored_mission_for

        return stored_mission_for(mission, self._store_for(access).missions())  # errors list only readable ones

    def _handover_digest(
        self, task_description: str, token_budget: int | None, filters: QueryFilters, default_mission: str | None,
        *, client: Client | str, session_id: str | None, access: AccessContext | None = None,
    ) -> Digest:
        """``query(scope="handover")``: the rotation brief wrapped as a :class:`Digest` (see
        :mod:`mission_memory.handover.scope`)."""
        from mission_memory.handover.scope import brief_as_digest, handover_filters

        filters = handover_filters(self.store, filters, default_mission, access)
        brief = self.rotation_brief(
            mission=filters.mission, from_operator=filters.operator, since=filters.since,
            token_budget=token_budget, client=client, session_id=session_id, access=access,
        )
        return brief_as_digest(task_description, filters, brief)

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

        See :func:`mission_memory.refresh.orchestrator.refresh_once` (docs/design.md §5).
        """
        from mission_memory.refresh.orchestrator import refresh_once  # the refresher loads only to refresh

        clock = now if now is not None else datetime.now(UTC)
        report = refresh_once(
            self.store, self.embedder, tracker, Path(repo_path) if repo_path is not None else None,
            clock, self.settings, summarizer, label=label, mission=mission,
        )
        self.prune_refresh_artifacts(now=clock)
        return report

    def prune_refresh_artifacts(
        self, now: datetime | None = None, older_than_days: float | None = None
    ) -> ArtifactPruneReport:
        """Delete refresh artifacts superseded by a later refresh of the same task and kind and older
        than ``older_than_days`` (default: ``settings.refresh_prune_after_days``), keeping their
        provenance in the current artifact (issue 12 item 1, ADR 0030). Runs after every
        :meth:`refresh_once`.

        See :func:`mission_memory.refresh.artifacts.prune_superseded_artifacts`.
        """
        from mission_memory.refresh.artifacts import prune_superseded_artifacts

        days = self.settings.refresh_prune_after_days if older_than_days is None else older_than_days
        if days < 0:
            raise InputError(f"older_than_days must be 0 or more, got {days}")
        return prune_superseded_artifacts(
            self.store, now=as_utc(now) if now is not None else datetime.now(UTC),
            older_than=timedelta(days=days), model_id=configured_model_id(self.settings),
        )

    def refresh_status(self, now: datetime | None = None) -> dict[str, Any]:
        """The refresh queue (next due per task) as of ``now``, the latest refreshes and LLM spend vs the cap.

        See :func:`mission_memory.refresh.orchestrator.refresh_status`.
        """
        from mission_memory.refresh.orchestrator import refresh_status

        return refresh_status(self.store, self.settings, now)

    # -- decisions and tracker items ---------------------------------------------------------

    def record_decision(
        self,
        title: str,
        *,
        decision: str,
        rationale: str,
        rejected: Sequence[str | RejectedAlternative] = (),
        context: str | None = None,
        principles: Sequence[str] = (),
        component: str | None = None,
        tasks: Sequence[str] = (),
        supersedes: str | None = None,
        status: str = "accepted",
        mission: str | None = None,
        session_id: str | None = None,
        by_agent: bool = False,
        write_adr: str | Path | None = None,
        now: datetime | None = None,
        access: AccessContext | None = None,
        access_level: AccessLevel | str | None = None,
    ) -> RecordedDecision:
        """Record a decision where it is taken (docs/design.md §3; docs/adr/0028).

        ``decided_by`` is the operator (:func:`~mission_memory.retrieval_events.resolve_operator`) or
        ``agent`` with ``by_agent``; the session (default: this process's) is its provenance. A
        mission given must obey the name rule and be stored; without one, the mission is chosen as
        for :meth:`handover_note` (the only stored mission, else the working directory's repository
        when stored), or with ``write_adr`` it is the repository the folder lies in, as ``ingest``
        names it (the file written there is ingested into that mission).
        With ``access`` (a team server), the decision is the operator's, and ``supersedes`` can name
        only decisions they may see. ``access_level`` sets the decision's level; without it the
        decision takes the most restricted level of what it supersedes or cites (docs/adr/0055). See
        :func:`mission_memory.ingest.recorded_decisions.record_decision`.

        Raises:
            InputError: an empty title, decision or rationale; a mission name that breaks the name
                rule or is not stored, or no mission given where several are stored and none is the
                working directory's; a rejected option not written
                ``"option: why"``; a status other than accepted/proposed; an unknown ``supersedes``
                reference; a ``write_adr`` folder outside a git work tree or not read by ingest.
        """
        from mission_memory.ingest.recorded_decisions import record_decision_request

        return record_decision_request(
            self._store_for(access), lambda: self.embedder, title, decision=decision, rationale=rationale,
            rejected=rejected, context=context, principles=principles, component=component, tasks=tasks,
            supersedes=supersedes, status=status, mission=mission, session_id=session_id, by_agent=by_agent,
            write_adr=write_adr, now=now, access=access, access_level=access_level,
        )

    def ingest_tracker(
        self, tracker: TaskHistory, mission: str | None = None, now: datetime | None = None
    ) -> TrackerIngestReport:
        """Ingest a tracker's tasks and comments as workflow records, incrementally (issue 13 item 5).

        The mission defaults to the repository the working directory lies in. See
        :func:`mission_memory.ingest.tracker_items.ingest_tracker`.
        """
        from mission_memory.ingest.tracker_items import ingest_tracker
        from mission_memory.mission_scope import mission_here

        return ingest_tracker(
            self.store, self.embedder, tracker, mission or mission_here(),
            now if now is not None else datetime.now(UTC),
        )

    # -- operations -----------------------------------------------------------------------------

    def record_events(
        self,
        events: Sequence[DomainEvent | dict[str, Any]],
        mission: str | None = None,
        *,
        now: datetime | None = None,
        embed: bool = True,
        access: AccessContext | None = None,
        refuse_typo: bool = False,
    ) -> IntakeReport:
        """Store domain events at once and assess the mission's escalation (docs/design.md §3, §7).

        Every event is validated before anything is written, and all are written in one
        transaction, so a bad event stores nothing. The events are lexically searchable and counted
        for the event rate at once; their vectors follow from the background embedding queue
        (docs/adr/0036).

        Args:
            events: :class:`~mission_memory.operations.domain_events.DomainEvent` objects or mappings of their fields.
            mission: the mission; default ``settings.event_mission``, else the current folder's name.
            now: the escalation clock (timezone-aware; default: now).
            embed: wake the background embedding queue (False: leave the vectors to a catch-up,
                :meth:`embed_pending`).
            access: who posts on a team server: an operator scoped to missions may post only into
                them (ADR 0045), and every event is stored as theirs, whatever ``operator`` the
                posted event names (docs/adr/0055). None: the local user.
            refuse_typo: refuse a mission that is not stored and is one typo from a stored one
                (:func:`~mission_memory.mission_scope.confusable_mission`: ``shpo``, ``Shop`` beside
                ``shop``), as the HTTP receivers do unless the poster says ``new_mission``: critical
                alerts filed under a typo sit where no brief or digest of the mission reads them.

        Returns:
            What was stored, and the escalation state after the write.

        Raises:
            InputError: an invalid event (its index and field named), one dated more than
                ``settings.event_max_future_skew_s`` after the clock, a mission name that breaks
                the name rule (:mod:`mission_memory.fence`) or a naive ``now``.
            AccessDenied: ``access`` is scoped to missions that do not include the event mission
                (nothing is stored).
            BackendUnavailable: the store cannot be written (nothing is stored).
        """
        from mission_memory.operations.event_intake import record_events

        report = record_events(
            self.store, events, mission, configured_mission=self.settings.event_mission, now=now,
            max_future_skew=timedelta(seconds=self.settings.event_max_future_skew_s), policy=self._flood_policy(),
            access=access, refuse_typo=refuse_typo,
        )
        if embed and report.added + report.replaced:
            self._queue().notify()
        return report

    def escalation_status(self, mission: str | None = None, *, now: datetime | None = None,
                          what_if: bool = False) -> EscalationState:
        """Assess the mission's escalation at ``now`` (default: now), store it and return it.

        See :func:`mission_memory.operations.escalation_state.assess_mission` (docs/design.md §7, docs/adr/0022).
        With ``what_if`` (``escalation status --now``), the state at ``now`` is read as pull reads it
        (:func:`~mission_memory.operations.escalation_state.current_state`) and nothing is stored: a question
        about another time never moves the flood's start or the stored incident.

        Raises:
            InputError: a naive ``now``.
        """
        from mission_memory.operations.escalation_state import current_state
        from mission_memory.operations.event_intake import assess_and_sync

        if what_if:
            return current_state(self.store, self._event_mission(mission), self._clock(now))
        return assess_and_sync(self.store, self._event_mission(mission), self._flood_policy(), self._clock(now))

    def incident(self, mission: str | None = None) -> Incident | None:
        """The mission's latest incident, open or resolved, or None (docs/adr/0091;
        :func:`~mission_memory.operations.incident_state.load_incident`).

        Raises:
            InputError: the stored incident is not readable.
        """
        from mission_memory.operations.incident_state import load_incident

        return load_incident(self.store, self._event_mission(mission))

    def incidents(self, mission: str | None = None) -> list[Incident]:
        """Every incident of the mission kept in the store, open and resolved, newest first
        (:func:`~mission_memory.operations.incident_state.list_incidents`)."""
        from mission_memory.operations.incident_state import list_incidents

        return list_incidents(self.store, self._event_mission(mission))

    def incident_records(self, mission: str | None = None, *, now: datetime | None = None) -> tuple[list[Record], bool]:
        """The notes and decisions of the mission's latest incident (recorded while it was open), oldest first,
        and whether more were left out (:func:`~mission_memory.operations.incident_state.incident_records`)."""
        from mission_memory.operations.incident_state import incident_records, load_incident

        incident = load_incident(self.store, self._event_mission(mission))
        return incident_records(self.store, incident, self._clock(now)) if incident is not None else ([], False)

    def change_incident(self, what: str, value: str = "", *, mission: str | None = None, operator: str | None = None,
                        now: datetime | None = None) -> Incident:
        """Open, set a field of, or close the mission's incident as an operator (``incident`` commands).

        See :func:`~mission_memory.operations.incident_state.change_incident` (``what``: open, status,
        commander, next-update, contingency, close). ``operator``: default
        :func:`~mission_memory.retrieval_events.resolve_operator`; ``now``: default the current time.

        Raises:
            InputError: a bad field or value, no open incident, or one already open for ``open``.
            BackendUnavailable: the store cannot be written.
        """
        from mission_memory.operations.incident_state import change_incident

        return change_incident(self.store, self._event_mission(mission), what, value,
                               by=operator or resolve_operator() or "unknown", at=self._clock(now))

    def firing_alerts(self, mission: str | None = None, *, now: datetime | str | None = None) -> list[OpenAlert]:
        """The alerts open in ``mission`` at ``now``: fired and not resolved, whenever they started (docs/adr/0057).

        Returns:
            :class:`~mission_memory.operations.alert_state.OpenAlert` s, most critical then newest first.

        Raises:
            InputError: a naive or malformed ``now``; an unreadable stored state.
        """
        from mission_memory.operations.alert_state import open_alerts

        clock = self._clock(parse_clock(now)) if now is not None else self._clock(None)
        return open_alerts(self.store, self._event_mission(mission), clock)

    def acknowledge_alerts(self, alert: str, *, mission: str | None = None, operator: str | None = None,
                           now: datetime | str | None = None) -> list[dict[str, Any]]:
        """Record that ``operator`` acknowledged the open alerts ``alert`` names, from any source.

        See :func:`~mission_memory.operations.alert_state.acknowledge_alerts`; ``operator``: default
        :func:`~mission_memory.retrieval_events.resolve_operator`'s; the incident's copy of its alerts is
        brought up to date at once.

        Raises:
            InputError: no open alert matches, no operator name or a bad one, a naive time.
            BackendUnavailable: the store cannot be written.
        """
        from mission_memory.operations.alert_state import acknowledge_alerts
        from mission_memory.operations.escalation_state import current_state
        from mission_memory.operations.incident_state import sync_incident
        from mission_memory.retrieval_events import resolve_operator

        clock = self._clock(parse_clock(now)) if now is not None else self._clock(None)
        name = self._event_mission(mission)
        done = acknowledge_alerts(self.store, name, alert, by=operator or resolve_operator() or "", at=clock)
        sync_incident(self.store, name, current_state(self.store, name, clock), clock)
        return done

    def silence_alerts(self, alert: str, *, until: datetime, reason: str, mission: str | None = None,
                       now: datetime | str | None = None) -> list[dict[str, Any]]:
        """Silence the open alerts ``alert`` names until ``until``: listed and marked, not counted as firing.

        See :func:`~mission_memory.operations.alert_state.silence_alerts` (the operator is
        :func:`~mission_memory.retrieval_events.resolve_operator`'s).

        Raises:
            InputError: no open alert matches, a blank reason, an end out of range, a naive time.
        """
        from mission_memory.operations.alert_state import silence_alerts
        from mission_memory.retrieval_events import resolve_operator

        clock = self._clock(parse_clock(now)) if now is not None else self._clock(None)
        return silence_alerts(self.store, self._event_mission(mission), alert, until=as_utc(until), reason=reason,
                              by=resolve_operator() or "unknown", at=clock)

    def unsilence_alerts(self, alert: str, *, mission: str | None = None) -> list[dict[str, Any]]:
        """Lift the operators' silences of the alerts ``alert`` names (see :meth:`silence_alerts`); the lifted ones."""
        from mission_memory.operations.alert_state import unsilence_alerts

        return unsilence_alerts(self.store, self._event_mission(mission), alert)

    def prune_events(
        self,
        mission: str | None = None,
        *,
        dry_run: bool = False,
        now: datetime | str | None = None,
        max_age_days: float | None = None,
        per_type_days: dict[str, float] | None = None,
    ) -> EventPruneReport:
        """Prune domain events older than their retention (docs/adr/0058); never decisions, documents, notes, briefs.

        Args:
            mission: only this mission (default: every mission).
            dry_run: count what would be pruned, delete nothing.
            now: the clock (default: now).
            max_age_days: default retention in days (default ``settings.event_retention_days``; 0 keeps all).
            per_type_days: retention per event type (default ``settings.event_retention_kinds``).

        Returns:
            What was pruned (or is due, on a dry run), per mission and event type.

        Raises:
            InputError: a naive ``now``, a negative age, an unknown mission, a read-only store.
        """
        from mission_memory.operations.retention import prune_events

        if self.store.read_only and not dry_run:
            raise InputError("the store is open read-only: prune with --dry-run, or open it writable")
        clock = self._clock(parse_clock(now)) if now is not None else self._clock(None)
        days = self.settings.event_retention_days if max_age_days is None else max_age_days
        kinds = self.settings.event_retention_kinds if per_type_days is None else per_type_days
        days = finite_number(days, "max_age_days", low=0, high=MAX_RETENTION_DAYS, unit="days")
        kinds = {k: finite_number(v, f"the retention of {k!r}", low=0, high=MAX_RETENTION_DAYS, unit="days")
                 for k, v in kinds.items()}
        report = prune_events(
            self.store, now=clock, max_age=timedelta(days=days) if days else None,
            per_type={k: timedelta(days=v) for k, v in kinds.items()}, mission=mission, dry_run=dry_run,
        )
        if report.total and not dry_run:
            self.prepare_search()
        return report

    def plot_event_rate(self, path: Path, mission: str | None = None, *, hours: float = 6.0,
                        now: datetime | str | None = None) -> Path:
        """Draw the mission's event rate over the last ``hours`` to ``path`` with the flood thresholds.

        See :mod:`mission_memory.operations.rate_plot`.

        Raises:
            InputError: ``hours`` not positive, a naive ``now``, an unwritable path.
        """
        from mission_memory.operations.rate_plot import plot_event_rate, rate_series

        finite_number(hours, "hours", low=0, high=MAX_RETENTION_DAYS * 24)
        if hours <= 0:
            raise InputError(f"hours must be positive, got {hours:g}")
        clock = self._clock(parse_clock(now)) if now is not None else self._clock(None)
        policy = self._flood_policy()
        series = rate_series(self.store, self._event_mission(mission), clock - timedelta(hours=hours), clock,
                             policy.window, policy.capacity, policy.release)
        return plot_event_rate(series, path)

    def embed_pending(self, limit: int | None = None) -> int:
        """Embed now the records still waiting for a vector (the embedding queue's catch-up); return how many."""
        return self._queue().drain(limit)

    def embedding_lag(self) -> int:
        """Records still waiting for a vector of the current model."""
        return self._queue().pending()

    def _queue(self) -> EmbeddingQueue:
        from mission_memory.operations.event_intake import EmbeddingQueue

        with self._lock:
            if self._embedding_queue is None:
                self._embedding_queue = EmbeddingQueue(
                    self.store, lambda: self.embedder, batch=self.settings.embed_batch
                )
            return self._embedding_queue

    def _store_for(self, access: AccessContext | None) -> MemoryStore:
        """The store as ``access`` sees it (:class:`~mission_memory.teams.access_control.AccessScopedStore`),
        or the whole store for the local user."""
        if access is None:
            return self.store
        from mission_memory.teams.access_control import AccessScopedStore

        return AccessScopedStore(self.store, access)

    def _pull_priority(self) -> AbstractContextManager[None]:
        """While a pull runs, the background embedding queue (if this memory started one) waits."""
        queue = self._embedding_queue
        return queue.pull_priority() if queue is not None else nullcontext()

    def _event_mission(self, mission: str | None) -> str:
        from mission_memory.mission_scope import event_mission

        return event_mission(mission, self.settings.event_mission)

    def flood_policy(self) -> FloodPolicy:
        """The flood thresholds the settings give (:class:`~mission_memory.operations.escalation.FloodPolicy`):
        its ``capacity`` and ``release`` are the events per window the operators on duty can process."""
        return self._flood_policy()

    def _flood_policy(self) -> FloodPolicy:
        from datetime import timedelta

        from mission_memory.operations.escalation import FloodPolicy

        s = self.settings
        return FloodPolicy(
            window=timedelta(minutes=s.escalation_window_minutes), flood_start=s.escalation_flood_start,
            flood_end=s.escalation_flood_end, operators_on_duty=s.operators_on_duty,
        )

    @staticmethod
    def _clock(now: datetime | None) -> datetime:
        return aware_clock(now)

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
        access: AccessContext | None = None,
    ) -> Correction:
        """Record one explicit operator correction as a labelled practitioner record (docs/design.md §3, §6).

        Args:
            correction_class: how the agent was corrected, a lower-case slug (``wrong-approach``).
            category: the semantic category, a lower-case slug (``data``, ``tests``).
            outcome: ``accepted``, ``rejected`` or ``modified``.
            summary: one sentence (at most 300 characters, one line) saying what was corrected; it is
                stored after the redaction pass (docs/adr/0053), which replaces secrets it recognises;
                it should still hold no raw content.
            component: the affected component; must be one the memory holds.
            expected: records the agent should have had (record ids, paths, commit shas, ``ADR-N``).
            session_id: the agent session the correction belongs to (links it to that session's
                retrieval events).
            mission: default: the only stored mission, or the one named like the working directory.
            operator: default: as for queries (:func:`~mission_memory.retrieval_events.resolve_operator`).
            time: when it happened; default now (UTC).
            access: who records it on a team server: the correction is theirs (``operator`` is
                ignored), and the label names only missed records they may see (ADR 0045).

        Returns:
            The correction with its label; recording the same correction at the same time again
            changes nothing.

        Raises:
            InputError: a field is invalid, or names a mission, component or record that is not
                stored; nothing is written then.
        """
        from mission_memory.corrections.recording import record_explicit

        return record_explicit(
            self._store_for(access), lambda: self.embedder, correction_class=correction_class, category=category,
            outcome=outcome, summary=summary, component=component, expected=expected, session_id=session_id,
            mission=mission, operator=operator, time=time, access=access, **self._signal_settings(),
        )

    def import_corrections(
        self,
        *,
        prompts: str | Path | None = None,
        transcripts: Sequence[str | Path] = (),
        mission: str | None = None,
        operator: str | None = None,
    ) -> CorrectionImport:
        """Import corrections from the prompt corpus and from Claude Code transcripts (docs/design.md §6).

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
        from mission_memory.corrections.importing import import_corrections

        return import_corrections(
            self.store, self.embedder, self.settings, prompts=Path(prompts) if prompts is not None else None,
            transcripts=[Path(p) for p in transcripts], mission=mission, operator=operator or resolve_operator(),
        )

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

        See :func:`mission_memory.corrections.rate.correction_rate` (docs/design.md §6).

        Raises:
            InputError: ``by`` is not ``day`` or ``week``; a confidence outside (0, 1).
        """
        from mission_memory.corrections.rate import correction_rate

        return correction_rate(self.corrections(mission=mission, operator=operator), by=by, confidence=confidence)

    def correction_pairs(
        self, *, mission: str | None = None, access: AccessContext | None = None
    ) -> list[dict[str, Any]]:
        """The "retrieved X, should have served Y" pairs of the retrieval-caused corrections, oldest first.

        See :mod:`mission_memory.corrections.pairs` for the shape (docs/design.md §6.3).
        With ``access``, only the pairs of corrections that context may see, and only the record
        ids it may see in ``retrieved`` and ``missed`` (a pair left with no missed record is dropped).
        """
        from mission_memory.corrections.pairs import correction_pairs
        from mission_memory.corrections.recording import stored_corrections

        if access is None:
            return list(correction_pairs(self.store, self.corrections(mission=mission)))
        access.check_mission(mission)
        store = self._store_for(access)
        out = []
        for pair in correction_pairs(store, stored_corrections(store, mission=mission)):
            visible = store.get([*pair["retrieved"], *pair["missed"]])
            pair["retrieved"] = [r for r in pair["retrieved"] if r in visible]
            pair["missed"] = [r for r in pair["missed"] if r in visible]
            if pair["missed"]:
                out.append(pair)
        return out

    def _signal_settings(self) -> dict[str, Any]:
        return {
            "window": timedelta(minutes=self.settings.correction_link_window_minutes),
            "threshold": self.settings.correction_relevance_threshold,
        }


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
        """Data dir, the store that is open, counts per layer and kind, missions, vectors per model,
        schema version, and ``read_only`` (true when the data dir is not writable: queries answer but
        are not logged).

        ``exposed`` lists ``{"path", "mode", "fix"}`` for the data dir and the store's file or
        folder when others than the owner may read or enter them (a folder an earlier version made
        0755; the SQLite store's and Qdrant's files are 0644 under umask 022, so the folder is what
        protects them).

        ``store`` names it (``sqlite``, ``qdrant (local mode, /dir)``, ``qdrant (URL)``), ``backend``
        is its scheme and ``database`` the file, folder or URL open. ``other_store`` is None, or, when
        this store is empty and the data dir holds the other backend's store with records,
        ``{"store", "path", "records", "advice"}``: the setting that opens it, its path, its record
        count, and how to use or move it (:class:`~mission_memory.stores.registry.OtherStore`).
        """
        from mission_memory.stores.status import store_status

        return store_status(self.store, self.settings, other_store=self._other_store, without_vectors=self.vectors_missing())

    def _other_store(self) -> OtherStore | None:
        """The other backend's non-empty store in the data dir, when this memory opened the store its
        settings name (one passed in may live anywhere); callers ask only when this store is empty."""
        if not self._opened_store:
            return None
        return other_backend_store(self.settings.store, self.settings.data_dir, self.settings)

    def _empty_store_note(self, client: Client) -> str | None:
        """The empty digest's closing line when the data dir holds the other backend's store (the
        backend was switched): what it holds and how to use or move it; None otherwise."""
        other = self._other_store()
        if other is None:
            return None
        described = self.store.description if isinstance(self.store, DescribedStore) else self.settings.store
        return f"Nothing is ingested in this store ({described}) yet: {other.advice(self.settings.store, client)}."

    def vectors_missing(self, *, now: datetime | None = None, mission: str | None = None) -> dict[str, Any]:
        """Records stored without a vector of the configured model, and what to do about it (issue 21).

        Args:
            now: the clock ages are given at (None: now).
            mission: count only this mission's records (None: the whole store's).

        Returns:
            :meth:`~mission_memory.stores.write_path.VectorBacklog.to_json` (``records``, ``by_layer``,
            ``events``, ``oldest_event``, ``oldest_event_age_s``…) plus ``queue``, the event vector
            queue's lag in a sentence (empty when no event waits), and ``advice``: run ``reindex``
            (the vectors are of another model, or records other than events wait) or let the queue
            catch up; empty when every record has its vector.

        Raises:
            InputError: a naive ``now``.
        """
        clock = self._clock(now)
        model = configured_model_id(self.settings)
        backlog = vector_backlog(self.store, model, mission=mission)
        data = backlog.to_json(clock)
        data["queue"] = backlog.queue_line(clock)
        if not backlog.missing:
            data["advice"] = ""
        elif any(other != model for other in self.store.vector_models()):
            data["advice"] = "vectors of another model are stored: run `mission-memory reindex` to embed every record"
        elif backlog.events == backlog.read:
            data["advice"] = ("the event vector queue is catching up (a serving process embeds them in the background;"
                              " `mission-memory reindex` embeds them now)")
        else:
            data["advice"] = "run `mission-memory reindex` to embed them (queries find them by BM25 until then)"
        return data

    def reindex(self, progress: ProgressFn | None = None, batch: int = 64) -> dict[str, Any]:
        """Re-embed every record from its stored text with the current embedder.

        The new vectors are written before the old ones go (docs/adr/0063): each batch of records
        gets its vectors of the current model, and only then do those records' vectors of another
        model go (``put_vectors`` replaces them); what is left of other models is deleted last. So a
        reindex killed part-way leaves every record with a vector of one model or the other, never
        a store without vectors, and vector spaces are never mixed in one search (each search names
        its model). Records that already have a vector of the current model are left alone, so an
        interrupted reindex resumes where it stopped.

        Returns:
            ``{"model_id", "removed_vectors", "embedded"}`` (``removed_vectors``: vectors of other
            models the store held when the reindex started, or were left at its end, whichever is more).
        """
        from mission_memory.ingest.passage_heads import passage_text  # what ingest embeds, too

        embedder = self.embedder
        models = self.store.vector_models()
        others = sum(n for model, n in models.items() if model != embedder.model_id)
        total = sum(sum(k.values()) for k in self.store.counts().values()) - models.get(embedder.model_id, 0)
        done = 0
        while True:
            ids = self.store.ids_without_vector(embedder.model_id, batch)
            if not ids:
                break
            done += embed_stored(self.store, embedder, ids, passage=passage_text)
            if progress:
                progress("embed", done, max(total, done))
        removed = self.store.delete_vectors_not_of(embedder.model_id)
        forget_vector_backlog(self.store)
        self.prepare_search(progress)
        return {"model_id": embedder.model_id, "removed_vectors": max(others, removed), "embedded": done}


_DAYS = re.compile(r"^\s*(\d{1,4})\s*d(ays?)?\s*$", re.IGNORECASE)


def _parse_since(value: datetime | str | None, now: datetime) -> datetime | None:
    """A window start from a datetime, an ISO 8601 date/time (naive = UTC) or ``Nd`` (N days before ``now``).

    Raises:
        InputError: text that is none of these.
    """
    from mission_memory.utc import as_utc

    if value is None or isinstance(value, datetime):
        return as_utc(value) if value is not None else None
    days = _DAYS.match(value)
    if days:
        return now - timedelta(days=int(days.group(1)))
    try:
        return as_utc(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
    except ValueError:
        raise InputError(
            f"since {value!r} is not a date, a time or a number of days (use e.g. 2025-05-01, 2025-05-01T09:00:00Z or 7d)"
        ) from None
