"""The digest: ranked records rendered as Markdown, fenced as untrusted data, packed within a token budget.

A digest is an ordered list of named sections (by default one, every layer in scope in score order,
:func:`ranked_section`, docs/adr/0072; a rotation brief or a crisis timeline passes its own
:class:`DigestSection` list). Each entry shows
its relevance score, its age and its source kind, then, inside an envelope that stored text cannot
close or imitate, the record's title, provenance reference and excerpt: everything a digest quotes
comes from repositories, trackers and events, so it is data, never instructions (docs/design.md §4,
ADR 0021). Entries are taken in relevance order while they fit; the budget bounds the exact text
returned — header, section headings, envelope markers and the closing line included — counted by
the tokenizer with its safety margin (docs/design.md §4).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from mission_memory.decisions import DecisionAttributes
from mission_memory.errors import BudgetError, counted
from mission_memory.fence import (
    close_marker,
    fence_notice,
    neutralise_headings,
    neutralise_markers,
    new_nonce,
    open_marker,
)
from mission_memory.operations.alert_state import first_fired
from mission_memory.operations.escalation import CRITICAL_CRITICALITY
from mission_memory.records import Layer, Record, RecordKind
from mission_memory.retrieval.ranking import Candidate
from mission_memory.tokens import Tokenizer

__all__ = [
    "RANKED_TITLE",
    "Digest",
    "DigestEntry",
    "DigestSection",
    "explain_empty",
    "format_age",
    "layer_sections",
    "least_digest_budget",
    "pack_digest",
    "ranked_section",
    "render_excerpt",
]

_SECTION_TITLES = {
    Layer.WORKFLOW: "Workflow: decisions and history",
    Layer.DOMAIN: "Domain knowledge",
    Layer.PRACTITIONER: "Practitioner patterns",
}
RANKED_TITLE = "Most relevant first (every layer, one relevance scale)"
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
        tokens: tokens of ``block`` and the separator after it (margin included); counted when
            first read, since packing itself counts only the whole digest's text.
    """

    record: Record
    score: float
    superseded: bool
    text: str
    block: str
    tokenizer: Tokenizer = field(repr=False, compare=False)

    @functools.cached_property
    def tokens(self) -> int:
        """Tokens of :attr:`block` plus the separator after it, margin included."""
        return self.tokenizer.count(self.block) + self.tokenizer.count(_SEPARATOR)

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
        omitted: candidates (kept by the relevance cut-offs) left out because the budget was reached;
            the closing line says how many of them their calibrated scores expect to be relevant.
        duplicates_suppressed: candidates dropped as near-duplicates of a better one.
        tokens_used: tokens of :attr:`text` (margin included); never above ``token_budget``.
        text: the Markdown digest.
        retrieval_event_id: id of the logged retrieval event.
        duration_ms: wall time of the query, in milliseconds.
        mission_scope: which missions the query answered from and why (``MissionScope.to_json()``,
            ADR 0029), or None when the caller did not resolve one.
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
    mission_scope: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The digest as ``mission-memory query --json`` prints it."""
        return {
            "query": self.query,
            "scope": self.scope,
            "filters": self.filters,
            "mission_scope": self.mission_scope,
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
    """A short human age: ``today``, ``3 days``, ``5 weeks``, ``4 months``, ``2 years``.

    Counted in calendar days (UTC), so it agrees with the date shown beside it: a record of
    yesterday 23:00 is ``1 day`` old at 09:00 today, not ``today``.
    """
    if moment > now + timedelta(minutes=5):
        return "in the future"  # never "today" for a date ahead of the clock
    days = max(0, (now.astimezone(UTC).date() - moment.astimezone(UTC).date()).days)
    if days == 0:
        return "today"
    if days < 14:
        return counted(days, "day")
    if days < 60:
        return f"{days // 7} weeks"
    if days < 730:
        return f"{days // 30} months"
    return f"{days // 365} years"


def _ago(moment: datetime, now: datetime) -> str:
    age = format_age(moment, now)
    return age if age in ("today", "in the future") else f"{age} ago"


def _decision_ref(link: str) -> str:
    """``ADR-0021`` for a stored ADR number, else the link as stored (a path or a label)."""
    return f"ADR-{link}" if link.isdigit() else link


def render_excerpt(record: Record, section: str = "") -> str:
    """The text shown for a record: structured fields first for decisions and commits, then its text.

    ``section`` (a decision's best-matching ADR section, ``heading: text``, docs/adr/0066) follows
    the decision itself, before the rationale, the rejected options, the consequences and the
    context, so the part of a long ADR that matched the task survives the entry's token cap.
    """
    return "\n".join(line for _, line in excerpt_parts(record, section))


def excerpt_parts(record: Record, section: str = "") -> list[tuple[str, str]]:
    """:func:`render_excerpt` as ``(part name, line)`` pairs, most important first, so a cut can say
    which parts it left out (:func:`fit_excerpt`)."""
    a = record.attributes
    if record.kind is RecordKind.DECISION:
        d = DecisionAttributes.read(a)
        parts = [("Status", f"Status: {d.status or 'not stated'}" + (f" (decided {d.decided_at})" if d.decided_at else ""))]
        if d.superseded_by:
            parts.append(("Superseded by", "Superseded by: " + ", ".join(d.superseded_by)))
        if d.supersedes:
            parts.append(("Supersedes", "Supersedes: " + ", ".join(d.supersedes)))
        for name, links in (("Probably superseded by", d.probably_superseded_by),
                            ("Probably supersedes", d.probably_supersedes),
                            ("Amended by", d.amended_by), ("Amends", d.amends)):
            if links:
                parts.append((name, f"{name}: " + ", ".join(_decision_ref(link) for link in links)))
        if d.decision:
            parts.append(("Decision", "Decision: " + d.decision))
        if section:
            parts.append(("the best-matching section", "Best-matching section, " + section))
        if d.rationale and " ".join(d.rationale.split()).lower() not in " ".join((d.decision or "").split()).lower():
            parts.append(("Rationale", "Rationale: " + d.rationale))  # MADR's "Chosen option: X, because Y" holds it already
        if d.rejected_alternatives:
            rejected = "; ".join(alt.option + (f" ({alt.reason})" if alt.reason else "") for alt in d.rejected_alternatives)
            parts.append(("Rejected", "Rejected: " + rejected))
        if d.consequences:
            parts.append(("Consequences", "Consequences: " + d.consequences))
        if d.principle_ids:
            parts.append(("Principles", "Principles: " + ", ".join(d.principle_ids)))
        if d.context:
            parts.append(("Context", "Context: " + d.context))
        if len(parts) <= 1:
            parts.append(("text", record.text))
        return parts
    return [("text", render_other(record))]


def fit_excerpt(record: Record, section: str, max_tokens: int, tokenizer: Tokenizer) -> str:
    """The excerpt of ``record`` cut to ``max_tokens`` (margin-inflated), saying what the cut left out.

    A decision keeps its parts whole in :func:`excerpt_parts` order while they fit; the first that
    does not is cut at a token boundary (ending in ``…``) when at least a few tokens of it fit, and a
    last line names the parts not shown (``Not shown: Consequences, Context``), so a reader knows the
    ADR says more. Other records are cut as :meth:`~mission_memory.tokens.Tokenizer.truncate` cuts.
    """
    whole = render_excerpt(record, section)
    if record.kind is not RecordKind.DECISION:
        return tokenizer.truncate(whole, max_tokens)  # one encoding: the count and the cut
    if tokenizer.count(whole) <= max_tokens:
        return whole
    parts = excerpt_parts(record, section)
    # Each line is counted once and a prefix is estimated as the sum of its lines' counts plus one per
    # line break (each count rounds its margin up, so the sum errs high); every text returned is
    # counted exactly first.
    costs = [tokenizer.count(line) + 1 for _, line in parts]
    note_costs = [tokenizer.count("Not shown: " + ", ".join(n for n, _ in parts[i:]) + ".") + 1 for i in range(len(parts))]
    lines: list[str] = []
    used = 0
    for i, (name, line) in enumerate(parts):
        rest = [n for n, _ in parts[i + 1:]]
        if used + costs[i] + (note_costs[i + 1] if rest else 0) <= max_tokens:
            lines.append(line)
            used += costs[i]
            continue
        if not lines:
            break  # not even the status line fits beside a note: a plain cut
        note = "Not shown: " + ", ".join(rest) + "." if rest else ""
        room = max_tokens - tokenizer.count("\n".join([*lines, *([note] if note else [])])) - 2
        cut = tokenizer.truncate(line, room) if room >= _MIN_EXCERPT_TOKENS // 2 else ""
        if cut:
            text = "\n".join([*lines, cut, *([note] if note else [])])
            if tokenizer.count(text) <= max_tokens:
                return text
        text = "\n".join([*lines, "Not shown: " + ", ".join([name, *rest]) + "."])
        if tokenizer.count(text) <= max_tokens:
            return text
        break
    return tokenizer.truncate(whole, max_tokens)


def render_other(record: Record) -> str:
    """The excerpt of a record that is not a decision."""
    a = record.attributes
    if record.kind is RecordKind.COMMIT:
        head = record.text
        extra = []
        if a.get("tracker_keys"):
            extra.append("Keys: " + ", ".join(a["tracker_keys"]))
        return head + ("\n" + "\n".join(extra) if extra else "")
    if record.kind is RecordKind.DOMAIN_EVENT:
        return _event_excerpt(record)
    if _one_line(record.text) == _one_line(record.title):
        return ""  # a one-sentence record (a correction): its title line says it, once
    return record.text


def _event_excerpt(record: Record) -> str:
    """A domain event's text with what an on-call engineer acts on: state, duration, labels, runbook, source link."""
    a = record.attributes
    lines = [record.text]
    if a.get("state") == "resolved":
        ended = str(a.get("ends_at") or "")
        lines.append("State: RESOLVED" + (f" at {ended}" if ended else "")
                     + (f" · was criticality {float(a['source_criticality']):.2f}"
                        if isinstance(a.get("source_criticality"), (int, float)) else ""))
        if ended:
            try:
                lasted = datetime.fromisoformat(ended) - record.provenance.time
                lines[-1] += f" · fired for {format_duration(lasted.total_seconds())}"
            except ValueError:
                pass
    elif a.get("fingerprint"):
        lines.append(f"State: firing since {first_fired(record).astimezone(UTC).isoformat()}")
    labels = a.get("labels")
    if isinstance(labels, dict) and labels:
        lines.append("Labels: " + ", ".join(f"{k}={v}" for k, v in sorted(labels.items())))
    if a.get("runbook_url"):
        lines.append(f"Runbook: {a['runbook_url']}")
    if a.get("generator_url"):
        lines.append(f"Source: {a['generator_url']}")
    earlier = _earlier_version_lines(a)
    if earlier and a.get("state") != "resolved":  # a resolved version's State line already states it
        crit = a.get("source_criticality", record.criticality)
        lines.append(f"Current version: criticality {float(crit):.2f} at {record.provenance.time.astimezone(UTC).isoformat()}"
                     if isinstance(crit, (int, float)) else "Current version: criticality unknown")
    lines += earlier
    return "\n".join(lines)


EARLIER_VERSIONS_SHOWN = 3
"""Earlier versions of a re-sent event an excerpt quotes: the first report and the newest before the current."""


def _earlier_version_lines(a: Mapping[str, Any]) -> list[str]:
    """What a re-sent event said before its current version (docs/adr/0078): the first report and the
    latest ones, the most critical of the rest named, so a downgrade never hides a critical report."""
    versions = [v for v in a.get("earlier_versions") or () if isinstance(v, dict)]
    if not versions:
        return []
    shown = versions if len(versions) <= EARLIER_VERSIONS_SHOWN else [versions[0], *versions[1 - EARLIER_VERSIONS_SHOWN:]]
    left = [v for v in versions if v not in shown]
    hidden = len(left) + int(a.get("earlier_versions_omitted") or 0)

    def line(v: Mapping[str, Any]) -> str:
        crit = v.get("criticality")
        level = f"criticality {crit:.2f}" if isinstance(crit, (int, float)) else "criticality unknown"
        state = f" · {v['state']}" if v.get("state") and v.get("state") != "firing" else ""
        return f"Earlier version ({v.get('time') or 'time unknown'} · {level}{state}): {_one_line(str(v.get('text') or ''))}"

    lines = [line(v) for v in shown]
    if hidden:
        worst = max((float(v["criticality"]) for v in left if isinstance(v.get("criticality"), (int, float))), default=None)
        lines.append(f"Earlier versions not shown: {hidden}" + (f" (the most critical of them: {worst:.2f})"
                                                                 if worst is not None else ""))
    return lines


def format_duration(seconds: float) -> str:
    """A duration as ``2 h 05 min``, ``7 min 30 s`` or ``45 s``."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def explain_empty(digest: Digest, note: str, tokenizer: Tokenizer) -> Digest:
    """``digest`` with its closing line saying why nothing matched, when it is empty and the note fits.

    The plain "No stored record matched this task." does not tell an empty store from a query
    that found nothing; the caller that knows why passes ``note`` (e.g. nothing is ingested yet,
    and the command that ingests). The budget still holds: when the note does not fit, the digest
    is returned unchanged.

    Args:
        digest: a digest from :func:`pack_digest`.
        note: one sentence, shown in italics as the closing line.
        tokenizer: the tokenizer the digest was counted with.
    """
    plain = _footer(0, 0)
    if digest.entries or digest.omitted or not digest.text.endswith(plain):
        return digest
    text = digest.text[: -len(plain)] + _footer(0, 0, note)
    tokens = tokenizer.count(text)
    if tokens > digest.token_budget:
        return digest
    return replace(digest, text=text, tokens_used=tokens)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _entry_block(index: int, cand: Candidate, excerpt: str, now: datetime, nonce: str) -> str:
    """One entry: a heading line written by mission-memory, then the fenced quote.

    Everything that comes from the stored record (title, provenance reference and URI, excerpt)
    sits inside the fence, with marker-like sequences neutralised; outside it there is only text
    this module writes (index, score, kind, dates).
    """
    r = cand.record
    assert r is not None
    p = r.provenance
    mark = ""
    if cand.superseded:  # a probable link read from a later ADR's prose is shown as probable (docs/adr/0086)
        probable = r.kind is RecordKind.DECISION and DecisionAttributes.read(r.attributes).only_probably_superseded
        mark = " [PROBABLY SUPERSEDED]" if probable else " [SUPERSEDED]"
    ref = p.ref if p.kind.value != "commit" else p.ref[:12]
    at = f" @ {p.commit[:12]}" if p.commit and p.kind.value != "commit" else ""
    if cand.group_note:
        mark += f" · {cand.group_note}"
    elif cand.repeats and r.kind is RecordKind.DOMAIN_EVENT:
        mark += f" · {counted(cand.repeats, 'repeat')} of it among the candidates"
    heading = f"### {index}. {r.kind.value}{mark} · score {cand.score:.2f} · {p.time.date().isoformat()} ({_ago(p.time, now)})"
    quoted = neutralise_headings(neutralise_markers(
        f"{_one_line(r.title)}\nsource: {p.kind.value} `{_one_line(ref)}`{at} · {_one_line(p.uri)}\n"
        + (f"repeats: {_one_line(cand.group_members)}\n" if cand.group_members else "")
        + (f"\n{excerpt}" if excerpt else "")
    )).rstrip("\n")
    return f"{heading}\n{open_marker(index, nonce)}\n{quoted}\n{close_marker(index, nonce)}"


def _header(query: str, scope: str, budget: int, nonce: str, extra_lines: Sequence[str] = ()) -> str:
    printable = "".join(ch if ch.isprintable() else " " for ch in query)  # no control characters (BEL, ESC)
    shown = " ".join(neutralise_markers(printable).split())
    if len(shown) > 160:
        shown = shown[:157] + "…"
    return (
        f"# Mission memory digest\nTask: {shown}\nScope: {scope} · budget {budget} tokens\n"
        + "".join(f"{' '.join(neutralise_markers(line).split())}\n" for line in extra_lines)
        + fence_notice(nonce)
    )


def least_digest_budget(tokenizer: Tokenizer) -> int:
    """The fewest tokens any digest takes, counted by ``tokenizer``: the header of a one-character task
    in the narrowest scope with no extra line, and the shortest closing line (no candidate). A budget
    below it is refused whatever is asked; a longer task, a scope, a degraded-mode line or a longer
    closing line need more, which :func:`pack_digest` states exactly (``BudgetError``).

    The shells state the range of their budget option from it (``--budget … is outside 112..200000``).
    """
    header = _header("x", "all", 1, new_nonce())
    shortest_footer = min((_footer(0, 0), _footer(0, 1), _footer(1, 0)), key=tokenizer.count)
    return tokenizer.count(header) + tokenizer.count(_SEPARATOR) + tokenizer.count(shortest_footer)


def capped_note(critical: int, kinds: int, cap: int, client: str = "cli") -> str:
    """The footer's line when the entry cap, not relevance, left critical events out (docs/adr/0058).

    Args:
        critical: critical events (criticality ≥ :data:`~mission_memory.operations.escalation.CRITICAL_CRITICALITY`,
            not resolved) among the candidates that no entry
            shows or stands for.
        kinds: how many distinct kinds (groups of repeats) they make.
        cap: the entry cap (``max_digest_entries``).
        client: the asking shell: the note names its way to ask (the CLI's flags, else the tool's
            arguments: an agent has no command line).
    """
    if critical <= 0:
        return ""
    what = counted(critical, "critical event")
    at = CRITICAL_CRITICALITY
    how = (f"--min-criticality {at:g} or --timeline" if client == "cli"
           else f"filters.criticality {at:g} or timeline true")
    return (f"_{what} ({counted(kinds, 'distinct kind')}, criticality ≥ {at:g}) left out by the "
            f"{cap}-entry cap, not for relevance: ask with {how}._")


def _likely(expected: float) -> str:
    """How many of some candidates their calibrated scores expect to be relevant (their sum), in words."""
    if expected < 0.5:
        return "by their scores, probably none of them is relevant"
    n = round(expected)
    return f"by their scores, about {n} of them {'is' if n == 1 else 'are'} relevant"


def _footer(omitted: int, included: int, empty_note: str | None = None, cap_left: int = 0, cap: int = 0,
            expected: float | None = None) -> str:
    """The closing line. ``expected``: the sum of the omitted candidates' calibrated scores (the
    number of them expected to be relevant), or None when the scores are not probabilities; with it
    the omitted are counted as candidates and their likely relevant share is said, not all called
    relevant (a nonsense task had "19 more relevant entries omitted" at scores of 0.03)."""
    if included == 0:
        if omitted and expected is not None:
            what = counted(omitted, "candidate")
            return f"_{what} omitted: none fits the token budget; {_likely(expected)}._"
        if omitted:
            return f"_{counted(omitted, 'relevant entry', 'relevant entries')} omitted: none fits the token budget._"
        return f"_{empty_note}_" if empty_note else "_No stored record matched this task._"
    entries = counted(included, "entry", "entries")
    if omitted == 0 and cap_left > 0:
        more = counted(cap_left, "more candidate")
        return (f"_{entries}; the {cap}-entry cap, not the token budget, stopped this digest: {more} ranked "
                "below it were not considered (MISSION_MEMORY_MAX_DIGEST_ENTRIES)._")
    if omitted == 0:
        return f"_{entries}; nothing relevant omitted._"
    if expected is not None:
        more = counted(omitted, "more candidate")
        return f"_{entries}; {more} omitted to stay within the token budget; {_likely(expected)}._"
    more = counted(omitted, "more relevant entry", "more relevant entries")
    return f"_{entries}; {more} omitted to stay within the token budget._"


@dataclass(frozen=True)
class DigestSection:
    """One named section of a digest: which candidates it holds, in what order it appears.

    A candidate goes to the first section of the layout that holds it: one whose ``record_ids``
    name it, or whose ``includes`` predicate accepts it. Candidates no section holds are not shown
    and not counted as omitted. Entries keep relevance order within their section.

    Attributes:
        title: the section heading (text written by the caller, never stored text).
        includes: predicate on a candidate (its ``record`` is attached); ``None`` holds none.
        record_ids: records this section holds explicitly (ids of :class:`Record`).
        lead: text shown under the heading before the entries, even when no entry is (the crisis
            timeline's summary); the caller fences what it quotes with the digest's nonce. Left
            out when it does not fit the budget beside the header.
    """

    title: str
    includes: Callable[[Candidate], bool] | None = None
    record_ids: frozenset[str] = frozenset()
    lead: str = ""

    def holds(self, cand: Candidate) -> bool:
        """Whether ``cand`` belongs to this section."""
        assert cand.record is not None
        if cand.record.id in self.record_ids:
            return True
        return self.includes is not None and self.includes(cand)


def ranked_section(layers: Sequence[Layer]) -> DigestSection:
    """The default layout's one section: every candidate of the layers in scope, in score order.

    Scores are one calibrated scale across record kinds (:mod:`~mission_memory.retrieval.calibration`),
    so the digest is printed in that order instead of grouped by layer, where the best document came
    after every decision and commit however weak they were (issue 25, docs/adr/0072). Each entry's
    heading names its kind, which names its layer.
    """
    wanted = frozenset(layers)
    return DigestSection(RANKED_TITLE, includes=lambda cand: cand.record is not None and cand.record.layer in wanted)


def layer_sections(layers: Sequence[Layer]) -> list[DigestSection]:
    """One section per layer in scope, in the given order (docs/design.md §4's first layout; a caller
    that wants its digest grouped by layer passes it as ``sections``)."""

    def of(layer: Layer) -> Callable[[Candidate], bool]:
        return lambda cand: cand.record is not None and cand.record.layer is layer

    return [DigestSection(_SECTION_TITLES[layer], includes=of(layer)) for layer in layers]


def _render(header: str, sections: Sequence[tuple[str, list[str]]], footer: str) -> str:
    parts = [header]
    for title, blocks in sections:
        if blocks:
            parts.append(f"## {title}")
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
    layers: Sequence[Layer] = (),
    now: datetime | None = None,
    *,
    sections: Sequence[DigestSection] | None = None,
    nonce: str | None = None,
    empty_note: str | None = None,
    header_lines: Sequence[str] = (),
    footer_note: str = "",
    cap_left: int = 0,
    cap: int = 0,
) -> tuple[str, list[DigestEntry], int, int]:
    """Pack ranked candidates into a Markdown digest of at most ``token_budget`` tokens.

    Candidates are taken best first; one that does not fit whole is shortened to the room left
    (when at least 48 tokens of excerpt fit), else skipped, and smaller ones after it may still go
    in. The whole text is counted again at the end and entries are dropped from the bottom until it
    fits, so the bound holds for the exact text returned, envelope markers included.

    Every excerpt is fenced by ``<<<excerpt N nonce=…>>>`` / ``<<<end excerpt N nonce=…>>>`` with
    one random nonce per digest, named in the header; stored text inside has its marker-like
    sequences neutralised (:func:`neutralise_markers`, ADR 0021).

    Args:
        candidates: best first, each with ``record`` attached.
        token_budget: the bound, in tokens (margin included).
        max_entry_tokens: cap on one entry's excerpt.
        layers: the layers in scope; used when ``sections`` is not given.
        now: the moment ages are computed against (default: now).
        sections: the layout, an ordered list of named sections (default: :func:`ranked_section`).
        nonce: the envelope nonce (default: a fresh :func:`new_nonce`); fixed only in tests.
        empty_note: the closing line when nothing matched (default: "No stored record matched
            this task."); say why, e.g. that nothing is ingested yet.
        header_lines: lines added to the header after the scope line (written by mission-memory,
            e.g. the degraded-mode line of :mod:`mission_memory.retrieval.triage`; none by default).
        footer_note: a line after the closing line (written by mission-memory: :func:`capped_note`).
        cap_left, cap: how many ranked candidates the entry cap (``max_digest_entries``, ``cap``)
            left unconsidered; when more than 0 and every candidate given fits, the closing line says
            that the cap, not the budget, stopped the digest (docs/adr/0067).

    Returns:
        ``(text, entries, tokens_used, omitted)``.

    Raises:
        BudgetError: the budget cannot hold even the header and the closing line.
    """
    now = now or datetime.now(UTC)
    nonce = nonce or new_nonce()
    layout = list(sections) if sections is not None else [ranked_section(layers)]
    placed = [(cand, _section_of(cand, layout)) for cand in candidates]
    shown = [(cand, at) for cand, at in placed if at is not None]
    header = _header(query, scope, token_budget, nonce, header_lines)
    sep = tokenizer.count(_SEPARATOR)
    n = len(shown)
    note = f"\n{footer_note}" if footer_note else ""
    calibrated = all(cand.kind_score is not None for cand, _ in shown)
    worst = float(n) if calibrated else None  # the longest wording either way
    worst_footer = max(tokenizer.count(_footer(n, n, None, 0, 0, worst) + note),
                       tokenizer.count(_footer(n, 0, empty_note, 0, 0, worst) + note),
                       tokenizer.count(_footer(0, n, None, cap_left, cap) + note) if cap_left else 0)
    fixed = tokenizer.count(header) + sep + worst_footer
    if fixed > token_budget:
        raise BudgetError(token_budget, fixed, "the digest header")
    chosen: list[tuple[Candidate, int, str]] = []
    used = fixed
    section_cost = [tokenizer.count(f"## {section.title}") + sep for section in layout]
    opened: set[int] = set()
    leads = ["" for _ in layout]
    for i, section in enumerate(layout):  # leads come before entries, while they fit
        lead_cost = section_cost[i] + tokenizer.count(section.lead) + sep if section.lead else 0
        if lead_cost and used + lead_cost <= token_budget:
            leads[i] = section.lead
            used += lead_cost
            opened.add(i)
    # Blocks are priced with the widest index they can get, so renumbering never adds tokens.
    widest = max(n, 1)
    # Every entry holds at least its two envelope markers: once the room left is below them, no later
    # candidate can fit, so the rest are not priced one by one (they count as omitted all the same).
    smallest = tokenizer.count(f"{open_marker(widest, nonce)}\n{close_marker(widest, nonce)}") + sep
    for cand, at in shown:
        assert cand.record is not None
        if token_budget - used < smallest:
            break  # not even the shortest entry fits any more: the rest count as omitted unread
        extra = 0 if at in opened else section_cost[at]
        # The frame (heading, envelope, title and source lines) is priced first: a candidate whose
        # frame alone cannot fit costs one small count instead of the excerpt's (an entry is never
        # more than two tokens below its empty frame: the newlines around the excerpt may merge).
        frame = tokenizer.count(_entry_block(widest, cand, "", now, nonce)) + sep
        if used + extra + frame - 2 > token_budget:
            continue
        excerpt = fit_excerpt(cand.record, cand.section_excerpt, max_entry_tokens, tokenizer)
        cost = tokenizer.count(_entry_block(widest, cand, excerpt, now, nonce)) + sep
        if used + cost + extra > token_budget:
            # Shorten rather than drop: a relevant entry cut to what fits beats a weaker one whole.
            room = token_budget - used - extra - frame - 2
            if room < _MIN_EXCERPT_TOKENS:
                continue
            excerpt = fit_excerpt(cand.record, cand.section_excerpt, min(room, max_entry_tokens), tokenizer)
            cost = tokenizer.count(_entry_block(widest, cand, excerpt, now, nonce)) + sep
            if used + cost + extra > token_budget:
                continue
        used += cost + extra
        opened.add(at)
        chosen.append((cand, at, excerpt))

    while True:
        # Number entries in rendered (section) order, then verify the exact text.
        ordered = sorted(chosen, key=lambda item: (item[1], -item[0].score))
        blocks: list[list[str]] = [[] for _ in layout]
        entries: list[DigestEntry] = []
        for i, (cand, at, excerpt) in enumerate(ordered, start=1):
            assert cand.record is not None
            block = _entry_block(i, cand, excerpt, now, nonce)
            blocks[at].append(block)
            entries.append(DigestEntry(cand.record, cand.score, cand.superseded, excerpt, block, tokenizer))
        omitted = n - len(chosen)
        taken = {id(cand) for cand, _, _ in chosen}
        expected = sum(cand.score for cand, _ in shown if id(cand) not in taken) if calibrated else None
        footer = _footer(omitted, len(chosen), empty_note, cap_left, cap, expected) + note
        text = _render(header, [(s.title, [lead, *b] if lead else b) for s, lead, b in zip(layout, leads, blocks, strict=True)],
                       footer)
        tokens = tokenizer.count(text)
        if tokens <= token_budget or not (chosen or any(leads)):
            return text, entries, tokens, omitted
        if not chosen:
            leads = ["" for _ in layout]
            continue
        worst = min(range(len(chosen)), key=lambda j: chosen[j][0].score)
        chosen.pop(worst)


def _section_of(cand: Candidate, layout: Sequence[DigestSection]) -> int | None:
    for i, section in enumerate(layout):
        if section.holds(cand):
            return i
    return None
