"""One-sentence summaries of derived corrections written by an LLM, when one is configured (docs/design.md §3).

A captured prompt's correction is summarised from its fields by default
(:func:`~.practitioner_records.summary_from_fields`). With an OpenAI-compatible chat-completions
endpoint configured (``MISSION_MEMORY_LLM_BASE_URL`` and ``MISSION_MEMORY_LLM_MODEL``, the settings
push refresh uses), the LLM reads the operator's words and the fields and writes one abstract
sentence. The LLM sees the prompt; the store never does (docs/adr/0025): the sentence is kept only
when it does not copy the prompt —

* no run of :data:`COPY_RUN` consecutive words of the prompt appears in it (case and punctuation
  ignored), and
* none of the prompt's identifier-like tokens (a digit, ``/``, ``_``, ``.``, ``@``, ``=``, ``:`` inside,
  or longer than 20 characters: paths, names, keys, hashes) appears in it,

and when it is one sentence of at most :data:`MAX_CHARS` characters. Otherwise, and whenever the
endpoint fails (each call has a total deadline, ``MISSION_MEMORY_LLM_DEADLINE_SECONDS``), the
field-built summary is kept. After the first endpoint failure no further call is made in that import.

What may leave the process (ADR 0045): a captured prompt is ``internal``, or the most restricted level
the path mapping (``MISSION_MEMORY_ACCESS_PATHS``) gives a path it names; a prompt above
``max_access`` (``MISSION_MEMORY_LLM_MAX_ACCESS``, default ``internal``) is never sent, and keeps
the field-built summary (counted in ``withheld``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import httpx

from mission_memory.http_deadline import Deadline, DeadlineExceeded, post_json_within
from mission_memory.ingest.access_levels import AccessRules
from mission_memory.records import AccessLevel
from mission_memory.refresh.summarizers import chat_message_content
from mission_memory.stores.filters import ACCESS_ORDER

__all__ = ["COPY_RUN", "MAX_CHARS", "LlmCorrectionSummaries", "copies_prompt"]

COPY_RUN = 4
"""A run of this many consecutive prompt words in the sentence is a copy."""
MAX_CHARS = 200
"""The longest sentence kept."""

_SYSTEM = (
    "You summarise an operator's correction of an AI coding agent for a team's memory. Answer with ONE "
    "sentence of at most 25 words that says, in general terms, what kind of correction it was and what it "
    "concerned (use the class, category and component given). Do not quote the operator, and do not repeat "
    "names, paths, numbers, identifiers or secrets from their words."
)
_WORD = re.compile(r"[\w'’-]+", re.UNICODE)
_IDENTIFIER_MARKS = frozenset("0123456789/_.@=:")


def _words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def _identifiers(text: str) -> set[str]:
    tokens = {t.strip(".,;:!?()[]{}\"'`<>").lower() for t in text.split()}
    return {t for t in tokens if len(t) >= 3 and (len(t) > 20 or any(c in _IDENTIFIER_MARKS for c in t))}


def copies_prompt(sentence: str, prompt: str, run: int = COPY_RUN) -> bool:
    """Does ``sentence`` copy ``prompt``: a run of ``run`` consecutive prompt words, or one of its identifiers?

    Args:
        sentence: the LLM's sentence.
        prompt: the operator's words.
        run: the shortest run of consecutive words that counts as a copy.
    """
    said = _words(sentence)
    runs = {tuple(said[i:i + run]) for i in range(len(said) - run + 1)}
    source = _words(prompt)
    if any(tuple(source[i:i + run]) in runs for i in range(len(source) - run + 1)):
        return True
    low = sentence.lower()
    return any(token in low for token in _identifiers(prompt))


@dataclass
class LlmCorrectionSummaries:
    """Summaries from an OpenAI-compatible chat-completions endpoint, checked against the prompt.

    Attributes:
        base_url: the API root (``/chat/completions`` is appended), e.g. ``http://localhost:11434/v1``.
        model: the model name sent.
        api_key: sent as a bearer token when set.
        deadline_seconds: total wall-clock seconds of one call, connect to last byte.
        client: an httpx client to use (not closed here); by default one per call.
        max_access: the most restricted prompt level that may be sent (``MISSION_MEMORY_LLM_MAX_ACCESS``).
        access_rules: the path mapping that raises a prompt naming a mapped path; None: none.
        used, rejected, failed: sentences kept, sentences refused by the copy check, calls that failed.
        withheld: prompts not sent because their level is above ``max_access``.
        failure: the first endpoint failure (no call is made after it), or None.
    """

    base_url: str
    model: str
    api_key: str | None = None
    deadline_seconds: float = 60.0
    client: httpx.Client | None = None
    max_access: AccessLevel = AccessLevel.INTERNAL
    access_rules: AccessRules | None = None
    used: int = 0
    rejected: int = 0
    failed: int = 0
    withheld: int = 0
    failure: str | None = field(default=None)

    @property
    def url(self) -> str:
        """The endpoint posted to."""
        return f"{self.base_url.rstrip('/')}/chat/completions"

    def _post(self, payload: dict[str, Any]) -> httpx.Response:
        deadline = Deadline.start(self.deadline_seconds, "MISSION_MEMORY_LLM_DEADLINE_SECONDS")
        return post_json_within(self.client, self.url, deadline, payload, api_key=self.api_key,
                                service="LLM endpoint", timeout=self.deadline_seconds)

    def summary(self, words: str, correction_class: str, category: str, component: str | None,
                outcome: str) -> str | None:
        """The LLM's sentence for one correction, or None to keep the field-built summary.

        Args:
            words: the operator's prompt (sent to the endpoint, never returned or kept).
            correction_class, category, component, outcome: the correction's fields.

        Returns:
            One sentence that passed :func:`copies_prompt` and the length check, or None (refused,
            withheld by the access rule, endpoint failed, or an earlier call failed). Never raises for
            endpoint problems.
        """
        if self.failure is not None:
            return None
        mentioned = self.access_rules.mentioned_level(words) if self.access_rules is not None else None
        level = mentioned or AccessLevel.INTERNAL
        if ACCESS_ORDER.index(level.value) > ACCESS_ORDER.index(self.max_access.value):
            self.withheld += 1
            return None
        fields = (f"class: {correction_class}; category: {category}; component: {component or 'unknown'}; "
                  f"outcome: {outcome}")
        payload = {"model": self.model, "temperature": 0, "max_tokens": 80, "messages": [
            {"role": "system", "content": _SYSTEM},
            {"role": "user", "content": f"{fields}\nOperator's words: {words}"},
        ]}
        try:
            response = self._post(payload)
            data = response.json() if response.is_success else None
        except (DeadlineExceeded, httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
            self.failed += 1
            self.failure = f"LLM endpoint {self.url} failed ({type(exc).__name__})"
            return None
        content = chat_message_content(data)
        if content is None:
            self.failed += 1
            self.failure = f"LLM endpoint {self.url} gave no sentence (HTTP {response.status_code})"
            return None
        sentence = " ".join(content.split())
        one = len(re.findall(r"[.!?](\s|$)", sentence)) <= 1
        if not sentence or len(sentence) > MAX_CHARS or not one or copies_prompt(sentence, words):
            self.rejected += 1
            return None
        self.used += 1
        return sentence
