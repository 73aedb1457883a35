"""Operator corrections visible in Claude Code transcripts, as structured events without content.

docs/design.md §6 lists session transcripts as a source of corrections: rejected tool calls,
interruptions, and operator prompts that redirect the agent. This module finds them and returns
:class:`TranscriptCorrection` events — session, time, kind, how it was detected, tool and file —
for the corrections pipeline (practitioner layer) to consume. It never copies prompt text, tool
input or file contents (docs/design.md §3: abstractions only); prompt openings are matched against
cue patterns in memory and dropped.

Detection rules (per transcript stream: the main conversation, and each subagent):

* ``tool-rejected``: a ``tool_result`` whose text is Claude Code's refusal message ("The user
  doesn't want to proceed with this tool use...") or whose ``toolUseResult`` is
  ``"User rejected tool use"``. Signal ``rejected-with-reason`` when the operator typed
  instructions with the refusal.
* ``interruption``: a ``[Request interrupted by user]`` / ``[... for tool use]`` marker. A marker
  that directly follows a rejection (Claude Code writes one after each refusal) is part of that
  rejection and not reported again.
* ``redirecting-prompt``: an operator prompt that directly follows an interruption or a refusal
  (no model call in between), or that follows an agent turn with at least one tool call and opens
  with a correction cue (English or Ukrainian: "no", "don't", "instead", "ні", "не треба",
  "замість", ...; the vocabulary lives in :mod:`mission_memory.prompts.correction_cues`). Tool and file are the agent's last tool call before the prompt.

An interruption followed by a new prompt gives two events (``interruption`` and a
``redirecting-prompt``): they are different acts of the operator.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from mission_memory.metrics.transcript_sessions import SessionTranscript
from mission_memory.metrics.transcripts import (
    ApiCall,
    Interruption,
    OperatorPrompt,
    ToolCall,
    ToolOutcome,
    TranscriptEvent,
)
from mission_memory.prompts.correction_cues import redirects

__all__ = [
    "CorrectionKind",
    "CorrectionSignal",
    "TranscriptCorrection",
    "find_corrections",
    "find_session_corrections",
    "is_correction_cue",
]


class CorrectionKind(StrEnum):
    """What the operator did."""

    TOOL_REJECTED = "tool-rejected"
    INTERRUPTION = "interruption"
    REDIRECTING_PROMPT = "redirecting-prompt"


class CorrectionSignal(StrEnum):
    """How the correction was recognised in the transcript."""

    REJECTED = "rejected"
    REJECTED_WITH_REASON = "rejected-with-reason"
    INTERRUPTED = "interrupted"
    INTERRUPTED_TOOL_USE = "interrupted-tool-use"
    PROMPT_AFTER_INTERRUPTION = "prompt-after-interruption"
    PROMPT_AFTER_REJECTION = "prompt-after-rejection"
    CORRECTION_CUE = "correction-cue"


class TranscriptCorrection(BaseModel):
    """One operator correction seen in a transcript; carries no prompt, input or file text.

    Attributes:
        id: content-derived id (stable across re-reads of the same transcript).
        session_id: the session's ``sessionId`` (see :class:`SessionTranscript`).
        transcript: path of the file the event was found in.
        record_uuid: ``uuid`` of the transcript record, a reference that resolves in the file.
        time: record timestamp (UTC-aware), or None.
        kind: what the operator did.
        signal: how it was recognised.
        tool: the tool call concerned (rejected, interrupted, or the agent's last before the
            prompt), or None.
        file: that tool call's file path, or None.
        sidechain: the event happened inside a subagent.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    session_id: str
    transcript: str
    record_uuid: str | None
    time: datetime | None
    kind: CorrectionKind
    signal: CorrectionSignal
    tool: str | None
    file: str | None
    sidechain: bool


def is_correction_cue(text: str) -> bool:
    """Does a prompt open like a correction ("no, ...", "don't ...", "ні, ...", "...instead")?

    The cues are the shared vocabulary of :mod:`mission_memory.prompts.correction_cues` (those marked
    ``redirects``), the same list the intent labeller scores the ``correction`` label with.

    Args:
        text: the prompt (only its opening matters).

    Returns:
        True when an English or Ukrainian correction cue matches.
    """
    return redirects(text)


def find_corrections(sessions: Iterable[SessionTranscript]) -> list[TranscriptCorrection]:
    """Corrections over many sessions, session by session (see :func:`find_session_corrections`)."""
    return [c for s in sessions for c in find_session_corrections(s)]


def find_session_corrections(session: SessionTranscript) -> list[TranscriptCorrection]:
    """Corrections in one session: the main conversation, then each subagent.

    Args:
        session: a session read by :func:`mission_memory.metrics.transcript_sessions.read_sessions`.

    Returns:
        Events in transcript order within each stream.
    """
    tools = {e.tool_use_id: e for f in session.files for e in f.events if isinstance(e, ToolCall)}
    main = session.main
    streams: list[tuple[str, Sequence[TranscriptEvent]]] = [
        (str(main.path), [e for e in main.events if not e.sidechain]),
        (str(main.path), [e for e in main.events if e.sidechain]),
        *((str(f.path), f.events) for f in session.subagents),
    ]
    found: list[TranscriptCorrection] = []
    for path, events in streams:
        found.extend(_Scanner(session.session_id, path, tools).scan(events))
    return found


class _Scanner:
    """State machine over one stream of events."""

    def __init__(self, session_id: str, path: str, tools: dict[str, ToolCall]) -> None:
        self.session_id = session_id
        self.path = path
        self.tools = tools
        self.last_tool: ToolCall | None = None
        self.pending: CorrectionSignal | None = None
        self.found: list[TranscriptCorrection] = []

    def scan(self, events: Sequence[TranscriptEvent]) -> list[TranscriptCorrection]:
        for event in events:
            match event:
                case ApiCall():
                    self.pending = None
                case ToolCall():
                    self.last_tool = event
                    self.pending = None
                case ToolOutcome(rejected=True):
                    signal = (
                        CorrectionSignal.REJECTED_WITH_REASON
                        if event.rejected_with_reason
                        else CorrectionSignal.REJECTED
                    )
                    self._emit(CorrectionKind.TOOL_REJECTED, signal, event, self.tools.get(event.tool_use_id))
                    self.pending = CorrectionSignal.PROMPT_AFTER_REJECTION
                case Interruption():
                    if self.pending is not CorrectionSignal.PROMPT_AFTER_REJECTION:
                        signal = (
                            CorrectionSignal.INTERRUPTED_TOOL_USE
                            if event.for_tool_use
                            else CorrectionSignal.INTERRUPTED
                        )
                        tool = self.last_tool if event.for_tool_use else None
                        self._emit(CorrectionKind.INTERRUPTION, signal, event, tool)
                        self.pending = CorrectionSignal.PROMPT_AFTER_INTERRUPTION
                case OperatorPrompt(sidechain=False):
                    self._prompt(event)
                case _:
                    pass
        return self.found

    def _prompt(self, prompt: OperatorPrompt) -> None:
        signal = self.pending
        if signal is None and self.last_tool is not None and is_correction_cue(prompt.opening):
            signal = CorrectionSignal.CORRECTION_CUE
        if signal is not None:
            self._emit(CorrectionKind.REDIRECTING_PROMPT, signal, prompt, self.last_tool)
        self.pending = None
        self.last_tool = None

    def _emit(
        self,
        kind: CorrectionKind,
        signal: CorrectionSignal,
        event: ToolOutcome | Interruption | OperatorPrompt,
        tool: ToolCall | None,
    ) -> None:
        anchor = event.uuid or (event.time.isoformat() if event.time else str(len(self.found)))
        if isinstance(event, ToolOutcome):
            anchor = f"{anchor}\0{event.tool_use_id}"
        digest = hashlib.sha256(f"{self.session_id}\0{anchor}\0{kind}\0{signal}".encode()).hexdigest()
        self.found.append(
            TranscriptCorrection(
                id=digest[:24],
                session_id=self.session_id,
                transcript=self.path,
                record_uuid=event.uuid,
                time=event.time,
                kind=kind,
                signal=signal,
                tool=tool.name if tool else None,
                file=tool.file_path if tool else None,
                sidechain=event.sidechain,
            )
        )
