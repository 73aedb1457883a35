"""Summarizers for the executive-summary artifact, and the LLM spend ledger they answer to.

The first refresh artifact of DESIGN.md §5: "an executive summary of what changed since the last
refresh (an LLM summarizer over the relevant diffs and comments; a deterministic extractive
summarizer when no LLM is configured)". Two implementations of the :class:`Summarizer` protocol:

* :class:`ExtractiveSummarizer` — deterministic; ranks commit subjects, commit-body sentences and
  comment sentences by term-overlap centrality and keeps the best in chronological order, each
  citing its commit sha or comment id.
* :class:`ChatCompletionsSummarizer` — an OpenAI-compatible ``POST {base_url}/chat/completions``
  (Ollama, vLLM, llama.cpp server, hosted APIs) through httpx. Spend is counted from
  ``usage.total_tokens`` into a :class:`SpendLedger` with a daily cap. When the cap would be
  exceeded, or the endpoint fails in any way (unreachable, timeout, non-2xx, unparseable answer), it
  falls back to the extractive summarizer and says so in the first line of the text and in
  ``fallback_reason``. Endpoint problems never raise. Each call has a total wall-clock deadline
  (``MISSION_MEMORY_LLM_DEADLINE_SECONDS``), capped by the time left in the pass's
  :class:`~mission_memory.refresh.pass_budget.PassBudget`; once that is used up, calls fall back at
  once (ADR 0019).
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

from mission_memory.http_deadline import Deadline, DeadlineExceeded, request_within
from mission_memory.ingest.git_history import Commit
from mission_memory.refresh.open_questions import OpenQuestion
from mission_memory.refresh.pass_budget import BUDGET_SETTING, PassBudget
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
    """

    task: Task
    commits: Sequence[Commit]
    comments: Sequence[TaskComment]
    since: datetime | None


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
class _Unit:
    text: str
    cite: str
    time: datetime
    order: int
    is_subject: bool


def _sentences(text: str) -> list[str]:
    """Sentences of ``text``, whitespace collapsed; git trailers (``Signed-off-by: …``) dropped."""
    kept = "\n".join(line for line in text.splitlines() if not _TRAILER.match(line))
    return [" ".join(s.split()) for s in _SENTENCE_END.split(kept) if s and s.strip()]


def _terms(text: str) -> set[str]:
    return {t for t in (m.group(0).lower() for m in _TERM.finditer(text)) if t not in _STOPWORDS}


def _units(material: SummaryMaterial) -> list[_Unit]:
    units: list[_Unit] = []
    for commit in material.commits:
        if commit.is_merge:
            continue
        cite = commit.sha[:7]
        units.append(_Unit(commit.subject.strip(), cite, commit.committed_at, len(units), True))
        for sentence in _sentences(commit.body)[:5]:
            units.append(_Unit(sentence, cite, commit.committed_at, len(units), False))
    for comment in material.comments:
        who = f" ({comment.author})" if comment.author else ""
        for sentence in _sentences(comment.text)[:8]:
            units.append(_Unit(sentence, f"comment {comment.id}{who}", comment.created_at, len(units), False))
    return [u for u in units if u.text]


def _since_text(since: datetime | None) -> str:
    return f"since {since.astimezone(UTC).strftime('%Y-%m-%d %H:%M')} UTC" if since else "since tracking began"


class ExtractiveSummarizer:
    """A deterministic summary: the most central sentences of the commits and comments, in time order.

    Each candidate (a commit subject, a sentence of a commit body or of a comment) is scored by its
    degree in a term-overlap graph — the number of other candidates sharing each of its terms —
    plus twice the terms it shares with the task title and description, divided by √(terms + 1)
    so long sentences do not win on length; commit subjects get +0.5. The best ``max_sentences``
    are printed oldest first, each citing its short sha or comment id, under a counts line.
    Ties break on input order, so the same material always gives the same text.

    Args:
        max_sentences: how many sentences to keep (≥ 1).
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
        lines.append("")
        lines.extend(f"- {u.time.astimezone(UTC).date().isoformat()} · {u.cite} · {u.text}" for u in self._pick(material))
        return SummaryResult("\n".join(lines), self.name, 0, None)

    def _pick(self, material: SummaryMaterial) -> list[_Unit]:
        units = _units(material)
        terms = [_terms(u.text) for u in units]
        frequency = Counter(t for ts in terms for t in ts)
        task_terms = _terms(f"{material.task.title} {material.task.description}")

        def score(index: int) -> float:
            ts = terms[index]
            degree = sum(frequency[t] - 1 for t in ts) + 2 * len(ts & task_terms)
            return degree / math.sqrt(len(ts) + 1) + (0.5 if units[index].is_subject else 0.0)

        best = sorted(range(len(units)), key=lambda i: (-score(i), i))[: self.max_sentences]
        chosen = [units[i] for i in best]
        return sorted(chosen, key=lambda u: (u.time, u.order))


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
    """The material as plain text for a prompt, cut at ``max_chars`` characters with a note."""
    task = material.task
    parts = [f"Task {task.key}: {task.title}", task.description.strip()[:2000], _since_text(material.since), ""]
    parts.append(f"Commits ({len(material.commits)}):")
    for c in material.commits:
        files = ", ".join(c.files[:10]) + (" …" if len(c.files) > 10 else "")
        parts.append(f"[{c.sha[:7]}] {c.committed_at.isoformat()} {c.author}: {c.subject}")
        if c.body.strip():
            parts.append("    " + c.body.strip()[:1500].replace("\n", "\n    "))
        if files:
            parts.append(f"    files: {files} (+{c.insertions}/-{c.deletions})")
    parts.append(f"\nComments ({len(material.comments)}):")
    for m in material.comments:
        parts.append(f"[comment:{m.id}] {m.created_at.isoformat()} {m.author or 'unknown'}: {m.text.strip()[:3000]}")
    text = "\n".join(parts)
    if len(text) > max_chars:
        text = text[:max_chars] + "\n[… material cut to fit the prompt]"
    return text


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
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        deadline = self._deadline()
        if self._client is not None:
            return request_within(self._client, "POST", self.url, deadline, service="LLM endpoint",
                                  json=payload, headers=headers)
        with httpx.Client(timeout=self.timeout) as client:
            return request_within(client, "POST", self.url, deadline, service="LLM endpoint",
                                  json=payload, headers=headers)

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
        content = _message_content(data)
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
        done = self._complete(_SUMMARY_SYSTEM, _material_text(material))
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
            no commits and no comments gives no questions without a call.
        """
        if not material.commits and not material.comments:
            return QuestionsResult((), self.name, 0, None)
        done = self._complete(_QUESTIONS_SYSTEM, _material_text(material))
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


def _message_content(data: dict[str, Any]) -> str | None:
    """``choices[0].message.content`` as non-empty text, or None."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content.strip() if isinstance(content, str) and content.strip() else None
