"""Core commands: ``ingest``, ``query``, ``status``, ``reindex``, ``events``, ``serve``, ``demo``, ``forget``.

Each command parses its flags, calls one :class:`~mission_memory.api.Memory` method and renders the
result (Markdown or a rich table for people, ``--json`` for scripts). ``query`` answers from the
mission of the repository it runs in (ADR 0029); ``demo`` keeps its memory in a data dir of its own.
"""

import shutil
from contextlib import suppress
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from mission_memory.cli.numbers import number
from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import (
    check_budget_flag,
    console,
    echo_text,
    err_console,
    print_json,
    reported_errors,
)
from mission_memory.cli.progress_lines import progress_display
from mission_memory.cli.refresh_commands import (
    GithubRepoOption,
    PlaneProjectOption,
    PlaneUrlOption,
    PlaneWorkspaceOption,
    TasksDirOption,
    TrackerKind,
)

if TYPE_CHECKING:
    from mission_memory.tokens import Tokenizer

__all__ = ["register"]


class ScopeOption(StrEnum):
    all = "all"
    domain = "domain"
    workflow = "workflow"
    practitioner = "practitioner"
    handover = "handover"


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


DEMO_MISSION = "mission-memory-demo"
"""The mission the demo files mission-memory's own repository under, in its own data dir (ADR 0029)."""
DEMO_DATA_DIR_NAME = "demo"
"""The demo's data dir is this folder inside the configured data dir, apart from the user's missions."""

DEMO_TASK = "How does mission-memory keep the digest within the token budget, and why SQLite with NumPy vectors?"


def ingest(
    path: Annotated[Path | None, typer.Argument(help="Repository (or folder of documents) to ingest.")] = None,
    mission: Annotated[str | None, typer.Option(help="Mission name; default: the repository folder's name.")] = None,
    mission_type: Annotated[str | None, typer.Option(help="Mission type recorded on every record (for filters).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    tracker: Annotated[
        TrackerKind | None, typer.Option("--tracker", help="Ingest this tracker's tasks and comments instead of a PATH.")
    ] = None,
    tasks_dir: TasksDirOption = None,
    plane_url: PlaneUrlOption = None,
    plane_workspace: PlaneWorkspaceOption = None,
    plane_project: PlaneProjectOption = None,
    github_repo: GithubRepoOption = None,
    include: Annotated[
        list[str] | None,
        typer.Option("--include", help="Only files matching this .gitignore-style glob (repeatable), e.g. 'docs/**'."),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="Leave out files matching this .gitignore-style glob (repeatable), e.g. 'diary/'."),
    ] = None,
    replace_repository: Annotated[
        bool,
        typer.Option("--replace-repository", help="Ingest into a mission that holds another git repository's"
                     " history, replacing its files' records (refused otherwise)."),
    ] = False,
) -> None:
    """Ingest commits, ADRs, principles and documents of a repository, or (--tracker) a tracker's tasks
    and comments. Re-runs add only what changed. A mission holding another repository's history is
    not overwritten: choose another --mission, or pass --replace-repository.

    Progress goes to stderr (also with --json, whose report is on stdout): a bar with the time left on a
    terminal, plain lines with rate and ETA otherwise. The end names the folders that cost the most.

    A file or commit that fails to read, parse, redact, embed or store is left out and named (path or
    commit, stage, reason; --json: "failures"), the rest is ingested, and the exit status is 3: partial."""
    if tracker is not None or path is None:
        from mission_memory.cli.tracker_item_commands import ingest_tracker_items

        ingest_tracker_items(path, mission, json_output, tracker, tasks_dir, plane_url, plane_workspace,
                             plane_project, github_repo)
        return
    with reported_errors(), open_memory() as memory, progress_display(True) as progress:
        report = memory.ingest_repository(
            path, mission=mission, mission_type=mission_type, progress=progress,
            include=include or (), exclude=exclude or (), replace_repository=replace_repository,
        )
    data = report.to_json()
    if json_output:
        print_json(data)
        _exit_partial(report.partial)
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
        if skipped["count"] > min(10, len(skipped["files"])):
            listed = " (--json lists them all)" if len(skipped["files"]) >= skipped["count"] else ""
            console.print(f"  … and {skipped['count'] - min(10, len(skipped['files']))} more{listed}", markup=False)
    if data["relocated"]:
        console.print(f"Pointed {data['relocated']} unchanged records at {data['path']} (the repository was ingested"
                      " from another path before; nothing embedded again)", markup=False)
    decoded = data["decoded_by_fallback"]
    if decoded["count"]:
        encodings = ", ".join(sorted({item["encoding"] for item in decoded["files"]}))
        files = "file that is" if decoded["count"] == 1 else "files that are"
        console.print(f"Read {decoded['count']} {files} not UTF-8 as {encodings} (their records carry decoded_as):",
                      markup=False)
        for item in decoded["files"][:10]:
            console.print(f"  {item['path']}: {item['encoding']}", markup=False)
        if decoded["count"] > 10:
            console.print(f"  … and {decoded['count'] - 10} more (--json lists them all)", markup=False)
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
    if data["failures"]:
        console.print(f"Partial ingest: {len(data['failures'])} left out (named in the warnings above; re-run"
                      " after fixing them, the rest is stored)", markup=False)
    _exit_partial(report.partial)


def _exit_partial(partial: bool) -> None:
    """Exit with :data:`~mission_memory.ingest.record_failures.PARTIAL_EXIT_CODE` when records were left out."""
    if partial:
        from mission_memory.ingest.record_failures import PARTIAL_EXIT_CODE

        raise typer.Exit(PARTIAL_EXIT_CODE)


def query(
    task: Annotated[str, typer.Argument(help="The task or situation, in any language.")],
    scope: Annotated[ScopeOption, typer.Option(help="Layers to search.")] = ScopeOption.all,
    budget: Annotated[int | None, typer.Option(help=(
        "Token budget of the digest (default: the setting MISSION_MEMORY_DEFAULT_TOKEN_BUDGET; at most "
        "MISSION_MEMORY_MAX_TOKEN_BUDGET).")
    )] = None,
    component: Annotated[str | None, typer.Option(help="Only records of this component.")] = None,
    min_criticality: Annotated[float | None, typer.Option(parser=number("--min-criticality", low=0, high=1),
                                                          help="Only records with criticality ≥ this (0..1).")] = None,
    since: Annotated[str | None, typer.Option(help="Only records from this date/time on (ISO 8601).")] = None,
    until: Annotated[str | None, typer.Option(help="Only records up to this date/time (ISO 8601).")] = None,
    mission: Annotated[
        str | None,
        typer.Option(help="Only records of this mission; default: the mission of the repository this runs in, when stored."),
    ] = None,
    all_missions: Annotated[
        bool, typer.Option("--all-missions", help="Answer across every stored mission, not only this repository's.")
    ] = False,
    operator: Annotated[str | None, typer.Option(help="Only records about this operator.")] = None,
    max_access: Annotated[
        str | None, typer.Option(help="Clearance: only records at this access level or below (public < internal < restricted < secret).")
    ] = None,
    timeline: Annotated[
        bool, typer.Option("--timeline", help="Start with the crisis timeline (escalating sectors, cascades, decisions "
                           "since the escalation began); shown anyway while the mission is degraded.")
    ] = False,
    now: Annotated[
        str | None, typer.Option(help="Answer at this time (ISO 8601; default now): escalation, triage and ages "
                                 "are evaluated then, e.g. after `feed --now` replayed a history.")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the digest and its entries as JSON.")] = False,
) -> None:
    """Print the digest of stored decisions, history and documents relevant to TASK.

    The digest answers from the mission of the git repository the command runs in when that mission
    is stored; otherwise from all missions, and its header says so.
    """
    from mission_memory.mission_scope import ALL_MISSIONS, mission_here

    with reported_errors():
        if all_missions and mission is not None:
            from mission_memory.errors import InputError

            raise InputError(f"--mission {mission!r} and --all-missions contradict each other: give one of them")
    filters = {
        key: value
        for key, value in {
            "component": component, "min_criticality": min_criticality, "since": since, "until": until,
            "mission": ALL_MISSIONS if all_missions else mission, "operator": operator, "max_access": max_access,
        }.items()
        if value is not None
    }
    with reported_errors(), open_memory() as memory:
        check_budget_flag(budget, memory.settings.max_token_budget, *_digest_floor(memory.tokenizer))
        digest = memory.query(task, scope=scope.value, token_budget=budget, filters=filters, client="cli",
                              default_mission=mission_here(), timeline=timeline, now=now)
    if json_output:
        print_json(digest.to_json())
    else:
        echo_text(digest.text)


def _digest_floor(tokenizer: "Tokenizer") -> tuple[int, str]:
    """The least budget of any digest, and what it holds, for :func:`~mission_memory.cli.output.check_budget_flag`."""
    from mission_memory.retrieval.digest import least_digest_budget

    return least_digest_budget(tokenizer), "a digest's header and closing line"


def status(json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False) -> None:
    """Show the data dir, the store that is open (backend and path or URL), record counts per layer and
    kind, the embedding model and schema version. An empty store says when the data dir holds the other
    backend's store, and how to move it."""
    with reported_errors(), open_memory() as memory:
        data = memory.status()
    if json_output:
        print_json(data)
        return
    console.print(f"Data dir:        {data['data_dir']}", markup=False)
    store = data["store"] if data["backend"] != "sqlite" or not data["database"] else f"sqlite · {data['database']}"
    console.print(f"Store:           {store}", markup=False)
    console.print(f"Schema version:  {data['schema_version']}")
    console.print(f"Embedding model: {data['embedding_model']}")
    console.print(f"Records:         {data['records']} · retrieval events: {data['retrieval_events']}")
    if data["other_store"] is not None:
        console.print(f"Note: {data['other_store']['advice']}.", markup=False)
    for item in data["exposed"]:
        console.print(f"Warning: {item['path']} is mode {item['mode']}: other users of this machine may read the"
                      f" memory (restricted records, the query log); `{item['fix']}`", markup=False)
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
    missing = data["without_vectors"]
    if missing["records"]:
        kinds = ", ".join(f"{layer}/{kind} {n}" for layer, by_kind in sorted(missing["by_layer"].items())
                          for kind, n in sorted(by_kind.items()))
        shown = "" if missing["counted"] >= missing["records"] else f" (oldest {missing['counted']:,})"
        console.print(f"Without a vector of {data['embedding_model']}: {missing['records']:,} records · {kinds}{shown}",
                      markup=False)
        if missing["queue"]:
            console.print(f"  Event vector queue: {missing['queue']}", markup=False)
        console.print(f"  {missing['advice']}", markup=False)
    from mission_memory.fence import listed_name

    for name, n in data["missions"].items():  # stored names: escaped, never read as markup (ADR 0054)
        console.print(f"Mission {listed_name(name)}: {n} records", markup=False)
    if data["components"]:
        shown = ", ".join(f"{listed_name(name)} ({n})" for name, n in data["components"].items())
        console.print(f"Components (for --component): {shown}", markup=False)


def reindex(json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False) -> None:
    """Re-embed every record from its stored text with the configured model (after a model change)."""
    with reported_errors(), open_memory() as memory, progress_display(not json_output) as progress:
        result = memory.reindex(progress=progress)
    if json_output:
        print_json(result)
    else:
        console.print(
            f"Embedded {result['embedded']} records with {result['model_id']}; "
            f"removed {result['removed_vectors']} vectors of other models."
        )


events_app = typer.Typer(no_args_is_help=False, help="Retrieval events (every pull is logged); `events firing`: open alerts.", rich_markup_mode="markdown")


@events_app.callback(invoke_without_command=True)
def events(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(help="How many events, newest first.")] = 20,
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List the latest retrieval events (every pull query is logged); entries: served, +omitted."""
    if ctx.invoked_subcommand is not None:
        return
    with reported_errors(), open_memory() as memory:
        rows = memory.retrieval_events(limit)
    if json_output:
        print_json([row.model_dump(mode="json") for row in rows])
        return
    # Narrow terminals (80 columns) cut rather than wrap: one line per event, the query last and elided.
    table = Table(box=None, header_style="bold")
    table.add_column("time (UTC)", no_wrap=True, min_width=16)
    for name, widest in (("client", 6), ("operator", 12), ("scope", 9)):
        table.add_column(name, no_wrap=True, overflow="ellipsis", max_width=widest)
    table.add_column("tokens", no_wrap=True, justify="right", min_width=9)
    table.add_column("entries", no_wrap=True, justify="right", min_width=5)  # served, +omitted
    table.add_column("query", no_wrap=True, overflow="ellipsis", ratio=1, min_width=16)
    for row in rows:
        served = f"{len(row.record_ids)}" + (f"+{row.omitted}" if row.omitted else "")
        table.add_row(row.time.strftime("%Y-%m-%d %H:%M"), row.client or "-", row.operator or "-", row.scope,
                      f"{row.tokens_used}/{row.token_budget}", served, " ".join(row.query.split())[:200])
    console.print(table, soft_wrap=False)  # fit the terminal's width


def serve(
    transport: Annotated[Transport, typer.Option(help="stdio for Claude Code; http for a shared server.")] = Transport.stdio,
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
    mission: Annotated[
        str | None,
        typer.Option(help="Default mission of the tool's queries and of events posted without ?mission=; default (stdio): the repository the server starts in."),
    ] = None,
    write_tools: Annotated[
        bool, typer.Option("--write-tools", help="Also expose the write tools record_correction and record_decision (explicit opt-in).")
    ] = False,
) -> None:
    """Run the MCP server exposing the one tool, workflow_memory_query (and record_correction with --write-tools).

    Over HTTP with operator tokens (`mission-memory team token add`), every request needs `Authorization: Bearer <token>` and runs as that operator; without tokens, loopback only.
    """
    from mission_memory.mcp.server import run_server

    with reported_errors():
        if mission is not None:
            _warn_if_not_stored(mission)
        run_server(transport.value, host=host, port=port, mission=mission, write_tools=write_tools)


def _warn_if_not_stored(mission: str) -> None:
    """``serve --mission NAME`` for a mission that is not stored (yet) answers from all missions: say
    so on stderr at start (MCP clients log it), listing the stored ones, since a typo would otherwise
    only show in each digest's header. A store that cannot be opened (damaged, unreachable) is said
    the same way and does not stop the server: every call answers with its error."""
    from mission_memory.errors import BackendUnavailable
    from mission_memory.fence import quote_name
    from mission_memory.mission_scope import known_missions

    try:
        with open_memory() as memory:
            stored = memory.store.missions()
    except BackendUnavailable as exc:  # a damaged or unreachable store: the server still starts
        err_console.print(f"Warning: {exc}. The server starts and answers every call with this error until the"
                          " store is usable.", markup=False, highlight=False)
        return
    if stored and mission not in stored:
        err_console.print(
            f"Warning: no mission named {quote_name(mission)} is stored ({known_missions(mission, stored)}); until it"
            " is ingested, queries answer from all missions.",
            markup=False, highlight=False,
        )


def demo(
    task: Annotated[str, typer.Argument(help="Task to ask about.")] = DEMO_TASK,
    budget: Annotated[int, typer.Option(help="Token budget of the digest.")] = 2500,
    remove: Annotated[bool, typer.Option("--remove", help="Delete the demo's memory and exit.")] = False,
) -> None:
    """Ingest mission-memory's own repository (its ADRs, docs and history) and print a digest for TASK.

    The demo's memory lives in a data dir of its own (``demo/`` inside the data dir), so it never
    mixes with your missions; ``demo --remove`` deletes it.
    """
    from mission_memory.config import load_settings
    from mission_memory.errors import InputError

    with reported_errors():
        settings = load_settings()
        if budget is not None:  # before the demo's ingest, not after
            from mission_memory.tokens import TiktokenTokenizer

            check_budget_flag(budget, settings.max_token_budget,
                              *_digest_floor(TiktokenTokenizer(settings.token_safety_margin)))
        demo_dir = settings.data_dir / DEMO_DATA_DIR_NAME
        if remove:
            removed = _remove_demo_dir(demo_dir)
            err_console.print(f"Removed the demo's memory at {demo_dir}." if removed else f"No demo memory at {demo_dir}.")
            return
        root = Path(__file__).resolve().parents[3]
        if not (root / "docs" / "adr").is_dir():
            raise InputError(f"the demo needs a source checkout; {root} has no docs/adr folder")
    with reported_errors(), open_memory(settings.model_copy(update={"data_dir": demo_dir})) as memory, \
            progress_display(True) as progress:
        report = memory.ingest_repository(root, mission=DEMO_MISSION, progress=progress)
        err_console.print(
            f"Ingested {root}: {sum(report.added.values())} added, {sum(report.unchanged.values())} unchanged."
        )
        digest = memory.query(task, token_budget=budget, filters={"mission": DEMO_MISSION})
    echo_text(digest.text)
    err_console.print(
        f"The demo's memory is kept apart from your missions, in {demo_dir}. "
        "Remove it with `mission-memory demo --remove`.",
        markup=False,
    )


def _remove_demo_dir(demo_dir: Path) -> bool:
    """Delete the demo's data dir (only the store files it holds); True when there was one."""
    if not demo_dir.is_dir():
        return False
    for name in ("memory.db", "memory.db-wal", "memory.db-shm", "memory.db.checked"):
        (demo_dir / name).unlink(missing_ok=True)
    for derived in ("memory.vectors", "memory.bm25"):  # snapshots derived from the db, with their stamps
        folder = demo_dir / derived
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
    with suppress(OSError):  # something else was put there: leave it
        demo_dir.rmdir()
    return True


def forget(
    mission: Annotated[str, typer.Option(help="The mission to delete (exact name, as `status` lists it).")],
    yes: Annotated[bool, typer.Option("--yes", help="Delete without asking.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print what was deleted as JSON.")] = False,
) -> None:
    """Delete a mission's records, vectors and retrieval events from the memory.

    The repository, its ADRs and trackers stay as they are, and `mission-memory ingest` builds what
    came from them again. What only the memory holds is gone for good: handover notes and briefs,
    decisions recorded with `decide`, events fed in, corrections and refresh artifacts. Keep them
    first with `mission-memory export --mission NAME -o FILE` (`import` brings them back).
    """
    from mission_memory.errors import InputError
    from mission_memory.mission_scope import unknown_mission

    with reported_errors(), open_memory() as memory:
        stored = memory.store.missions()
        if mission not in stored:
            raise unknown_mission(mission, stored)
        if not yes:
            if json_output:
                raise InputError(f"forget --mission {mission!r} --json deletes only with --yes")
            if not typer.confirm(f"Delete mission {mission!r} ({stored[mission]} records) from {memory.settings.data_dir}?"
                                 " Handover notes, recorded decisions, events and corrections are not rebuilt by"
                                 " ingest (export them first)"):
                raise InputError(f"nothing deleted: mission {mission!r} is kept")
        with progress_display(not json_output) as progress:
            deleted = memory.forget_mission(mission, progress=progress)
    if json_output:
        print_json({"mission": mission, "deleted": deleted})
        return
    console.print(
        f"Deleted mission '{mission}': {deleted['records']} records (with their vectors), "
        f"{deleted['retrieval_events']} retrieval events, {deleted['state']} ingest-state entries.",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add the core commands to the root app."""
    app.command()(ingest)
    app.command()(query)
    app.command()(status)
    app.command()(reindex)
    app.add_typer(events_app, name="events")
    app.command()(serve)
    app.command()(demo)
    app.command()(forget)
