"""One correction detector for the two content sources: captured prompts and Claude Code transcripts.

docs/design.md §6 names three sources of corrections; two of them carry operator text, and both are read
here, with one vocabulary (:mod:`mission_memory.prompts.correction_cues`, shared by the intent labeller and
the transcript scanner) and one output type, :class:`Detection`:

* a captured prompt is a correction when the intent labeller marks it ``correction``
  (:func:`mission_memory.prompts.intents.label_intent`);
* a transcript gives the events of :mod:`mission_memory.metrics.transcript_corrections` (rejected
  tool calls, interruptions, redirecting prompts) and, found here, **reworked edits**: after a
  correction, the agent modifies again a file it had already modified (and the operator had not
  refused) before it — the operator's correction made it redo that change.

A prompt that is both captured by the prompt hook and present in a transcript is one correction,
not two: both sources give it the same :attr:`Detection.prompt_key` — a fingerprint of the prompt's
opening (redacted as the hook redacts, normalised, hashed) and how many prompts of the session
opened the same way before it — from which the correction's id is derived.

Text is read in memory only and reduced at once to closed-vocabulary fields: the correction class
from the signal kind, the semantic category from a small keyword taxonomy (:data:`CATEGORIES`), the
outcome, and the files touched. A :class:`Detection` holds no text (docs/adr/0025); its ``files``
are turned into a component by :func:`component_of` and then dropped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from mission_memory.capture.redaction import redact
from mission_memory.metrics.transcript_corrections import CorrectionKind, find_session_corrections
from mission_memory.metrics.transcript_sessions import SessionTranscript
from mission_memory.metrics.transcripts import Interruption, OperatorPrompt, ToolCall, ToolOutcome
from mission_memory.prompts.corpus import CapturedPrompt
from mission_memory.prompts.correction_cues import normalise
from mission_memory.prompts.intents import Intent, label_intent

__all__ = [
    "CATEGORIES",
    "EDIT_TOOLS",
    "Detection",
    "category_of",
    "component_of",
    "detect_prompt_corrections",
    "detect_transcript_corrections",
    "named_references",
    "prompt_fingerprint",
]

EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
"""Tools that modify a file (the same set as the initialization boundary of docs/design.md §9)."""

CATEGORIES: tuple[tuple[str, str], ...] = (
    ("revert", r"\b(revert|undo|roll ?back|put (it )?back|restore)\w*|\bвідкот\w*|\bповерни\w*|\bскасуй\w*"),
    ("security", r"\b(secret|password|credential|token|api key|auth\w*|permission)s?\b|\bбезпек\w*|\bпарол\w*|\bключ\w*"),
    ("tests", r"\b(tests?|pytest|spec|unit ?tests?|fixtures?|assert\w*)\b|\bтест\w*"),
    ("data", r"\b(database|schema|migrations?|sql\w*|tables?|columns?|ledger)\b|\bбаз\w* даних\b|\bсхем\w*|\bміграц\w*"),
    ("dependencies", r"\b(dependenc\w*|packages?|librar\w*|versions?|pip|npm|requirements)\b|\bзалежн\w*|\bбібліотек\w*"),
    ("docs", r"\b(readme|docs?|documentation|docstrings?|comments?|changelog)\b|\bдокументац\w*|\bкоментар\w*"),
    ("style", r"\b(format\w*|style|naming|rename|indent\w*|tabs|spaces|lint\w*|typo)\b|\bстил\w*|\bформат\w*|\bназв\w*"),
    ("performance", r"\b(slow|faster|performance|latency|cache|memory usage)\b|\bшвидк\w*|\bповільн\w*"),
    ("scope", r"\b(don'?t|do not|never) (touch|change|edit|modify|delete|remove)\b|\bonly\b|\bне (чіпай|змінюй|видаляй|редагуй)\b|\bлише\b|\bтільки\b"),
)
"""The semantic categories, first match wins; a correction matching none is ``approach``."""

_COMPILED = tuple((name, re.compile(pattern, re.IGNORECASE | re.UNICODE)) for name, pattern in CATEGORIES)
_PATH_TOKEN = re.compile(r"(?<![\w/.-])([A-Za-z0-9_][\w.-]*)/[\w./-]*\w")
_ADR_TOKEN = re.compile(r"\bADR[\s\-_#]*0*(\d{1,5})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Detection:
    """One correction found in a prompt or a transcript; no text, only closed-vocabulary fields.

    Attributes:
        source: ``prompt`` or ``transcript``.
        correction_class: ``prompt-correction``, ``tool-rejected``, ``interruption``,
            ``redirecting-prompt`` or ``edit-reworked``.
        category: one of :data:`CATEGORIES`' names, ``approach``, or for corrections without operator
            text the kind of tool concerned (``file-edit``, ``command``, ``tool``) or ``unspecified``.
        outcome: ``rejected`` (refused, interrupted, reverted) or ``modified``.
        session_id: the session, or None.
        time: when it happened (UTC), or None when the source has no time.
        anchor: the correction's position in its source (a prompt id, a transcript event id).
        components: top-level folders of the files concerned that the memory knows (see
            :func:`component_of`); the files themselves are not kept.
        cwd: the session's working directory or the prompt's repository, for naming the mission.
        tool: the tool call concerned (rejected, interrupted, the agent's last before a redirecting
            prompt, the reworked edit), or None; a tool name, not its input.
        prompt_key: for a correction made by an operator prompt (a captured prompt, a redirecting
            prompt in a transcript), ``<fingerprint>:<ordinal>``, the same in both sources; else None.
    """

    source: str
    correction_class: str
    category: str
    outcome: str
    session_id: str | None
    time: datetime | None
    anchor: str
    components: tuple[str, ...]
    cwd: str | None
    tool: str | None = None
    prompt_key: str | None = None


FINGERPRINT_CHARS = 120
"""How much of a prompt's opening the fingerprint reads: less than a transcript keeps (160 characters),
so a secret the hook redacted inside the opening still fits whole."""


def prompt_fingerprint(text: str) -> str:
    """A fingerprint of a prompt's opening, equal for the hook's capture and the transcript's record.

    The text is redacted as the prompt hook redacts it (:func:`mission_memory.capture.redaction.redact`),
    normalised (:func:`mission_memory.prompts.correction_cues.normalise`, whitespace collapsed), cut to
    :data:`FINGERPRINT_CHARS` characters and hashed: 16 hex digits of SHA-256. The text is not kept.
    """
    redacted, _ = redact(text[: FINGERPRINT_CHARS * 2])
    flat = " ".join(normalise(redacted).split())[:FINGERPRINT_CHARS]
    return hashlib.sha256(flat.encode("utf-8")).hexdigest()[:16]


class _PromptKeys:
    """``<fingerprint>:<ordinal>`` per session, the ordinal counting earlier prompts of the same opening."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str | None, str], int] = {}

    def next(self, session_id: str | None, text: str) -> str:
        fingerprint = prompt_fingerprint(text)
        ordinal = self.seen.get((session_id, fingerprint), 0)
        self.seen[(session_id, fingerprint)] = ordinal + 1
        return f"{fingerprint}:{ordinal}"


def category_of(text: str | None, tool: str | None = None) -> str:
    """The semantic category of a correction.

    Args:
        text: the operator's words (read here, never kept), or None when the correction has none.
        tool: the tool concerned, for a correction without words.

    Returns:
        A category name from :data:`CATEGORIES`, ``approach`` for words matching none, else
        ``file-edit`` / ``command`` / ``tool`` by the tool, else ``unspecified``.
    """
    if text:
        normalised = normalise(text)
        for name, regex in _COMPILED:
            if regex.search(normalised):
                return name
        return "approach"
    if tool in EDIT_TOOLS:
        return "file-edit"
    if tool == "Bash":
        return "command"
    return "tool" if tool else "unspecified"


def component_of(path: str, root: str | None, known: Callable[[str], bool]) -> str | None:
    """The component a file belongs to: its top-level folder under ``root``, if that folder is real.

    Only a component the store already holds, or a folder that exists in the repository ``root``,
    is returned, so no free text from a transcript or a prompt (a path could carry anything)
    reaches a practitioner record (docs/adr/0025).

    Args:
        path: a file path, absolute or relative to ``root``.
        root: the repository or working directory, or None.
        known: whether the memory holds records of a component (``store.has_component``).
    """
    pure = PurePosixPath(path)
    if pure.is_absolute():
        if root is None:
            return None
        try:
            pure = pure.relative_to(PurePosixPath(root))
        except ValueError:
            return None
    parts = [p for p in pure.parts if p not in ("", ".")]
    if len(parts) < 2 or parts[0] == "..":
        return None
    top = parts[0]
    if known(top) or (root is not None and Path(root, top).is_dir()):
        return top
    return None


def named_references(text: str) -> tuple[str, ...]:
    """The record references an operator's words name, as candidates for a correction's ``expected``.

    ``ADR 9``, ``ADR-0009``, ``adr #9`` give ``ADR-0009``; a path with a folder
    (``docs/adr/0009-x.md``) is given as written. Read in memory only: the caller keeps the
    references that name a stored record and drops the rest, so no other text reaches a
    correction (docs/adr/0025, ADR 0082).

    Returns:
        The references, in the order first named, without repeats.
    """
    adrs = (f"ADR-{int(m.group(1)):04d}" for m in _ADR_TOKEN.finditer(text))
    paths = (m.group(0) for m in _PATH_TOKEN.finditer(text))
    return tuple(dict.fromkeys([*adrs, *paths]))


def _components(paths: Iterable[str | None], root: str | None, known: Callable[[str], bool]) -> tuple[str, ...]:
    found = (component_of(p, root, known) for p in paths if p)
    return tuple(dict.fromkeys(c for c in found if c))


def detect_prompt_corrections(
    prompts: Sequence[CapturedPrompt], known_component: Callable[[str], bool]
) -> list[Detection]:
    """Captured prompts the intent labeller marks as corrections, oldest first.

    Args:
        prompts: the corpus, oldest first (a session's first prompt is labelled as such).
        known_component: whether the memory holds a component (paths named in a prompt give it).
    """
    seen: set[str | None] = set()
    keys = _PromptKeys()
    found: list[Detection] = []
    for prompt in prompts:
        first = prompt.session_id not in seen
        seen.add(prompt.session_id)
        key = keys.next(prompt.session_id, prompt.prompt)
        if label_intent(prompt.prompt, first_in_session=first).intent is not Intent.CORRECTION:
            continue
        category = category_of(prompt.prompt)
        paths = [m.group(0) for m in _PATH_TOKEN.finditer(prompt.prompt)]
        found.append(
            Detection(
                source="prompt",
                correction_class="prompt-correction",
                category=category,
                outcome="rejected" if category == "revert" else "modified",
                session_id=prompt.session_id,
                time=prompt.timestamp,
                anchor=prompt.prompt_id,
                components=_components(paths, prompt.repository, known_component),
                cwd=prompt.repository,
                prompt_key=key,
            )
        )
    return found


def detect_transcript_corrections(
    session: SessionTranscript, known_component: Callable[[str], bool]
) -> list[Detection]:
    """Corrections in one Claude Code session: the scanner's events, then reworked edits.

    Args:
        session: a session read by :func:`mission_memory.metrics.transcript_sessions.read_sessions`.
        known_component: whether the memory holds a component.

    Returns:
        Detections in transcript order (scanner events first, reworked edits after).
    """
    cwd = session.main.cwd
    openings = {
        e.uuid: e.opening for f in session.files for e in f.events if isinstance(e, OperatorPrompt) and e.uuid
    }
    keys = _PromptKeys()
    prompt_keys = {
        e.uuid: keys.next(session.session_id, e.opening)
        for e in session.main.events if isinstance(e, OperatorPrompt) and not e.sidechain and e.uuid
    }
    events = find_session_corrections(session)
    found: list[Detection] = []
    for event in events:
        redirect = event.kind is CorrectionKind.REDIRECTING_PROMPT
        words = openings.get(event.record_uuid or "") if redirect else None
        category = category_of(words, event.tool)
        rejected = not redirect or category == "revert"
        found.append(
            Detection(
                source="transcript",
                correction_class=str(event.kind),
                category=category,
                outcome="rejected" if rejected else "modified",
                session_id=session.session_id,
                time=event.time,
                anchor=event.id,
                components=_components([event.file], cwd, known_component),
                cwd=cwd,
                tool=event.tool,
                prompt_key=prompt_keys.get(event.record_uuid or "") if redirect else None,
            )
        )
    marks = {e.record_uuid for e in events if e.record_uuid}
    found.extend(_reworked_edits(session, marks, known_component))
    return found


def _reworked_edits(
    session: SessionTranscript, correction_uuids: set[str], known: Callable[[str], bool]
) -> list[Detection]:
    """Edits of a file the agent had modified (unrefused) before a correction, made after it."""
    cwd = session.main.cwd
    calls: dict[str, ToolCall] = {}
    applied: set[str] = set()  # files the agent modified and the operator did not refuse
    before: set[str] = set()  # those files as of the latest correction
    reworked: set[str] = set()  # files already reported since that correction
    corrected = False
    found: list[Detection] = []
    for event in session.main.events:
        if event.sidechain:
            continue
        if getattr(event, "uuid", None) in correction_uuids and isinstance(
            event, ToolOutcome | Interruption | OperatorPrompt
        ):
            corrected, before, reworked = True, set(applied), set()
        match event:
            case ToolCall(name=name, file_path=path) if name in EDIT_TOOLS and path:
                calls[event.tool_use_id] = event
                if corrected and path in before and path not in reworked:
                    reworked.add(path)
                    found.append(
                        Detection(
                            source="transcript",
                            correction_class="edit-reworked",
                            category="file-edit",
                            outcome="modified",
                            session_id=session.session_id,
                            time=event.time,
                            anchor=f"reworked\0{event.uuid or event.tool_use_id}\0{event.tool_use_id}",
                            components=_components([path], cwd, known),
                            cwd=cwd,
                            tool=name,
                        )
                    )
            case ToolOutcome(rejected=False) if event.tool_use_id in calls:
                path = calls[event.tool_use_id].file_path
                if path:
                    applied.add(path)
            case OperatorPrompt(sidechain=False) if event.uuid not in correction_uuids:
                corrected = False
            case _:
                pass
    return found
