"""``incident`` commands: show the mission's incident, and open, set or close it as the on-call operator.

Each command calls one :class:`~mission_memory.api.Memory` method (``incident``, ``change_incident``) and
prints the incident: readable lines for people (operator text fenced and escaped for the terminal),
``--json`` for scripts. The rules live in :mod:`mission_memory.operations.incident_state` (docs/adr/0091).
"""

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer

from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import echo_text, print_json, reported_errors
from mission_memory.fence import fence_notice, fenced, new_nonce
from mission_memory.utc import aware_clock, parse_clock_flag

if TYPE_CHECKING:  # the rules load with the command, not with --help (tests/cli/test_startup_imports.py)
    from mission_memory.operations.incident_state import Incident
    from mission_memory.records import Record

__all__ = ["app"]

app = typer.Typer(
    rich_markup_mode="markdown", invoke_without_command=True, no_args_is_help=False,
    help="The mission's incident: `incident` shows it, `incident list` every one; `open`, `status`, `severity`, "
         "`commander`, `next-update`, "
         "`contingency` and `close` change it. A critical alert or a flood opens one by itself; it closes when "
         "its alerts resolve and the flood is over.",
)

Mission = Annotated[str | None, typer.Option(help="Mission; default: MISSION_MEMORY_EVENT_MISSION or this folder's name.")]
Json = Annotated[bool, typer.Option("--json", help="Print the incident as JSON.")]
Now = Annotated[str | None, typer.Option(help="The clock (ISO 8601; default now), for replays.")]


def _clock(now: str | None) -> datetime:
    return aware_clock(parse_clock_flag(now, "--now"))


def _print(incident: "Incident | None", json_output: bool, at: datetime,
           linked: "tuple[list[Record], bool] | None" = None) -> None:
    from mission_memory.operations.incident_state import INCIDENT_RECORDS_SHOWN, describe_incident

    records, more = linked or ([], False)
    rows: list[dict[str, str]] = [{"record_id": r.id, "kind": r.kind.value, "time": r.provenance.time.isoformat(),
                                   "operator": r.operator or "", "title": r.title} for r in records]
    if json_output:
        payload = incident.to_json() if incident is not None else None
        if payload is not None and linked is not None:
            payload = {**payload, "records": rows, "records_left_out": more}
        print_json(payload)
        return
    if incident is None:
        echo_text("No incident: none has been opened on this mission (`incident open \"<title>\"` opens one).")
        return
    # Operator and alert text, read by people and agents alike: fenced as `handover notes` fences notes.
    nonce = new_nonce()
    text = "\n".join(describe_incident(incident, at))
    if linked is not None:
        text += (f"\nNotes and decisions recorded while it was open ({len(rows)}"
                 + (f", the newest {INCIDENT_RECORDS_SHOWN}; older ones left out" if more else "") + "):\n"
                 + ("\n".join(f"- {row['time'][:16]} {row['kind']} by {row['operator'] or 'unknown'}: "
                               f"{' '.join(str(row['title']).split())[:200]}" for row in rows) or "- none"))
    echo_text(f"{fence_notice(nonce)}\n{fenced(1, nonce, text)}")


def _change(what: str, value: str, mission: str | None, json_output: bool, now: str | None) -> None:
    with reported_errors():
        at = _clock(now)
        with open_memory() as memory:
            incident = memory.change_incident(what, value, mission=mission, now=at)
    _print(incident, json_output, at)


@app.callback()
def show(ctx: typer.Context, mission: Mission = None, json_output: Json = False, now: Now = None) -> None:
    """Show the mission's incident (the open one, else the latest resolved): status, severity, start,
    commander, next update, contingencies and its alerts."""
    if ctx.invoked_subcommand is not None:
        return
    with reported_errors():
        at = _clock(now)
        with open_memory() as memory:
            incident = memory.incident(mission)
            linked = memory.incident_records(mission, now=at)
    _print(incident, json_output, at, linked)


@app.command("open")
def open_(title: Annotated[str, typer.Argument(help="What the incident is about, in a line.")],
          mission: Mission = None, json_output: Json = False, now: Now = None) -> None:
    """Open an incident yourself (refused while one is open); its status is `investigating`."""
    _change("open", title, mission, json_output, now)


@app.command("status")
def status(value: Annotated[str, typer.Argument(help="investigating, identified, monitoring, or resolved (closes it).")],
           mission: Mission = None, json_output: Json = False, now: Now = None) -> None:
    """Set the open incident's status: investigating → identified → monitoring → resolved."""
    _change("status", value, mission, json_output, now)


@app.command("severity")
def severity(level: Annotated[str, typer.Argument(help="elevated, high or critical.")],
             mission: Mission = None, json_output: Json = False, now: Now = None) -> None:
    """Set the open incident's severity level by hand (the brief says who set it); while its alerts are open,
    not below the level they derive."""
    _change("severity", level, mission, json_output, now)


@app.command("list")
def list_(mission: Mission = None,
          json_output: Annotated[bool, typer.Option("--json", help="Print the incidents as JSON.")] = False,
          now: Now = None) -> None:
    """List the mission's incidents, open and past (resolved), newest first: id, title, status, severity,
    start, what opened it, commander, the source's incident, and when it resolved."""
    from mission_memory.operations.incident_state import incident_head

    with reported_errors():
        at = _clock(now)
        with open_memory() as memory:
            incidents = memory.incidents(mission)
    if json_output:
        print_json([i.to_json() for i in incidents])
        return
    if not incidents:
        echo_text("No incident: none has been opened on this mission.")
        return
    past = sum(1 for i in incidents if not i.is_open)
    nonce = new_nonce()
    text = "\n".join([f"{len(incidents)} incidents ({past} resolved), newest first:",
                      *(f"- {incident_head(i, day=at)}" for i in incidents)])
    echo_text(f"{fence_notice(nonce)}\n{fenced(1, nonce, text)}")


@app.command("commander")
def commander(name: Annotated[str, typer.Argument(help="Who commands the incident (a name or email).")],
              mission: Mission = None, json_output: Json = False, now: Now = None) -> None:
    """Name the open incident's commander."""
    _change("commander", name, mission, json_output, now)


@app.command("next-update")
def next_update(when: Annotated[str, typer.Argument(help="HH:MM (UTC, the next such time), 30m, 2h, or an ISO 8601 time.")],
                mission: Mission = None, json_output: Json = False, now: Now = None) -> None:
    """Set when the next status update is due; the brief says how long until it, or how overdue it is."""
    _change("next-update", when, mission, json_output, now)


@app.command("contingency")
def contingency(text: Annotated[str, typer.Argument(help='A plan: "if X then Y".')],
                mission: Mission = None, json_output: Json = False, now: Now = None) -> None:
    """Add a contingency to the open incident (kept in order, with who set it)."""
    _change("contingency", text, mission, json_output, now)


@app.command("close")
def close(reason: Annotated[str, typer.Argument(help="Why it is closed (default: closed by the operator).")] = "",
          mission: Mission = None, json_output: Json = False, now: Now = None) -> None:
    """Close the open incident (status resolved, with the time); its alerts do not reopen it."""
    _change("close", reason, mission, json_output, now)
