"""The "stale leaked / current kept" suite (issue 12 item 1, ADR 0030): real stores, real passes, real digests.

:func:`build_suite` fills one store with three missions where newer records replace older ones:

* ``navigator``: a route planner whose MCP tools change between three refresh passes (each pass
  writes a summary, a tool-lineage delta and open questions for task NAV-3: A→B→C per kind);
* ``ledger``: ADR-0001 superseded by ADR-0002, superseded by ADR-0003 (an A→B→C chain), and a
  setup section re-written after the first ingest;
* ``tdr``: ADR-0008 and ADR-0009 of the corpus repository (tests/corpora/tdr-docs.bundle), real text.

Each :class:`StaleCase` is a query with the records that must not appear (stale) and those that must
(current); in history cases the stale decisions may appear, but only marked superseded.
:func:`score_suite` runs them and counts. The test suite and ``benchmarks/bench_stale_current.py``
both use it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mission_memory.api import Memory
from mission_memory.config import Settings
from mission_memory.records import Record, RecordKind
from mission_memory.refresh.orchestrator import refresh_once
from mission_memory.trackers.local_files import LocalFolderTracker
from tests.conftest import GitRepo
from tests.corpus import corpus_path

NO_LLM = Settings(llm_base_url=None, llm_model=None)
PASSES = (
    datetime(2025, 3, 3, 12, 0, tzinfo=UTC),
    datetime(2025, 3, 12, 12, 0, tzinfo=UTC),
    datetime(2025, 3, 21, 12, 0, tzinfo=UTC),
)

_PLANNER = '''from mcp.server.mcpserver import MCPServer

mcp = MCPServer("route-planner")
{tools}
'''
_TOOLS = (
    # before the first pass
    '''
@mcp.tool()
def plan_route(origin: str, destination: str) -> list[str]:
    """Plan a route for the convoy between two waypoints."""
    return []


@mcp.tool()
def estimate_eta(route_id: str) -> float:
    """Estimate the arrival time of a planned route, in hours."""
    return 0.0
''',
    # before the second pass: plan_route avoids zones, estimate_eta is retired, reroute is added
    '''
@mcp.tool()
def plan_route(origin: str, destination: str, avoid_zones: list[str] | None = None) -> list[str]:
    """Plan a route for the convoy between two waypoints, avoiding the listed zones."""
    return []


@mcp.tool()
def reroute(route_id: str, blocked_segment: str) -> list[str]:
    """Re-plan a route around a blocked road segment."""
    return []
''',
    # before the third pass: reroute gains max_detour_km, fuel_stops is added
    '''
@mcp.tool()
def plan_route(origin: str, destination: str, avoid_zones: list[str] | None = None) -> list[str]:
    """Plan a route for the convoy between two waypoints, avoiding the listed zones."""
    return []


@mcp.tool()
def reroute(route_id: str, blocked_segment: str, max_detour_km: float = 25.0) -> list[str]:
    """Re-plan a route around a blocked road segment, within a detour limit."""
    return []


@mcp.tool()
def fuel_stops(route_id: str) -> list[str]:
    """List the fuel stops along a planned route."""
    return []
''',
)

_NAV_TASK = """---
key: NAV-3
title: Route planner tools for the convoy agent
labels: [LONG-TERM]
state: In Progress
created: 2025-02-20T09:00:00Z
files: [planner/server.py]
---

Keep the route planner's agent tools in step with what the convoy operators need.

## Comments

### Olena · 2025-02-21T10:00:00Z

Should the planner avoid contested zones by default?
"""

_ADR = """# {number}. {title}

Date: {date}

## Status

{status}

## Context

The ledger records every shipment so that a failed transfer can be resumed; it needs a transactional database.
{extra}

## Decision

{decision}

## Consequences

{consequences}
"""

_SETUP_OLD = """# Developer setup

## Setting up the development environment

Install Python 3.9, then run `make bootstrap` and `pipenv install --dev` to create the virtual environment.
Start the ledger with `make db-up`.
"""

_SETUP_NEW = """# Developer setup

## Setting up the development environment

Install Python 3.12 and uv, then run `uv sync --all-extras` to create the virtual environment.
Start the ledger with `uv run ledger serve`; no database container is needed any more.
"""


@dataclass(frozen=True)
class StaleCase:
    """One query of the suite.

    Attributes:
        name: what the case shows.
        query: the task description.
        mission: the mission asked in.
        stale: ids of records that must not appear (in history cases: only marked superseded).
        current: ids of records that must appear.
        history: the task asks about history or names the stale decision.
    """

    name: str
    query: str
    mission: str
    stale: tuple[str, ...]
    current: tuple[str, ...]
    history: bool = False


@dataclass
class SuiteScore:
    """The suite's counts (issue 12 item 1: "0 stale leaked, all current kept").

    Attributes:
        stale_leaked: stale records in a digest (unmarked, or in a case not asking about history).
        current_kept: current records in their case's digest.
        current_total: current records the cases expect.
        failures: one line per leaked or lost record.
    """

    stale_leaked: int = 0
    current_kept: int = 0
    current_total: int = 0
    cases: int = 0
    failures: list[str] = field(default_factory=list)


def _artifact(memory: Memory, kind: str, when: datetime) -> Record:
    for record in memory.store.records_of_kind([RecordKind.REFRESH_ARTIFACT.value], mission="navigator"):
        if record.attributes.get("artifact") == kind and record.provenance.time == when:
            return record
    raise AssertionError(f"no {kind} artifact of {when.isoformat()}")


def _decision(memory: Memory, mission: str, number: int) -> Record:
    for record in memory.store.records_of_kind([RecordKind.DECISION.value], mission=mission):
        if record.attributes.get("number") == number:
            return record
    raise AssertionError(f"no ADR-{number:04d} in {mission}")


def _section(memory: Memory, mission: str, needle: str) -> Record:
    for record in memory.store.records_of_kind([RecordKind.DOC_CHUNK.value], mission=mission):
        if needle in record.text:
            return record
    raise AssertionError(f"no section holding {needle!r} in {mission}")


def build_navigator_repo(make_repo: Any, tasks_dir: Path) -> GitRepo:
    """The ``navigator`` repository (its route planner's tools change before each of :data:`PASSES`)
    and the task folder holding NAV-3, labelled LONG-TERM."""
    repo: GitRepo = make_repo("navigator")
    tasks_dir.mkdir(parents=True, exist_ok=True)
    (tasks_dir / "NAV-3.md").write_text(_NAV_TASK, encoding="utf-8")
    dates = ("2025-03-01T09:00:00+00:00", "2025-03-10T09:00:00+00:00", "2025-03-19T09:00:00+00:00")
    messages = ("NAV-3: first route planner tools", "NAV-3: avoid zones, reroute around blocked segments; retire ETA",
                "NAV-3: detour limit for reroute, fuel stops")
    for tools, date, message in zip(_TOOLS, dates, messages, strict=True):
        repo.commit(message, date, {"planner/server.py": _PLANNER.format(tools=tools)})
    return repo


def _build_navigator(memory: Memory, make_repo: Any, tasks_dir: Path) -> list[StaleCase]:
    repo = build_navigator_repo(make_repo, tasks_dir)
    for now in PASSES:
        report = refresh_once(memory.store, memory.embedder, LocalFolderTracker(tasks_dir), repo.root, now, NO_LLM)
        assert [r["task"] for r in report.refreshed] == ["NAV-3"], report
    lineage = [_artifact(memory, "tool_lineage", now).id for now in PASSES]
    summary = [_artifact(memory, "summary", now).id for now in PASSES]
    questions = [_artifact(memory, "open_questions", now).id for now in PASSES]
    return [
        StaleCase("tool-lineage delta after three passes (issue 12)", "route planner tool changes",
                  "navigator", tuple(lineage[:2]), (lineage[2],)),
        StaleCase("tool-lineage delta asked about a retired tool", "Is the estimate_eta tool of the route planner still available?",
                  "navigator", tuple(lineage[:2]), (lineage[2],)),
        StaleCase("what-changed summary after three passes", "What changed recently in the route planner task NAV-3?",
                  "navigator", tuple(summary[:2]), (summary[2],)),
        StaleCase("open questions after three passes", "open questions on the convoy route planner",
                  "navigator", tuple(questions[:2]), (questions[2],)),
    ]


def _build_ledger(memory: Memory, make_repo: Any) -> list[StaleCase]:
    repo: GitRepo = make_repo("ledger")
    adrs = {
        "docs/adr/0001-use-postgresql-for-the-ledger.md": _ADR.format(
            number=1, title="Use PostgreSQL for the shipment ledger", date="2023-02-01",
            status="Superseded by [ADR-0002](0002-use-sqlite-for-the-ledger.md)", extra="",
            decision="We will keep the shipment ledger in PostgreSQL, run as a managed service.",
            consequences="Operators need database credentials; local development needs a container."),
        "docs/adr/0002-use-sqlite-for-the-ledger.md": _ADR.format(
            number=2, title="Use SQLite for the shipment ledger", date="2024-01-10",
            status="Superseded by [ADR-0003](0003-use-duckdb-for-the-ledger.md)",
            extra="Field teams have no network, so a managed PostgreSQL is out of reach.",
            decision="We will keep the shipment ledger in SQLite in WAL mode, one file per depot.",
            consequences="No server to run; reports across depots need the files copied together."),
        "docs/adr/0003-use-duckdb-for-the-ledger.md": _ADR.format(
            number=3, title="Use DuckDB for the shipment ledger", date="2025-01-15", status="Accepted",
            extra="Cross-depot reports are slow on SQLite.",
            decision="We will keep the shipment ledger in DuckDB files, one per depot, queried together for reports.",
            consequences="Reports across depots run in seconds; the SQLite files are migrated once."),
    }
    repo.commit("LED-1: ledger decisions", "2025-01-15T10:00:00+00:00", {**adrs, "docs/setup.md": _SETUP_OLD})
    memory.ingest_repository(repo.root)
    old_setup = _section(memory, "ledger", "make bootstrap").id
    repo.commit("LED-9: setup with uv", "2025-02-01T10:00:00+00:00", {"docs/setup.md": _SETUP_NEW})
    memory.ingest_repository(repo.root)
    new_setup = _section(memory, "ledger", "uv sync").id
    a, b, c = (_decision(memory, "ledger", n).id for n in (1, 2, 3))
    return [
        StaleCase("supersession chain A→B→C, asked by subject", "Which database holds the shipment ledger?",
                  "ledger", (a, b), (c,)),
        StaleCase("supersession chain: only the oldest matches the words", "Should the shipment ledger run on managed PostgreSQL?",
                  "ledger", (a, b), (c,)),
        StaleCase("superseded decision asked about by name", "Why did ADR-0001 choose PostgreSQL for the ledger?",
                  "ledger", (a,), (a, c), history=True),
        StaleCase("history of a decision", "history of the shipment ledger database decisions",
                  "ledger", (a, b), (a, b, c), history=True),
        StaleCase("why did we drop an option", "why did we drop SQLite for the shipment ledger?",
                  "ledger", (b,), (b, c), history=True),
        StaleCase("re-written document section", "How do I set up the development environment for the ledger?",
                  "ledger", (old_setup,), (new_setup,)),
    ]


def _build_tdr(memory: Memory, make_repo: Any, clone_dir: Path) -> list[StaleCase]:
    subprocess.run(["git", "clone", "-q", str(corpus_path("tdr-docs.bundle")), str(clone_dir)], check=True)
    folder = clone_dir / "architecture-decision-records"
    repo: GitRepo = make_repo("tdr-adrs")
    names = sorted(p.name for p in folder.glob("00*.md"))
    repo.commit("ADRs of the corpus repository", "2021-01-01T00:00:00+00:00", {
        f"architecture-decision-records/{name}": (folder / name).read_text(encoding="utf-8") for name in names
    })
    memory.ingest_repository(repo.root, mission="tdr")
    old, new = _decision(memory, "tdr", 8).id, _decision(memory, "tdr", 9).id
    return [
        StaleCase("tdr corpus: ADR-0009 no longer hides behind ADR-0008",
                  "How are the Keycloak user administrators configured?", "tdr", (old,), (new,)),
        StaleCase("tdr corpus: ADR-0009 for the realm question",
                  "Should TDR user administrators be defined in the top level Keycloak realm?", "tdr", (old,), (new,)),
        StaleCase("tdr corpus: ADR-0008 asked about by name", "Why was ADR-0008 superseded?",
                  "tdr", (old,), (old, new), history=True),
    ]


def build_suite(memory: Memory, make_repo: Any, work: Path) -> list[StaleCase]:
    """Fill ``memory`` with the suite's missions (real git repositories under ``work``) and return its cases."""
    return [
        *_build_navigator(memory, make_repo, work / "tasks"),
        *_build_ledger(memory, make_repo),
        *_build_tdr(memory, make_repo, work / "tdr-clone"),
    ]


def score_suite(memory: Memory, cases: list[StaleCase], token_budget: int = 4000) -> SuiteScore:
    """Run every case and count stale records leaked and current records kept."""
    score = SuiteScore()
    for case in cases:
        digest = memory.query(case.query, token_budget=token_budget, filters={"mission": case.mission})
        shown = {e.record.id: e for e in digest.entries}
        score.cases += 1
        for rid in case.stale:
            entry = shown.get(rid)
            if entry is not None and not (case.history and entry.superseded):
                score.stale_leaked += 1
                score.failures.append(f"{case.name}: stale {entry.record.title!r} leaked")
        for rid in case.current:
            score.current_total += 1
            if rid in shown:
                score.current_kept += 1
            else:
                score.failures.append(f"{case.name}: current {rid} missing from {[e.record.title for e in digest.entries]}")
    return score
