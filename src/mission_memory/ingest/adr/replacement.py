"""Implicit replacement: the earlier decisions an ADR names while saying, in its prose, that it replaces,
reverses, revisits or fixes what they decided, with no "Supersedes" line (docs/adr/0086).

"In ADR008 and ADR014 we decided to use HAProxy ... these problems have since been fixed" names two
earlier decisions and says their reason is gone; the ADR's status section says nothing about them. Such
a link is *probable*: it is kept apart from the stated ``supersedes`` and shown as probable.

The rule: a sentence that names an earlier ADR (``ADR-8``, ``ADR008``, a link to ``0008-x.md``), with a
replacement cue (:data:`_CUES`) in that sentence or one of the two that follow it in the same paragraph,
and no cue that says the decision stands (:data:`_STANDS`) in that sentence. Code, HTML comments and the
status section (whose links are stated ones) are not read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mission_memory.ingest.adr.plain_text import _FENCED_BLOCK, _HTML_COMMENT, _URL, _plain
from mission_memory.ingest.adr.references import _number_ref, _refs_in

__all__ = ["probable_supersedes"]

_CUES = re.compile(
    r"\b(?:"
    r"(?:in\s+part|partly|partially)\s+supersed\w*|supersed\w*\s+(?:some|parts?|aspects?|part)\b"
    r"|supersedes|replaces?|replacing|replaced"
    r"|revers(?:e|es|ed|ing)|revert(?:s|ed|ing)?|revisit(?:s|ed|ing)?|overturn\w*|undo(?:es|ing)?|roll(?:s|ed|ing)?\s+back"
    r"|no\s+longer\s+(?:valid|holds?|applies|apply|true|the\s+case|needed|necessary|practical|use)"
    r"|(?:has|have)\s+since\s+been\s+(?:fixed|resolved|addressed|removed)"
    r"|(?:is|was|are|were)\s*(?:not|n['’]t)\s+(?:practical|viable|feasible|sustainable)"
    r"|mov(?:e|es|ed|ing)\s+away\s+from|reintroduc\w+|(?:was|were)\s+(?:later\s+)?removed"
    r"|amends?|amended|will\s+now\s+be|we\s+now\s+(?:use|replace|reverse|move)"
    r"|замін\w*|скасов\w*|відмов\w*|переглядаєм\w*"
    r")(?!\w)",
    re.IGNORECASE,
)
"""Words saying that what an earlier decision decided changes: replace, reverse, revisit, amend,
"in part supersedes", "has since been fixed", "is not practical", "move away from", "reintroduce",
"was later removed" (and a few Ukrainian stems)."""

_STANDS = re.compile(
    r"\b(?:is\s+not\s+changing|not\s+changing|continue\s+to|still\s+(?:holds?|applies|stands)|was\s+previously|"
    r"previously\s+(?:ADR|decision)|renumbered|renamed)\b",
    re.IGNORECASE,
)
"""Words saying the named decision stands (or is the same decision under an old number)."""

_DESCRIBED = re.compile(
    r"\b(?:decision|decisions|decided|decide|chose|chosen|agreed)\s+(?:that\s+)?"
    r"(?:we\s+(?:would|will|should)\s+|to\s+)\[?$",
    re.IGNORECASE,
)
"""A cue right after "decision to", "decided we would": it tells what the earlier decision decided
("ADR 14, in which we decided we would move away from Terraform Cloud"), not that it changes."""

_NEGATED = re.compile(r"\b(?:not|never|no|without|nor)\s+(?:\w+\s+){0,2}$|n['’]t\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
"""A cue right after a negation ("It does not revisit ADR-39's trigger mechanics")."""

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z\[(*`\"'А-ЯІЇЄҐ])")
_FOLLOWING = 2  # sentences after the one naming the decision that may carry its cue


_WEB_ADR_LINK = re.compile(
    r"\]\(\s*<?https?://[^)\s>]{0,400}?(?:adr|decision)[^)\s>]{0,200}?/(?:adr[-_]?)?(\d{1,5})-[^/)\s>]*[)>\s]",
    re.IGNORECASE,
)


def _web_refs(sentence: str) -> list[str]:
    """ADR numbers of links to an ADR file by its web address (``[prior decision](https://.../0014-x.md)``),
    which `_refs_in` leaves out as links to elsewhere."""
    return [_number_ref(m.group(1)) for m in _WEB_ADR_LINK.finditer(sentence)]


def _sentences(paragraph: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(paragraph) if s.strip()]


def probable_supersedes(
    body_lines: Sequence[str], number: int | None, definitions: dict[str, str]
) -> tuple[str, ...]:
    """The earlier decisions the prose of one ADR probably replaces.

    Args:
        body_lines: the ADR's lines outside its title and status section (the caller leaves those out).
        number: this ADR's number; only decisions with a lower number are taken (a reference to a
            later one is a forward mention, never a replacement). None: nothing is taken.
        definitions: reference-style link definitions of the text (label -> target), lower-case labels.

    Returns:
        ADR numbers as zero-padded 4-digit strings ("0008"), in the order first named, no repeats.
    """
    if number is None:
        return ()
    text = _FENCED_BLOCK.sub("\n", _HTML_COMMENT.sub(" ", "\n".join(body_lines)))
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)", text):  # list items stand apart
        sentences = _sentences(paragraph)
        named = [[*_refs_in(sentence, definitions, loose=False), *_web_refs(sentence)] for sentence in sentences]
        for index, sentence in enumerate(sentences):
            refs = [r for r in named[index] if r.isdigit() and int(r) < number]
            if not refs or _STANDS.search(sentence):
                continue
            window = [sentence]
            for later in range(index + 1, min(index + 1 + _FOLLOWING, len(sentences))):
                if named[later]:
                    break  # a sentence naming decisions of its own speaks of those
                window.append(sentences[later])
            plain = _URL.sub(" ", _plain(" ".join(window)))  # link texts only, never their addresses
            if any(_says_it_changes(plain, cue) for cue in _CUES.finditer(plain)):
                found.extend(refs)
    return tuple(dict.fromkeys(found))


def _says_it_changes(text: str, cue: re.Match[str]) -> bool:
    before = text[: cue.start()]
    return not _DESCRIBED.search(before) and not _NEGATED.search(before)
