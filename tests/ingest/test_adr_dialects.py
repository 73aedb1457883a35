"""The ADR dialects real teams write (issue 34 item 3): misspelt and other status words with their
successor links, the status in front matter, bold lines and tables, setext headings, and ``#`` lines
inside tables and code that are not headings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mission_memory.decisions import DecisionStatus
from mission_memory.ingest.adr import find_adr_paths, parse_adr
from mission_memory.ingest.documents import find_markdown_headings


def _nygard(status_block: str) -> str:
    return (
        "# 12. Use HAProxy in front of the router\n\n"
        f"## Status\n\n{status_block}\n\n"
        "## Context\n\nThe router needs TLS termination.\n\n"
        "## Decision\n\nWe will terminate TLS in HAProxy.\n"
    )


@pytest.mark.parametrize(
    ("status_block", "status", "superseded_by"),
    [
        ("Superceded by [ADR021](0021-use-the-aws-load-balancer.md)", DecisionStatus.SUPERSEDED, ("0021",)),
        ("Superceeded by [ADR021](0021-use-the-aws-load-balancer.md)", DecisionStatus.SUPERSEDED, ("0021",)),
        ("Superseeded by ADR 21", DecisionStatus.SUPERSEDED, ("0021",)),
        ("Superseded by [21. Use the AWS load balancer](0021-use-the-aws-load-balancer.md)",
         DecisionStatus.SUPERSEDED, ("0021",)),
        ("Replaced by [ADR-0021](0021-use-the-aws-load-balancer.md)", DecisionStatus.SUPERSEDED, ("0021",)),
        ("Obsoleted by [ADR-0021](0021-use-the-aws-load-balancer.md)", DecisionStatus.SUPERSEDED, ("0021",)),
        ("Deprecated in favour of ADR-0021", DecisionStatus.DEPRECATED, ("0021",)),
        ("Deprecated", DecisionStatus.DEPRECATED, ()),
        ("Superceded", DecisionStatus.SUPERSEDED, ()),
        ("Accepted", DecisionStatus.ACCEPTED, ()),
    ],
)
def test_status_words_and_their_misspellings_are_read_with_the_successor(
    status_block: str, status: DecisionStatus, superseded_by: tuple[str, ...]
) -> None:
    decision = parse_adr(_nygard(status_block), "docs/adr/0012-use-haproxy.md")
    assert decision.status is status, status_block
    assert decision.superseded_by == superseded_by, status_block


def test_amended_by_keeps_the_decision_in_force_and_links_the_amendment() -> None:
    decision = parse_adr(_nygard("Accepted\n\nAmended by [ADR-0021](0021-x.md)"), "docs/adr/0012-use-haproxy.md")
    assert decision.status is DecisionStatus.ACCEPTED
    assert decision.amended_by == ("0021",)
    assert decision.superseded_by == ()
    alone = parse_adr(_nygard("Amended by ADR-0021"), "docs/adr/0012-use-haproxy.md")
    assert alone.status is DecisionStatus.ACCEPTED and alone.amended_by == ("0021",)


@pytest.mark.parametrize(
    "text",
    [
        # YAML front matter
        "---\nstatus: superceded by ADR-0021\ndate: 2020-01-02\n---\n# Use HAProxy\n\n## Decision\n\nUse HAProxy.\n",
        # bold lines
        "# 12. Use HAProxy\n\n**Status:** Superceded by [ADR021](0021-x.md)\n\n**Date:** 2020-01-02\n\n"
        "## Decision\n\nUse HAProxy.\n",
        "# 12. Use HAProxy\n\n**Status**: Superceded by [ADR021](0021-x.md)\n\n## Decision\n\nUse HAProxy.\n",
        # a table
        "# 12. Use HAProxy\n\n| Field | Value |\n|---|---|\n| Status | Superceded by [ADR021](0021-x.md) |\n"
        "| Date | 2020-01-02 |\n\n## Decision\n\nUse HAProxy.\n",
        # setext headings
        "Use HAProxy\n===========\n\nStatus\n------\n\nSuperceded by ADR-21\n\nDecision\n--------\n\nUse HAProxy.\n",
    ],
    ids=["front-matter", "bold-line", "bold-key", "table", "setext"],
)
def test_the_status_is_read_wherever_it_is_written(text: str) -> None:
    decision = parse_adr(text, "docs/adr/0012-use-haproxy.md")
    assert decision.status is DecisionStatus.SUPERSEDED
    assert decision.superseded_by == ("0021",)
    assert decision.decision == "Use HAProxy."


TABLE_WITH_HASH_ROWS = """\
# 12. Use HAProxy

## Status

Accepted

## Decision

We will terminate TLS in HAProxy on these ports:

| Port | Use |
|------|-----|
# 443 | TLS from the internet
# 8443 | TLS from the office

## Consequences

HAProxy needs the certificates.
"""


def test_a_table_whose_rows_begin_with_a_hash_is_not_read_as_headings() -> None:
    decision = parse_adr(TABLE_WITH_HASH_ROWS, "docs/adr/0012-use-haproxy.md")
    assert decision.decision is not None
    assert decision.decision.startswith("We will terminate TLS in HAProxy")
    assert "# 8443 | TLS from the office" in decision.decision
    assert decision.consequences == "HAProxy needs the certificates."
    headings = [h.text for h in find_markdown_headings(TABLE_WITH_HASH_ROWS.split("\n"))]
    assert headings == ["12. Use HAProxy", "Status", "Decision", "Consequences"]


def test_a_hash_row_right_under_the_header_is_a_table_row_and_not_the_decision() -> None:
    text = (
        "# 3. Ports\n\n## Status\n\nAccepted\n\n## Context\n\n| n | Option |\n|---|---|\n"
        "# Decision | nginx\n# 2 | haproxy\n\n## Decision\n\nUse HAProxy.\n"
    )
    decision = parse_adr(text, "docs/adr/0003-ports.md")
    assert decision.decision == "Use HAProxy."
    assert decision.context is not None and "# Decision | nginx" in decision.context


def test_hash_lines_in_fenced_and_indented_code_are_not_headings() -> None:
    text = (
        "# 12. Use HAProxy\n\n## Status\n\nAccepted\n\n## Decision\n\nUse HAProxy.\n\n"
        "```\n# Decision\nnot a heading\n```\n\n    # Consequences\n    indented code\n\n"
        "## Consequences\n\nok\n"
    )
    decision = parse_adr(text, "docs/adr/0012-use-haproxy.md")
    assert decision.decision is not None and "# Decision\nnot a heading" in decision.decision
    assert decision.consequences == "ok"


def test_a_heading_with_a_pipe_after_a_paragraph_is_still_a_heading() -> None:
    lines = "Some text.\n\n# Options | overview\n\nbody".split("\n")
    assert [h.text for h in find_markdown_headings(lines)] == ["Options | overview"]


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("# Choix du modèle\n\n* statut : proposé\n* date : 2025-05-27\n\n## Décision\n\nMADR.\n", DecisionStatus.PROPOSED),
        ("# 3. Knex\n\n## Statut\n\n2020-03-25 accepted\n\n## Contexte\n\nSQL.\n\n## Décision\n\nKnex.\n",
         DecisionStatus.ACCEPTED),
        ("# 3. Knex\n\n## Statut\n\nRemplacé par [ADR-0009](0009-x.md)\n\n## Décision\n\nKnex.\n", DecisionStatus.SUPERSEDED),
        ("# 3. Replace packr2\n\n## Status\n\nInprogress\n\n## Decision\n\nUse go:embed.\n", DecisionStatus.PROPOSED),
    ],
    ids=["french-bullet", "french-heading", "french-replaced", "inprogress"],
)
def test_french_statuses_and_sections_are_read(text: str, status: DecisionStatus) -> None:
    decision = parse_adr(text, "docs/decisions/0003-knex.md")
    assert decision.status is status
    assert decision.decision is not None


def test_numbered_adr_files_at_the_repository_root_and_french_templates() -> None:
    paths = ["adr-001-use-adrs.md", "adr-002-configuration.md", "README.md", "src/main.clj",
             "docs/decisions/0000-modele-adr.md", "docs/decisions/0001-choix-du-modele-adr.md",
             "docs/architecture/decisions/0000-ladr-template.md", "docs/architecture/decisions/0001-record.md"]
    assert find_adr_paths(paths) == [
        "adr-001-use-adrs.md", "adr-002-configuration.md", "docs/architecture/decisions/0001-record.md",
        "docs/decisions/0001-choix-du-modele-adr.md",
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["| a | b |", "|---|---|", "# 1 | x", "# Title", "x | y", "", "```", "text",
                                 "Status", "======", "    # code"]), max_size=40))
def test_heading_finding_ends_on_any_mix_of_tables_hashes_and_fences(lines: list[str]) -> None:
    headings = find_markdown_headings(lines)
    assert all(0 <= h.line < h.end_line <= len(lines) for h in headings)
    parse_adr("\n".join(lines), "docs/adr/0001-x.md")
