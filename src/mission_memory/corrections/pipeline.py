"""The corrections pipeline: three sources in, :class:`~.practitioner_records.Correction` values out.

docs/design.md §6: corrections come from explicit recording (CLI, MCP, API), from the prompt corpus and
from Claude Code transcripts. Each source is turned here into corrections with stable ids, so an
import re-run finds the same ids and adds nothing. The two content sources go through the one
detector (:mod:`.detector`); what leaves this module holds abstractions only (docs/adr/0025).
Storing and labelling are :class:`~mission_memory.api.Memory`'s (``record_correction``,
``import_corrections``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from pydantic import ValidationError

from mission_memory.corrections.detector import (
    Detection,
    detect_prompt_corrections,
    detect_transcript_corrections,
    named_references,
)
from mission_memory.corrections.llm_summary import LlmCorrectionSummaries
from mission_memory.corrections.practitioner_records import (
    Correction,
    CorrectionSource,
    Outcome,
    correction_id_for,
    summary_from_fields,
)
from mission_memory.errors import InputError
from mission_memory.metrics.transcript_sessions import SessionTranscript
from mission_memory.prompts.corpus import CapturedPrompt

__all__ = ["DerivedCorrections", "explicit_correction", "prompt_corrections", "transcript_corrections"]


def explicit_correction(
    *,
    correction_class: str,
    category: str,
    outcome: str,
    summary: str,
    mission: str,
    time: datetime,
    component: str | None = None,
    operator: str | None = None,
    session_id: str | None = None,
    expected: Sequence[str] = (),
) -> Correction:
    """An explicitly recorded correction, every field validated.

    Its id derives from the session, the time and the fields, so recording the same correction at
    the same time twice stores it once.

    Raises:
        InputError: a field is invalid; the message names the field and what is wrong.
    """
    try:
        checked_outcome = Outcome(outcome)
    except ValueError:
        choices = ", ".join(o.value for o in Outcome)
        raise InputError(f"outcome {outcome!r} is not one of: {choices}") from None
    anchor = "\0".join(
        [time.isoformat(), correction_class, category, component or "", checked_outcome.value, summary, *expected]
    )
    try:
        return Correction(
            correction_id=correction_id_for(CorrectionSource.EXPLICIT, session_id, anchor),
            correction_class=correction_class,
            category=category,
            component=component,
            outcome=checked_outcome,
            summary=summary,
            source=CorrectionSource.EXPLICIT,
            mission=mission,
            operator=operator,
            session_id=session_id,
            time=time,
            expected=tuple(expected),
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{_FIELD_NAMES.get(str(err['loc'][0]), str(err['loc'][0])) if err['loc'] else 'correction'}: "
            f"{err['msg'].removeprefix('Value error, ')}"
            for err in exc.errors()
        )
        raise InputError(f"invalid correction: {problems}") from None


_FIELD_NAMES = {"correction_class": "class", "session_id": "session"}


class DerivedCorrections:
    """Corrections derived from prompts or transcripts, with what was left out and why.

    Attributes:
        corrections: the corrections, in source order.
        skipped: counts of detections left out by reason (``no-time``).
    """

    def __init__(self) -> None:
        self.corrections: list[Correction] = []
        self.skipped: dict[str, int] = {}

    def add(
        self, detection: Detection, mission: str, operator: str | None, summary: str | None = None,
        expected: Sequence[str] = (),
    ) -> None:
        """Turn one detection into a correction (its summary ``summary``, else built from its fields;
        ``expected``: the stored records its words name)."""
        if detection.time is None:
            self.skipped["no-time"] = self.skipped.get("no-time", 0) + 1
            return
        source = CorrectionSource(detection.source)
        outcome = Outcome(detection.outcome)
        component = detection.components[0] if detection.components else None
        self.corrections.append(
            Correction(
                # an operator prompt keeps one id whether the hook or a transcript reported it
                correction_id=correction_id_for(CorrectionSource.PROMPT, detection.session_id, detection.prompt_key)
                if detection.prompt_key else correction_id_for(source, detection.session_id, detection.anchor),
                correction_class=detection.correction_class,
                category=detection.category,
                component=component,
                outcome=outcome,
                summary=summary or summary_from_fields(detection.correction_class, detection.category, component,
                                                       outcome),
                source=source,
                mission=mission,
                operator=operator,
                session_id=detection.session_id,
                time=detection.time,
                expected=tuple(expected),
            )
        )


    def without(self, correction_ids: set[str], reason: str) -> None:
        """Leave out the corrections whose id is in ``correction_ids``, counting them under ``reason``."""
        kept = [c for c in self.corrections if c.correction_id not in correction_ids]
        if len(kept) < len(self.corrections):
            self.skipped[reason] = self.skipped.get(reason, 0) + len(self.corrections) - len(kept)
        self.corrections = kept


def mission_of_prompt(given: str | None, cwd: str | None) -> str:
    """The mission a captured prompt's correction belongs to: ``given``, else the mission of the
    folder it was typed in (:func:`~mission_memory.mission_scope.mission_here`: its repository's; a
    folder that no longer exists: its own name), else ``unknown``."""
    if given:
        return given
    if not cwd:
        return "unknown"
    from mission_memory.mission_scope import mission_here

    return mission_here(cwd) or "unknown"


def prompt_corrections(
    prompts: Sequence[CapturedPrompt],
    *,
    known_component: Callable[[str], bool],
    mission: str | None = None,
    operator: str | None = None,
    llm: LlmCorrectionSummaries | None = None,
    known_reference: Callable[[str, str], bool] | None = None,
) -> DerivedCorrections:
    """Corrections among captured prompts (those the intent labeller marks ``correction``).

    Args:
        prompts: the corpus, oldest first.
        known_component: whether the memory holds a component.
        mission: the mission of every correction; default: the prompt's repository folder name.
        operator: the operator when a prompt carries none.
        llm: when an LLM is configured, it writes each summary from the prompt (checked not to copy
            it, :mod:`.llm_summary`); else, or when it cannot, the summary is built from the fields.
        known_reference: ``(mission, reference)`` → whether the reference names a record stored in
            that mission; the references a prompt names (:func:`~.detector.named_references`) that
            pass it become the correction's ``expected`` (ADR 0082). None: no ``expected``.
    """
    derived = DerivedCorrections()
    by_id = {p.prompt_id: p for p in prompts}
    for detection in detect_prompt_corrections(prompts, known_component):
        prompt = by_id[detection.anchor]
        component = detection.components[0] if detection.components else None
        sentence = llm.summary(prompt.prompt, detection.correction_class, detection.category, component,
                               detection.outcome) if llm is not None else None
        where = mission_of_prompt(mission, prompt.repository)
        expected = [r for r in named_references(prompt.prompt) if known_reference is not None
                    and known_reference(where, r)]
        derived.add(detection, where, prompt.operator or operator, sentence, expected)
    return derived


def transcript_corrections(
    sessions: Sequence[SessionTranscript],
    *,
    known_component: Callable[[str], bool],
    mission: str | None = None,
    operator: str | None = None,
) -> DerivedCorrections:
    """Corrections in Claude Code sessions: rejected tool calls, interruptions, redirects, reworked edits.

    Args:
        sessions: sessions read by :func:`~mission_memory.metrics.transcript_sessions.read_sessions`.
        known_component: whether the memory holds a component.
        mission: the mission of every correction; default: the session's working-directory folder name.
        operator: the operator of the sessions (transcripts do not name one).
    """
    derived = DerivedCorrections()
    for session in sessions:
        for detection in detect_transcript_corrections(session, known_component):
            derived.add(detection, mission_of_prompt(mission, detection.cwd), operator)
    return derived
