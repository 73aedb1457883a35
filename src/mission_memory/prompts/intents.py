"""Intent labels for operator prompts, rule-based, for Ukrainian and English (docs/design.md §8).

The label set (:class:`Intent`) is what a prompt asks the agent to do with the conversation:

=================  ==================================================================================
``new-task``       starts new work: "add …", "implement …", "let's build …", "додай …", "реалізуй …"
``correction``     says the agent got something wrong and must undo or change it: "no, …", "don't …",
                   "you broke …", "revert …", "ні, …", "не чіпай …", "відкоти …"
``clarification``  adds information or a constraint to the current work without rejecting it:
                   "I mean …", "to clarify …", "it should also …", "маю на увазі …", "уточнюю …"
``question``       asks for information rather than action: "why …?", "how …?", "чому …?", "поясни …"
``approval``       approves or lets the agent continue: "yes", "lgtm", "go ahead", "так", "продовжуй"
``meta``           configures the agent or the session rather than the mission's work: slash
                   commands, "remember that …", "update CLAUDE.md", "from now on …", "надалі …"
=================  ==================================================================================

Each label has weighted cue patterns (lower-cased, Unicode word boundaries); the ``correction``
cues are the shared vocabulary of :mod:`mission_memory.prompts.correction_cues`, which the transcript
scanner reads too. The label with the
highest score wins, ties broken by :data:`PRIORITY`. A prompt with no cue is a ``new-task`` when it is
the first of its session and a ``clarification`` otherwise. Accuracy on the hand-labelled sets is
printed by ``benchmarks/bench_intent_labels.py``. The labels feed disambiguation and the
correction signal (docs/design.md §6): ``correction`` is the label the corrections pipeline reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from mission_memory.prompts.correction_cues import CORRECTION_CUES, normalise

__all__ = ["PRIORITY", "Intent", "IntentLabel", "label_intent"]


class Intent(StrEnum):
    """What an operator prompt asks for; see the module docstring for the definitions."""

    NEW_TASK = "new-task"
    CORRECTION = "correction"
    CLARIFICATION = "clarification"
    QUESTION = "question"
    APPROVAL = "approval"
    META = "meta"


PRIORITY: tuple[Intent, ...] = (
    Intent.META,
    Intent.CORRECTION,
    Intent.APPROVAL,
    Intent.QUESTION,
    Intent.CLARIFICATION,
    Intent.NEW_TASK,
)
"""Tie-break order: the earlier label wins an equal score."""


@dataclass(frozen=True)
class IntentLabel:
    """The label of one prompt.

    Attributes:
        intent: the winning label.
        score: its cue score (0 when no cue matched and the fallback decided).
        cues: the cue patterns that matched for the winning label, for explaining the decision.
    """

    intent: Intent
    score: float
    cues: tuple[str, ...]


# (pattern, weight); "^" anchors at the prompt start (after leading punctuation/space)
_CUES: dict[Intent, tuple[tuple[str, float], ...]] = {
    Intent.META: (
        (r"^/[a-z][\w-]*", 5.0),
        (r"\bclaude\.md\b|\bagents\.md\b", 3.0),
        (r"\bremember (that|to)\b|\bfrom now on\b|\bgoing forward\b", 3.0),
        (r"\bpermission(s| mode)?\b|\bsettings\.json\b|\bhooks?\b.*\b(install|config)", 1.5),
        (r"\b(answer|respond|reply|talk) (in|with)\b|\byour (answers|responses|style)\b", 1.5),
        (r"\bзапам.ятай\b|\bнадалі\b|\bвідтепер\b|\bз цього моменту\b", 3.0),
        (r"\bрежим\w* дозвол\w*|\bдозвол\w*\b|\bналаштуван\w* агента\b", 2.0),
        (r"\bвідповідай\b", 1.5),
        (r"\b(stop|quit) asking\b|\bbe (more )?(concise|brief|terse|verbose)\b|\bshorter answers\b", 3.0),
        (
            r"\b(перестань|припини|не треба) (питати|запитувати)\b|\bбудь (більш )?(лаконічн|коротш|стисл)\w*",
            3.0,
        ),
    ),
    # one vocabulary with the transcript scanner: mission_memory.prompts.correction_cues
    Intent.CORRECTION: tuple((cue.pattern, cue.weight) for cue in CORRECTION_CUES if cue.weight > 0),
    Intent.APPROVAL: (
        (
            (
                r"^(yes|yep|yeah|ok|okay|sure|lgtm|great|perfect|nice|good|fine|sounds good|looks good"
                r"|go ahead|proceed|continue|keep going|do it|approved?|ship it)\b"
            ),
            2.5,
        ),
        (r"\b(go ahead|proceed|continue|keep going|carry on|lgtm|looks good|sounds good|commit it)\b", 2.0),
        (
            r"^(так|ок|окей|добре|гаразд|чудово|згоден|згодна|супер|погоджую|підтверджую|вперед|давай далі)\b",
            2.5,
        ),
        (r"\b(продовжуй|продовжуємо|працюй далі|роби за планом|далі|закоміть)\w*", 2.0),
        (r"^(👍|✅|👌|🙏|🚀|\+1)", 3.0),
        (r"^(go|ship|merge|yes please)\b", 2.0),
        (r"\b(мене )?влаштовує\b|\bпідходить\b|\bмерджи\b|\bмерж\w*", 2.0),
    ),
    Intent.QUESTION: (
        (r"\?\s*$", 3.0),
        (r"^(why|what|how|where|when|which|who|is|are|does|do|did|can|could|should|would)\b", 1.5),
        (r"\b(explain|tell me|what is|what's|how does|how do)\b", 1.5),
        (r"^(чому|що|як|де|коли|який|яка|яке|які|хто|скільки|чи|навіщо|звідки)\b", 1.5),
        (r"\bпоясни\w*|\bрозкажи\w*|\bщо таке\b|\bяк працює\b", 2.5),
    ),
    Intent.CLARIFICATION: (
        (r"\bi mean\b|\bi meant\b|\bto clarify\b|\bto be clear\b|\bin other words\b|\bby \w+ i mean\b", 3.0),
        (r"^(also|and|note|btw|p\.?s\.?)\b|\balso (note|keep in mind)\b|\bkeep in mind\b", 2.0),
        (r"\b(it|this|that) (should|must|has to|needs to) (also )?\b", 1.5),
        (r"\bthe (file|code|function|setting|config) (is|lives) in\b", 2.0),
        (r"\bмаю на увазі\b|\bуточнюю\b|\bуточнення\b|\bтобто\b|\bіншими словами\b", 3.0),
        (r"^(також|ще|до речі|і ще)\b|\bще врахуй\b|\bврахуй\b|\bзважай\b", 2.0),
        (r"\b(це|він|вона|воно) (також )?(має|повинен|повинна|повинно|мусить)\b", 1.5),
        (r"\bфайл (лежить|знаходиться)\b", 2.0),
        (r", not \w+|\brather than\b|, а не\b", 1.0),
    ),
    Intent.NEW_TASK: (
        (
            (
                r"^(please )?(add|implement|create|build|write|make|set up|setup|introduce|design|refactor"
                r"|migrate|port|generate|draft|fix|update|extend|support|let'?s)\b"
            ),
            2.0,
        ),
        (
            r"\bnext( task| step)?:|\bnew (task|feature)\b|\blet'?s (now )?(build|add|do|implement|write|make)\b",
            2.0,
        ),
        (r"\b(can|could|would) you (please )?(add|implement|create|build|write|make|fix|set up)\b", 2.0),
        (
            (
                r"^(будь ласка,? )?(додай|реалізуй|створи|напиши|зроби|побудуй|налаштуй|перепиши|виправ"
                r"|онови|розроби|підключи|мігруй|згенеруй|перенеси|винеси|прибери|видали|запусти|покращ|оптимізуй"
                r"|обробляй|підтримай|інтегруй)\w*"
            ),
            2.0,
        ),
        (r"\bдавай\w* (тепер |зараз )?(зробимо|додамо|напишемо|реалізуємо|створимо|візьмемося)\b", 2.0),
        (r"\bнаступн\w* (завдання|крок)\b|\bнове завдання\b", 2.0),
        (r"^(we need|i need|we should add|time to)\b|^(потрібн\w*|треба|час) ", 2.0),
        (r"^please [a-z]+", 1.5),
    ),
}

_COMPILED = {
    intent: tuple((re.compile(p, re.IGNORECASE | re.UNICODE), p, w) for p, w in cues)
    for intent, cues in _CUES.items()
}


def label_intent(prompt: str, *, first_in_session: bool = False) -> IntentLabel:
    """Label one prompt.

    Args:
        prompt: the (redacted) prompt text, any language; cues cover English and Ukrainian.
        first_in_session: whether the prompt opens its session; tilts unlabelled prompts to
            ``new-task`` and ``new-task`` cues up.

    Returns:
        The winning :class:`IntentLabel`.
    """
    text = normalise(prompt)
    scores: dict[Intent, tuple[float, tuple[str, ...]]] = {}
    for intent, cues in _COMPILED.items():
        total = 0.0
        matched: list[str] = []
        for regex, pattern, weight in cues:
            if regex.search(text):
                total += weight
                matched.append(pattern)
        scores[intent] = (total, tuple(matched))
    _adjust(scores, text, first_in_session)
    best = max(PRIORITY, key=lambda intent: (scores[intent][0], -PRIORITY.index(intent)))
    score, cues_matched = scores[best]
    if score <= 0:
        fallback = Intent.NEW_TASK if first_in_session or len(text.split()) > 8 else Intent.CLARIFICATION
        return IntentLabel(fallback, 0.0, ())
    return IntentLabel(best, score, cues_matched)


def _adjust(scores: dict[Intent, tuple[float, tuple[str, ...]]], text: str, first: bool) -> None:
    """Context rules that single cues cannot express."""

    def bump(intent: Intent, delta: float) -> None:
        total, cues = scores[intent]
        scores[intent] = (total + delta, cues)

    words = len(text.split())
    # approvals are short; a long prompt starting with "ok," is usually a new instruction
    if words > 12:
        bump(Intent.APPROVAL, -2.0)
    # "can you add X?" is a polite request, not a question
    if scores[Intent.NEW_TASK][0] >= 2.0 and not text.rstrip().endswith("?"):
        bump(Intent.QUESTION, -1.5)
    if first:
        bump(Intent.NEW_TASK, 1.0)
