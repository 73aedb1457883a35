"""The digest: ranked records rendered as Markdown and packed within a token budget.

A digest has one section per layer; each entry shows its relevance score, its age and its
provenance (source kind, a reference that resolves, a URI), then an excerpt of the record. Entries
are taken in relevance order while they fit; the budget bounds the exact text returned — header,
section headings, provenance lines and the closing "omitted" line included — counted by the
tokenizer with its safety margin (DESIGN.md §4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mission_memory.errors import BudgetError
from mission_memory.records import Layer, Record, RecordKind
from mission_memory.retrieval.ranking import Candidate
from mission_memory.tokens import Tokenizer

__all__ = ["Digest", "DigestEntry", "format_age", "pack_digest", "render_excerpt"]

_SECTION_TITLES = {
    Layer.WORKFLOW: "Workflow: decisions and history",
    Layer.DOMAIN: "Domain knowledge",
    Layer.PRACTITIONER: "Practitioner patterns",
}
_SEPARATOR = "\n\n"
_MIN_EXCERPT_TOKENS = 48


@dataclass(frozen=True)
class DigestEntry:
    """One record as it appears in a digest.

    Attributes:
        record: the record.
        score: fused relevance in [0, 1].
        superseded: a decision that a later decision supersedes (shown, but marked and demoted).
        text: the excerpt shown (at most ``max_entry_tokens``).
        block: the entry's full Markdown block (heading, provenance line, excerpt).
        tokens: tokens of ``block`` (margin included).
    """

    record: Record
    score: float
    superseded: bool
    text: str
    block: str
    tokens: int

    def to_json(self) -> dict[str, Any]:
        """The entry as the ``--json`` output and the docs describe it."""
        r = self.record
        return {
            "layer": r.layer.value,
            "record_id": r.id,
            "kind": r.kind.value,
            "title": r.title,
            "score": round(self.score, 4),
            "superseded": self.superseded,
            "component": r.component,
            "criticality": r.criticality,
            "time": r.provenance.time.isoformat(),
            "mission": r.provenance.mission,
            "text": self.text,
            "source": {
                "kind": r.provenance.kind.value,
                "ref": r.provenance.ref,
                "uri": r.provenance.uri,
                "commit": r.provenance.commit,
            },
            "attributes": r.attributes,
        }


@dataclass(frozen=True)
class Digest:
    """The answer to a pull query.

    Attributes:
        query, scope, token_budget: as asked.
        filters: the filters that were set.
        entries: the entries included, in rendered order.
        omitted: relevant candidates left out because the budget was reached.
        duplicates_suppressed: candidates dropped as near-duplicates of a better one.
        tokens_used: tokens of :attr:`text` (margin included); never above ``token_budget``.
        text: the Markdown digest.
        retrieval_event_id: id of the logged retrieval event.
        duration_ms: wall time of the query, in milliseconds.
    """

    query: str
    scope: str
    token_budget: int
    filters: dict[str, Any]
    entries: tuple[DigestEntry, ...]
    omitted: int
    duplicates_suppressed: int
    tokens_used: int
    text: str
    retrieval_event_id: str = ""
    duration_ms: float = 0.0
    model_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The digest as ``mission-memory query --json`` prints it."""
        return {
            "query": self.query,
            "scope": self.scope,
            "filters": self.filters,
            "token_budget": self.token_budget,
            "tokens_used": self.tokens_used,
            "omitted": self.omitted,
            "duplicates_suppressed": self.duplicates_suppressed,
            "retrieval_event_id": self.retrieval_event_id,
            "duration_ms": round(self.duration_ms, 2),
            "embedding_model": self.model_id,
            "entries": [e.to_json() for e in self.entries],
            "digest": self.text,
        }


def format_age(moment: datetime, now: datetime) -> str:
    """A short human age: ``today``, ``3 days``, ``5 weeks``, ``4 months``, ``2 years``."""
    days = max(0, int((now - moment).total_seconds() // 86400))
    if days == 0:
        return "today"
    if days < 14:
        return f"{days} day{'s' if days != 1 else ''}"
    if days < 60:
        return f"{days // 7} weeks"
    if days < 730:
        return f"{days // 30} months"
    return f"{days // 365} years"


def _ago(moment: datetime, now: datetime) -> str:
    age = format_age(moment, now)
    return age if age == "today" else f"{age} ago"


def render_excerpt(record: Record) -> str:
    """The text shown for a record: structured fields first for decisions and commits, then its text."""
    a = record.attributes
    if record.kind is RecordKind.DECISION:
        lines = []
        status = a.get("status") or "not stated"
        lines.append(f"Status: {status}" + (f" (decided {a['decided_at']})" if a.get("decided_at") else ""))
        if a.get("superseded_by"):
            lines.append("Superseded by: " + ", ".join(a["superseded_by"]))
        if a.get("supersedes"):
            lines.append("Supersedes: " + ", ".join(a["supersedes"]))
        if a.get("decision"):
            lines.append("Decision: " + a["decision"])
        if a.get("rejected_alternatives"):
            rejected = "; ".join(
                alt["option"] + (f" ({alt['reason']})" if alt.get("reason") else "") for alt in a["rejected_alternatives"]
            )
            lines.append("Rejected: " + rejected)
        if a.get("principle_ids"):
            lines.append("Principles: " + ", ".join(a["principle_ids"]))
        if a.get("context"):
            lines.append("Context: " + a["context"])
        if len(lines) <= 1:
            lines.append(record.text)
        return "\n".join(lines)
    if record.kind is RecordKind.COMMIT:
        head = record.text
        extra = []
        if a.get("tracker_keys"):
            extra.append("Keys: " + ", ".join(a["tracker_keys"]))
        return head + ("\n" + "\n".join(extra) if extra else "")
    return record.text


def _entry_block(index: int, cand: Candidate, excerpt: str, now: datetime) -> str:
    r = cand.record
    assert r is not None
    p = r.provenance
    mark = " [SUPERSEDED]" if cand.superseded else ""
    ref = p.ref if p.kind.value != "commit" else p.ref[:12]
    at = f" @ {p.commit[:12]}" if p.commit and p.kind.value != "commit" else ""
    heading = f"### {index}. {r.title}{mark}"
    meta = (
        f"score {cand.score:.2f} · {r.kind.value} · {p.time.date().isoformat()} ({_ago(p.time, now)})"
        f" · source: {p.kind.value} `{ref}`{at} · {p.uri}"
    )
    return f"{heading}\n{meta}\n\n{excerpt}"


def _header(query: str, scope: str, budget: int) -> str:
    shown = " ".join(query.split())
    if len(shown) > 160:
        shown = shown[:157] + "…"
    return f"# Mission memory digest\nTask: {shown}\nScope: {scope} · budget {budget} tokens"


def _footer(omitted: int, included: int) -> str:
    if included == 0:
        return "_No stored record matched this task._" if omitted == 0 else (
            f"_{omitted} relevant entries omitted: none fits the token budget._"
        )
    if omitted == 0:
        return f"_{included} entries; nothing relevant omitted._"
    return f"_{included} entries; {omitted} more relevant entries omitted to stay within the token budget._"


def _render(header: str, sections: dict[Layer, list[str]], footer: str) -> str:
    parts = [header]
    for layer, blocks in sections.items():
        if blocks:
            parts.append(f"## {_SECTION_TITLES[layer]}")
            parts.extend(blocks)
    parts.append(footer)
    return _SEPARATOR.join(parts)


def pack_digest(
    query: str,
    scope: str,
    candidates: Sequence[Candidate],
    token_budget: int,
    tokenizer: Tokenizer,
    max_entry_tokens: int,
    layers: Sequence[Layer],
    now: datetime | None = None,
) -> tuple[str, list[DigestEntry], int, int]:
    """Pack ranked candidates into a Markdown digest of at most ``token_budget`` tokens.

    Candidates are taken best first; one that does not fit whole is shortened to the room left
    (when at least 48 tokens of excerpt fit), else skipped, and smaller ones after it may still go in. The whole text is counted again at the end and entries are dropped from the
    bottom until it fits, so the bound holds for the exact text returned.

    Args:
        candidates: best first, each with ``record`` attached.
        token_budget: the bound, in tokens (margin included).
        max_entry_tokens: cap on one entry's excerpt.
        layers: the layers in scope, in section order.

    Returns:
        ``(text, entries, tokens_used, omitted)``.

    Raises:
        BudgetError: the budget cannot hold even the header and the closing line.
    """
    now = now or datetime.now(UTC)
    header = _header(query, scope, token_budget)
    sep = tokenizer.count(_SEPARATOR)
    worst_footer = max(
        tokenizer.count(_footer(len(candidates), len(candidates))), tokenizer.count(_footer(len(candidates), 0))
    )
    fixed = tokenizer.count(header) + sep + worst_footer
    if fixed > token_budget:
        raise BudgetError(
            f"token_budget {token_budget} is too small: the digest header alone takes {fixed} tokens"
        )
    chosen: list[tuple[Candidate, str, str, int]] = []
    used = fixed
    section_cost = {layer: tokenizer.count(f"## {_SECTION_TITLES[layer]}") + sep for layer in layers}
    opened: set[Layer] = set()
    for cand in candidates:
        assert cand.record is not None
        excerpt = tokenizer.truncate(render_excerpt(cand.record), max_entry_tokens)
        block = _entry_block(len(chosen) + 1, cand, excerpt, now)
        cost = tokenizer.count(block) + sep
        layer = cand.record.layer
        extra = 0 if layer in opened else section_cost.get(layer, 0)
        if used + cost + extra > token_budget:
            # Shorten rather than drop: a relevant entry cut to what fits beats a weaker one whole.
            frame = tokenizer.count(_entry_block(len(chosen) + 1, cand, "", now)) + sep
            room = token_budget - used - extra - frame - 2
            if room < _MIN_EXCERPT_TOKENS:
                continue
            excerpt = tokenizer.truncate(excerpt, room)
            block = _entry_block(len(chosen) + 1, cand, excerpt, now)
            cost = tokenizer.count(block) + sep
            if used + cost + extra > token_budget:
                continue
        used += cost + extra
        opened.add(layer)
        chosen.append((cand, excerpt, block, cost))

    while True:
        # Number entries in rendered (section) order, then verify the exact text.
        ordered = sorted(chosen, key=lambda item: (list(layers).index(item[0].record.layer), -item[0].score))  # type: ignore[union-attr]
        sections: dict[Layer, list[str]] = {layer: [] for layer in layers}
        entries: list[DigestEntry] = []
        for i, (cand, excerpt, _block, cost) in enumerate(ordered, start=1):
            block = _entry_block(i, cand, excerpt, now)
            assert cand.record is not None
            sections[cand.record.layer].append(block)
            entries.append(DigestEntry(cand.record, cand.score, cand.superseded, excerpt, block, cost))
        omitted = len(candidates) - len(chosen)
        text = _render(header, sections, _footer(omitted, len(chosen)))
        tokens = tokenizer.count(text)
        if tokens <= token_budget or not chosen:
            return text, entries, tokens, omitted
        worst = min(range(len(chosen)), key=lambda j: chosen[j][0].score)
        chosen.pop(worst)
