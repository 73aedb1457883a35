"""Core commands: ``ingest``, ``query``, ``status``, ``reindex``, ``events``, ``serve``, ``demo``.

Each command parses its flags, calls one :class:`~mission_memory.api.Memory` method and renders the
result (Markdown or a rich table for people, ``--json`` for scripts).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from mission_memory.cli.output import console, err_console, print_json, reported_errors

__all__ = ["register"]


class ScopeOption(StrEnum):
    all = "all"
    domain = "domain"
    workflow = "workflow"
    practitioner = "practitioner"


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


DEMO_TASK = "How does mission-memory keep the digest within the token budget, and why SQLite with NumPy vectors?"


@contextmanager
def _progress(enabled: bool) -> Iterator[Any]:
    """Progress on stderr, fed by ``progress(phase, done, total)`` callbacks: a rich bar with the time
    left when stderr is a terminal, else plain lines with rate and ETA (ADR 0035)."""
    if not enabled:
        yield None
        return
    if not err_console.is_terminal:
        import sys

        from mission_memory.cli.progress_lines import ProgressLines

        yield ProgressLines(sys.stderr)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            label = {"read": "Reading files", "embed": "Embedding new records"}.get(phase, phase)
            if phase not in tasks:
                tasks[phase] = bar.add_task(label, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield update


def _open_memory() -> Any:
    from mission_memory.api import Memory

    return Memory.open()


def ingest(
    path: Annotated[Path, typer.Argument(help="Repository (or folder of documents) to ingest.")],
    mission: Annotated[str | None, typer.Option(help="Mission name; default: the repository folder's name.")] = None,
    mission_type: Annotated[str | None, typer.Option(help="Mission type recorded on every record (for filters).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    include: Annotated[
        list[str] | None,
        typer.Option("--include", help="Only files matching this .gitignore-style glob (repeatable), e.g. 'docs/**'."),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="Leave out files matching this .gitignore-style glob (repeatable), e.g. 'diary/'."),
    ] = None,
) -> None:
    """Ingest commits, ADRs, principles and documents of a repository. Re-runs add only what changed.

    Progress goes to stderr (also with --json, whose report is on stdout): a bar with the time left on a
    terminal, plain lines with rate and ETA otherwise. The end names the folders that cost the most."""
    with reported_errors(), _open_memory() as memory, _progress(True) as progress:
        report = memory.ingest_repository(
            path, mission=mission, mission_type=mission_type, progress=progress,
            include=include or (), exclude=exclude or (),
        )
    data = report.to_json()
    if json_output:
        print_json(data)
        return
    table = Table(title=f"Ingested {data['path']} as mission '{data['mission']}'", title_justify="left")
    for column in ("layer", "added", "updated", "unchanged", "removed"):
        table.add_column(column, justify="left" if column == "layer" else "right")
    for layer, counts in sorted(data["by_layer"].items()):
        table.add_row(layer, *(str(counts[k]) for k in ("added", "updated", "unchanged", "removed")))
    console.print(table)
    skipped = data["skipped"]
    if skipped["count"]:
        reasons = ", ".join(f"{reason}: {n}" for reason, n in sorted(skipped["by_reason"].items()))
        console.print(f"Skipped {skipped['count']} files ({reasons})")
        for item in skipped["files"][:10]:
            detail = f" ({item['detail']})" if item.get("detail") else ""
            console.print(f"  {item['path']}: {item['reason']}{detail}", markup=False)
    costly = [row for row in data["folders"] if row["embedded"] or row["seconds"] >= 0.01][:5]
    if costly:
        console.print("Costliest folders (exclude with --exclude or .mission-memory-ignore):")
        for row in costly:
            console.print(
                f"  {row['folder']}: {row['records']} records, {row['embedded']} embedded, {row['seconds']:.1f} s",
                markup=False,
            )
    for warning in data["warnings"]:
        console.print(f"Warning: {warning}", markup=False)
    rate = f" in {data['seconds']:.1f} s" + (
        f" ({data['records_per_second']:.1f} records/s)" if data["records_per_second"] else ""
    )
    console.print(f"HEAD {data['head'] or '(not a git repository)'} · {data['embedded']} records embedded{rate}")


def query(
    task: Annotated[str, typer.Argument(help="The task or situation, in any language.")],
    scope: Annotated[ScopeOption, typer.Option(help="Layers to search.")] = ScopeOption.all,
    budget: Annotated[int | None, typer.Option(help="Token budget of the digest (default 8000, at most 200000).")] = None,
    component: Annotated[str | None, typer.Option(help="Only records of this component.")] = None,
    min_criticality: Annotated[float | None, typer.Option(help="Only records with criticality ≥ this (0..1).")] = None,
    since: Annotated[str | None, typer.Option(help="Only records from this date/time on (ISO 8601).")] = None,
    until: Annotated[str | None, typer.Option(help="Only records up to this date/time (ISO 8601).")] = None,
    mission: Annotated[str | None, typer.Option(help="Only records of this mission.")] = None,
    operator: Annotated[str | None, typer.Option(help="Only records about this operator.")] = None,
    max_access: Annotated[
        str | None, typer.Option(help="Clearance: only records at this access level or below (public < internal < restricted < secret).")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the digest and its entries as JSON.")] = False,
) -> None:
    """Print the digest of stored decisions, history and documents relevant to TASK."""
    filters = {
        key: value
        for key, value in {
            "component": component, "min_criticality": min_criticality, "since": since, "until": until,
            "mission": mission, "operator": operator, "max_access": max_access,
        }.items()
        if value is not None
    }
    with reported_errors(), _open_memory() as memory:
        digest = memory.query(task, scope=scope.value, token_budget=budget, filters=filters, client="cli")
    if json_output:
        print_json(digest.to_json())
    else:
        typer.echo(digest.text)


def status(json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False) -> None:
    """Show the data dir, record counts per layer and kind, the embedding model and schema version."""
    with reported_errors(), _open_memory() as memory:
        data = memory.status()
    if json_output:
        print_json(data)
        return
    console.print(f"Data dir:        {data['data_dir']}")
    console.print(f"Schema version:  {data['schema_version']}")
    console.print(f"Embedding model: {data['embedding_model']}")
    console.print(f"Records:         {data['records']} · retrieval events: {data['retrieval_events']}")
    table = Table("layer", "kind", "records")
    for layer, kinds in data["layers"].items():
        if not kinds:
            table.add_row(layer, "-", "0")
        for kind, n in sorted(kinds.items()):
            table.add_row(layer, kind, str(n))
    console.print(table)
    for model, n in data["vectors_by_model"].items():
        marker = "" if model == data["embedding_model"] else "  (stale: run `mission-memory reindex`)"
        console.print(f"Vectors of {model}: {n}{marker}")
    for name, n in data["missions"].items():
        console.print(f"Mission {name}: {n} records")
    if data["components"]:
        shown = ", ".join(f"{name} ({n})" for name, n in data["components"].items())
        console.print(f"Components (for --component): {shown}")


def reindex(json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False) -> None:
    """Re-embed every record from its stored text with the configured model (after a model change)."""
    with reported_errors(), _open_memory() as memory, _progress(not json_output) as progress:
        result = memory.reindex(progress=progress)
    if json_output:
        print_json(result)
    else:
        console.print(
            f"Embedded {result['embedded']} records with {result['model_id']}; "
            f"removed {result['removed_vectors']} vectors of other models."
        )


def events(
    limit: Annotated[int, typer.Option(help="How many events, newest first.")] = 20,
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List the latest retrieval events (every pull query is logged)."""
    with reported_errors(), _open_memory() as memory:
        rows = memory.retrieval_events(limit)
    if json_output:
        print_json([row.model_dump(mode="json") for row in rows])
        return
    table = Table("time", "client", "operator", "scope", "tokens", "entries", "omitted", "query")
    for row in rows:
        table.add_row(row.time.isoformat()[:19], row.client or "-", row.operator or "-", row.scope,
                      f"{row.tokens_used}/{row.token_budget}", str(len(row.record_ids)), str(row.omitted),
                      row.query[:60])
    console.print(table)


def serve(
    transport: Annotated[Transport, typer.Option(help="stdio for Claude Code; http for a shared server.")] = Transport.stdio,
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
) -> None:
    """Run the MCP server exposing the one tool, workflow_memory_query."""
    from mission_memory.mcp.server import run_server

    with reported_errors():
        run_server(transport.value, host=host, port=port)


def demo(
    task: Annotated[str, typer.Argument(help="Task to ask about.")] = DEMO_TASK,
    budget: Annotated[int, typer.Option(help="Token budget of the digest.")] = 2500,
) -> None:
    """Ingest mission-memory's own repository (its ADRs, docs and history) and print a digest for TASK."""
    root = Path(__file__).resolve().parents[3]
    if not (root / "docs" / "adr").is_dir():
        with reported_errors():
            from mission_memory.errors import InputError

            raise InputError(f"the demo needs a source checkout; {root} has no docs/adr folder")
    with reported_errors(), _open_memory() as memory, _progress(True) as progress:
        report = memory.ingest_repository(root, mission="mission-memory", progress=progress)
        err_console.print(
            f"Ingested {root}: {sum(report.added.values())} added, {sum(report.unchanged.values())} unchanged."
        )
        digest = memory.query(task, token_budget=budget)
    typer.echo(digest.text)


def register(app: typer.Typer) -> None:
    """Add the core commands to the root app."""
    app.command()(ingest)
    app.command()(query)
    app.command()(status)
    app.command()(reindex)
    app.command()(events)
    app.command()(serve)
    app.command()(demo)
