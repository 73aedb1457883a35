"""Importing corrections: the prompt corpus and Claude Code transcripts in, labelled practitioner records stored.

The flow behind ``Memory.import_corrections`` and ``mission-memory corrections import``
(docs/design.md §6): each source goes through :mod:`mission_memory.corrections.pipeline`; a prompt the
hook captured and a transcript shows is one correction (the hook's copy is kept, it names the
operator); the records a prompt names (ADR 0009, its file) that the store holds become what the correction
expects (ADR 0082); every correction is labelled and stored through
:func:`~mission_memory.corrections.recording.store_corrections`. Ids are stable, so a re-run adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from mission_memory.config import Settings
from mission_memory.corrections.pipeline import DerivedCorrections, prompt_corrections, transcript_corrections
from mission_memory.corrections.practitioner_records import CorrectionSource
from mission_memory.corrections.recording import (
    CorrectionImport,
    SourceCounts,
    store_corrections,
    stored_corrections,
)
from mission_memory.corrections.signal import resolve_reference
from mission_memory.embeddings import Embedder
from mission_memory.errors import InputError
from mission_memory.metrics.transcript_sessions import read_sessions
from mission_memory.prompts.corpus import PromptCorpus, default_prompt_repo
from mission_memory.stores.base import MemoryStore

__all__ = ["import_corrections"]


def import_corrections(
    store: MemoryStore,
    embedder: Embedder,
    settings: Settings,
    *,
    prompts: Path | None,
    transcripts: Sequence[Path],
    mission: str | None,
    operator: str | None,
) -> CorrectionImport:
    """Import corrections from a prompt repository and from transcripts; see the module docstring.

    Args:
        store, embedder: where the practitioner records go, and their vectors.
        settings: the data dir (default prompt repository), the LLM endpoint for summaries, the
            correction-linking window and threshold.
        prompts: a prompt repository; None with no ``transcripts`` means ``<data dir>/prompts.git``.
        transcripts: transcript files or folders (searched for ``*.jsonl``).
        mission: the mission of every imported correction (None: each prompt's or session's own).
        operator: the operator of transcript sessions and of prompts that name none.

    Raises:
        InputError: a path does not exist, or a stored prompt document is invalid.
        BackendUnavailable: git cannot read the prompt repository.
    """
    derived: dict[str, DerivedCorrections] = {}
    if prompts is not None or not transcripts:
        repo = prompts if prompts is not None else default_prompt_repo(settings.data_dir)
        if prompts is not None and not repo.exists():
            raise InputError(f"prompt repository {str(repo)!r} does not exist")
        captured = PromptCorpus(repo).prompts()
        llm = None
        if settings.llm_configured:  # the LLM sees the prompt; the store gets only a checked sentence
            from mission_memory.corrections.llm_summary import LlmCorrectionSummaries
            from mission_memory.ingest.access_levels import AccessRules

            llm = LlmCorrectionSummaries(str(settings.llm_base_url), str(settings.llm_model),
                                         settings.llm_api_key,
                                         deadline_seconds=settings.llm_deadline_seconds,
                                         max_access=settings.llm_max_access,
                                         access_rules=AccessRules(settings.access_paths))
        derived["prompt"] = prompt_corrections(
            captured, known_component=store.has_component, mission=mission, operator=operator, llm=llm,
            known_reference=lambda where, ref: bool(resolve_reference(store, where, ref)),
        )
    if transcripts:
        sessions, _ = read_sessions(list(transcripts))
        derived["transcript"] = transcript_corrections(
            sessions, known_component=store.has_component, mission=mission, operator=operator
        )
    if "transcript" in derived:
        # A prompt the hook captured and a transcript shows is one correction under one id; the
        # hook's capture is kept (it names the operator), the transcript's copy is left out.
        captured_ids = {c.correction_id for c in derived["prompt"].corrections} if "prompt" in derived else set()
        captured_ids |= {c.correction_id for c in stored_corrections(store, mission=mission)
                         if c.source is CorrectionSource.PROMPT}
        derived["transcript"].without(captured_ids, "captured-by-the-prompt-hook")
    report = CorrectionImport()
    window = timedelta(minutes=settings.correction_link_window_minutes)
    for source, found in derived.items():
        labelled, outcome = store_corrections(
            store, embedder, found.corrections, window=window, threshold=settings.correction_relevance_threshold
        )
        report.sources[source] = SourceCounts(
            found=len(found.corrections), added=len(outcome.added), unchanged=len(outcome.unchanged),
            replaced=len(outcome.replaced), skipped=dict(found.skipped),
        )
        for c in labelled:
            key = c.label.retrieval_caused.value
            report.labels[key] = report.labels.get(key, 0) + 1
    return report
