"""Architecture decision records: finding them among a repository's tracked files and parsing one ADR's
text into a `Decision` (docs/design.md §3 "Decision record"; issue 2 item 5, "ADRs -> decision records"). Parses
Nygard, MADR 2.x-4.x and Y-statements, plus the variants real repositories write (bold ``**Date:**`` lines,
bullet ``* Status:`` lines, no status, emoji statuses, "What's proposed" / "Reasoning" / "Options considered"
headings, prose "This decision has been superseded by ..." lines, Ukrainian section names). The parser
takes what can be taken and never raises: odd input gives a freeform `Decision` that still holds the text.
Pure: text in, frozen dataclasses out; git, files and records are the caller's.

Parts: `finding` (which files are ADRs), `vocabulary` (field keys and section names, English and
Ukrainian), `status` (status words), `options` (considered, chosen, rejected), `y_statements`,
`front_matter`, `sections`, `references`, `identifiers`, `dates`, `plain_text`, and `assembly`, which
puts one `Decision` together.
"""

from mission_memory.ingest.adr.assembly import parse_adr
from mission_memory.ingest.adr.finding import find_adr_paths, is_adr_path

__all__ = ["find_adr_paths", "is_adr_path", "parse_adr"]
