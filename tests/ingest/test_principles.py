"""The principle registry: finding registry files, parsing principles, linking decisions to them."""

from __future__ import annotations

from mission_memory.decisions import Principle
from mission_memory.ingest.adr import parse_adr
from mission_memory.ingest.principles import find_principle_paths, link_principles, parse_principles

REGISTRY = """\
# Mission principles

## P1: Fail open in the hook

Statement: The prompt hook never blocks the operator.

Rationale: A lost prompt costs less than
a blocked operator.

Version: 1.1
Status: active

## P-2 — Honest budgets

The digest never exceeds its token budget.

Another paragraph that is not the statement.

### Rationale

Agents truncate silently when a digest is too long.

## 3. Canonical sources

* **Statement:** Git and ADR files are canonical; the store is derived.
* **Status:** draft
"""

UKRAINIAN_REGISTRY = """\
# Принципи місії

## P1: Офлайн насамперед

Твердження: Усе працює без мережі.

Обґрунтування: Оператори працюють у полі.

Версія: 2
Статус: чинний

## P2: Прозорість рішень

Кожне рішення має обґрунтування.
"""


def test_find_principle_paths_takes_principles_md_at_any_depth_and_principles_folders() -> None:
    paths = [
        "PRINCIPLES.md",
        "docs/Principles.md",
        "docs/principles/p1-fail-open.md",
        "principles/p2-budgets.md",
        "docs/principles/README.md",
        "docs/principles/diagram.png",
        "docs/principles-overview.md",
        "src/principles.py",
    ]
    assert find_principle_paths(paths) == [
        "PRINCIPLES.md",
        "docs/Principles.md",
        "docs/principles/p1-fail-open.md",
        "principles/p2-budgets.md",
    ]


def test_registry_gives_one_principle_per_heading_with_ids_statements_and_fields() -> None:
    principles = parse_principles(REGISTRY, "PRINCIPLES.md")
    assert [(p.id, p.title) for p in principles] == [
        ("P1", "Fail open in the hook"),
        ("P-2", "Honest budgets"),
        ("P3", "Canonical sources"),
    ]
    first, second, third = principles
    assert first.statement == "The prompt hook never blocks the operator."
    assert first.rationale == "A lost prompt costs less than a blocked operator."
    assert first.version == "1.1"
    assert first.status == "active"
    assert first.text.startswith("## P1: Fail open in the hook")
    assert "Version: 1.1" in first.text
    assert second.statement == "The digest never exceeds its token budget."
    assert second.rationale == "Agents truncate silently when a digest is too long."
    assert second.version is None and second.status is None
    assert third.statement == "Git and ADR files are canonical; the store is derived."
    assert third.status == "draft"


def test_headings_without_ids_get_slug_ids() -> None:
    text = (
        "# Principles\n\n## Offline first\n\nEverything works offline.\n\n## Small modules\n\nOne job each.\n"
    )
    principles = parse_principles(text, "docs/PRINCIPLES.md")
    assert [(p.id, p.statement) for p in principles] == [
        ("offline-first", "Everything works offline."),
        ("small-modules", "One job each."),
    ]


def test_a_file_in_a_principles_folder_is_one_principle_with_its_id_from_the_file_name() -> None:
    text = "# Canonical sources\n\nGit and ADR files are canonical.\n\n## Rationale\n\nThe store can be rebuilt.\n"
    principles = parse_principles(text, "docs/principles/p3-canonical-sources.md")
    assert principles == [
        Principle(
            id="P3",
            title="Canonical sources",
            statement="Git and ADR files are canonical.",
            rationale="The store can be rebuilt.",
            version=None,
            status=None,
            text=text.strip(),
        )
    ]


def test_a_folder_file_takes_its_id_from_front_matter_or_heading_before_the_file_name() -> None:
    front = parse_principles(
        "---\nid: PRIN-9\n---\n# Least privilege\n\nGrant the minimum.\n", "principles/x.md"
    )
    assert [(p.id, p.title) for p in front] == [("PRIN-9", "Least privilege")]
    heading = parse_principles("# P-4: Least privilege\n\nGrant the minimum.\n", "principles/least.md")
    assert [(p.id, p.title) for p in heading] == [("P-4", "Least privilege")]


def test_ukrainian_registry_fields_are_understood() -> None:
    principles = parse_principles(UKRAINIAN_REGISTRY, "PRINCIPLES.md")
    assert [(p.id, p.title) for p in principles] == [("P1", "Офлайн насамперед"), ("P2", "Прозорість рішень")]
    assert principles[0].statement == "Усе працює без мережі."
    assert principles[0].rationale == "Оператори працюють у полі."
    assert principles[0].version == "2"
    assert principles[0].status == "чинний"
    assert principles[1].statement == "Кожне рішення має обґрунтування."


def test_odd_registry_text_gives_no_principles_rather_than_an_error() -> None:
    assert parse_principles("", "PRINCIPLES.md") == []
    assert parse_principles("\x00\x01", "PRINCIPLES.md") == []
    assert parse_principles("just prose", "PRINCIPLES.md") == []


def test_decisions_link_to_principles_by_id_in_any_spelling_or_by_exact_title() -> None:
    principles = parse_principles(REGISTRY, "PRINCIPLES.md")
    by_id = parse_adr("# Use a queue\n\n## Decision\n\nPer P-1 and P3 we queue prompts.\n", "adr/0001-q.md")
    assert link_principles(by_id, principles) == ("P1", "P3")
    by_title = parse_adr("# Cap the digest\n\n## Decision\n\nThis follows HONEST BUDGETS.\n", "adr/0002-c.md")
    assert link_principles(by_title, principles) == ("P-2",)
    unrelated = parse_adr("# Pick a font\n\n## Decision\n\nUse P10 sizing.\n", "adr/0003-f.md")
    assert link_principles(unrelated, principles) == ()


def test_front_matter_principles_of_a_decision_link_too() -> None:
    principles = parse_principles(UKRAINIAN_REGISTRY, "PRINCIPLES.md")
    decision = parse_adr("---\nprinciples: [P2]\n---\n# Журнал рішень\n", "adr/0004-j.md")
    assert link_principles(decision, principles) == ("P2",)
