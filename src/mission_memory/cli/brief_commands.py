"""Rotation commands: ``brief`` (the handover brief), ``brief ack`` and ``handover note``.

Each command parses its flags, calls one :class:`~mission_memory.api.Memory` method
(``rotation_brief``, ``acknowledge_brief``, ``handover_note``) and prints the result: the Markdown
brief for people, ``--json`` for scripts (docs/design.md §6).
"""

from pathlib import Path
from typing import Annotated

import typer

from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import (
    check_budget_flag,
    console,
    echo_text,
    err_console,
    print_json,
    reported_errors,
)
from mission_memory.errors import counted
from mission_memory.fence import fence_notice, fenced, listed_name, new_nonce, quote_name
from mission_memory.handover import DEFAULT_BRIEF_TOKEN_BUDGET

__all__ = ["brief_app", "handover_app"]

brief_app = typer.Typer(
    rich_markup_mode="markdown",
    help="The rotation brief: what the incoming operator needs from the outgoing one's shift.",
    invoke_without_command=True, no_args_is_help=False,
)
handover_app = typer.Typer(help="Handover notes the outgoing operator leaves for the next shift.", no_args_is_help=True, rich_markup_mode="markdown")


_SHOWN_NOTE_ID = 12
"""Characters of a note's id shown to people, as the brief shows them (handover/brief.py)."""


@brief_app.callback()
def brief(
    ctx: typer.Context,
    mission: Annotated[str | None, typer.Option(help="Mission; default: the only one stored, or this repository's.")] = None,
    from_operator: Annotated[
        str | None, typer.Option("--from", help="Outgoing operator; default: the latest other operator on the mission.")
    ] = None,
    for_operator: Annotated[
        str | None, typer.Option("--for", help="Incoming operator; default: you (MISSION_MEMORY_OPERATOR or git user.email).")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Window start: a date/time (ISO 8601) or Nd; default: the predecessor's latest stretch, at least 7 days.")
    ] = None,
    budget: Annotated[int | None, typer.Option(help=f"Token budget of the brief (default {DEFAULT_BRIEF_TOKEN_BUDGET}).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the brief and its entries as JSON.")] = False,
) -> None:
    """Print the rotation brief (status, what to do first, decisions, the predecessor's profile,
    open questions, watch items) and archive it. `brief ack` acknowledges it."""
    if ctx.invoked_subcommand is not None:
        return
    with reported_errors(), open_memory() as memory:
        check_budget_flag(budget, memory.settings.max_token_budget)

        # A --from that memory has never seen (a typo) gets the brief printed but not archived (the
        # core's rule, shared with the MCP tool), so `brief ack` cannot acknowledge a handover from nobody.
        result = memory.rotation_brief(
            mission=mission, from_operator=from_operator, for_operator=for_operator, since=since,
            token_budget=budget, repository=Path.cwd(), client="cli",
        )
    if not result.from_operator_known:
        err_console.print(
            f"Warning: memory holds nothing from operator {from_operator!r} on mission {result.window.mission!r}"
            " (no queries, corrections, decisions or notes), so the brief has no profile of them and is not"
            " archived; check the name.",
            markup=False, highlight=False,
        )
    if json_output:
        print_json(result.to_json())
    else:
        echo_text(result.text)


@brief_app.command("ack")
def ack(
    for_operator: Annotated[
        str | None, typer.Option("--for", help="Incoming operator; default: you (MISSION_MEMORY_OPERATOR or git user.email).")
    ] = None,
    mission: Annotated[str | None, typer.Option(help="Only briefs of this mission.")] = None,
    read_back: Annotated[
        str | None, typer.Option("--read-back", help="One line: what you understood you now hold (shown by the next brief).")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the acknowledgement as JSON.")] = False,
) -> None:
    """Record that the incoming operator has read their latest rotation brief."""
    with reported_errors(), open_memory() as memory:
        result = memory.acknowledge_brief(for_operator=for_operator, mission=mission, read_back=read_back)
    if json_output:
        print_json(result)
    else:
        console.print(f"Acknowledged brief {result['brief_id']} of mission {quote_name(result['mission'])} "
                      f"for {result['operator'] or 'unknown'} at {result['time']}", markup=False, highlight=False)
        if result.get("read_back"):  # the operator's own words, echoed to their terminal
            console.print(f"read-back: {result['read_back']}", markup=False, highlight=False, soft_wrap=True)


@handover_app.command("note")
def note(
    text: Annotated[str, typer.Argument(help="The note: a running hypothesis, the next step, or a warning.")],
    kind: Annotated[str, typer.Option(help="hypothesis | next-step | warning | resolved.")] = "next-step",
    mission: Annotated[str | None, typer.Option(help="Mission; default: the only one stored, or this repository's.")] = None,
    session: Annotated[str | None, typer.Option(help="The agent session the note belongs to.")] = None,
    closes: Annotated[
        list[str] | None, typer.Option("--closes", help="Id of an open note this one closes or replaces (repeatable).")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the stored record as JSON.")] = False,
) -> None:
    """Leave a handover note for the next operator; every brief shows it first until a note closes it."""
    with reported_errors(), open_memory() as memory:
        record = memory.handover_note(text, kind, mission=mission, session_id=session, closes=closes or ())
    # The note's id as `brief` and `handover notes` show it (its first 12 characters) and `--closes`
    # takes it; the record id is another hash, printed only in --json.
    note_id = str(record.attributes["note_id"])
    if json_output:
        print_json({"note_id": note_id, "record_id": record.id, "mission": record.provenance.mission,
                    "operator": record.operator, "kind": record.attributes["note_kind"],
                    "time": record.provenance.time.isoformat(), "ref": record.provenance.ref})
    else:
        console.print(f"Stored handover {record.attributes['note_kind']} {note_id[:_SHOWN_NOTE_ID]} for mission "
                      f"{quote_name(record.provenance.mission)} (the id `brief` and `handover notes` show; "
                      f"`--closes {note_id[:_SHOWN_NOTE_ID]}` closes it)", markup=False, highlight=False,
                      soft_wrap=True)


@handover_app.command("notes")
def notes(
    mission: Annotated[str | None, typer.Option(help="Mission; default: the only one stored, or this repository's.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the notes as JSON.")] = False,
) -> None:
    """Print the mission's open handover notes whole, newest first (those a short brief condensed or left out)."""
    with reported_errors(), open_memory() as memory:
        records = memory.open_handover_notes(mission)
    rows = [{"note_id": r.attributes.get("note_id"), "kind": r.attributes.get("note_kind"), "operator": r.operator,
             "time": r.provenance.time.isoformat(), "text": r.text} for r in records]
    if json_output:
        print_json(rows)
        return
    if not rows:
        echo_text("No open handover notes.")
        return
    # Operator text, read by people and by agents alike: each note fenced as the digest fences excerpts.
    nonce = new_nonce()
    echo_text(f"{counted(len(rows), 'open handover note')}, newest first.\n{fence_notice(nonce)}\n")
    for index, row in enumerate(rows, 1):
        operator = listed_name(str(row["operator"])) if row["operator"] else "unknown"
        echo_text(f"### {index}. [{row['kind']}] {str(row['note_id'])[:_SHOWN_NOTE_ID]} by {operator} at {row['time']}\n"
                  f"{fenced(index, nonce, str(row['text']))}\n")
