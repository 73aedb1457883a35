"""``mission-memory correct`` and ``mission-memory corrections …``: record, import, label, rate, export.

Thin shells over :class:`~mission_memory.api.Memory`'s corrections methods (docs/design.md §6): each
command parses its flags, calls one method and renders a table, or JSON with ``--json``.
"""

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import console, print_json, reported_errors
from mission_memory.errors import InputError
from mission_memory.fence import quote_name
from mission_memory.utc import parse_clock_flag

__all__ = ["app", "register"]

app = typer.Typer(
    rich_markup_mode="markdown",
    help="Operator corrections: import them from prompts and transcripts, label, rate, export pairs.",
    no_args_is_help=True,
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
MissionOpt = Annotated[str | None, typer.Option("--mission", help="Only this mission.")]


def correct(
    correction_class: Annotated[str, typer.Option("--class", help="How the agent was corrected (a slug: wrong-approach).")],
    category: Annotated[str, typer.Option("--category", help="Semantic category (a slug: data, tests, scope).")],
    outcome: Annotated[str, typer.Option("--outcome", help="accepted, rejected or modified.")],
    summary: Annotated[str, typer.Option("--summary", help="One sentence saying what was corrected (stored with secrets redacted).")],
    component: Annotated[str | None, typer.Option("--component", help="The affected component (a stored one).")] = None,
    expected: Annotated[
        list[str] | None,
        typer.Option("--expected", help="A record the agent should have had: id, path, commit sha or ADR-N (repeatable)."),
    ] = None,
    session: Annotated[str | None, typer.Option("--session", help="The agent session the correction belongs to.")] = None,
    mission: Annotated[str | None, typer.Option("--mission", help="The mission (default: the only stored one).")] = None,
    operator: Annotated[str | None, typer.Option("--operator", help="The operator (default: as for queries).")] = None,
    when: Annotated[str | None, typer.Option("--time", help="When it happened, ISO 8601 (default: now, UTC).")] = None,
    json_output: JsonOpt = False,
) -> None:
    """Record one operator correction as a practitioner record, labelled retrieval-caused or not."""
    with reported_errors(), open_memory() as memory:
        correction = memory.record_correction(
            correction_class=correction_class, category=category, outcome=outcome, summary=summary,
            component=component, expected=expected or (), session_id=session, mission=mission,
            operator=operator, time=parse_clock_flag(when, "--time"),
        )
    if json_output:
        print_json(correction.model_dump(mode="json"))
        return
    label = correction.label
    console.print(f"Recorded correction {correction.correction_id} in mission {quote_name(correction.mission)}.", markup=False)
    event = f" (follows retrieval event {label.retrieval_event_id})" if label.retrieval_event_id else ""
    console.print(f"retrieval_caused: {label.retrieval_caused.value}{event}")
    if label.missed_record_ids:
        console.print(f"missed records: {', '.join(label.missed_record_ids)}")


@app.command("import")
def import_command(
    prompts: Annotated[
        Path | None, typer.Option("--prompts", help="Prompt repository (default: `<data dir>/prompts.git`).")
    ] = None,
    transcripts: Annotated[
        list[Path] | None,
        typer.Option("--transcripts", help="Claude Code transcript file or folder (repeatable)."),
    ] = None,
    mission: Annotated[
        str | None, typer.Option("--mission", help="Mission of every correction (default: from the repository/cwd).")
    ] = None,
    operator: Annotated[
        str | None, typer.Option("--operator", help="Operator of the transcripts (default: as for queries).")
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Import corrections from captured prompts and transcripts; a re-run adds nothing."""
    with reported_errors(), open_memory() as memory:
        report = memory.import_corrections(
            prompts=prompts, transcripts=transcripts or (), mission=mission, operator=operator
        )
    data = report.to_dict()
    if json_output:
        print_json(data)
        return
    table = Table(title="Corrections imported", title_justify="left")
    for column in ("source", "found", "added", "unchanged", "replaced", "skipped"):
        table.add_column(column, justify="left" if column == "source" else "right")
    for source, counts in data["sources"].items():
        skipped = ", ".join(f"{k}: {v}" for k, v in counts["skipped"].items()) or "0"
        table.add_row(source, *(str(counts[k]) for k in ("found", "added", "unchanged", "replaced")), skipped)
    console.print(table)
    labels = data["labels"]
    console.print(
        "Labels: " + ", ".join(f"{k} {labels.get(k, 0)}" for k in ("true", "false", "unknown"))
    )


@app.command("label")
def label_command(mission: MissionOpt = None, json_output: JsonOpt = False) -> None:
    """Label every stored correction again (after new queries, ingests or a new threshold)."""
    with reported_errors(), open_memory() as memory:
        counts = memory.label_corrections(mission=mission)
    if json_output:
        print_json(counts)
        return
    console.print(
        f"true {counts['true']}, false {counts['false']}, unknown {counts['unknown']}; "
        f"{counts['changed']} labels changed."
    )


@app.command("rate")
def rate_command(
    by: Annotated[str, typer.Option("--by", help="Period: day or week.")] = "week",
    operator: Annotated[str | None, typer.Option("--operator", help="Only this operator's corrections.")] = None,
    mission: MissionOpt = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the share over time to this PNG file.")] = None,
    json_output: JsonOpt = False,
) -> None:
    """Share of retrieval-caused corrections per period, with counts and a 95% Wilson interval."""
    with reported_errors():
        if by not in ("day", "week"):
            raise InputError(f"--by {by!r} is not one of: day, week")
        with open_memory() as memory:
            rate = memory.correction_rate(by=by, operator=operator, mission=mission)
        if plot is not None:
            from mission_memory.corrections.rate import plot_correction_rate

            plot_correction_rate(rate, plot)
    if json_output:
        print_json(rate.to_dict())
        return
    if not rate.periods:
        console.print("No corrections stored yet: `mission-memory correct …` or `mission-memory corrections import`.")
        return
    table = Table(title=f"Retrieval-caused corrections per {rate.by}")
    for column in ("from", "true", "false", "unknown", "share", "95% interval"):
        table.add_column(column, justify="left" if column == "from" else "right")
    rows = [*rate.periods, *([rate.total] if rate.total else [])]
    for index, p in enumerate(rows):
        first = "all" if index == len(rate.periods) else p.start.isoformat()
        share = f"{p.share:.0%}" if p.share is not None else "-"
        interval = f"[{p.low:.0%}, {p.high:.0%}]" if p.low is not None and p.high is not None else "-"
        table.add_row(first, str(p.true), str(p.false), str(p.unknown), share, interval)
    console.print(table)
    if plot is not None:
        console.print(f"Plot written to {plot}")


@app.command("pairs")
def pairs_command(
    output: Annotated[
        str | None, typer.Option("-o", "--output", help="Write JSON Lines to this file ('-' or none: stdout).")
    ] = None,
    mission: MissionOpt = None,
    max_access_level: Annotated[
        str | None,
        typer.Option("--max-access-level", help="Leave out records above this level (public, internal, restricted, secret)."),
    ] = None,
    operator: Annotated[
        str | None, typer.Option("--operator", help="Only this operator's corrections (default: every operator's).")
    ] = None,
) -> None:
    """Export "retrieved X, should have served Y" pairs as JSON Lines (for `ranking tune`)."""
    from mission_memory.corrections.pairs import pairs_jsonl

    with reported_errors(), open_memory() as memory:
        access = _export_access(max_access_level, operator)
        text = pairs_jsonl(memory.correction_pairs(mission=mission, access=access))
        if output is None or output == "-":
            sys.stdout.write(text)
            return
        from mission_memory.stores.private_files import write_private_text

        try:
            write_private_text(Path(output), text)
        except OSError as exc:
            raise InputError(f"cannot write the pairs to {output}: {exc.strerror or exc}") from exc
    console.print(f"{text.count(chr(10))} pairs written to {output}", highlight=False)


def _export_access(max_access_level: str | None, operator: str | None) -> Any:
    """The access context of an export narrowed by ``--max-access-level`` / ``--operator`` (None: whole store)."""
    if max_access_level is None and operator is None:
        return None
    from mission_memory.records import AccessLevel
    from mission_memory.retrieval_events import resolve_operator
    from mission_memory.teams.access_control import AccessContext, Role

    try:
        level = AccessLevel((max_access_level or AccessLevel.SECRET.value).strip().lower())
    except ValueError:
        raise InputError(
            f"--max-access-level {max_access_level!r} is not one of: {', '.join(a.value for a in AccessLevel)}"
        ) from None
    who = operator or resolve_operator() or "unknown operator"
    return AccessContext(who, level, Role.OPERATOR if operator else Role.LEAD)


def register(root: typer.Typer) -> None:
    """Add ``correct`` and the ``corrections`` group to the root app."""
    root.command("correct")(correct)
    root.add_typer(app, name="corrections")
