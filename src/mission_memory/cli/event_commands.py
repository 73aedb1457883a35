"""``mission-memory feed`` and ``mission-memory escalation``: domain events in, the escalation state out.

``feed FILE|-`` reads JSON Lines or CSV events (a file, or standard input with ``-``), stores them
with :meth:`~mission_memory.api.Memory.record_events` and, unless ``--no-embed``, embeds what is
still waiting for a vector before exiting (the embedding queue's catch-up, docs/adr/0036).
``escalation status`` assesses the mission's escalation now, and stores it (at ``--now``: a what-if, nothing stored), and prints the mode,
α, the rate and the escalating sectors (docs/design.md §7). The noun ``feed`` does not collide with
``events``, which lists retrieval events.
"""

import os
import sys
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mission_memory.cli.numbers import number
from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import console, print_json, reported_errors
from mission_memory.errors import InputError, counted
from mission_memory.fence import neutralise_markers, quote_name
from mission_memory.utc import parse_clock_flag

if TYPE_CHECKING:
    from mission_memory.api import Memory

__all__ = ["escalation_app", "feed", "register"]

escalation_app = typer.Typer(
    rich_markup_mode="markdown",
    help="The escalation state: event rate vs capacity, degraded mode and the triage weight α.",
    no_args_is_help=True,
)


class EventFormat(StrEnum):
    """How ``feed`` reads its input."""

    auto = "auto"
    jsonl = "jsonl"
    csv = "csv"


def _max_retention_days() -> float:
    """:data:`mission_memory.config.MAX_RETENTION_DAYS`, read when an option is parsed (config stays
    unloaded for ``--help``)."""
    from mission_memory.config import MAX_RETENTION_DAYS

    return float(MAX_RETENTION_DAYS)

def _read_input(source: str) -> tuple[bytes, str]:
    """The bytes of ``source`` (``-`` is standard input), read no further than the batch limit allows.

    Raises:
        InputError: a folder, no such file, or more bytes than one batch accepts: a file's real size
            (its stat) is given, a stream's as "more than" the limit (it is not read to its end).
    """
    from mission_memory.operations.domain_events import MAX_EVENT_BATCH_BYTES, batch_too_large

    if source == "-":
        data = sys.stdin.buffer.read(MAX_EVENT_BATCH_BYTES + 1)
        if len(data) > MAX_EVENT_BATCH_BYTES:
            raise batch_too_large("<stdin>", _regular_file_size(sys.stdin))
        return data, "<stdin>"
    path = Path(source)
    if path.is_dir():
        raise InputError(f"{source} is a folder (give a JSON Lines or CSV file, or - for standard input)")
    if not path.is_file():
        raise InputError(f"{source}: no such file (give a JSON Lines or CSV file, or - for standard input)")
    with path.open("rb") as handle:
        data = handle.read(MAX_EVENT_BATCH_BYTES + 1)
        if len(data) > MAX_EVENT_BATCH_BYTES:
            raise batch_too_large(source, max(len(data), os.fstat(handle.fileno()).st_size))
        return data, source


def _regular_file_size(stream: Any) -> int | None:
    """The size of the file behind ``stream`` (standard input redirected from a file), or None for a
    pipe, a terminal or a stream without a descriptor."""
    import stat

    try:
        info = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def _detect(data: bytes, name: str, chosen: EventFormat) -> EventFormat:
    """The format ``--format auto`` reads: by the file's suffix, else by its content (``{`` or ``[``
    first: JSON; a first line of comma-separated names including ``id``: CSV).

    Raises:
        InputError: nothing to read, or content that is neither (named, with ``--format``).
    """
    if not data.strip():
        from mission_memory.operations.domain_events import no_events

        raise no_events(name)
    if chosen is not EventFormat.auto:
        return chosen
    suffix = Path(name).suffix.lower()
    if suffix == ".csv":
        return EventFormat.csv
    if suffix in (".jsonl", ".ndjson", ".json"):
        return EventFormat.jsonl
    if data.lstrip()[:1] in (b"{", b"["):
        return EventFormat.jsonl
    header = data.lstrip().split(b"\n", 1)[0].decode("utf-8", "replace")
    if "," in header and "id" in {column.strip().strip('"').lower() for column in header.split(",")}:
        return EventFormat.csv
    raise InputError(
        f"{name} is neither JSON Lines nor CSV: its first line is not a JSON object and not a CSV header "
        "naming id, time, sector, type, criticality and text (name the format with --format jsonl|csv)"
    )


def _check_new_mission(memory: "Memory", asked: str | None, new_mission: bool) -> tuple[str, bool]:
    """The mission ``feed`` writes to, and whether it starts with this feed.

    A mission that is not stored is started only when it was named (``--mission`` or
    ``MISSION_MEMORY_EVENT_MISSION``) and is not one typo from a stored name
    (:func:`~mission_memory.mission_scope.confusable_mission`), or when ``--new-mission`` says so: a
    defaulted folder name or a typo would otherwise scatter a shift's events over missions nobody reads.

    Raises:
        InputError: naming the mission, the stored ones and ``--new-mission``.
    """
    from mission_memory.mission_scope import confusable_mission, event_mission, known_missions

    named = asked or memory.settings.event_mission
    name = event_mission(asked, memory.settings.event_mission)
    stored = memory.store.missions()
    if name in stored:
        return name, False
    if new_mission:
        return name, True
    how = "" if named else " (this repository's or folder's name: no --mission and no MISSION_MEMORY_EVENT_MISSION)"
    if not named or confusable_mission(name, stored) is not None:
        raise InputError(
            f"no mission named {quote_name(name)} is stored{how} ({known_missions(name, stored, none='none yet')});"
            + (" check the name, or pass --new-mission to start it" if named
               else " name the mission with --mission, or pass --new-mission to start it")
        )
    return name, True


def feed(
    source: Annotated[str, typer.Argument(help="A JSON Lines or CSV file of events, or - for standard input.")],
    fmt: Annotated[EventFormat, typer.Option("--format", help="Input format (auto: by extension, then content).")] = EventFormat.auto,
    mission: Annotated[str | None, typer.Option(help="Mission; default MISSION_MEMORY_EVENT_MISSION, else this repository's (or folder's) name.")] = None,
    now: Annotated[str | None, typer.Option(help="Escalation clock (ISO 8601; default now), for replays.")] = None,
    no_embed: Annotated[bool, typer.Option("--no-embed", help="Store only; leave vectors to a later catch-up.")] = False,
    new_mission: Annotated[bool, typer.Option("--new-mission", help="Start the mission if it is not stored "
                                              "(needed when its name is defaulted or one typo from a stored one).")] = False,
    operator: Annotated[str | None, typer.Option(help="Who records these events: stamped on the events "
                                                 "that name no operator (default: MISSION_MEMORY_OPERATOR, "
                                                 "when set; machine feeds leave it unset).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Store domain events (JSON Lines, a JSON array or CSV) in the domain layer and assess the escalation.

    Every event is checked first; one bad event (its line and field named) stores nothing.
    """
    from mission_memory.fence import check_name
    from mission_memory.operations.domain_events import no_events, read_events_csv, read_events_jsonl

    with reported_errors():
        clock = parse_clock_flag(now, "--now")
        data, name = _read_input(source)
        kind = _detect(data, name, fmt)
        events = read_events_csv(data, name) if kind is EventFormat.csv else read_events_jsonl(data, name)
        if not events:
            raise no_events(name)
        if operator is None:
            from mission_memory.config import operator_setting

            operator = operator_setting() or None  # not git's e-mail: a cron feed is nobody's
        if operator is not None:
            check_name(operator, "--operator")
            events = [e if e.operator else e.model_copy(update={"operator": operator}) for e in events]
        with open_memory() as memory:
            target, started = _check_new_mission(memory, mission, new_mission)
            try:
                report = memory.record_events(events, target, now=clock, embed=False)
            except InputError as exc:  # the core names the event (events[3]); the user named the file
                raise InputError(f"{name}: {exc}") from None
            embedded = 0 if no_embed else memory.embed_pending()
    payload = {**report.to_json(), "embedded": embedded, "new_mission": started}
    if json_output:
        print_json(payload)
        return
    state = report.escalation
    if started:
        console.print(f"Started new mission {quote_name(report.mission)}.", markup=False)
    console.print(
        f"Stored {report.added} new, {report.replaced} updated (each keeps the versions it replaced), {report.unchanged} unchanged events"
        f" in mission {quote_name(report.mission)} · {embedded} records embedded (these and any left waiting for a vector)",
        markup=False,
    )
    console.print(_state_line(state.to_json()), markup=False)


def _shown_time(iso: str) -> str:
    """An ISO 8601 time as the tables show it, to the second in UTC (``--json`` keeps it whole)."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _state_line(state: dict[str, Any]) -> str:
    minutes = state["window_s"] / 60
    line = f"Escalation: {state['mode']} · α {state['alpha']:.2f} · {counted(state['rate'], 'event')} in {minutes:g} min"
    if state["since"]:
        line += f" · since {_shown_time(state['since'])}"
    return line


@escalation_app.command("status")
def status(
    mission: Annotated[str | None, typer.Option(help="Mission; default MISSION_MEMORY_EVENT_MISSION, else this repository's (or folder's) name.")] = None,
    now: Annotated[str | None, typer.Option(help="Assess at this time (ISO 8601; default now): a what-if, "
                                            "nothing is stored.")] = None,
    plot: Annotated[Path | None, typer.Option(help="Also draw the event rate and the flood thresholds to this "
                                              "image (PNG by its suffix).")] = None,
    hours: Annotated[float, typer.Option(parser=number("--hours", low=0, high=lambda: _max_retention_days() * 24, unit="hours"),
                                         help="How many hours before the clock the plot covers.")] = 6.0,
    json_output: Annotated[bool, typer.Option("--json", help="Print the state as JSON.")] = False,
) -> None:
    """Assess and print the escalation: mode, α, event rate in the window, escalating sectors."""
    with reported_errors():
        clock = parse_clock_flag(now, "--now")
        with open_memory() as memory:
            from mission_memory.mission_scope import event_mission

            name = event_mission(mission, memory.settings.event_mission)
            stored = memory.store.missions()
            if name not in stored:
                # An unknown mission has no events, so it would read as "normal": a false all-clear.
                names = ", ".join(sorted(stored)) or "none yet: feed events with `mission-memory feed FILE`"
                raise InputError(
                    f"no mission named {name!r} is stored, so its escalation cannot be assessed "
                    f"(missions: {names}; name one with --mission or MISSION_MEMORY_EVENT_MISSION)"
                )
            state = memory.escalation_status(name, now=clock, what_if=clock is not None)  # --now stores nothing
            capacity = memory.flood_policy().capacity
            drawn = memory.plot_event_rate(plot, name, hours=hours, now=clock) if plot is not None else None
            missing = memory.vectors_missing(now=clock, mission=name)
    queue = {key: missing[key] for key in ("events", "counted", "oldest_event", "oldest_event_age_s", "queue")}
    data = {"mission": name, "capacity": capacity, **state.to_json(), **({"plot": str(drawn)} if drawn else {}),
            "vector_queue": queue}
    if json_output:
        print_json(data)
        return
    console.print(f"Mission '{name}' · capacity {capacity:g} events per window", markup=False)
    console.print(_state_line(data), markup=False)
    console.print(f"Event vector queue: {queue['queue'] or 'caught up, every event has its vector'}", markup=False)
    for sector, count in sorted(data["escalating_sectors"].items(), key=lambda kv: -kv[1]):
        console.print(f"  escalating: {sector or '(no sector)'} · {counted(count, 'event')} · since {_shown_time(data['sector_since'][sector])}", markup=False)
    if drawn is not None:
        console.print(f"Event rate plotted to {drawn}", markup=False)


def firing(
    mission: Annotated[str | None, typer.Option(help="Mission; default MISSION_MEMORY_EVENT_MISSION, else this repository's (or folder's) name.")] = None,
    now: Annotated[str | None, typer.Option(help="As of this time (ISO 8601; default now).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List the alerts open now: fired and not resolved, whenever they started, most critical first."""
    from mission_memory.operations.alert_state import alert_line, firing_only

    with reported_errors():
        clock = parse_clock_flag(now, "--now")
        with open_memory() as memory:
            alerts = memory.firing_alerts(mission, now=clock)
    if json_output:
        print_json([a.to_json() for a in alerts])
        return
    if not alerts:
        console.print("No alert is firing.", markup=False)
        return
    silenced = len(alerts) - len(firing_only(alerts))
    console.print(f"{counted(len(alerts), 'alert')} open: {len(alerts) - silenced} firing, {silenced} silenced; most critical first,"
                  " silenced last (since UTC · criticality · alert: title · instance · sector · acknowledged"
                  " · assigned · event · runbook · silence · links):", markup=False)
    for a in alerts:  # stored names and URLs: one line each, no marker-like run (the console escapes controls)
        console.print(_cell(alert_line(a)), markup=False, soft_wrap=True)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _silence_length(text: str) -> float:
    """``--for``: a length such as ``90m``, ``2h`` or ``1d`` (s, m, h, d), as seconds; finite, up to 30 days."""
    from mission_memory.config import finite_number
    from mission_memory.operations.alert_state import MAX_SILENCE

    value, unit = text.strip()[:-1], text.strip()[-1:].lower()
    try:
        if unit not in _UNITS:
            raise ValueError(text)
        amount = float(value)
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a length such as 30m, 2h or 1d (units s, m, h, d)") from None
    try:
        return finite_number(amount * _UNITS[unit], "--for", low=1, high=MAX_SILENCE.total_seconds(), unit="seconds")
    except InputError as exc:
        raise typer.BadParameter(str(exc)) from None


def silence(
    alert: Annotated[str, typer.Argument(help="The alert: its fingerprint, event id, name or title (every open alert it names).")],
    length: Annotated[float, typer.Option("--for", parser=_silence_length, help="How long: 30m, 2h, 1d (at most 30 days); it expires by itself.")],
    reason: Annotated[str, typer.Option(help="Why (shown with the alert to the next shift).")],
    mission: Annotated[str | None, typer.Option(help="Mission; default MISSION_MEMORY_EVENT_MISSION, else this repository's (or folder's) name.")] = None,
    now: Annotated[str | None, typer.Option(help="As of this time (ISO 8601; default now).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Silence open alerts for a while: still listed, marked SILENCED, not counted as firing or in the incident's severity."""
    from datetime import timedelta

    with reported_errors():
        clock = parse_clock_flag(now, "--now") or datetime.now(UTC)
        with open_memory() as memory:
            done = memory.silence_alerts(alert, until=clock + timedelta(seconds=length), reason=reason,
                                         mission=mission, now=clock)
    if json_output:
        print_json({"silenced": done})
        return
    for s in done:
        console.print(_cell(f"Silenced {s['type']} ({s['fingerprint']}) until {s['until']} by {s['by']}: {s['reason']}"),
                      markup=False, soft_wrap=True)


def ack(
    alert: Annotated[str, typer.Argument(help="The alert: its fingerprint, event id, name or title (every open alert it names).")],
    operator: Annotated[str | None, typer.Option(help="Who acknowledges (default: MISSION_MEMORY_OPERATOR, else git user.email, else the OS user).")] = None,
    mission: Annotated[str | None, typer.Option(help="Mission; default MISSION_MEMORY_EVENT_MISSION, else this repository's (or folder's) name.")] = None,
    now: Annotated[str | None, typer.Option(help="As of this time (ISO 8601; default now).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Acknowledge open alerts from any source (Alertmanager and Grafana send no acknowledgement): shown as
    "acknowledged by NAME" until the alert resolves or its source reports it unacknowledged."""
    with reported_errors():
        clock = parse_clock_flag(now, "--now") or datetime.now(UTC)
        with open_memory() as memory:
            done = memory.acknowledge_alerts(alert, mission=mission, operator=operator, now=clock)
    if json_output:
        print_json({"acknowledged": done})
        return
    for a in done:
        console.print(_cell(f"Acknowledged {a['type']} ({a['fingerprint']}) as {a['by']}"), markup=False, soft_wrap=True)


def unsilence(
    alert: Annotated[str, typer.Argument(help="The alert: its fingerprint, event id, name or title.")],
    mission: Annotated[str | None, typer.Option(help="Mission; default MISSION_MEMORY_EVENT_MISSION, else this repository's (or folder's) name.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Lift the silences set on alerts by `events silence` before they expire."""
    with reported_errors(), open_memory() as memory:
        lifted = memory.unsilence_alerts(alert, mission=mission)
    if json_output:
        print_json({"unsilenced": lifted})
        return
    console.print(_cell(f"Lifted {len(lifted)} silences" + (": " + ", ".join(s["fingerprint"] for s in lifted) if lifted else
                                                           f" (no silence is set on {alert!r})")), markup=False)


def _cell(text: str) -> str:
    """Stored text as one table cell: whitespace runs (newlines too) collapsed, marker-like runs neutralised."""
    return neutralise_markers(" ".join(text.split()))


def prune(
    mission: Annotated[str | None, typer.Option(help="Only this mission (default: every mission).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would be pruned; delete nothing.")] = False,
    older_than_days: Annotated[float | None, typer.Option(
        parser=number("--older-than-days", low=0, high=_max_retention_days, unit="days"), help="Default retention in days (default: "
                                                           "MISSION_MEMORY_EVENT_RETENTION_DAYS, 90; 0 keeps all).")] = None,
    kind: Annotated[list[str] | None, typer.Option("--kind", help="TYPE=DAYS: retention of one event type "
                                                   "(repeatable; default MISSION_MEMORY_EVENT_RETENTION_KINDS).")] = None,
    now: Annotated[str | None, typer.Option(help="The clock (ISO 8601; default now).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Delete domain events older than their retention, resolved alerts first; open alerts are kept.

    Only domain events are pruned: decisions, documents, notes, handover briefs and commits never are.
    """
    with reported_errors():
        per_type: dict[str, float] | None = None
        if kind:
            per_type = {}
            for item in kind:
                name, sep, days = item.partition("=")
                try:
                    value = float(days)
                except ValueError:
                    sep = ""
                if not sep or not name.strip():
                    raise InputError(f"--kind {item!r} is not TYPE=DAYS (e.g. --kind heartbeat=2)")
                from mission_memory.config import MAX_RETENTION_DAYS, finite_number

                per_type[name.strip()] = finite_number(value, f"--kind {name.strip()}", low=0, high=MAX_RETENTION_DAYS,
                                                       unit="days")
        clock = parse_clock_flag(now, "--now")
        with open_memory() as memory:
            report = memory.prune_events(mission, dry_run=dry_run, now=clock, max_age_days=older_than_days,
                                         per_type_days=per_type)
    if json_output:
        print_json(report.to_json())
        return
    verb = "Would prune" if report.dry_run else "Pruned"
    cutoff = f" older than {report.cutoff:%Y-%m-%d %H:%M} UTC" if report.cutoff else ""
    if report.type_cutoffs:  # a --kind retention is its own cutoff: the default one does not apply to it
        own = ", ".join(f"{t} older than {c:%Y-%m-%d %H:%M} UTC" for t, c in sorted(report.type_cutoffs.items()))
        cutoff = f" ({own}{'; other types' + cutoff if cutoff else ''})"
    console.print(f"{verb} {report.total} events{cutoff} ({report.resolved} resolved alerts); "
                  f"{report.kept_open} kept because their alert is still open", markup=False)
    for name, count in sorted(report.pruned.items()):
        console.print(f"  {name}: {count}", markup=False)


def register(app: typer.Typer, events_app: typer.Typer) -> None:
    """Add ``feed``, ``prune``, ``events firing``/``silence``/``ack``/``unsilence`` and the ``escalation`` group to the root app."""
    app.command("feed")(feed)
    app.command("prune")(prune)
    events_app.command("firing")(firing)
    events_app.command("silence")(silence)
    events_app.command("ack")(ack)
    events_app.command("unsilence")(unsilence)
    app.add_typer(escalation_app, name="escalation")
