"""Finding and parsing ADRs: Nygard, MADR 2/3/4, Y-statements, real-world variants, Ukrainian, odd input,
and every ADR of the shared tdr-docs corpus."""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mission_memory.decisions import AdrFormat, Decision, DecisionStatus, RejectedAlternative
from mission_memory.ingest.adr import find_adr_paths, is_adr_path, parse_adr


@pytest.fixture(scope="session")
def tdr_repo(tmp_path_factory: pytest.TempPathFactory, corpora: Path) -> Path:
    """A fresh clone of the corpus' tdr-docs bundle (39 ADRs, ~100 Markdown files)."""
    target = tmp_path_factory.mktemp("corpus") / "tdr-docs"
    subprocess.run(["git", "clone", "-q", str(corpora / "tdr-docs.bundle"), str(target)], check=True,
                   capture_output=True)
    return target


NYGARD = """\
# 5. Use PostgreSQL for mission state

Date: 2024-03-01

## Status

Accepted

Supersedes [2. Use SQLite everywhere](0002-use-sqlite-everywhere.md)

## Context

Several operators share one mission store and need concurrent writes.

## Decision

We will use PostgreSQL for the shared mission state.

## Consequences

Operators need a database server; see ADR-0004 for backups.
"""

MADR_2 = """\
# Use Plane as the tracker

* Status: accepted
* Deciders: Olena Kovalenko, Taras Shevchuk
* Date: 2021-06-12

Technical Story: MM-42

## Context and Problem Statement

Long-term tasks need a tracker the refresh process can query.

## Decision Drivers

* self-hosting
* a REST API

## Considered Options

* Plane
* Jira
* GitHub Issues

## Decision Outcome

Chosen option: "Plane", because it is self-hosted and has a documented REST API.

### Positive Consequences

* Tasks stay on our servers.

### Negative Consequences

* One more service to run.

## Pros and Cons of the Options

### Plane

* Good, because it is self-hosted
* Bad, because the project is young

### Jira

* Good, because everyone knows it
* Bad, because of the licence cost
* Bad, because new customers get cloud only

### GitHub Issues

* Good, because we already use it
* Bad, because it has no cycle planning

## Links

* Refines [ADR-0003](0003-track-work.md)
"""

MADR_3 = """\
---
# These are optional elements. Feel free to remove any of them.
status: superseded by [ADR-0012](0012-use-qdrant.md)
date: 2023-01-15
deciders: Olena, Taras
consulted: the platform team
informed: all operators
---
# Keep vectors in SQLite

## Context and Problem Statement

Where should the vectors live? Missions are small and must work offline.

<!-- This is an optional element. Feel free to remove. -->
## Decision Drivers

* zero services
* offline use

## Considered Options

* SQLite blobs with NumPy search
* Qdrant
* sqlite-vec

## Decision Outcome

Chosen option: "SQLite blobs with NumPy search", because
it needs no extension and no server.

<!-- This is an optional element. Feel free to remove. -->
### Consequences

* Good, because one file holds the whole store
* Bad, because search is linear in the number of vectors

### Confirmation

A benchmark in CI checks pull latency.

## Pros and Cons of the Options

### SQLite blobs with NumPy search

* Good, because it works everywhere
* Neutral, because it needs a cache

### Qdrant

* Good, because it scales
* Bad, because it is a server to run

### sqlite-vec

* Bad, because pyenv builds cannot load SQLite extensions

## More Information

Revisit when a mission passes one million records.
"""

MADR_4 = """\
---
status: accepted
date: 2024-11-02
decision-makers:
  - Olena
  - Taras
consulted: Iryna
informed: operators
---

# Count tokens with tiktoken cl100k_base

## Context and Problem Statement

The digest must never exceed its token budget, counted with a real tokenizer.

## Considered Options

* tiktoken cl100k_base
* Characters divided by four
* The embedder's tokenizer

## Decision Outcome

Chosen option: "tiktoken cl100k_base", because it is close to the agent's own tokenizer and works offline.

### Consequences

* Good, because budgets are honest
* Bad, because the agent's tokenizer may still differ, so a safety margin stays

### Confirmation

Property tests pack digests for many budgets.

## Pros and Cons of the Options

### tiktoken cl100k_base

* Good, because it is exact for OpenAI-style models

### Characters divided by four

* Good, because it is free
* Bad, because Ukrainian text breaks the ratio

### The embedder's tokenizer

* Bad, because it is a different vocabulary

## More Information

Principle P-2 (honest budgets) applies.
"""

Y_STATEMENT = """\
# Prompt capture storage

In the context of the prompt capture hook, facing the need to never block or lose an operator's prompt,
we decided for an orphan commit per prompt in a bare git repository and neglected a SQLite journal and a
JSONL file, to achieve lossless capture under concurrent sessions, accepting that the repository grows by
one object per prompt.
"""

UKRAINIAN = """\
# 3. Використовувати SQLite як вбудоване сховище

Дата: 2025-02-10

## Статус

Прийнято

## Контекст

Агентові потрібне сховище без сервісів, яке працює офлайн на ноутбуці оператора.

## Розглянуті варіанти

* SQLite
* PostgreSQL
* Qdrant

## Рішення

Використовуємо SQLite у режимі WAL.

## Наслідки

Один файл даних; масштабування на сервер — окремим рішенням (ADR-0007).
"""


# ------------------------------------------------------------------------------------------ finding


def test_find_adr_paths_takes_markdown_under_known_adr_folders_at_any_depth() -> None:
    paths = [
        "doc/adr/0001-record.md",
        "docs/adr/0002-x.md",
        "docs/decisions/use-plane.md",
        "architecture-decision-records/0001-terraform.md",
        "architecture-decision-record/foo.md",
        "services/api/ADR/0003-y.markdown",
        "decisions/z.md",
        "docs/adr/images/diagram.png",
        "docs/guide.md",
    ]
    assert find_adr_paths(paths) == sorted(paths[:7])


def test_find_adr_paths_never_takes_readme_index_or_template_files() -> None:
    paths = [
        "docs/adr/README.md",
        "docs/adr/index.md",
        "docs/adr/template.md",
        "docs/adr/adr-template.md",
        "docs/adr/0000-template.md",
        "docs/adr/adr-template-minimal.md",
        "docs/adr/0012-use-templates-for-emails.md",
    ]
    assert find_adr_paths(paths) == ["docs/adr/0012-use-templates-for-emails.md"]


def test_a_folder_of_two_numbered_files_is_an_adr_folder_but_one_numbered_file_is_not() -> None:
    paths = ["arch/001-first.md", "arch/002-second.md", "arch/notes.md", "misc/001-only.md"]
    assert find_adr_paths(paths) == ["arch/001-first.md", "arch/002-second.md"]
    assert is_adr_path("arch/001-first.md", paths)
    assert not is_adr_path("misc/001-only.md", paths)
    assert is_adr_path("docs/adr/whatever.md")


# -------------------------------------------------------------------------------------------- formats


def test_nygard_adr_gives_title_number_status_date_sections_and_supersedes() -> None:
    decision = parse_adr(NYGARD, "doc/adr/0005-use-postgresql.md")
    assert decision.format is AdrFormat.NYGARD
    assert decision.number == 5
    assert decision.title == "Use PostgreSQL for mission state"
    assert decision.status is DecisionStatus.ACCEPTED
    assert decision.status_text == "Accepted"
    assert decision.decided_at == datetime.date(2024, 3, 1)
    assert decision.context == "Several operators share one mission store and need concurrent writes."
    assert decision.decision == "We will use PostgreSQL for the shared mission state."
    assert decision.consequences is not None and "database server" in decision.consequences
    assert decision.supersedes == ("0002",)
    assert decision.related == ("0004",)
    assert decision.text == NYGARD


def test_madr_2_gives_options_choice_and_rejected_alternatives_with_bad_because_reasons() -> None:
    decision = parse_adr(MADR_2, "docs/decisions/0007-use-plane.md")
    assert decision.format is AdrFormat.MADR
    assert decision.number == 7
    assert decision.status is DecisionStatus.ACCEPTED
    assert decision.decided_at == datetime.date(2021, 6, 12)
    assert decision.deciders == ("Olena Kovalenko", "Taras Shevchuk")
    assert decision.considered_options == ("Plane", "Jira", "GitHub Issues")
    assert decision.chosen_option == "Plane"
    assert decision.rationale == "it is self-hosted and has a documented REST API."
    assert decision.rejected_alternatives == (
        RejectedAlternative("Jira", "of the licence cost; new customers get cloud only"),
        RejectedAlternative("GitHub Issues", "it has no cycle planning"),
    )
    assert decision.consequences is not None
    assert "Tasks stay on our servers" in decision.consequences
    assert "One more service to run" in decision.consequences
    assert decision.context == "Long-term tasks need a tracker the refresh process can query."
    assert decision.task_ids == ("MM-42",)
    assert decision.related == ("0003",)


def test_madr_3_front_matter_status_superseded_by_link_and_nested_consequences() -> None:
    decision = parse_adr(MADR_3, "docs/decisions/0009-keep-vectors-in-sqlite.md")
    assert decision.format is AdrFormat.MADR
    assert decision.title == "Keep vectors in SQLite"
    assert decision.status is DecisionStatus.SUPERSEDED
    assert decision.status_text == "superseded by ADR-0012"
    assert decision.superseded_by == ("0012",)
    assert decision.related == ()
    assert decision.decided_at == datetime.date(2023, 1, 15)
    assert decision.deciders == ("Olena", "Taras")
    assert decision.chosen_option == "SQLite blobs with NumPy search"
    assert decision.rationale == "it needs no extension and no server."
    assert decision.decision is not None and decision.decision.startswith("Chosen option:")
    assert "Good, because" not in decision.decision  # the nested Consequences are not the decision
    assert decision.consequences is not None and "linear in the number of vectors" in decision.consequences
    assert decision.rejected_alternatives == (
        RejectedAlternative("Qdrant", "it is a server to run"),
        RejectedAlternative("sqlite-vec", "pyenv builds cannot load SQLite extensions"),
    )


def test_madr_4_decision_makers_list_and_principle_reference() -> None:
    decision = parse_adr(MADR_4, "docs/adr/0010-count-tokens.md")
    assert decision.format is AdrFormat.MADR
    assert decision.status is DecisionStatus.ACCEPTED
    assert decision.decided_at == datetime.date(2024, 11, 2)
    assert decision.deciders == ("Olena", "Taras")
    assert decision.considered_options == (
        "tiktoken cl100k_base",
        "Characters divided by four",
        "The embedder's tokenizer",
    )
    assert decision.chosen_option == "tiktoken cl100k_base"
    assert [alternative.option for alternative in decision.rejected_alternatives] == [
        "Characters divided by four",
        "The embedder's tokenizer",
    ]
    assert decision.rejected_alternatives[0].reason == "Ukrainian text breaks the ratio"
    assert decision.principle_ids == ("P-2",)


def test_y_statement_gives_context_choice_neglected_options_goal_and_accepted_downside() -> None:
    decision = parse_adr(Y_STATEMENT, "docs/adr/0011-prompt-capture-storage.md")
    assert decision.format is AdrFormat.Y_STATEMENT
    assert decision.chosen_option == "an orphan commit per prompt in a bare git repository"
    assert decision.decision == decision.chosen_option
    assert decision.context is not None and decision.context.startswith("the prompt capture hook, facing")
    assert decision.rejected_alternatives == (
        RejectedAlternative("a SQLite journal", None),
        RejectedAlternative("a JSONL file", None),
    )
    assert decision.rationale == "lossless capture under concurrent sessions"
    assert decision.consequences == "the repository grows by one object per prompt"
    assert decision.considered_options == (
        "an orphan commit per prompt in a bare git repository",
        "a SQLite journal",
        "a JSONL file",
    )


def test_ukrainian_adr_sections_status_and_options_are_understood() -> None:
    decision = parse_adr(UKRAINIAN, "docs/adr/0003-sqlite.md")
    assert decision.format is AdrFormat.NYGARD
    assert decision.number == 3
    assert decision.title == "Використовувати SQLite як вбудоване сховище"
    assert decision.status is DecisionStatus.ACCEPTED
    assert decision.status_text == "Прийнято"
    assert decision.decided_at == datetime.date(2025, 2, 10)
    assert decision.context is not None and decision.context.startswith("Агентові потрібне сховище")
    assert decision.decision == "Використовуємо SQLite у режимі WAL."
    assert decision.consequences is not None and decision.consequences.startswith("Один файл даних")
    assert decision.considered_options == ("SQLite", "PostgreSQL", "Qdrant")
    assert decision.chosen_option == "SQLite"
    assert [a.option for a in decision.rejected_alternatives] == ["PostgreSQL", "Qdrant"]
    assert decision.related == ("0007",)


def test_ukrainian_madr_chosen_option_and_y_statement_are_understood() -> None:
    madr = parse_adr(
        "# Трекер\n\n## Розглянуті варіанти\n\n* Plane\n* Jira\n\n## Результат рішення\n\n"
        "Обраний варіант: «Plane», тому що він self-hosted.\n",
        "docs/adr/0004-tracker.md",
    )
    assert madr.chosen_option == "Plane"
    assert madr.rationale == "він self-hosted."
    assert madr.rejected_alternatives == (RejectedAlternative("Jira", None),)
    y = parse_adr(
        "У контексті передачі змін оператора, зіткнувшись із втратою контексту, ми вирішили вести "
        "журнал рішень, щоб досягти тяглості місії, погоджуючись на додаткову роботу.",
        "docs/adr/0008-journal.md",
    )
    assert y.format is AdrFormat.Y_STATEMENT
    assert y.chosen_option == "вести журнал рішень"
    assert y.consequences == "додаткову роботу"


@pytest.mark.parametrize("number", ["0010", "0012", "0020", "0077"])
def test_a_front_matter_supersedes_number_made_of_octal_digits_names_that_adr(number: str) -> None:
    # YAML 1.1 reads an unquoted 0020 as the octal number 16: the ADR superseded would be the wrong one.
    decision = parse_adr(
        f"---\nstatus: accepted\nsupersedes: {number}\nversion: 1.10\n---\n\n# Retry scans\n\n"
        "## Decision Outcome\n\nChosen option: \"retry\", because it is cheap.\n",
        "docs/decisions/0030-retry-scans.md",
    )
    assert decision.supersedes == (number,)


# -------------------------------------------------------------------------------- real-world variants


@pytest.mark.parametrize(
    "date_line",
    [
        "| Date | 2020-02-20 |",
        "Дата: 20 лютого 2020",
        "**Date:** 2020-02-20",
        "**Date**: 2020-02-20",
        "Date: 2020-02-20",
        "* Date: 2020-02-20",
        "- Date: 20.02.2020",
    ],
)
def test_date_lines_in_every_common_spelling_give_decided_at(date_line: str) -> None:
    decision = parse_adr(
        f"# 1. Title\n\n{date_line}\n\n## Context\n\nc\n\n## Decision\n\nd\n", "adr/0001-t.md"
    )
    assert decision.decided_at == datetime.date(2020, 2, 20)


def test_status_in_a_heading_or_a_table_row_is_read() -> None:
    heading = parse_adr("# T\n\n## Status: Accepted\n\n## Decision\n\nd\n", "adr/0001-t.md")
    assert heading.status is DecisionStatus.ACCEPTED
    table = parse_adr("# T\n\n| Status | Rejected |\n|---|---|\n\n## Decision\n\nd\n", "adr/0001-t.md")
    assert table.status is DecisionStatus.REJECTED


def test_adr_without_any_status_has_status_none() -> None:
    decision = parse_adr("# 2. Title\n\n## Context\n\nc\n\n## Decision\n\nd\n", "adr/0002-t.md")
    assert decision.status is None
    assert decision.status_text is None
    assert decision.format is AdrFormat.NYGARD


@pytest.mark.parametrize(
    ("written", "status", "text"),
    [
        ("✅ Accepted", DecisionStatus.ACCEPTED, "Accepted"),
        ("🚧 Proposed", DecisionStatus.PROPOSED, "Proposed"),
        ("❌ Rejected", DecisionStatus.REJECTED, "Rejected"),
        ("⚠️ Deprecated", DecisionStatus.DEPRECATED, "Deprecated"),
        ("Draft", DecisionStatus.PROPOSED, "Draft"),
    ],
)
def test_emoji_statuses_are_mapped_and_stored_without_the_emoji(
    written: str, status: DecisionStatus, text: str
) -> None:
    decision = parse_adr(f"# Title\n\n## Status\n\n{written}\n\n## Decision\n\nd\n", "adr/0003-t.md")
    assert decision.status is status
    assert decision.status_text == text


def test_bullet_status_superseded_by_a_link_gives_superseded_and_the_number() -> None:
    decision = parse_adr(
        "# Title\n\n* Status: Superseded by [ADR-0012](0012-x.md)\n\n## Decision\n\nd\n", "adr/0004-t.md"
    )
    assert decision.status is DecisionStatus.SUPERSEDED
    assert decision.superseded_by == ("0012",)
    assert decision.related == ()


@pytest.mark.parametrize(
    "line",
    [
        "Status: superseded by ADR-0012",
        "Status: superseded by [ADR 12]",
        "**Status:** Superseded by [the queue decision](../adr/0012-queues.md)",
    ],
)
def test_superseded_by_references_are_normalised_to_four_digit_numbers(line: str) -> None:
    text = f"# Title\n\n{line}\n\n## Decision\n\nd\n\n[ADR 12]: 0012-queues.md\n"
    assert parse_adr(text, "adr/0004-t.md").superseded_by == ("0012",)


def test_superseded_by_a_reference_without_a_number_keeps_the_target_as_written() -> None:
    decision = parse_adr("# T\n\nStatus: superseded by [new design](../design/storage.md)\n", "adr/0001-t.md")
    assert decision.superseded_by == ("../design/storage.md",)


def test_prose_supersede_lines_in_the_preamble_are_understood() -> None:
    decision = parse_adr(
        "# 9. Title\n\n**Date:** 2020-07-21\n\nThis decision supersedes decision: "
        "[0008 Keycloak](0008-keycloak.md)\n\n## Decision\n\nd\n",
        "architecture-decision-records/0009-x.md",
    )
    assert decision.supersedes == ("0008",)
    assert decision.status is None


@pytest.mark.parametrize(
    ("heading", "field"),
    [
        ("What's proposed", "decision"),
        ("Outcome", "decision"),
        ("Reasoning", "rationale"),
        ("Rationale", "rationale"),
    ],
)
def test_variant_headings_fill_the_matching_field(heading: str, field: str) -> None:
    decision = parse_adr(f"# Title\n\n## Context\n\nc\n\n## {heading}\n\nThe body.\n", "adr/0005-t.md")
    assert getattr(decision, field) == "The body."


def test_decision_and_reasoning_heading_fills_decision_and_rationale() -> None:
    decision = parse_adr("# Title\n\n## Decision and reasoning\n\nUse X because Y.\n", "adr/0005-t.md")
    assert decision.decision == "Use X because Y."
    assert decision.rationale == "Use X because Y."


@pytest.mark.parametrize("heading", ["Options", "Options considered"])
def test_options_headings_with_option_subsections_give_options_and_reasons(heading: str) -> None:
    text = (
        f"# Title\n\n## {heading}\n\n### Option 1: Siegfried\n\n#### Advantages\n\n* fast\n\n"
        "#### Disadvantages\n\n* misreports multiple patterns\n\n### Option 2: Droid\n\n#### Advantages\n\n"
        "* correct\n\n## Decision\n\nDecided on Option 2.\n"
    )
    decision = parse_adr(text, "adr/0010-t.md")
    assert decision.considered_options == ("Siegfried", "Droid")
    assert decision.chosen_option == "Droid"
    assert decision.rejected_alternatives == (
        RejectedAlternative("Siegfried", "misreports multiple patterns"),
    )


@pytest.mark.parametrize(
    ("heading", "title", "number"),
    [
        ("# 5. Use Keycloak", "Use Keycloak", 5),
        ("# ADR 5: Use Keycloak", "Use Keycloak", 5),
        ("# ADR-0005 - Use Keycloak", "Use Keycloak", 5),
        ("# ADR-005: Use Keycloak", "Use Keycloak", 5),
        ("#25. Automatic code merging", "Automatic code merging", 25),
        ("## 33. User permissions", "User permissions", 33),
        ("# Use Keycloak", "Use Keycloak", None),
    ],
)
def test_title_numbering_is_stripped_and_gives_the_number_when_the_file_name_has_none(
    heading: str, title: str, number: int | None
) -> None:
    decision = parse_adr(f"{heading}\n\n## Context\n\nc\n", "docs/adr/use-keycloak.md")
    assert decision.title == title
    assert decision.number == number


def test_file_name_prefix_wins_over_a_wrong_number_in_the_title() -> None:
    assert parse_adr("# 20. Deploying a page\n", "adr/0021-page.md").number == 21


def test_front_matter_title_is_used_when_there_is_no_heading() -> None:
    decision = parse_adr(
        "---\ntitle: Use Qdrant at scale\nstatus: proposed\n---\nSome text.\n", "adr/0013-q.md"
    )
    assert decision.title == "Use Qdrant at scale"
    assert decision.status is DecisionStatus.PROPOSED


def test_task_ids_and_principle_ids_are_taken_but_adr_refs_and_technical_names_are_not() -> None:
    decision = parse_adr(
        "# Title\n\n## Decision\n\nFixes MM-42 and #45 per P-1, P3 and PRIN-7; see ADR-12. Uses UTF-8, "
        "SHA-256 and ISO-8601.\n\n```\nFAKE-1 #99\n```\n",
        "adr/0001-t.md",
    )
    assert decision.task_ids == ("MM-42", "#45")
    assert decision.principle_ids == ("P-1", "P3", "PRIN-7")
    assert decision.related == ("0012",)


def test_front_matter_principles_tags_and_component_are_read() -> None:
    decision = parse_adr(
        "---\nstatus: accepted\nprinciples: [P1, P4]\ntags: [storage, offline]\ncomponent: stores\n---\n# T\n",
        "adr/0001-t.md",
    )
    assert decision.principle_ids == ("P1", "P4")
    assert decision.tags == ("storage", "offline")
    assert decision.component == "stores"


# -------------------------------------------------------------------------------------------- odd input


@pytest.mark.parametrize(
    "text",
    ["", "   \n\n", "\x00\x01\x02binary\x00", "just a line of prose with no headings at all", "---\n---\n"],
)
def test_odd_input_gives_a_freeform_decision_holding_the_text_with_the_filename_as_title(text: str) -> None:
    decision = parse_adr(text, "docs/adr/0042-odd-input.md")
    assert decision.format is AdrFormat.FREEFORM
    assert decision.text == text
    assert decision.title == "odd input"
    assert decision.number == 42


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "# ",
                "## ",
                "### Option",
                "Status:",
                "* ",
                'Chosen option: "',
                "---",
                "```",
                "\n",
                "[ADR 1]",
                "](0001-x.md)",
                "superseded by ",
                "In the context of",
                ", facing",
                " we decided for",
                ", to achieve",
                ", accepting",
                "Bad, because",
                "**Date:**",
                "2020-13-45",
                "Рішення",
                "✅",
                "\r\n",
                "\x00",
            ]
        )
        | st.text(max_size=20),
        max_size=40,
    ).map("".join)
)
def test_parse_adr_never_raises_on_arbitrary_text(text: str) -> None:
    decision = parse_adr(text, "docs/adr/0001-fuzz.md")
    assert isinstance(decision, Decision)
    assert decision.title
    assert decision.text == text


# ---------------------------------------------------------------------------------------- tdr corpus


@pytest.fixture(scope="session")
def tdr_decisions(tdr_repo: Path) -> dict[str, Decision]:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=tdr_repo, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    return {
        path: parse_adr((tdr_repo / path).read_text(encoding="utf-8"), path)
        for path in find_adr_paths(tracked)
    }


# ADRs whose text genuinely lacks a field: 0033 has no date line; 0038 is a stub pointing to a private repo.
UNDATED = {"0033"}
STUBS = {"0038"}


def test_all_39_tdr_adrs_are_found_and_the_readme_is_not(tdr_decisions: dict[str, Decision]) -> None:
    assert len(tdr_decisions) == 39
    assert all(path.startswith("architecture-decision-records/0") for path in tdr_decisions)


def test_every_tdr_adr_parses_with_title_number_date_and_decision(tdr_decisions: dict[str, Decision]) -> None:
    for path, decision in tdr_decisions.items():
        ref = f"{decision.number:04d}" if decision.number is not None else None
        assert decision.title.strip(), path
        assert ref is not None and path.split("/")[-1].startswith(ref), path
        if ref not in UNDATED | STUBS:
            assert decision.decided_at is not None, path
        if ref not in STUBS:
            assert decision.decision, path
            assert decision.context, path
            assert decision.format is not AdrFormat.FREEFORM, path


def test_tdr_adrs_that_lack_a_field_say_so_instead_of_inventing_it(
    tdr_decisions: dict[str, Decision],
) -> None:
    by_number = {decision.number: decision for decision in tdr_decisions.values()}
    assert by_number[33].decided_at is None
    assert by_number[33].title == "User permissions for DTA Review feature"
    stub = by_number[38]
    assert stub.title == "Egress Control"
    assert stub.decision is None and stub.decided_at is None
    assert "tdr-dev-documentation-internal" in stub.text


def test_tdr_cross_references_land_in_related_supersedes_and_superseded_by(
    tdr_decisions: dict[str, Decision],
) -> None:
    by_number = {decision.number: decision for decision in tdr_decisions.values()}
    assert "0013" in by_number[20].related  # "[ADR 13]" with a reference-style definition
    assert "0020" in by_number[13].related
    assert "0005" in by_number[6].related  # "[decided][user-auth-adr]" pointing at 0005-....md
    assert by_number[7].status is DecisionStatus.SUPERSEDED
    assert by_number[7].superseded_by == ("0022",)
    assert by_number[8].superseded_by == ("0009",)
    assert by_number[9].supersedes == ("0008",)
    assert "0008" not in by_number[9].related
    assert by_number[18].supersedes == ("0015",)
    assert by_number[15].superseded_by == ("0018",)
    assert "0011" not in by_number[39].related  # "DDT ADR-011" is another team's series


def test_tdr_titles_lose_their_numbering(tdr_decisions: dict[str, Decision]) -> None:
    by_number = {decision.number: decision for decision in tdr_decisions.values()}
    assert by_number[1].title == "Use Terraform across multiple AWS accounts"
    assert by_number[25].title == "Automatic code merging"
    assert by_number[21].title == "Deploying a service unavailable page"
    assert by_number[21].number == 21


def test_tdr_options_and_rejected_alternatives_are_taken_where_stated(
    tdr_decisions: dict[str, Decision],
) -> None:
    by_number = {decision.number: decision for decision in tdr_decisions.values()}
    assert by_number[34].format is AdrFormat.MADR
    assert by_number[34].chosen_option == "Hybrid Approach"
    assert by_number[8].chosen_option == "Define TDR user administrators in top level realm"
    excel = by_number[31]
    assert excel.considered_options == ("Apache POI", "FastExcel")
    assert excel.chosen_option == "FastExcel"
    assert excel.rejected_alternatives[0].option == "Apache POI"
    assert excel.rejected_alternatives[0].reason is not None
    assert "Convoluted code" in excel.rejected_alternatives[0].reason
    email = by_number[12]
    assert [a.option for a in email.rejected_alternatives] == ["AWS Simple Email Service (SES)", "SendGrid"]
    assert email.rejected_alternatives[1].reason == "Rejected due to cost."
    assert by_number[37].rationale is not None


def test_yaml_front_matter_block_scalars_comments_and_quoted_colons_are_read_as_yaml() -> None:
    text = (
        "---\n"
        "title: >\n"
        "  Зберігати реєстр\n"
        "  у SQLite\n"
        "status: accepted  # agreed on the night shift\n"
        'component: "ledger: field nodes"\n'
        "date: 2024-03-05\n"
        "decision-makers:\n"
        "  - Олена Коваль\n"
        "  - Taras Melnyk\n"
        "tags: [ledger, офлайн]\n"
        "---\n\n"
        "Польові вузли працюють без мережі.\n"
    )
    decision = parse_adr(text, "docs/decisions/ledger.md")
    assert decision.title == "Зберігати реєстр у SQLite"
    assert decision.status is DecisionStatus.ACCEPTED
    assert decision.status_text == "accepted"
    assert decision.component == "ledger: field nodes"
    assert decision.decided_at == datetime.date(2024, 3, 5)
    assert decision.deciders == ("Олена Коваль", "Taras Melnyk")
    assert decision.tags == ("ledger", "офлайн")


def test_a_template_placeholder_that_is_not_yaml_falls_back_to_the_line_reader() -> None:
    text = (
        "---\n"
        "status: {proposed | rejected | accepted | deprecated | … | superseded by [ADR-0005](0005-x.md)}\n"
        "date: {YYYY-MM-DD when the decision was last updated}\n"
        "---\n\n"
        "# {short title of solved problem and solution}\n"
    )
    decision = parse_adr(text, "docs/decisions/0007-example.md")
    assert decision.status is DecisionStatus.PROPOSED
    assert decision.status_text is not None and decision.status_text.startswith("{proposed | rejected")


def test_toml_front_matter_is_read() -> None:
    text = '+++\nstatus = "відхилено"\ndate = 2024-05-01\ndeciders = ["Olena", "Taras"]\n+++\n\n# Use Kafka\n'
    decision = parse_adr(text, "docs/adr/0004-use-kafka.md")
    assert decision.status is DecisionStatus.REJECTED
    assert decision.decided_at == datetime.date(2024, 5, 1)
    assert decision.deciders == ("Olena", "Taras")


def test_a_diary_of_date_named_files_is_not_an_adr_folder() -> None:
    paths = ["diary/2025-06-01.md", "diary/2025-06-02.md", "diary/2025-06-03-sync-notes.md", "notes/0001-a.md",
             "notes/0002-b.md", "docs/adr/2025-06-01-use-sqlite.md"]
    assert find_adr_paths(paths) == ["docs/adr/2025-06-01-use-sqlite.md", "notes/0001-a.md", "notes/0002-b.md"]
