"""Open questions: the decision points a returning operator must settle, found without an LLM.

The third refresh artifact of docs/design.md §5 (the paper's "open questions": unresolved alternatives
and decision points that need an operator). Three deterministic sources:

* proposed decisions — decision records whose ``attributes["status"]`` is ``"proposed"``;
* unanswered questions in the task's comments (English and Ukrainian cues, see
  :func:`questions_in_comments` for the heuristic);
* ``TODO`` / ``FIXME`` / ``XXX`` markers on lines added between two commits (``git diff -U0``).

When an LLM is configured the summarizer may add questions it extracts
(:meth:`~mission_memory.refresh.summarizers.ChatCompletionsSummarizer.extract_open_questions`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mission_memory.decisions import DecisionAttributes
from mission_memory.errors import BackendUnavailable, InputError
from mission_memory.git_runner import run_git_text
from mission_memory.records import Record
from mission_memory.trackers.base import TaskComment

__all__ = [
    "OpenQuestion",
    "added_todos",
    "find_open_questions",
    "questions_in_comments",
    "render_open_questions",
]

_TODO = re.compile(r"(?<![\w\"'`-])(TODO|FIXME|XXX)(?=[:(\s!]|$)")  # not "TODO" as a string value
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_MAX_TODO_LINE = 400  # characters; longer added lines are minified or generated code
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)

# Phrases that make a sentence a question even without a question mark.
QUESTION_CUES = (
    "should we", "shall we", "do we need", "can we", "could we", "how do we", "what if",
    "which one", "not sure whether", "not sure if", "open question", "any objections", "to decide",
    "чи варто", "чи треба", "чи потрібно", "чи можна", "чи слід", "як бути", "що робити",
    "відкрите питання", "питання:", "не впевнений", "не впевнена", "треба вирішити",
)
# Openings that make a later comment an answer.
ANSWER_CUES = (
    "yes", "no", "agreed", "agree", "sure", "done", "we will", "let's", "lets", "go with",
    "так", "ні", "згоден", "згодна", "погоджуюсь", "зробимо", "залишаємо", "давайте",
)
# Openings that settle a question whoever writes them, the asker included.
DECISION_CUES = (
    "decided", "decision:", "resolved", "we decided", "вирішили", "рішення:", "домовились", "домовилися",
)
_STOPWORDS = frozenset({
    "should", "would", "could", "that", "this", "with", "from", "have", "there", "their", "what",
    "which", "when", "where", "will", "about", "into", "than", "then", "them", "they", "also",
    "чи", "варто", "треба", "потрібно", "можна", "слід", "якщо", "тому", "коли", "цього", "цей",
    "буде", "було", "вони", "нам", "для", "також", "після",
})


@dataclass(frozen=True)
class OpenQuestion:
    """One open question.

    Attributes:
        text: the question, decision title or TODO line, on one line.
        source_kind: ``"decision"``, ``"comment"`` or ``"todo"`` (``"llm"`` when an LLM extracted it).
        ref: where it lives: the decision record's provenance ref, ``comment:<id>``, or ``path:line``.
        time: when it was raised (decision or comment time), or None (TODOs: the diff does not say).
    """

    text: str
    source_kind: str
    ref: str
    time: datetime | None


# --- TODO / FIXME / XXX ----------------------------------------------------------------------


def _diff_path(line: str) -> str | None:
    """The new path of a ``+++ b/path`` line, or None for ``+++ /dev/null``."""
    raw = line[4:].rstrip("\t")
    if raw == "/dev/null":
        return None
    if raw.startswith('"') and raw.endswith('"'):
        raw = raw[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw[2:] if raw.startswith("b/") else raw


def _todo_text(line: str, match: re.Match[str]) -> str:
    text = line[match.start() :].strip()
    for closer in ("*/", "-->", "#}", "%>"):
        text = text.removesuffix(closer).rstrip()
    return text


def added_todos(repo_root: Path, since: str | None, until: str) -> list[OpenQuestion]:
    """``TODO`` / ``FIXME`` / ``XXX`` markers on lines added between ``since`` and ``until``.

    Args:
        repo_root: a folder inside the repository's work tree.
        since: the commit of the last refresh, or None to take every line present at ``until``.
        until: the commit now (a sha or revision).

    Returns:
        One question per added line carrying an upper-case marker, in diff order (by path, then
        line), with ``ref`` ``path:line`` (line number at ``until``), the text from the marker on
        and ``time`` None. A marker that already existed and merely moved is not reported when git
        sees the move as unchanged; lines over 400 characters (minified code) are skipped.

    Raises:
        InputError: a revision does not name a commit in the repository.
        BackendUnavailable: git is missing or fails.
    """
    for rev in (since, until):
        if rev is not None:
            try:
                run_git_text(repo_root, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}")
            except BackendUnavailable as exc:
                raise InputError(f"{rev!r} is not a commit in {repo_root}") from exc
    base = since if since is not None else run_git_text(repo_root, "hash-object", "-t", "tree", "/dev/null").strip()
    diff = run_git_text(
        repo_root, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
        "--src-prefix=a/", "--dst-prefix=b/", base, until,
    )
    found: list[OpenQuestion] = []
    path: str | None = None
    line_no = 0
    in_header = False  # between "diff --git" and the first "@@": "+++ " names the file there only
    for line in diff.split("\n"):
        if line.startswith("diff --git "):
            in_header, path = True, None
        elif in_header and line.startswith("+++ "):
            path = _diff_path(line)
        elif line.startswith("@@"):
            in_header = False
            hunk = _HUNK.match(line)
            line_no = int(hunk.group(1)) if hunk else 0
        elif not in_header and line.startswith("+") and path is not None:
            added = line[1:]
            match = _TODO.search(added)
            if match and len(added) <= _MAX_TODO_LINE:
                found.append(OpenQuestion(_todo_text(added, match), "todo", f"{path}:{line_no}", None))
            line_no += 1
    return found


# --- questions in comments -------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith((">", "```"))]
    return [s.strip() for s in _SENTENCE_END.split("\n".join(lines)) if s and s.strip()]


def _is_question(sentence: str) -> bool:
    lowered = sentence.lower()
    return sentence.rstrip().endswith("?") or any(cue in lowered for cue in QUESTION_CUES)


def _stems(text: str) -> set[str]:
    """Content words cut to five letters: a cheap stem that survives English and Ukrainian endings."""
    return {w[:5] for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOPWORDS}


def _starts_with(text: str, cues: Sequence[str]) -> bool:
    lowered = text.lower().lstrip(" -*—–\"'«")
    return any(lowered.startswith(cue) and not lowered[len(cue) : len(cue) + 1].isalpha() for cue in cues)


def _answers(reply: TaskComment, question: str, asker: TaskComment, *, next_comment: bool) -> bool:
    """Whether ``reply`` answers ``question`` asked in ``asker`` (see :func:`questions_in_comments`)."""
    shared = len(_stems(question) & _stems(reply.text))
    if _starts_with(reply.text, DECISION_CUES) and shared >= 1:
        return True
    if reply.author is not None and reply.author == asker.author:
        return False
    sentences = _sentences(reply.text)
    if not sentences or all(_is_question(s) for s in sentences):
        return False
    if _starts_with(reply.text, ANSWER_CUES) and (next_comment or shared >= 1):
        return True
    return shared >= 2


def questions_in_comments(comments: Sequence[TaskComment]) -> list[OpenQuestion]:
    """Questions raised in ``comments`` that no later comment answers.

    The heuristic, applied per sentence (sentences split on ``.!?…`` and line breaks; quoted ``>``
    lines and code fences skipped):

    * a sentence is a question when it ends with ``?`` or contains a cue such as "should we",
      "what if", "open question", "чи варто", "чи треба", "що робити", "відкрите питання";
    * it is answered by a later comment (by creation time) that opens with a decision cue
      ("Decided", "Resolved", "Вирішили", "Домовились") and shares a content word (a five-letter
      stem) with it, whoever wrote it;
    * or by a later comment from a different author (or an unknown one) that is not only
      questions itself and either opens with an answer cue ("Yes", "No", "Agreed", "Let's",
      "Так", "Ні", "Згоден") while being the very next comment or sharing a content word, or
      shares at least two content words with the question.

    Returns:
        The unanswered questions, oldest first, ``ref`` ``comment:<id>``, ``time`` the comment's.
    """
    ordered = sorted(comments, key=lambda c: c.created_at)
    open_questions: list[OpenQuestion] = []
    for index, comment in enumerate(ordered):
        later = ordered[index + 1 :]
        for sentence in _sentences(comment.text):
            if not _is_question(sentence):
                continue
            if any(_answers(reply, sentence, comment, next_comment=n == 0) for n, reply in enumerate(later)):
                continue
            open_questions.append(
                OpenQuestion(" ".join(sentence.split()), "comment", f"comment:{comment.id}", comment.created_at)
            )
    return open_questions


# --- all together ----------------------------------------------------------------------------


def find_open_questions(
    *,
    proposed_decisions: Sequence[Record],
    comments: Sequence[TaskComment],
    todos: Sequence[OpenQuestion],
) -> list[OpenQuestion]:
    """All open questions of a task: proposed decisions, then unanswered comment questions, then TODOs.

    Args:
        proposed_decisions: decision records; only those with ``attributes["status"] == "proposed"``
            (case-insensitive) are kept, so passing every decision is safe.
        comments: the task's comments (the new ones, or all of them: answers may be older).
        todos: from :func:`added_todos`.

    Returns:
        The questions, without duplicates (same kind and text), decisions oldest first.
    """
    decisions = sorted(
        (r for r in proposed_decisions if (DecisionAttributes.read(r.attributes).status or "").lower() == "proposed"),
        key=lambda r: (r.provenance.time, r.title),
    )
    found = [OpenQuestion(r.title, "decision", r.provenance.ref, r.provenance.time) for r in decisions]
    found.extend(questions_in_comments(comments))
    found.extend(todos)
    seen: set[tuple[str, str]] = set()
    unique: list[OpenQuestion] = []
    for question in found:
        key = (question.source_kind, question.text)
        if key not in seen:
            seen.add(key)
            unique.append(question)
    return unique


_SECTIONS = (
    ("decision", "Proposed decisions awaiting an operator"),
    ("comment", "Unanswered questions in comments"),
    ("llm", "Questions raised by the summarizer"),
    ("todo", "TODO / FIXME added in the period"),
)


def render_open_questions(questions: Sequence[OpenQuestion]) -> str:
    """The questions as Markdown, one bold-titled list per source kind, each item citing its ref."""
    if not questions:
        return "No open questions: no proposed decisions, unanswered comments or new TODOs."
    sections: list[str] = []
    known = {kind for kind, _ in _SECTIONS}
    titles = [*_SECTIONS, *((k, k) for k in dict.fromkeys(q.source_kind for q in questions) if k not in known)]
    for kind, title in titles:
        items = [q for q in questions if q.source_kind == kind]
        if not items:
            continue
        lines = []
        for q in items:
            when = f", {q.time.date().isoformat()}" if q.time is not None else ""
            lines.append(f"- {q.text} ({q.ref}{when})")
        sections.append(f"**{title} ({len(items)})**\n" + "\n".join(lines))
    return "\n\n".join(sections)
