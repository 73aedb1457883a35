"""The words ADRs use, in English and Ukrainian: field keys of ``Status: ...`` lines and the section
headings that name a role (context, decision, options, consequences, ...).
"""

from __future__ import annotations

import re

from mission_memory.ingest.adr.plain_text import _plain, _strip_emoji

_FIELD_LINE = re.compile(
    r"^\s*+(?:[-*+]\s+)?(?:\*\*|__)?\s*+(?P<key>[^\W\d_][\w' \-]{0,30}?)\s*(?:\*\*|__)?\s*:\s*(?:\*\*|__)?"
    r"\s*(?P<value>.*?)\s*$"
)
_TABLE_ROW = re.compile(r"^\s*\|\s*([^|\n]{1,40}?)\s*\|\s*([^|\n]*?)\s*\|?\s*$")
_MAX_FIELD_LINE = 400  # characters; longer lines are prose, and the field pattern stays linear on them
_FIELD_KEYS: dict[str, str] = {
    "status": "status",
    "статус": "status",
    "statut": "status",
    "date": "date",
    "decision date": "date",
    "date decided": "date",
    "decided": "date",
    "decided on": "date",
    "last updated": "date",
    "дата": "date",
    "дата рішення": "date",
    "deciders": "deciders",
    "decision-makers": "deciders",
    "decision makers": "deciders",
    "decided by": "deciders",
    "approvers": "deciders",
    "ухвалили": "deciders",
    "учасники рішення": "deciders",
    "consulted": "consulted",
    "informed": "informed",
    "component": "component",
    "components": "component",
    "компонент": "component",
    "tags": "tags",
    "labels": "tags",
    "теги": "tags",
    "principles": "principles",
    "принципи": "principles",
    "supersedes": "supersedes",
    "replaces": "supersedes",
    "supercedes": "supersedes",
    "obsoletes": "supersedes",
    "superseded by": "superseded_by",
    "superseded-by": "superseded_by",
    "replaced by": "superseded_by",
    "remplacé par": "superseded_by",
    "superceded by": "superseded_by",
    "superceeded by": "superseded_by",
    "superseeded by": "superseded_by",
    "obsoleted by": "superseded_by",
    "amended by": "amended_by",
    "amends": "amends",
    "related": "related",
    "related decisions": "related",
    "title": "title",
    "technical story": "story",
    "user story": "story",
}


def _field_key(raw: str) -> str | None:
    return _FIELD_KEYS.get(" ".join(_strip_emoji(raw).lower().split()))


_SECTION_ROLES: dict[str, str] = {
    # Nygard / MADR / common English headings
    "status": "status",
    "date": "date",
    "deciders": "deciders",
    "context": "context",
    "context and problem statement": "context",
    "problem statement": "context",
    "problem": "context",
    "background": "context",
    "context and problem": "context",
    "decision": "decision",
    "decisions": "decision",
    "the decision": "decision",
    "what's proposed": "decision",
    "whats proposed": "decision",
    "what is proposed": "decision",
    "proposal": "decision",
    "proposed solution": "decision",
    "proposed decision": "decision",
    "solution": "decision",
    "decision outcome": "outcome",
    "outcome": "outcome",
    "decision and reasoning": "decision_rationale",
    "decision and rationale": "decision_rationale",
    "rationale": "rationale",
    "reasoning": "rationale",
    "justification": "rationale",
    "reasons": "rationale",
    "why": "rationale",
    "consequences": "consequences",
    "positive consequences": "consequences",
    "negative consequences": "consequences",
    "implications": "consequences",
    "considered options": "options",
    "options considered": "options",
    "options": "options",
    "alternatives considered": "options",
    "considered alternatives": "options",
    "other options considered": "rejected",
    "other options": "rejected",
    "alternatives": "rejected",
    "rejected alternatives": "rejected",
    "rejected options": "rejected",
    "pros and cons of the options": "pros_cons",
    "pros and cons": "pros_cons",
    "decision drivers": "drivers",
    "links": "links",
    "related decisions": "links",
    "related": "links",
    # French
    "statut": "status",
    "contexte": "context",
    "contexte et énoncé du problème": "context",
    "décision": "decision",
    "résultat de la décision": "outcome",
    "conséquences": "consequences",
    "options considérées": "options",
    "options envisagées": "options",
    # Ukrainian
    "статус": "status",
    "статус рішення": "status",
    "дата": "date",
    "контекст": "context",
    "контекст і постановка проблеми": "context",
    "контекст та постановка проблеми": "context",
    "контекст і проблема": "context",
    "постановка проблеми": "context",
    "передумови": "context",
    "рішення": "decision",
    "ухвалене рішення": "decision",
    "прийняте рішення": "decision",
    "результат рішення": "outcome",
    "обґрунтування": "rationale",
    "обгрунтування": "rationale",
    "наслідки": "consequences",
    "позитивні наслідки": "consequences",
    "негативні наслідки": "consequences",
    "розглянуті варіанти": "options",
    "розглянуті альтернативи": "options",
    "варіанти": "options",
    "відхилені варіанти": "rejected",
    "відхилені альтернативи": "rejected",
    "інші розглянуті варіанти": "rejected",
    "альтернативи": "rejected",
    "переваги та недоліки варіантів": "pros_cons",
    "переваги і недоліки варіантів": "pros_cons",
    "чинники рішення": "drivers",
    "пов'язані рішення": "links",
    "посилання": "links",
}
_ROLE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("other options considered", "rejected"),
    ("options considered", "options"),
    ("considered options", "options"),
    ("decision outcome", "outcome"),
    ("decision:", "decision"),
    ("рішення:", "decision"),
)
_PSEUDO_HEADING = re.compile(r"^\s*(?:\*\*|__)([^*_\n]{2,40}?):?(?:\*\*|__):?\s*$")


def _normalise_heading(text: str) -> str:
    text = _plain(_strip_emoji(text)).lower().replace("’", "'").replace("ʼ", "'")
    text = re.sub(r"^(?:\d+(?:\.\d+)*[.)]?|[ivx]+\.)\s+", "", text)
    return " ".join(text.strip(" :.-—–").split())


def _heading_role(text: str) -> str | None:
    norm = _normalise_heading(text)
    role = _SECTION_ROLES.get(norm)
    if role is not None:
        return role
    for prefix, prefixed_role in _ROLE_PREFIXES:
        if norm.startswith(prefix):
            return prefixed_role
    return None
