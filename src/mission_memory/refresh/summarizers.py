"""Summarizers for the executive-summary artifact, and the LLM spend ledger they answer to.

The first refresh artifact of docs/design.md §5: "an executive summary of what changed since the last
refresh (an LLM summarizer over the relevant diffs and comments; a deterministic extractive
summarizer when no LLM is configured)". Two implementations of the :class:`Summarizer` protocol:

* :class:`ExtractiveSummarizer` — deterministic; one event per commit (its subject) and per comment (its
  first sentences), the most significant first (decisions touched, tracker keys, size of change,
  overlap with the task), spread over the period and always including the latest, each citing its
  commit sha or comment id. Commit bodies weigh an event but are never quoted as events.
* :class:`ChatCompletionsSummarizer` — an OpenAI-compatible ``POST {base_url}/chat/completions``
  (Ollama, vLLM, llama.cpp server, hosted APIs) through httpx. Spend is counted from
  ``usage.total_tokens`` into a :class:`SpendLedger` with a daily cap. When the cap would be
  exceeded, or the endpoint fails in any way (unreachable, timeout, non-2xx, unparseable answer), it
  falls back to the extractive summarizer and says so in the first line of the text and in
  ``fallback_reason``. Endpoint problems never raise. Each call has a total wall-clock deadline
  (``MISSION_MEMORY_LLM_DEADLINE_SECONDS``), capped by the time left in the pass's
  :class:`~mission_memory.refresh.pass_budget.PassBudget`; once that is used up, calls fall back at
  once (ADR 0019).

What may leave the process: material whose :attr:`SummaryMaterial.access_level` (the most restricted
of its task's and its commits' levels) is above ``max_access`` (``MISSION_MEMORY_LLM_MAX_ACCESS``,
default ``internal``) is never sent; it is summarised by the fallback, which says why (ADR 0045).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Protocol

import httpx

from mission_memory.capture.redaction import redact_text, redacted_cut
from mission_memory.http_deadline import Deadline, DeadlineExceeded, post_json_within
from mission_memory.ingest.adr import find_adr_paths
from mission_memory.ingest.git_history import Commit
from mission_memory.records import AccessLevel
from mission_memory.refresh.open_questions import OpenQuestion
from mission_memory.refresh.pass_budget import BUDGET_SETTING, PassBudget
from mission_memory.stores.filters import ACCESS_ORDER
from mission_memory.trackers.base import Task, TaskComment
from mission_memory.utc import as_utc

__all__ = [
    "ChatCompletionsSummarizer",
    "ExtractiveSummarizer",
    "InMemorySpendLedger",
    "QuestionsResult",
    "SpendLedger",
    "Summarizer",
    "SummaryMaterial",
    "SummaryResult",
    "chat_message_content",
]

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_TRAILER = re.compile(r"^\s*[A-Za-z][\w-]*-by:\s|^\s*Change-Id:\s", re.IGNORECASE)
_TERM = re.compile(r"[^\W_]{3,}", re.UNICODE)
_STOPWORDS = frozenset({
    "the", "and", "for", "with", "that", "this", "from", "are", "was", "were", "has", "have", "not",
    "but", "into", "when", "then", "than", "will", "should", "would", "could", "can", "its", "our",
    "you", "all", "any", "also", "there", "their", "what", "which", "who", "how", "why", "use",
    "для", "що", "але", "або", "при", "після", "коли", "якщо", "щоб", "вже", "ще", "так", "це",
    "цей", "ця", "які", "який", "яка", "він", "вона", "вони", "ми", "ви", "нам", "нас", "буде",
})


@dataclass(frozen=True)
class SummaryMaterial:
    """What a summary covers.

    Attributes:
        task: the task refreshed.
        commits: the commits touching it since the last refresh, oldest first.
        comments: its new comments since the last refresh, oldest first.
        since: the time of the last refresh, or None for the first.
        access_level: the most restricted level of the task (its ``access:LEVEL`` label) and of the
            commits (the files they touch); an LLM summarizer sends nothing above its ``max_access``.
    """

    task: Task
    commits: Sequence[Commit]
    comments: Sequence[TaskComment]
    since: datetime | None
    access_level: AccessLevel = AccessLevel.INTERNAL


@dataclass(frozen=True)
class SummaryResult:
    """A summary and how it was made.

    Attributes:
        text: Markdown; when a fallback was used, its first line says so and why.
        summarizer: the name of the summarizer that wrote ``text`` (``extractive``,
            ``chat-completions:<model>``).
        tokens_spent: LLM tokens this summary cost (0 for extractive).
        fallback_reason: why the configured summarizer was not used, or None.
    """

    text: str
    summarizer: str
    tokens_spent: int
    fallback_reason: str | None


@dataclass(frozen=True)
class QuestionsResult:
    """Open questions an LLM extracted.

    Attributes:
        questions: ``source_kind`` ``"llm"``; empty on a fallback.
        summarizer: who extracted them.
        tokens_spent: LLM tokens it cost.
        fallback_reason: why no LLM extraction happened, or None.
    """

    questions: tuple[OpenQuestion, ...]
    summarizer: str
    tokens_spent: int
    fallback_reason: str | None


class Summarizer(Protocol):
    """Writes the executive summary of a task's activity."""

    name: str

    def summarize(self, material: SummaryMaterial) -> SummaryResult:
        """A summary of ``material``; never raises for a backend problem (falls back instead)."""
        ...


class SpendLedger(Protocol):
    """Daily LLM token spend (UTC days)."""

    def spent_on(self, day: date) -> int:
        """Tokens spent on ``day``, 0 when none."""
        ...

    def add(self, day: date, tokens: int) -> None:
        """Add ``tokens`` (≥ 0) to the spend of ``day``."""
        ...


class InMemorySpendLedger:
    """A :class:`SpendLedger` in a dict, for tests and dry runs (the refresher uses ``StoreSpendLedger``)."""

    def __init__(self) -> None:
        self.spent: dict[date, int] = {}

    def spent_on(self, day: date) -> int:
        """Tokens spent on ``day``."""
        return self.spent.get(day, 0)

    def add(self, day: date, tokens: int) -> None:
        """Add ``tokens`` to ``day``; non-positive amounts are ignored."""
        if tokens > 0:
            self.spent[day] = self.spent.get(day, 0) + tokens


# --- extractive ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Event:
    """One candidate line of the summary: a commit (by its subject) or a comment (by its first sentences)."""

    text: str
    cite: str
    time: datetime
    order: int
    significance: float
    decisions: tuple[str, ...] = ()


_COMMENT_CHARS = 240
"""Characters of a comment quoted as its event (its first sentences)."""
_SAME_WEEK_DAMPING = 0.6
"""Each event already kept from the same ISO week multiplies a candidate's significance by this, so the
summary spreads over the period instead of filling up with its busiest days."""


def _sentences(text: str) -> list[str]:
    """Sentences of ``text``, whitespace collapsed; git trailers (``Signed-off-by: …``) dropped."""
    kept = "\n".join(line for line in text.splitlines() if not _TRAILER.match(line))
    return [" ".join(s.split()) for s in _SENTENCE_END.split(kept) if s and s.strip()]


def _terms(text: str) -> set[str]:
    return {t for t in (m.group(0).lower() for m in _TERM.finditer(text)) if t not in _STOPWORDS}


def _comment_head(text: str) -> str:
    """A comment's first sentences, up to :data:`_COMMENT_CHARS` characters (one sentence at least)."""
    head = ""
    for sentence in _sentences(text):
        if head and len(head) + 1 + len(sentence) > _COMMENT_CHARS:
            break
        head = f"{head} {sentence}".strip()
    return redacted_cut(head, _COMMENT_CHARS)  # cut after redaction: no head of a split secret (issue 35 item 3)


def _events(material: SummaryMaterial) -> list[_Event]:
    """The candidate events with their significance (see :class:`ExtractiveSummarizer`)."""
    task_terms = _terms(f"{material.task.title} {material.task.description}")
    task_key = material.task.key.upper()
    events: list[_Event] = []
    for commit in material.commits:
        subject = " ".join(commit.subject.split())
        if commit.is_merge or not subject:
            continue
        decisions = tuple(find_adr_paths(commit.files))
        keys = {key.upper() for key in commit.tracker_keys}
        significance = (
            6.0 * min(len(decisions), 2)
            + (1.5 if keys else 0.0) + (1.0 if task_key in keys else 0.0)
            + min(math.log2(1 + commit.insertions + commit.deletions) / 2, 4.0)
            + min(len(_terms(f"{subject} {commit.body}") & task_terms), 3)
        )
        events.append(_Event(subject, commit.sha[:7], commit.committed_at, len(events), significance, decisions))
    for comment in material.comments:
        head = _comment_head(comment.text)
        if not head:
            continue
        who = f" ({comment.author})" if comment.author else ""
        mentions_task = task_key in comment.text.upper()
        significance = 2.0 + (1.0 if mentions_task else 0.0) + min(len(_terms(comment.text) & task_terms), 3)
        events.append(_Event(head, f"comment {comment.id}{who}", comment.created_at, len(events), significance))
    return events


def _since_text(since: datetime | None) -> str:
    return f"since {since.astimezone(UTC).strftime('%Y-%m-%d %H:%M')} UTC" if since else "since tracking began"


def _week(moment: datetime) -> tuple[int, int]:
    year, week, _ = moment.astimezone(UTC).isocalendar()
    return year, week


class ExtractiveSummarizer:
    """A deterministic summary of a period: its most significant events first, spread over the period.

    Each commit is one event, quoted by its subject (its body weighs the event but is never quoted:
    bullet lines of a body are not events); each comment is one event, quoted by its first sentences.
    An event's significance adds, for a commit, 6 per decision record it touches (ADR files, at most
    2), 1.5 when it names tracker keys and 1 more when one is the task's, half the log2 of its changed
    lines (at most 4), and the terms it shares with the task (at most 3); a comment starts at 2 (it is about the
    task), plus 1 when it names the task's key, plus shared terms. The latest event is always kept;
    the other places go to the most significant, each one already kept from the same ISO week
    multiplying a candidate's weight by 0.6 and its largest term overlap (Jaccard) with a kept event
    by 1 - overlap / 2, so a 55-commit period is not summarized by near-identical commits of its first
    two days (issue 12 item 5). Lines are printed most significant first, each with its date and
    citation, under a counts line, the most changed files and the period covered. Ties break on
    input order, so the same material always gives the same text.

    Args:
        max_sentences: how many events to list (≥ 1): the entry cap.
    """

    name = "extractive"

    def __init__(self, max_sentences: int = 8) -> None:
        self.max_sentences = max(1, max_sentences)

    def summarize(self, material: SummaryMaterial) -> SummaryResult:
        """The extractive summary of ``material`` (never raises, spends no tokens)."""
        task = material.task
        commits = list(material.commits)
        comments = list(material.comments)
        if not commits and not comments:
            text = f"No commits or comments on {task.key} {_since_text(material.since)}."
            return SummaryResult(text, self.name, 0, None)
        authors = {c.author for c in commits}
        inserted = sum(c.insertions for c in commits)
        deleted = sum(c.deletions for c in commits)
        lines = [
            f"{task.key} — {task.title}: {len(commits)} commit(s) by {len(authors)} author(s) "
            f"(+{inserted}/−{deleted} lines) and {len(comments)} comment(s) {_since_text(material.since)}."
        ]
        files = Counter(f for c in commits for f in c.files)
        if files:
            top = sorted(files.items(), key=lambda item: (-item[1], item[0]))[:5]
            lines.append("Most changed files: " + ", ".join(f"`{f}` ({n})" for f, n in top) + ".")
        events = _events(material)
        chosen = self._pick(events)
        if events:
            first, last = min(e.time for e in events), max(e.time for e in events)
            days = len({e.time.astimezone(UTC).date() for e in events})
            lines.append(
                f"Period {first.astimezone(UTC).date().isoformat()} to {last.astimezone(UTC).date().isoformat()} "
                f"({days} active day(s)); the {len(chosen)} most significant of {len(events)} events, latest included:"
            )
        lines.append("")
        latest = max(chosen, key=lambda e: (e.time, e.order)) if chosen else None
        for event in chosen:
            touched = f" (decision {', '.join(event.decisions)})" if event.decisions else ""
            mark = " (latest)" if event is latest and len(chosen) > 1 else ""
            lines.append(
                f"- {event.time.astimezone(UTC).date().isoformat()} · {event.cite} · {event.text}{touched}{mark}"
            )
        return SummaryResult("\n".join(lines), self.name, 0, None)

    def _pick(self, events: list[_Event]) -> list[_Event]:
        """The latest event and the most significant others, week-spread, most significant first."""
        if not events:
            return []
        latest = max(events, key=lambda e: (e.time, e.order))
        chosen = [latest]
        kept_per_week: Counter[tuple[int, int]] = Counter({_week(latest.time): 1})
        rest = [e for e in events if e is not latest]
        terms = {id(e): _terms(e.text) for e in events}

        def redundancy(event: _Event) -> float:
            """The largest term overlap (Jaccard) of ``event`` with an event already kept."""
            mine = terms[id(event)]
            return max((len(mine & terms[id(c)]) / len(mine | terms[id(c)]) for c in chosen if mine | terms[id(c)]),
                       default=0.0)

        while rest and len(chosen) < self.max_sentences:
            best = max(
                rest,
                key=lambda e: (
                    e.significance * _SAME_WEEK_DAMPING ** kept_per_week[_week(e.time)] * (1 - 0.5 * redundancy(e)),
                    -e.order,
                ),
            )
            chosen.append(best)
            kept_per_week[_week(best.time)] += 1
            rest.remove(best)
        return sorted(chosen, key=lambda e: (-e.significance, e.order))


# --- chat completions ------------------------------------------------------------------------

_SUMMARY_SYSTEM = (
    "You write the executive summary a returning operator reads before resuming a long-term task. "
    "From the commits and comments given, state what changed, what was decided and what is pending, "
    "in at most 8 short bullet points, oldest first. Cite commit shas (7 characters) and comment ids "
    "in brackets. Write in the language most of the material is written in. Do not invent facts."
)
_QUESTIONS_SYSTEM = (
    "From the commits and comments given, list the open questions an operator must settle: unresolved "
    "alternatives, decisions not yet taken, questions nobody answered. One per line as "
    "'- <question> [ref: <commit sha or comment:id>]'. At most 10. If there are none, answer NONE. "
    "Write in the language of the material."
)
_MAX_MATERIAL_CHARS = 24_000
_QUESTION_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.*\S)\s*$")
_REF_SUFFIX = re.compile(r"\s*\[ref:\s*([^\]]+)\]\s*$", re.IGNORECASE)


def _material_text(material: SummaryMaterial, max_chars: int = _MAX_MATERIAL_CHARS) -> str:
    """The material as plain text for a prompt, cut at ``max_chars`` characters with a note.

    Every piece is redacted before it is cut (issue 35 item 3): a secret a cut would split is
    redacted whole, so no head of one leaves for the endpoint or comes back in a summary.
    """
    task = material.task
    parts = [f"Task {task.key}: {redact_text(task.title)}", redacted_cut(task.description.strip(), 2000, ""),
             _since_text(material.since), ""]
    parts.append(f"Commits ({len(material.commits)}):")
    for c in material.commits:
        files = ", ".join(c.files[:10]) + (" …" if len(c.files) > 10 else "")
        parts.append(f"[{c.sha[:7]}] {c.committed_at.isoformat()} {c.author}: {redact_text(c.subject)}")
        if c.body.strip():
            parts.append("    " + redacted_cut(c.body.strip(), 1500, "").replace("\n", "\n    "))
        if files:
            parts.append(f"    files: {files} (+{c.insertions}/-{c.deletions})")
    parts.append(f"\nComments ({len(material.comments)}):")
    for m in material.comments:
        parts.append(f"[comment:{m.id}] {m.created_at.isoformat()} {m.author or 'unknown'}: {redacted_cut(m.text.strip(), 3000, '')}")
    text = "\n".join(parts)
    note = "\n[… material cut to fit the prompt]"
    return text if len(text) <= max_chars else redacted_cut(text, max_chars + len(note), note)


def _estimate_tokens(text: str) -> int:
    """A conservative token estimate: one token per 3 UTF-8 bytes (real tokenizers need fewer)."""
    return math.ceil(len(text.encode("utf-8")) / 3)


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class _Completion:
    content: str | None
    tokens: int
    failure: str | None


class ChatCompletionsSummarizer:
    """An LLM summarizer over an OpenAI-compatible chat-completions endpoint, capped per day.

    Args:
        base_url: the API root, e.g. ``http://localhost:11434/v1`` (``/chat/completions`` is appended).
        model: the model name sent in the request.
        api_key: sent as ``Authorization: Bearer <key>`` when set.
        ledger: where spend is read and recorded.
        daily_token_cap: the most tokens (prompt + completion) to spend per UTC day.
        fallback: the summarizer used when the LLM cannot be; an :class:`ExtractiveSummarizer` if None.
        client: an httpx client to use (not closed here); by default one is opened and closed per call.
        timeout: seconds for connect and for each read (each capped at the time the deadline leaves).
        clock: the injected clock; its UTC date keys the ledger.
        max_tokens: the completion's ``max_tokens``.
        deadline_seconds: total wall-clock seconds of one call, connect to last byte
            (``MISSION_MEMORY_LLM_DEADLINE_SECONDS``).
        budget: the pass's budget: a call gets at most the time it leaves, none once it is used up.
        max_access: the most restricted material level that may be sent to the endpoint
            (``MISSION_MEMORY_LLM_MAX_ACCESS``); above it, no call is made and the fallback is used.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        ledger: SpendLedger,
        daily_token_cap: int,
        *,
        fallback: Summarizer | None = None,
        client: httpx.Client | None = None,
        timeout: float = 60.0,
        clock: Callable[[], datetime] = _utc_now,
        max_tokens: int = 700,
        deadline_seconds: float = 60.0,
        budget: PassBudget | None = None,
        max_access: AccessLevel = AccessLevel.INTERNAL,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.ledger = ledger
        self.daily_token_cap = daily_token_cap
        self.fallback: Summarizer = fallback or ExtractiveSummarizer()
        self.timeout = timeout
        self.clock = clock
        self.max_tokens = max_tokens
        self.deadline_seconds = deadline_seconds
        self.budget = budget
        self.max_access = max_access
        self.name = f"chat-completions:{model}"
        self._client = client

    @property
    def url(self) -> str:
        """The endpoint posted to."""
        return f"{self.base_url}/chat/completions"

    def _today(self) -> date:
        now = self.clock()
        return as_utc(now).date()

    def _deadline(self) -> Deadline:
        """This call's deadline: the configured one, or the time left in the pass budget if sooner."""
        if self.budget is not None and self.budget.remaining() < self.deadline_seconds:
            return Deadline.start(self.budget.remaining(), BUDGET_SETTING)
        return Deadline.start(self.deadline_seconds, "MISSION_MEMORY_LLM_DEADLINE_SECONDS")

    def _post(self, payload: dict[str, Any]) -> httpx.Response:
        return post_json_within(self._client, self.url, self._deadline(), payload, api_key=self.api_key,
                                service="LLM endpoint", timeout=self.timeout)

    def _withheld(self, material: SummaryMaterial) -> str | None:
        """Why ``material`` may not be sent to the endpoint (its level is above ``max_access``), or None."""
        if ACCESS_ORDER.index(material.access_level.value) <= ACCESS_ORDER.index(self.max_access.value):
            return None
        return (f"the material is {material.access_level.value}, above MISSION_MEMORY_LLM_MAX_ACCESS "
                f"({self.max_access.value}): it is not sent to the LLM endpoint")

    def _complete(self, system: str, user: str) -> _Completion:
        """One chat completion within the cap; failures come back as ``failure`` text, never raised."""
        day = self._today()
        spent = self.ledger.spent_on(day)
        estimate = _estimate_tokens(system + user) + self.max_tokens
        if spent + estimate > self.daily_token_cap:
            return _Completion(None, 0, f"daily LLM token cap reached ({spent} of {self.daily_token_cap})")
        if self.budget is not None and self.budget.used_up:
            self.budget.llm_calls_skipped += 1
            return _Completion(None, 0, self.budget.skip_reason())
        payload = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "max_tokens": self.max_tokens,
            "temperature": 0,
        }
        try:
            response = self._post(payload)
        except DeadlineExceeded as exc:
            return _Completion(None, 0, str(exc))
        except httpx.TimeoutException:
            return _Completion(None, 0, f"LLM endpoint {self.url} timed out after {self.timeout:g} s")
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            return _Completion(None, 0, f"LLM endpoint {self.url} unreachable ({type(exc).__name__}: {exc})")
        if not response.is_success:
            body = " ".join(response.text.split())[:200]
            return _Completion(None, 0, f"LLM endpoint {self.url} answered HTTP {response.status_code}: {body}")
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return _Completion(None, 0, f"LLM endpoint {self.url} answered with no JSON object")
        usage = data.get("usage")
        total = usage.get("total_tokens") if isinstance(usage, dict) else None
        tokens = total if isinstance(total, int) and total >= 0 else estimate
        self.ledger.add(day, tokens)
        content = chat_message_content(data)
        if content is None:
            return _Completion(None, tokens, f"LLM endpoint {self.url} answered without message content")
        return _Completion(content, tokens, None)

    def summarize(self, material: SummaryMaterial) -> SummaryResult:
        """The LLM summary of ``material``, or the fallback's, prefixed with the reason.

        Material with no commits and no comments is handed to the fallback without a call and without
        a fallback reason (there is nothing to summarize).
        """
        if not material.commits and not material.comments:
            return self.fallback.summarize(material)
        withheld = self._withheld(material)
        done = _Completion(None, 0, withheld) if withheld else self._complete(_SUMMARY_SYSTEM, _material_text(material))
        if done.content is not None:
            return SummaryResult(done.content, self.name, done.tokens, None)
        reason = done.failure or "the LLM gave no summary"
        fallback = self.fallback.summarize(material)
        note = f"{fallback.summarizer.capitalize()} summary used instead of the LLM ({self.model}): {reason}."
        return SummaryResult(
            f"{note}\n\n{fallback.text}", fallback.summarizer, done.tokens + fallback.tokens_spent, reason
        )

    def extract_open_questions(self, material: SummaryMaterial) -> QuestionsResult:
        """Open questions the LLM finds in ``material`` (``source_kind="llm"``), under the same cap.

        Returns:
            The questions (at most 10; ``ref`` from the ``[ref: …]`` suffix, else ``task:<key>``;
            ``time`` None), or no questions and the reason on a cap or endpoint failure. Material with
            no commits and no comments gives no questions without a call, and material above
            ``max_access`` none either (the reason says why).
        """
        if not material.commits and not material.comments:
            return QuestionsResult((), self.name, 0, None)
        withheld = self._withheld(material)
        done = _Completion(None, 0, withheld) if withheld else self._complete(_QUESTIONS_SYSTEM, _material_text(material))
        if done.content is None:
            return QuestionsResult((), self.name, done.tokens, done.failure)
        questions: list[OpenQuestion] = []
        for line in done.content.splitlines():
            match = _QUESTION_LINE.match(line)
            if not match:
                continue
            text = match.group(1)
            ref_match = _REF_SUFFIX.search(text)
            ref = ref_match.group(1).strip() if ref_match else f"task:{material.task.key}"
            text = text[: ref_match.start()].strip() if ref_match else text.strip()
            if text:
                questions.append(OpenQuestion(text, "llm", ref, None))
        return QuestionsResult(tuple(questions[:10]), self.name, done.tokens, None)


def chat_message_content(data: Any) -> str | None:
    """``choices[0].message.content`` of an OpenAI-compatible chat completion, as non-empty text, or
    None for any other shape."""
    if not isinstance(data, dict):
        return None
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content.strip() if isinstance(content, str) and content.strip() else None
