"""Topic-frequency distributions of the prompt corpus per ISO week (docs/design.md §8).

A topic is a content term: prompts are tokenised into letter-only words of three or more letters,
English and Ukrainian stop words are dropped, and words are folded to a crude stem (Ukrainian case
endings and English plural ``s`` stripped) so that "тест", "тести", "тестів" count once. The
``top`` most frequent stems over the whole corpus (by number of prompts mentioning them) are the
topics; each is shown under its most frequent surface form. For every week the distribution gives,
per topic, how many prompts of that week mention it and that count's share of the week's prompts.

Topic modelling with embeddings would group synonyms; this term view is cheap, deterministic and
needs nothing beyond the corpus.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

__all__ = ["TopicDistribution", "WeekTopics", "prompt_terms", "topic_distribution", "week_of"]

_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_UK_ENDINGS = (
    "ами", "ями", "ові", "еві", "ого", "ому", "ими", "іми", "ців", "ість", "ості",
    "ів", "ах", "ях", "ам", "ям", "ом", "ем", "ою", "ею", "ий", "ій", "ої", "ей",
    "а", "я", "у", "ю", "і", "и", "о", "е", "ь", "ї", "й",
)  # fmt: skip
STOP_WORDS = frozenset(
    """
    the and for are but not you your yours with this that these those from into onto then than
    there here have has had was were will would should could can cannot can't don't doesn't isn't
    it's its our ours out all any some just also only very much more most less such what which who
    whom whose when where why how about after before again once each other same own too off over
    under until while both few nor now let's lets please make sure use using used need needs want
    like get got see look one two yes okay thanks thank does did doing done being been because
    via per etc let new
    і й та але або чи що як це ця цей ці цю цього цих той те ті там тут так ні не ще вже
    також потім коли де чому який яка яке які якщо щоб для про при під над без між через після
    до від на по за із зі з у в його її їх ми ви ти він вона воно вони мене тебе нас вас мені
    тобі нам вам був була було були буде будуть є бути може можна треба потрібно будь ласка
    давай дякую добре зроби просто саме теж лише тільки усе все всі весь вся
    """.split()  # noqa: SIM905 - a word list reads best as text
)


@dataclass(frozen=True)
class WeekTopics:
    """Topic counts of one ISO week.

    Attributes:
        week: ISO week, ``"2025-W03"``.
        prompts: number of prompts captured that week.
        counts: topic -> number of that week's prompts mentioning it.
        shares: topic -> ``counts[topic] / prompts``, in [0, 1].
    """

    week: str
    prompts: int
    counts: dict[str, int]
    shares: dict[str, float]


@dataclass(frozen=True)
class TopicDistribution:
    """Topic frequencies per week.

    Attributes:
        topics: the topic labels, most frequent first.
        totals: topic -> number of prompts (all weeks) mentioning it.
        weeks: one :class:`WeekTopics` per week that has prompts, in time order.
    """

    topics: list[str]
    totals: dict[str, int]
    weeks: list[WeekTopics]

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form: ``{"topics": [...], "totals": {...}, "weeks": [{"week", "prompts", ...}]}``."""
        return {
            "topics": self.topics,
            "totals": self.totals,
            "weeks": [
                {"week": w.week, "prompts": w.prompts, "counts": w.counts, "shares": w.shares}
                for w in self.weeks
            ],
        }


def week_of(moment: datetime) -> str:
    """ISO week label of ``moment``: ``"2025-W03"``."""
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


def _stem(word: str) -> str:
    if "а" <= word[0] <= "я" or word[0] in "іїєґ":
        for ending in _UK_ENDINGS:
            if len(word) - len(ending) >= 3 and word.endswith(ending):
                return word[: -len(ending)]
        return word
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


_REDACTION_MARKER = re.compile(r"\[REDACTED:[^\]]*\]")
"""What the capture hook writes in place of a secret (:mod:`mission_memory.capture.redaction`): its words
("redacted", "token", "password") are not the prompt's topic."""


def prompt_terms(text: str) -> dict[str, str]:
    """Content terms of one prompt: stem -> the first surface form seen (lower-cased); redaction
    markers (``[REDACTED:token]``) are not terms."""
    terms: dict[str, str] = {}
    for match in _WORD.finditer(_REDACTION_MARKER.sub(" ", text).lower().replace("’", "'")):
        word = match.group()
        if word in STOP_WORDS:
            continue
        terms.setdefault(_stem(word), word)
    return terms


def topic_distribution(prompts: Sequence[tuple[datetime, str]], *, top: int = 10) -> TopicDistribution:
    """Topic frequencies per ISO week.

    Args:
        prompts: ``(timestamp, prompt text)`` pairs, any order.
        top: how many topics to keep (the most frequent stems over the whole corpus).

    Returns:
        The distribution; empty lists when ``prompts`` is empty.
    """
    per_prompt = [(week_of(moment), prompt_terms(text)) for moment, text in prompts]
    document_frequency: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = defaultdict(Counter)
    for _, terms in per_prompt:
        document_frequency.update(terms.keys())
        for stem, form in terms.items():
            surface[stem][form] += 1
    chosen = [stem for stem, _ in sorted(document_frequency.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]
    label = {stem: surface[stem].most_common(1)[0][0] for stem in chosen}
    week_prompts: Counter[str] = Counter()
    week_counts: dict[str, Counter[str]] = defaultdict(Counter)
    for week, terms in per_prompt:
        week_prompts[week] += 1
        for stem in chosen:
            if stem in terms:
                week_counts[week][label[stem]] += 1
    topics = [label[stem] for stem in chosen]
    weeks = []
    for week in sorted(week_prompts):
        n = week_prompts[week]
        counts = {topic: week_counts[week].get(topic, 0) for topic in topics}
        weeks.append(WeekTopics(week, n, counts, {t: round(c / n, 4) for t, c in counts.items()}))
    totals = {label[stem]: document_frequency[stem] for stem in chosen}
    return TopicDistribution(topics=topics, totals=totals, weeks=weeks)
