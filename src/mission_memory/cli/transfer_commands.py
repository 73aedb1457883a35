"""``mission-memory export`` and ``mission-memory import``: move a memory between stores as JSON Lines.

Thin shells over :meth:`Memory.export_memory` and :meth:`Memory.import_memory` (format and rules:
:mod:`mission_memory.stores.transfer`). The store is the one ``MISSION_MEMORY_STORE`` names, so a
move from SQLite to Qdrant is an export with one setting and an import with the other.
"""

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import console, err_console, print_json, reported_errors
from mission_memory.cli.progress_lines import progress_display
from mission_memory.errors import InputError

if TYPE_CHECKING:
    from mission_memory.records import AccessLevel

__all__ = ["export_command", "import_command", "register"]


def export_command(
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write to this file (default: standard output).")
    ] = None,
    mission: Annotated[str | None, typer.Option("--mission", help="Export only this mission (default: all).")] = None,
    max_access_level: Annotated[
        str | None,  # read as an AccessLevel on use: records (and pydantic) stay unloaded for --help
        typer.Option("--max-access-level", help="Leave out records above this access level "
                     "(public < internal < restricted < secret), and the retrieval events that returned them."),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Export the memory (records with their vectors, retrieval events, state) as JSON Lines.

    The file is written next to its destination and renamed into place when complete, so an
    interrupted export leaves no partial file behind.
    """
    with reported_errors(), open_memory() as memory:
        level = _access_level(max_access_level)
        if output is None:
            with progress_display(False) as progress:
                summary = memory.export_memory(sys.stdout, mission=mission, max_access_level=level, progress=progress)
        else:
            folder = output.resolve().parent
            if not folder.is_dir():
                raise InputError(f"--output {output}: folder {folder} does not exist")
            handle, temporary = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".part", dir=folder)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out, progress_display(not json_output) as progress:
                    summary = memory.export_memory(out, mission=mission, max_access_level=level, progress=progress)
                os.replace(temporary, output)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
    data = summary.to_json()
    if json_output:
        if output is None:
            err_console.print_json(data=data)
        else:
            print_json({**data, "file": str(output)})
        return
    target = console if output is not None else err_console
    target.print(f"Exported {data['records']} records ({data['vectors']} with vectors), {data['events']} retrieval "
                 f"events, {data['state']} state values" + (f" to {output}" if output is not None else "")
                 + (f"; left out {data['left_out']} records above {level.value}" if level is not None else ""),
                 markup=False)


def _access_level(value: str | None) -> "AccessLevel | None":
    """``--max-access-level`` as an :class:`~mission_memory.records.AccessLevel`, or None when not given.

    Raises:
        InputError: not one of the levels (they are named).
    """
    if value is None:
        return None
    from mission_memory.records import AccessLevel

    try:
        return AccessLevel(value.strip().lower())
    except ValueError:
        levels = ", ".join(level.value for level in AccessLevel)
        raise InputError(f"--max-access-level {value!r} is not one of: {levels}") from None


def import_command(
    file: Annotated[Path, typer.Argument(help="A file written by 'mission-memory export'.")],
    mission: Annotated[str | None, typer.Option("--mission", help="Import only this mission (default: all).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Import an exported memory into the configured store, vectors as they are (no re-embedding).

    Every line is checked first: a bad line is named by its number and nothing is stored. Running
    the same import again adds nothing; an import cut short by a store failure is finished by
    running it again.
    """
    with reported_errors(), open_memory() as memory, progress_display(not json_output) as progress:
        summary = memory.import_memory(file, mission=mission, progress=progress)
        model_id = memory.embedder.model_id
    data = summary.to_json()
    foreign = {model: n for model, n in summary.vector_models.items() if model != model_id}
    if foreign:
        shown = ", ".join(f"{n} of {model}" for model, n in sorted(foreign.items()))
        err_console.print(
            f"Warning: imported vectors of another embedding model ({shown}); this memory embeds with"
            f" {model_id}, so those records are found by BM25 only until `mission-memory reindex`.",
            markup=False, highlight=False,
        )
    if json_output:
        print_json({**data, "file": str(file)})
        return
    console.print(f"Imported {file}: {data['records']} records ({data['added']} new, {data['vectors']} with "
                  f"vectors), {data['events']} retrieval events ({data['events_added']} new), "
                  f"{data['state']} state values", markup=False)


def salvage_command(
    damaged: Annotated[Path, typer.Argument(help="The damaged store file (`memory.db`); it is only read.")],
    to: Annotated[Path, typer.Option("--to", help="A new data dir for what can be read (must hold no store).")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Copy every row that can still be read from a damaged store into a new data dir.

    For a store refused as damaged: records, vectors, retrieval events and ingest state are read
    table by table past the damaged pages, and what could not be read is listed by rowid range.
    Then point `MISSION_MEMORY_DATA_DIR` at the new data dir and re-ingest the repositories (ingest
    adds back what it can read again). Exit code 1 when rows were lost.
    """
    from mission_memory.api import Memory

    with reported_errors():
        report = Memory.salvage_store(damaged, to)
    if json_output:
        print_json(report)
    else:
        for table in report["tables"]:
            lost = ", ".join(f"rowids {s['after'] + 1}–{s['before'] - 1 if s['before'] else 'end'}"
                             for s in table["skipped"])
            console.print(f"{table['table']}: {table['copied']} rows copied"
                          + (f"; unreadable: {lost}" if lost else "")
                          + (f"; {table['error']}" if table["error"] else ""), markup=False)
        if report["missing_pages"]:
            console.print(f"The file was cut short: {report['missing_pages']} of its {report['pages']} pages are"
                          " missing; the rows on them could not be read.", markup=False)
        if report["orphan_vectors"]:
            console.print(f"{report['orphan_vectors']} of the vectors copied were dropped: their record could not"
                          " be read.", markup=False)
        if report["records_without_vector"]:
            console.print(f"{report['records_without_vector']} records lost their vector: BM25 still finds them;"
                          " `mission-memory reindex` embeds them again (`status` counts them).", markup=False)
        console.print(("Every row was read" if report["complete"] else "Some rows could not be read")
                      + f"; the new store is {report['target']}. Use it with "
                      f"MISSION_MEMORY_DATA_DIR={Path(str(report['target'])).parent}, then re-ingest the"
                      " repositories.", markup=False)
    if not report["complete"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``export``, ``import`` and ``salvage`` to the root app."""
    app.command("export")(export_command)
    app.command("import")(import_command)
    app.command("salvage")(salvage_command)
