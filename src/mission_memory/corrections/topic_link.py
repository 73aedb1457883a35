"""Whether a correction is about a retrieval event's task: the topic test of the correction link (ADR 0062).

Time and session are not enough: an operator who asked about S3 and then corrected the agent about
telemetry did not correct what the S3 digest served (issue 23). A correction is *about* a query when

* its component is named in the query — one of the component's path words (``terraform/projects``
  gives ``terraform``, ``projects``) among the query's words, whole; or
* its summary and the query share a content stem: words of four letters or more, stop words
  (English, Ukrainian), :data:`CORRECTION_WORDS` and :data:`FORM_WORDS` dropped, compared on their first
  :data:`STEM_CHARS` characters (a crude stem that joins "deploy"/"deployment", "ключ"/"ключі").

The rule is lexical on purpose: it needs no model, explains itself ("both name `keycloak`"), and its
precision and recall are measured on a labelled set from real history (ADR 0062,
``benchmarks/bench_correction_link.py``). A derived correction (prompt or transcript) has no topic
of its own (its summary is built from fields, ADR 0025), so only explicit corrections are tested.
"""

from __future__ import annotations

from mission_memory.retrieval.query_terms import term_words

__all__ = ["CORRECTION_WORDS", "FORM_WORDS", "MIN_WORD_CHARS", "STEM_CHARS", "shared_stems", "topic_related"]

STEM_CHARS = 5
"""Words are compared on this many leading characters."""
MIN_WORD_CHARS = 4
"""Shorter words (``db``, ``fix``, ``api``) are compared whole, and only against the component."""
CORRECTION_WORDS = frozenset(
    """
    fix fixed fixes fixing correct corrected correction corrects wrong incorrect typo typos mistake mistakes
    spelling change changed changes update updated updates remove removed instead should rather actually
    again revert reverted broken missing error errors issue issues agent операт виправ помилк неправильн
    """.split()  # noqa: SIM905
)
"""Words every correction uses whatever it is about: they say nothing of the topic."""
FORM_WORDS = frozenset(
    """
    link links heading headings header headers title titles wording syntax markdown format formatting
    instruction instructions grammar sentence sentences line lines page pages file files image images check
    checks
    """.split()  # noqa: SIM905
)
"""Words of a text's form (links, headings, instructions) that documentation tasks and corrections share
whatever their topic (added in a second measurement, ADR 0062)."""


def _stems(text: str) -> set[str]:
    return {w[:STEM_CHARS] for w in term_words(text) if len(w) >= MIN_WORD_CHARS and w not in CORRECTION_WORDS
            and w not in FORM_WORDS and w[:STEM_CHARS] not in CORRECTION_WORDS}


def shared_stems(summary: str, query: str) -> set[str]:
    """The content stems ``summary`` and ``query`` share (see the module docstring)."""
    return _stems(summary) & _stems(query)


def topic_related(summary: str, component: str | None, query: str) -> bool:
    """Whether a correction (its ``summary`` and ``component``) is about a query's task ``query``.

    Args:
        summary: the correction's one-sentence summary, as the operator wrote it.
        component: the component it names (``(root)`` and None name none).
        query: the retrieval event's task description.
    """
    words = set(term_words(query))
    if component and component != "(root)":
        parts = [p for p in component.replace("\\", "/").split("/") if p]
        for part in parts:
            for piece in term_words(part):
                if piece in words:  # the component named as such, not a word sharing its stem ("manually")
                    return True
    return bool(shared_stems(summary, query))
