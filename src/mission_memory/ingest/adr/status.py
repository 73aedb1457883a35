"""Status words of a decision in English and Ukrainian mapped to `DecisionStatus` (docs/design.md §3).
"""

from __future__ import annotations

import re

from mission_memory.decisions import DecisionStatus

_STATUS_WORDS: tuple[tuple[str, DecisionStatus], ...] = (
    # "Superceded", "Superceeded", "Superseeded": misspellings real ADRs carry (issue 34)
    (r"super[sc]{1,3}e{1,2}ded|replaced|obsoleted\s+by|remplacée?|заміщен|замінен", DecisionStatus.SUPERSEDED),
    (r"deprecated|obsolete|retired|withdrawn|obsolète|dépréciée?|застар|скасован", DecisionStatus.DEPRECATED),
    (r"rejected|declined|refused|rejetée?|відхилен", DecisionStatus.REJECTED),
    (
        r"accepted|amended|approved|adopted|acceptée?|adoptée?|validée?|agreed|decided|implemented|done|active|final|прийнят|ухвален|затверджен|чинн",
        DecisionStatus.ACCEPTED,
    ),
    (
        (
            r"proposed|proposal|draft|in review|under review|under discussion|open|pending|wip|in ?progress|"
            r"proposée?|brouillon|en cours|"
            r"запропонован|пропозиці|чернетк|на розгляді|обговорен"
        ),
        DecisionStatus.PROPOSED,
    ),
)


def _status_from(text: str) -> DecisionStatus | None:
    lowered = text.lower()
    best: tuple[int, DecisionStatus] | None = None
    for pattern, status in _STATUS_WORDS:
        match = re.search(rf"(?<!\w)(?:{pattern})", lowered)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), status)
    return best[1] if best else None
