"""``mission-memory decide``: record a decision where it is taken (docs/design.md §3; issue 13 item 4).

Thin shell over :meth:`Memory.record_decision`: the flags become the decision's fields, the core
checks them, stores the record (and, with ``--write-adr DIR``, writes the MADR file the repository
keeps as the canonical source) and marks the decision it supersedes.
"""

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import console, print_json, reported_errors
from mission_memory.fence import quote_name

__all__ = ["decide", "register"]


class StatusOption(StrEnum):
    accepted = "accepted"
    proposed = "proposed"


class DecidedBy(StrEnum):
    operator = "operator"
    agent = "agent"


def decide(
    title: Annotated[str, typer.Argument(help="The decision's title, one line.")],
    decision: Annotated[str, typer.Option("--decision", help="What was decided.")],
    rationale: Annotated[str, typer.Option("--rationale", help="Why.")],
    rejected: Annotated[
        list[str] | None, typer.Option("--rejected", help="A rejected option as 'option: why' (repeatable).")
    ] = None,
    context: Annotated[str | None, typer.Option("--context", help="The situation that forced the decision.")] = None,
    principle: Annotated[
        list[str] | None, typer.Option("--principle", help="A principle id it rests on (repeatable).")
    ] = None,
    component: Annotated[str | None, typer.Option("--component", help="The component it concerns.")] = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="A tracker key it belongs to (repeatable).")] = None,
    supersedes: Annotated[
        str | None, typer.Option("--supersedes", help="The decision it replaces: ADR number, path or `decision/<slug>`.")
    ] = None,
    status: Annotated[StatusOption, typer.Option("--status", help="accepted or proposed.")] = StatusOption.accepted,
    mission: Annotated[
        str | None, typer.Option("--mission", help=(
            "Mission (a stored one); default: the only one stored, or this repository's; with --write-adr, "
            "the repository of that folder."
        ))
    ] = None,
    session: Annotated[str | None, typer.Option("--session", help="The session the decision was taken in.")] = None,
    by: Annotated[DecidedBy, typer.Option("--by", help="Who decided: the operator or the agent.")] = DecidedBy.operator,
    write_adr: Annotated[
        Path | None, typer.Option("--write-adr", help="Also write it as a MADR file `NNNN-<slug>.md` into this folder.")
    ] = None,
    access_level: Annotated[
        str | None,
        typer.Option("--access-level", help=(
            "public, internal, restricted or secret; default: the most restricted level of what it "
            "supersedes or cites (internal when they are all lower)."
        )),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Record a decision with its rationale and rejected alternatives, where it is taken."""
    with reported_errors(), open_memory() as memory:
        outcome = memory.record_decision(
            title, decision=decision, rationale=rationale, rejected=rejected or [], context=context,
            principles=principle or [], component=component, tasks=task or [], supersedes=supersedes,
            status=status.value, mission=mission, session_id=session, by_agent=by is DecidedBy.agent,
            write_adr=write_adr, access_level=access_level,
        )
    data = outcome.to_json()
    if json_output:
        print_json(data)
        return
    verb = "Recorded" if data["added"] else "Already recorded"
    console.print(f"{verb} decision {data['ref']} in mission {quote_name(data['mission'])} "
                  f"({data['status']}, decided by {data['decided_by']})", markup=False)
    if data["adr_path"]:
        console.print(f"Wrote {data['adr_path']}: commit it; a later ingest recognises it", markup=False)
    for ref in data["supersedes"]:
        console.print(f"Supersedes {ref}", markup=False)


def register(app: typer.Typer) -> None:
    """Add ``decide`` to the root app."""
    app.command()(decide)
