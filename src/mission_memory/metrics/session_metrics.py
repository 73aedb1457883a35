"""Session-start cost per session — T, K, W as the paper names them — and their aggregates.

The paper (*Persistent Memory Architecture for Long-Horizon Autonomous Missions with Operator Rotation*, "Експеримент 1" and "Експеримент 3"; docs/design.md §9) measures a session's start:

* ``T`` — input tokens of the session's first model call: ``input_tokens +
  cache_creation_input_tokens + cache_read_input_tokens`` (tokens). Taken from the main
  conversation; a subagent's first call is not the session's start.
* ``K`` — file reads (``Read`` tool calls) during initialization. Initialization runs from the
  session's start to its first file-modifying tool call (``Edit``, ``Write``, ``MultiEdit``,
  ``NotebookEdit``), the whole session if there is none; see :class:`InitBoundary` and
  ``docs/adr/0013-initialization-boundary-for-session-start-metrics.md``.
* ``W`` — the share (in [0, 1]) of distinct files read during initialization that the session
  never edits or writes: the paper's conservative proxy for "never used". None when nothing was
  read during initialization.

Aggregates follow the paper's reporting: N, median, mean, sd, P10/P90 (:func:`summarize_sessions`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from mission_memory.metrics.stats import Distribution, describe
from mission_memory.metrics.transcript_sessions import SessionTranscript
from mission_memory.metrics.transcripts import ApiCall, OperatorPrompt, ToolCall, TranscriptEvent

__all__ = [
    "DEFAULT_MODIFYING_TOOLS",
    "DEFAULT_READ_TOOLS",
    "InitBoundary",
    "MetricsOptions",
    "SessionMetrics",
    "SessionsSummary",
    "measure_session",
    "measure_sessions",
    "summarize_sessions",
]

DEFAULT_MODIFYING_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
"""Tool calls that modify a file: the first one ends initialization; their files count as used."""

DEFAULT_READ_TOOLS = frozenset({"Read"})
"""Tool calls counted as file reads for K and W."""


class InitBoundary(StrEnum):
    """Where a session's initialization phase ends.

    * ``first-edit`` (default, the paper's): at the first file-modifying tool call; the whole
      session when the agent never modifies a file.
    * ``first-round``: at the operator's second prompt (the first dialogue round).
    * ``session``: never — every read of the session counts.
    """

    FIRST_EDIT = "first-edit"
    FIRST_ROUND = "first-round"
    SESSION = "session"


@dataclass(frozen=True)
class MetricsOptions:
    """How T, K and W are measured.

    Attributes:
        init_boundary: where initialization ends.
        modifying_tools: tool names that modify a file.
        read_tools: tool names that read a file.
        include_subagents: count subagents' reads (and let their edits end initialization);
            by default K and W look at the main conversation only. Edits by subagents always
            count as using a file for W.
    """

    init_boundary: InitBoundary = InitBoundary.FIRST_EDIT
    modifying_tools: frozenset[str] = DEFAULT_MODIFYING_TOOLS
    read_tools: frozenset[str] = DEFAULT_READ_TOOLS
    include_subagents: bool = False


@dataclass(frozen=True)
class SessionMetrics:
    """One session's measurements.

    Attributes:
        session_id: the session's ``sessionId`` (see :class:`SessionTranscript`).
        path: the main transcript file.
        subagent_paths: the session's subagent files.
        start, end: first and last record timestamp (UTC-aware), or None.
        T: first main-conversation model call's input + cache creation + cache read (tokens);
            None when the session has no model call.
        K: ``Read`` calls during initialization.
        W: share of distinct files read during initialization never edited or written, in [0, 1];
            None when nothing was read during initialization.
        init_ended_by_edit: initialization ended at a file-modifying call (False: ran to the end).
        api_calls: model API calls, each counted once, subagents included.
        subagent_api_calls: the part of ``api_calls`` made by subagents.
        input_tokens: sum over API calls of input + cache creation + cache read (tokens).
        cache_read_input_tokens: the cache-read part of ``input_tokens`` (tokens).
        output_tokens: sum over API calls (tokens).
        rounds: operator prompts in the main conversation.
        init_files_read: distinct files read during initialization.
        files_read: distinct files read anywhere in the session.
        files_edited: distinct files modified anywhere in the session.
        tools_used: tool name -> calls, subagents included.
    """

    session_id: str
    path: str
    subagent_paths: tuple[str, ...]
    start: datetime | None
    end: datetime | None
    T: int | None
    K: int
    W: float | None
    init_ended_by_edit: bool
    api_calls: int
    subagent_api_calls: int
    input_tokens: int
    cache_read_input_tokens: int
    output_tokens: int
    rounds: int
    init_files_read: tuple[str, ...]
    files_read: tuple[str, ...]
    files_edited: tuple[str, ...]
    tools_used: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; keys as in the paper (``T``, ``K``, ``W``), times in ISO 8601."""
        return {
            "session_id": self.session_id,
            "path": self.path,
            "subagent_paths": list(self.subagent_paths),
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "T": self.T,
            "K": self.K,
            "W": self.W,
            "init_ended_by_edit": self.init_ended_by_edit,
            "api_calls": self.api_calls,
            "subagent_api_calls": self.subagent_api_calls,
            "input_tokens": self.input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
            "rounds": self.rounds,
            "init_files_read": list(self.init_files_read),
            "files_read": list(self.files_read),
            "files_edited": list(self.files_edited),
            "tools_used": dict(self.tools_used),
        }


@dataclass(frozen=True)
class SessionsSummary:
    """Aggregates over sessions as the paper reports them.

    Attributes:
        N: sessions measured.
        T, K, W, rounds: distributions (sessions with a None value left out of that one).
        K_zero_share: share of sessions with no read during initialization (paper: 72%).
        W_over_half_share: share of sessions with a W, whose W exceeds 0.5 (paper: 66%).
    """

    N: int
    T: Distribution
    K: Distribution
    W: Distribution
    rounds: Distribution
    K_zero_share: float | None
    W_over_half_share: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "N": self.N,
            "T": self.T.to_dict(),
            "K": self.K.to_dict(),
            "W": self.W.to_dict(),
            "rounds": self.rounds.to_dict(),
            "K_zero_share": self.K_zero_share,
            "W_over_half_share": self.W_over_half_share,
        }


def measure_sessions(
    sessions: Iterable[SessionTranscript], options: MetricsOptions | None = None
) -> list[SessionMetrics]:
    """Measure every session (see :func:`measure_session`)."""
    return [measure_session(s, options) for s in sessions]


def measure_session(session: SessionTranscript, options: MetricsOptions | None = None) -> SessionMetrics:
    """Measure T, K, W and the session's counts.

    Args:
        session: a session read by :func:`mission_memory.metrics.transcript_sessions.read_sessions`.
        options: measurement options; defaults follow the paper.

    Returns:
        The session's metrics.
    """
    options = options or MetricsOptions()
    events = session.all_events()
    calls = [e for e in events if isinstance(e, ApiCall)]
    tools = [e for e in events if isinstance(e, ToolCall)]
    main_calls = [c for c in calls if not c.sidechain]
    scoped = events if options.include_subagents else list(session.main_events())
    init_reads, ended_by_edit = _initialization_reads(scoped, options)
    init_files = _distinct(r.file_path for r in init_reads)
    edited = _distinct(t.file_path for t in tools if t.name in options.modifying_tools)
    edited_set = set(edited)
    unused = [f for f in init_files if f not in edited_set]
    return SessionMetrics(
        session_id=session.session_id,
        path=str(session.main.path),
        subagent_paths=tuple(str(f.path) for f in session.subagents),
        start=session.start,
        end=session.end,
        T=main_calls[0].context_tokens if main_calls else None,
        K=len(init_reads),
        W=len(unused) / len(init_files) if init_files else None,
        init_ended_by_edit=ended_by_edit,
        api_calls=len(calls),
        subagent_api_calls=sum(c.sidechain for c in calls),
        input_tokens=sum(c.context_tokens for c in calls),
        cache_read_input_tokens=sum(c.cache_read_input_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        rounds=sum(1 for e in session.main_events() if isinstance(e, OperatorPrompt)),
        init_files_read=tuple(init_files),
        files_read=tuple(sorted(_distinct(t.file_path for t in tools if t.name in options.read_tools))),
        files_edited=tuple(sorted(edited)),
        tools_used=dict(sorted(Counter(t.name for t in tools).items())),
    )


def summarize_sessions(metrics: Sequence[SessionMetrics]) -> SessionsSummary:
    """Aggregate sessions: N, median, mean, sd, P10/P90 of T, K, W and rounds (paper, Exp. 1 and 3).

    Args:
        metrics: measured sessions.

    Returns:
        The summary; each distribution leaves out sessions whose value is None.
    """
    t_values = [float(m.T) for m in metrics if m.T is not None]
    w_values = [m.W for m in metrics if m.W is not None]
    k_values = [float(m.K) for m in metrics]
    return SessionsSummary(
        N=len(metrics),
        T=describe(t_values),
        K=describe(k_values),
        W=describe(w_values),
        rounds=describe([float(m.rounds) for m in metrics]),
        K_zero_share=sum(k == 0 for k in k_values) / len(k_values) if k_values else None,
        W_over_half_share=sum(w > 0.5 for w in w_values) / len(w_values) if w_values else None,
    )


def _initialization_reads(
    events: Sequence[TranscriptEvent], options: MetricsOptions
) -> tuple[list[ToolCall], bool]:
    """Read calls before the initialization boundary, and whether an edit ended it."""
    reads: list[ToolCall] = []
    prompts = 0
    for event in events:
        match event:
            case OperatorPrompt(sidechain=False):
                prompts += 1
                if options.init_boundary is InitBoundary.FIRST_ROUND and prompts == 2:
                    return reads, False
            case ToolCall(name=name) if name in options.modifying_tools:
                if options.init_boundary is InitBoundary.FIRST_EDIT:
                    return reads, True
            case ToolCall(name=name) if name in options.read_tools:
                reads.append(event)
            case _:
                pass
    return reads, False


def _distinct(paths: Iterable[str | None]) -> list[str]:
    """Distinct non-None paths in first-seen order."""
    return list(dict.fromkeys(p for p in paths if p is not None))
