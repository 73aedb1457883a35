"""The correction-cue vocabulary: English and Ukrainian phrases by which an operator corrects an agent.

One list feeds both places that recognise corrections in operator prompts (docs/design.md §6, issue 8
item 5): the intent labeller (:mod:`mission_memory.prompts.intents`) sums the :attr:`CorrectionCue.weight`
of every cue that matches to score the ``correction`` label, and the transcript scanner
(:mod:`mission_memory.metrics.transcript_corrections`) treats a prompt as redirecting the agent when
any cue marked :attr:`CorrectionCue.redirects` matches. Patterns are regular expressions over the
text :func:`normalise` returns (lower-cased, apostrophes unified, leading quotes and markup gone);
``^`` anchors a cue at the prompt's opening.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["CORRECTION_CUES", "CorrectionCue", "matching_cues", "normalise", "redirects"]


@dataclass(frozen=True)
class CorrectionCue:
    """One correction cue.

    Attributes:
        pattern: regular expression over :func:`normalise`-d text (``^`` = the prompt's opening).
        weight: evidence the cue gives the ``correction`` intent label (score units of
            :func:`mission_memory.prompts.intents.label_intent`); 0 for cues that only mark a
            redirect in a transcript.
        redirects: whether the cue alone marks a prompt that follows an agent's tool call as a
            correction in a transcript (``redirecting-prompt``, signal ``correction-cue``).
        language: ``"en"`` or ``"uk"``.
    """

    pattern: str
    weight: float
    redirects: bool
    language: str
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern, re.IGNORECASE | re.UNICODE))


def _cue(pattern: str, weight: float, *, redirects: bool, language: str = "en") -> CorrectionCue:
    return CorrectionCue(pattern, weight, redirects, language)


CORRECTION_CUES: tuple[CorrectionCue, ...] = (
    # -- English: how a correction opens
    _cue(r"^(no|nope|nah)\b(?!\s+(worries|problem|rush|need))", 3.0, redirects=True),
    _cue(r"^(wrong|incorrect|stop|wait|hold on)\b", 3.0, redirects=True),
    _cue(r"^(hmm+|hm+|uh+|ugh|well)[,.!…]*\s+(no|nope)\b", 3.0, redirects=True),
    _cue(r"^(don'?t|do not|never|undo|revert|roll ?back|actually|instead)\b", 0.0, redirects=True),
    _cue(r"^not (that|this|like|what|quite)\b", 0.0, redirects=True),
    _cue(r"^(that'?s|that is|this is) (wrong|not)\b", 0.0, redirects=True),
    _cue(r"^why (did|are) you\b", 0.0, redirects=True),
    _cue(r"^you (forgot|missed|broke|didn'?t|shouldn'?t)\b", 0.0, redirects=True),
    _cue(r"^please (don'?t|do not|stop|revert|undo)\b", 0.0, redirects=True),
    _cue(r"^i (said|meant|asked|told you)\b", 0.0, redirects=True),
    # -- English: anywhere in the prompt
    _cue(r"\b(don'?t|do not|never) [a-z]+\b", 1.5, redirects=False),
    _cue(r"\bthat'?s (wrong|not (right|what|it))\b|\bnot what i (asked|meant|wanted)\b", 3.5, redirects=True),
    _cue(r"\b(don'?t|do not|never) (touch|change|edit|modify|delete|remove|use|do)\b", 3.0, redirects=True),
    _cue(r"\byou (broke|deleted|removed|missed|forgot|ignored|changed)\b", 3.5, redirects=True),
    _cue(r"\b(revert|undo|roll ?back|put (it )?back)\b", 2.5, redirects=False),
    _cue(r"\bwrong\b|\bincorrect\b|\bshould not have\b|\bshouldn'?t have\b", 2.0, redirects=False),
    _cue(r"\binstead( of)?\b", 1.0, redirects=True),
    # -- Ukrainian: how a correction opens
    _cue(r"^(ні|стоп|зачекай|неправильно|не так)\b", 3.0, redirects=True, language="uk"),
    _cue(r"^(хм+|ну)[,.!…]*\s+(ні)\b", 3.0, redirects=True, language="uk"),
    _cue(
        r"^(не\s|чекай|стривай|відміни|скасуй|поверни|відкоти|невірно|насправді|навіщо\b)",
        0.0,
        redirects=True,
        language="uk",
    ),
    _cue(
        r"^чому ти\b|^ти (забув|пропустив|зламав|не)\b|^я (казав|просив|мав на увазі)\b",
        0.0,
        redirects=True,
        language="uk",
    ),
    # -- Ukrainian: anywhere in the prompt
    _cue(r"\bне те\b|\bне той\b|\bне та\b|\bне так\b|\bце не\b", 2.5, redirects=False, language="uk"),
    _cue(r"\bнеправильн\w*|\bпомилков\w*", 2.5, redirects=False, language="uk"),
    _cue(
        r"\bне (чіпай|змінюй|видаляй|редагуй|треба|роби|використовуй)\b", 3.0, redirects=True, language="uk"
    ),
    _cue(r"\bне [а-яіїєґ']{3,}(ай|яй|уй|юй|ий|и|іть|айте|яйте)\b", 2.0, redirects=False, language="uk"),
    _cue(r"\bти (зламав|видалив|забув|пропустив|змінив|проігнорував)\w*", 3.5, redirects=True, language="uk"),
    _cue(r"\bвідкот\w*|\bповерни\w*( як було)?|\bскасуй\w*", 2.5, redirects=False, language="uk"),
    _cue(r"\bзамість\b", 1.0, redirects=True, language="uk"),
)
"""The vocabulary; weights were tuned on ``tests/prompts/intent_labels*.tsv`` (see
``benchmarks/bench_intent_labels.py``)."""

_LEADING_NOISE = re.compile(r"^[\s\"'«»(\[*_>#`-]+")


def normalise(text: str) -> str:
    """``text`` as the cue patterns expect it: stripped, lower-cased, ``’``/``ʼ`` as ``'``, leading
    quotes, brackets and markdown markers removed."""
    return _LEADING_NOISE.sub("", text.strip().lower().replace("’", "'").replace("ʼ", "'"))


def matching_cues(normalised: str) -> tuple[CorrectionCue, ...]:
    """The cues that match ``normalised`` (text already passed through :func:`normalise`)."""
    return tuple(cue for cue in CORRECTION_CUES if cue.regex.search(normalised))


def redirects(text: str) -> bool:
    """Does a prompt read as a correction on its own ("no, …", "don't …", "ні, …", "… instead")?

    Args:
        text: the prompt or its opening, raw (normalised here).

    Returns:
        True when a cue marked :attr:`CorrectionCue.redirects` matches.
    """
    normalised = normalise(text)
    return any(cue.redirects and cue.regex.search(normalised) for cue in CORRECTION_CUES)
