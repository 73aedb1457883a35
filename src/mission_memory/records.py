"""Records: the unit of memory, its layer, kind, provenance and content-derived id.

Domain types only, no I/O. A :class:`Record` is what every layer stores (docs/design.md §3): domain
chunks, decisions, commits, principles, practitioner patterns, push-refresh artifacts, and the
shift handover's notes and archived briefs (docs/design.md §6). Its id is
derived from its content and its source reference, so re-ingesting the same source is idempotent;
its ``source_key`` names the place it came from, so a changed source replaces its old record.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mission_memory.capture.redaction import redact_text, redact_value

__all__ = [
    "DECISION_HEAD_CHARS",
    "EVENT_TITLE_HEAD_CHARS",
    "AccessLevel",
    "Layer",
    "Provenance",
    "Record",
    "RecordKind",
    "SourceKind",
    "record_id_for",
    "source_key_for",
]

EVENT_TITLE_HEAD_CHARS = 120
"""A domain event's title is ``[type] sector: `` (``[type] sector @ instance: `` with an instance) and this many characters of its text's first line;
its passage gives those words once (:attr:`Record.embedding_text`)."""

DECISION_HEAD_CHARS = 300
"""Characters of a decision's text embedded as its third view (:attr:`Record.secondary_passages`,
docs/adr/0075): an ADR's number and title, its date or status, and the start of its context."""


class Layer(StrEnum):
    """The three memory layers of docs/design.md §3."""

    DOMAIN = "domain"
    WORKFLOW = "workflow"
    PRACTITIONER = "practitioner"


class RecordKind(StrEnum):
    """What a record is; each kind lives in one layer (see :data:`LAYER_OF_KIND`)."""

    DOC_CHUNK = "doc_chunk"
    DOMAIN_EVENT = "domain_event"
    DECISION = "decision"
    COMMIT = "commit"
    PRINCIPLE = "principle"
    ISSUE = "issue"
    COMMENT = "comment"
    REFRESH_ARTIFACT = "refresh_artifact"
    CORRECTION_PATTERN = "correction_pattern"
    HANDOVER_NOTE = "handover_note"
    HANDOVER_BRIEF = "handover_brief"


LAYER_OF_KIND: dict[RecordKind, Layer] = {
    RecordKind.DOC_CHUNK: Layer.DOMAIN,
    RecordKind.DOMAIN_EVENT: Layer.DOMAIN,
    RecordKind.DECISION: Layer.WORKFLOW,
    RecordKind.COMMIT: Layer.WORKFLOW,
    RecordKind.PRINCIPLE: Layer.WORKFLOW,
    RecordKind.ISSUE: Layer.WORKFLOW,
    RecordKind.COMMENT: Layer.WORKFLOW,
    RecordKind.REFRESH_ARTIFACT: Layer.WORKFLOW,
    RecordKind.CORRECTION_PATTERN: Layer.PRACTITIONER,
    RecordKind.HANDOVER_NOTE: Layer.WORKFLOW,
    RecordKind.HANDOVER_BRIEF: Layer.WORKFLOW,
}


class SourceKind(StrEnum):
    """Where a record's content came from (docs/design.md §3, provenance)."""

    COMMIT = "commit"
    ADR = "adr"
    ISSUE = "issue"
    COMMENT = "comment"
    DOC = "doc"
    EVENT = "event"
    DECISION = "decision"
    PRINCIPLE = "principle"
    PROMPT = "prompt"
    PUSH_REFRESH = "push-refresh"
    CORRECTION = "correction"
    HANDOVER = "handover"


class AccessLevel(StrEnum):
    """Who may be shown a record; ordered from least to most restricted (docs/design.md §10)."""

    PUBLIC = "public"
    INTERNAL = "internal"
    RESTRICTED = "restricted"
    SECRET = "secret"


class Provenance(BaseModel):
    """Where a record came from, precisely enough to open the source again.

    Attributes:
        kind: the source kind.
        ref: a reference that resolves inside the mission: a commit sha, a repository-relative path
            with an optional ``#anchor``, a tracker key.
        uri: an absolute URI for the same source (``file://…``, a web URL of the commit or issue).
        mission: the mission the record belongs to.
        time: when the source was made (commit date, ADR date, document's last change), UTC.
        commit: for files, the commit that last changed them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    kind: SourceKind
    ref: str
    uri: str
    mission: str
    time: datetime
    commit: str | None = None


class Record(BaseModel):
    """One unit of memory in one layer.

    Attributes:
        id: content-derived id (see :func:`record_id_for`), 32 hex characters.
        source_key: names the source slot (``mission:kind:ref``); a changed source replaces the
            record holding the same key.
        layer, kind: see :class:`Layer`, :class:`RecordKind`.
        title: one line.
        text: the full text that is embedded, indexed for BM25 and excerpted in digests.
        provenance: see :class:`Provenance`.
        criticality: in [0, 1]; triage weight in degraded mode (docs/design.md §7).
        access_level: see :class:`AccessLevel`.
        component: the part of the mission the record concerns (a top-level folder, a service), or None.
        operator: the human the record is about, where relevant (practitioner layer).
        attributes: kind-specific structured fields (decision status, supersedes, files, tracker keys…),
            JSON-serialisable.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str
    source_key: str
    layer: Layer
    kind: RecordKind
    title: str
    text: str
    provenance: Provenance
    criticality: float = Field(default=0.5, ge=0.0, le=1.0)
    access_level: AccessLevel = AccessLevel.INTERNAL
    component: str | None = None
    operator: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)

    @property
    def embedding_text(self) -> str:
        """The text an embedder sees: the title and the text, without a commit's file list and diffstat.

        For a decision it is the title, the decision and its context (measured on the shared
        corpus: the target ADR ranked in the top 3 decisions for 20 of 20 English and Ukrainian
        topic tasks, against 18 of 20 with the head of the ADR text). It is one of a decision's
        three views (:attr:`secondary_passages`, docs/adr/0075).
        """
        text = self.text
        if self._has_decision_sections:
            # Title (twice, to weigh it), what was decided, then why: the head of an ADR is often
            # a long context section that says little about the decision itself.
            parts = [self.title, self.attributes.get("decision") or "", self.attributes.get("context") or ""]
            return "\n".join([self.title, *parts]).strip()
        if self.kind is RecordKind.DOMAIN_EVENT:
            # The title repeats the head of the text: read once, an event line costs about half the
            # tokens, with the same words (issue 37, docs/adr/0093).
            lines = text.splitlines()
            head = lines[0][:EVENT_TITLE_HEAD_CHARS] if lines else ""
            if head and self.title.endswith(head):
                return self.title[: len(self.title) - len(head)] + text
        if self.kind is RecordKind.COMMIT:
            text = "\n".join(
                line for line in text.splitlines() if not line.startswith(("Files: ", "Diffstat: "))
            ).strip()
        return f"{self.title}\n{text}"

    @property
    def _has_decision_sections(self) -> bool:
        """A decision with a decision or a context section (what the curated passage and the three views need)."""
        return self.kind is RecordKind.DECISION and bool(self.attributes.get("decision") or self.attributes.get("context"))

    @property
    def secondary_passages(self) -> tuple[str, ...]:
        """Further texts embedded with :attr:`embedding_text` into the record's one vector (docs/adr/0075).

        A decision's vector is the normalised sum of three views' vectors: the curated text of
        :attr:`embedding_text` (title, decision, context), the record as written (title and text,
        which the embedder cuts to its passage length) and the head of the text
        (:data:`DECISION_HEAD_CHARS` characters: number and title, date, the start of the context).
        Measured on the four ADR evaluation sets (93 questions, English and Ukrainian): the ADR
        first among decisions in 85 questions against 81 with the curated view alone, and the
        English and Ukrainian versions' first three decisions the same in 8 of 31 pairs against 5.
        Every other kind, and a decision without a decision or context section, has none (an empty
        tuple): its vector is that of :attr:`embedding_text` alone.
        """
        if self._has_decision_sections:
            return (f"{self.title}\n{self.text}", self.text[:DECISION_HEAD_CHARS])
        return ()

    @classmethod
    def build(
        cls,
        *,
        kind: RecordKind,
        title: str,
        text: str,
        provenance: Provenance,
        criticality: float = 0.5,
        access_level: AccessLevel = AccessLevel.INTERNAL,
        component: str | None = None,
        operator: str | None = None,
        attributes: dict[str, Any] | None = None,
        slot: str | None = None,
    ) -> Record:
        """Make a record whose id and source key are derived from its content and provenance.

        ``slot`` distinguishes several records sharing one reference (the parts of a long section);
        it defaults to the provenance reference. ``title``, ``text`` and the strings of
        ``attributes`` go through the redaction pass (:mod:`mission_memory.capture.redaction`,
        docs/adr/0053) before the id is computed, so no secret is stored and a re-ingest of the same
        source derives the same id.
        """
        source_key = source_key_for(provenance.mission, kind, slot or provenance.ref)
        title = redact_text(title)
        text = redact_text(text)
        attrs = redact_value(attributes or {})
        return cls(
            id=record_id_for(source_key, title, text, attrs, criticality, component),
            source_key=source_key,
            layer=LAYER_OF_KIND[kind],
            kind=kind,
            title=title,
            text=text,
            provenance=provenance,
            criticality=criticality,
            access_level=access_level,
            component=component,
            operator=operator,
            attributes=attrs,
        )

    def redacted(self) -> Record:
        """This record with its title, text and attributes through the redaction pass.

        Returns ``self`` when nothing changed (every record made by :meth:`build`); otherwise a copy
        whose content-derived id is computed again from the redacted content (a record imported
        from an export of an older version, a record whose attributes were rewritten).
        """
        title, text, attributes = redact_text(self.title), redact_text(self.text), redact_value(self.attributes)
        if title is self.title and text is self.text and attributes is self.attributes:
            return self
        return self.model_copy(update={
            "title": title,
            "text": text,
            "attributes": attributes,
            "id": record_id_for(self.source_key, title, text, attributes, self.criticality, self.component),
        })


def redacted_state_value(value: str) -> str:
    """A state value (``set_state``: usually JSON) with every secret the redaction rules find replaced.

    The stores' last guard for state, as :meth:`Record.redacted` is for records (docs/adr/0053): open
    alerts keep the alert's text and runbook URL, an acknowledgement keeps the operator's read-back,
    and neither passed through a record. A JSON value is redacted string by string
    (:func:`~mission_memory.capture.redaction.redact_value`: record ids and git shas stay whole) and
    written back sorted; any other value as text. Returns ``value`` itself when nothing was found.
    """
    import json

    try:
        parsed = json.loads(value)
    except ValueError:
        return redact_text(value)
    cleaned = redact_value(parsed)
    return value if cleaned is parsed else json.dumps(cleaned, sort_keys=True, ensure_ascii=False)


def source_key_for(mission: str, kind: RecordKind, ref: str) -> str:
    """The source key of a record: ``mission:kind:ref`` (``uploader:decision:docs/adr/0002-….md``,
    ``ops:domain_event:event:<id>``), the slot a changed source replaces (docs/adr/0006).

    The one place the format is written: :meth:`Record.new` derives every stored key with it, and
    a lookup by source key (``MemoryStore.ids_by_source_keys``) builds its keys with it too.
    """
    return f"{mission}:{kind.value}:{ref}"


def record_id_for(
    source_key: str,
    title: str,
    text: str,
    attributes: dict[str, Any] | None = None,
    criticality: float | None = None,
    component: str | None = None,
) -> str:
    """Stable content-derived id: the first 32 hex digits of SHA-256 over key, title, text and fields.

    The same source with the same content always gets the same id, so re-ingesting adds nothing.
    """
    import json

    digest = hashlib.sha256()
    for part in (
        source_key,
        title,
        text,
        json.dumps(attributes or {}, sort_keys=True, ensure_ascii=False, default=str),
        repr(criticality),
        component or "",
    ):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x1f")
    return digest.hexdigest()[:32]
