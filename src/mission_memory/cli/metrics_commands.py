"""``mission-memory metrics ...``: measure session-start cost, instructions growth and corrections.

A thin shell over :mod:`mission_memory.metrics` (docs/design.md §9): each command parses its input,
calls the metrics functions and renders a table, JSON or CSV. The metrics modules (numpy,
pydantic, matplotlib) are imported when a command runs, so the CLI starts fast.
"""

import csv
import io
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from mission_memory.cli.numbers import number
from mission_memory.cli.output import console, echo_text, print_json, reported_errors
from mission_memory.errors import InputError

if TYPE_CHECKING:
    from mission_memory.metrics.session_comparison import GroupComparison
    from mission_memory.metrics.session_metrics import MetricsOptions, SessionMetrics, SessionsSummary
    from mission_memory.metrics.stats import Distribution
    from mission_memory.metrics.transcript_sessions import ReadReport

app = typer.Typer(
    rich_markup_mode="markdown",
    help="Measure the problem: session-start cost (T, K, W), instructions-file growth, corrections.",
    no_args_is_help=True,
)

INIT_BOUNDARIES = ("first-edit", "first-round", "session")

PathsArgument = Annotated[
    list[Path],
    typer.Argument(
        help="Transcript files or folders (searched recursively for *.jsonl).", show_default=False
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
InitOption = Annotated[
    str,
    typer.Option(
        "--init-boundary",
        help="Where initialization ends: first-edit (first Edit/Write/MultiEdit/NotebookEdit call; "
        "the paper's), first-round (the operator's second prompt) or session (never).",
    ),
]
SubagentsOption = Annotated[
    bool,
    typer.Option(
        "--include-subagents/--main-only",
        help="Count subagents' reads in K and W (default: the main conversation only).",
    ),
]


@app.command("sessions")
def sessions_command(
    paths: PathsArgument,
    json_output: JsonOption = False,
    csv_output: Annotated[bool, typer.Option("--csv", help="Print one CSV row per session.")] = False,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write histograms of T and W to this PNG file.")
    ] = None,
    init_boundary: InitOption = "first-edit",
    include_subagents: SubagentsOption = False,
) -> None:
    """T, K, W and counts per session, with median/mean/sd/P10/P90 over sessions."""
    with reported_errors():
        if json_output and csv_output:
            raise InputError("--json and --csv are exclusive: choose one output format")
        from mission_memory.metrics.session_metrics import measure_sessions, summarize_sessions
        from mission_memory.metrics.transcript_sessions import read_sessions

        options = _options(init_boundary, include_subagents)
        sessions, report = read_sessions(paths)
        metrics = measure_sessions(sessions, options)
        summary = summarize_sessions(metrics)
        if plot is not None:
            from mission_memory.metrics.plots import plot_session_distributions

            plot_session_distributions(metrics, plot)
        if json_output:
            payload = summary.to_dict()
            payload["read"] = report.to_dict()
            payload["options"] = {
                "init_boundary": str(options.init_boundary),
                "include_subagents": options.include_subagents,
            }
            print_json({"sessions": [m.to_dict() for m in metrics], "summary": payload})
        elif csv_output:
            echo_text(_sessions_csv(metrics), nl=False)
        else:
            _print_sessions(metrics, summary, report)
            if plot is not None:
                console.print(f"Plot written to {plot}")


@app.command("growth")
def growth_command(
    repo: Annotated[Path, typer.Argument(help="A git repository (or a folder inside one).")],
    path: Annotated[
        str | None,
        typer.Option(
            "--path",
            help="The instructions file, relative to the repository root "
            "[default: the first of CLAUDE.md, AGENTS.md with history].",
        ),
    ] = None,
    json_output: JsonOption = False,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write size over commit time to this PNG file.")
    ] = None,
) -> None:
    """Size of CLAUDE.md / AGENTS.md at every commit that changed it, with chars/day and R²."""
    with reported_errors():
        from mission_memory.metrics.instructions_growth import measure_instructions_growth

        growth = measure_instructions_growth(repo, path)
        if plot is not None:
            from mission_memory.metrics.plots import plot_instructions_growth

            plot_instructions_growth(growth, plot)
        if json_output:
            print_json(growth.to_dict())
            return
        table = Table(title=f"{growth.path} in {growth.repo}")
        for column in ("commit", "committed", "chars", "lines"):
            table.add_column(column, justify="right" if column in ("chars", "lines") else "left")
        for version in growth.versions:
            table.add_row(
                version.commit[:10],
                version.time.strftime("%Y-%m-%d %H:%M"),
                str(version.chars),
                str(version.lines),
            )
        console.print(table)
        slope = f"{growth.chars_per_day:.1f} chars/day" if growth.chars_per_day is not None else "slope n/a"
        r2 = f"R² = {growth.r2:.3f}" if growth.r2 is not None else "R² n/a"
        console.print(
            f"{len(growth.versions)} commits over {growth.days:.1f} days: "
            f"{growth.first_chars} -> {growth.last_chars} chars; {slope}, {r2}"
        )
        if plot is not None:
            console.print(f"Plot written to {plot}")


@app.command("compare")
def compare_command(
    a: Annotated[list[Path], typer.Option("--a", help="Group a: transcript file or folder (repeatable).")],
    b: Annotated[list[Path], typer.Option("--b", help="Group b: transcript file or folder (repeatable).")],
    label_a: Annotated[str, typer.Option("--label-a", help="Name of group a.")] = "a",
    label_b: Annotated[str, typer.Option("--label-b", help="Name of group b.")] = "b",
    json_output: JsonOption = False,
    confidence: Annotated[float, typer.Option("--confidence", parser=number("--confidence", low=0, high=1),
                                              help="Confidence level of intervals.")] = 0.95,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.")] = 9999,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    init_boundary: InitOption = "first-edit",
    include_subagents: SubagentsOption = False,
) -> None:
    """Compare two groups of sessions on T, K, W and rounds: change, Hedges' g, bootstrap CI."""
    with reported_errors():
        from mission_memory.metrics.session_comparison import compare_session_groups
        from mission_memory.metrics.session_metrics import measure_sessions
        from mission_memory.metrics.transcript_sessions import read_sessions

        options = _options(init_boundary, include_subagents)
        group_a = measure_sessions(read_sessions(a)[0], options)
        group_b = measure_sessions(read_sessions(b)[0], options)
        comparison = compare_session_groups(
            group_a,
            group_b,
            label_a=label_a,
            label_b=label_b,
            confidence=confidence,
            n_resamples=resamples,
            seed=seed,
        )
        if json_output:
            print_json(comparison.to_dict())
            return
        _print_comparison(comparison)


@app.command("rotation")
def rotation_command(
    paths: PathsArgument,
    operators: Annotated[
        Path | None,
        typer.Option(
            "--operators",
            help="Session -> operator mapping: a JSON object or CSV/TSV lines 'session_id,operator'. "
            "Without it, operators are read from the prompt corpus in the data dir.",
        ),
    ] = None,
    json_output: JsonOption = False,
    confidence: Annotated[float, typer.Option("--confidence", parser=number("--confidence", low=0, high=1),
                                              help="Confidence level of intervals.")] = 0.95,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.")] = 9999,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    init_boundary: InitOption = "first-edit",
    include_subagents: SubagentsOption = False,
) -> None:
    """Sessions right after an operator change vs the others, per mission (working directory)."""
    with reported_errors():
        from mission_memory.metrics.rotation import (
            compare_rotation,
            load_operator_mapping,
            operators_from_prompts,
            split_by_rotation,
        )
        from mission_memory.metrics.session_metrics import measure_sessions
        from mission_memory.metrics.transcript_sessions import read_sessions

        sessions, _ = read_sessions(paths)
        if operators is not None:
            operator_of = load_operator_mapping(operators)
        else:
            from mission_memory.config import load_settings
            from mission_memory.prompts.corpus import PromptCorpus, default_prompt_repo

            operator_of = operators_from_prompts(PromptCorpus(default_prompt_repo(load_settings().data_dir)).prompts())
            if not operator_of:
                raise InputError(
                    "no operators known: pass --operators FILE (session_id,operator), or capture prompts "
                    "with the prompt hook (`mission-memory hook install`)"
                )
        mission_of = {s.session_id: s.main.cwd or "" for s in sessions}
        split = split_by_rotation(
            measure_sessions(sessions, _options(init_boundary, include_subagents)), operator_of, mission_of
        )
        comparison = compare_rotation(split, confidence=confidence, n_resamples=resamples, seed=seed)
        if json_output:
            print_json({"split": split.to_dict(), "comparison": comparison.to_dict()})
            return
        console.print(
            f"{len(split.rotations)} rotations; {len(split.same_operator)} sessions with the same operator; "
            f"left out: {len(split.first_of_mission)} first of their mission, "
            f"{len(split.unknown_operator)} without an operator, {len(split.no_start)} without a time."
        )
        _print_comparison(comparison)


@app.command("corrections")
def corrections_command(paths: PathsArgument, json_output: JsonOption = False) -> None:
    """Operator corrections seen in transcripts: rejected tool calls, interruptions, redirects, reworked edits.

    The same detector as `mission-memory corrections import` (corrections/detector.py): each
    correction with its class, semantic category, outcome and the components (top-level folders of
    the session's working directory) it concerned; no prompt, tool input or file text.
    """
    with reported_errors():
        from mission_memory.corrections.detector import detect_transcript_corrections
        from mission_memory.corrections.practitioner_records import CorrectionSource, correction_id_for
        from mission_memory.metrics.transcript_sessions import read_sessions

        sessions, _ = read_sessions(paths)
        found = [d for s in sessions for d in detect_transcript_corrections(s, known_component=lambda _: False)]
        rows = [
            {"id": correction_id_for(CorrectionSource(d.source), d.session_id, d.anchor), "session_id": d.session_id, "time": d.time.isoformat() if d.time else None,
             "kind": d.correction_class, "category": d.category, "outcome": d.outcome, "tool": d.tool,
             "components": list(d.components)}
            for d in found
        ]
        if json_output:
            print_json({"corrections": rows})
            return
        if not rows:
            console.print(f"No corrections found in {len(sessions)} sessions.")
            return
        table = Table(title=f"{len(rows)} corrections in {len(sessions)} sessions")
        for column in ("time", "session", "kind", "category", "outcome", "tool"):
            table.add_column(column, no_wrap=True)
        table.add_column("components", overflow="fold")
        for d in found:
            table.add_row(
                d.time.strftime("%Y-%m-%d %H:%M:%S") if d.time else "-",
                (d.session_id or "-")[:8],
                d.correction_class,
                d.category,
                d.outcome,
                d.tool or "-",
                ", ".join(d.components) or "-",
            )
        console.print(table)


def _print_comparison(comparison: "GroupComparison") -> None:
    """Render a group comparison as a table: medians, relative changes, Hedges' g, bootstrap CI."""
    label_a, label_b = comparison.label_a, comparison.label_b
    table = Table(title=f"{label_a} (N={comparison.n_a}) vs {label_b} (N={comparison.n_b})")
    for column in (
        "metric",
        f"median {label_a}",
        f"median {label_b}",
        "Δ median",
        "Δ mean",
        "Hedges' g [CI]",
        "median diff [bootstrap CI]",
    ):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for m in comparison.metrics:
        g = (
            f"{m.hedges_g.g:+.2f} [{m.hedges_g.low:+.2f}, {m.hedges_g.high:+.2f}]"
            if m.hedges_g
            else "n/a"
        )
        diff = m.median_difference
        table.add_row(
            m.metric,
            _number(m.a.median),
            _number(m.b.median),
            _percent(m.median_change, signed=True),
            _percent(m.mean_change, signed=True),
            g,
            f"{diff.estimate:+.4g} [{diff.low:+.4g}, {diff.high:+.4g}]" if diff else "n/a",
        )
    console.print(table)


def _options(init_boundary: str, include_subagents: bool) -> "MetricsOptions":
    from mission_memory.metrics.session_metrics import InitBoundary, MetricsOptions

    if init_boundary not in INIT_BOUNDARIES:
        raise InputError(f"--init-boundary {init_boundary!r} is not one of: {', '.join(INIT_BOUNDARIES)}")
    return MetricsOptions(init_boundary=InitBoundary(init_boundary), include_subagents=include_subagents)


CSV_COLUMNS = (
    "session_id",
    "path",
    "start",
    "end",
    "T",
    "K",
    "W",
    "init_ended_by_edit",
    "api_calls",
    "subagent_api_calls",
    "input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
    "rounds",
    "init_files_read",
    "files_read",
    "files_edited",
    "tools_used",
)


def _sessions_csv(metrics: "list[SessionMetrics]") -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for m in metrics:
        row = m.to_dict()
        row["init_files_read"] = len(m.init_files_read)
        row["files_read"] = len(m.files_read)
        row["files_edited"] = len(m.files_edited)
        row["tools_used"] = ";".join(f"{name}:{count}" for name, count in m.tools_used.items())
        writer.writerow(["" if row[c] is None else row[c] for c in CSV_COLUMNS])
    return buffer.getvalue()


def _print_sessions(metrics: "list[SessionMetrics]", summary: "SessionsSummary", report: "ReadReport") -> None:
    if not metrics:
        console.print(f"No sessions found ({report.files} transcript files read).")
        return
    table = Table(title=f"Session-start cost, {summary.N} sessions")
    for column in ("session", "start (UTC)", "T", "K", "W", "calls", "rounds", "tokens in"):
        left = column in ("session", "start (UTC)")
        table.add_column(column, justify="left" if left else "right", no_wrap=left)
    for m in metrics:
        table.add_row(
            m.session_id[:8],
            m.start.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if m.start else "-",
            _number(m.T),
            str(m.K),
            _percent(m.W),
            str(m.api_calls),
            str(m.rounds),
            _number(m.input_tokens),
        )
    console.print(table)
    stats = Table(title="Over sessions (the paper's figures: T median 30,115; W median 60%)")
    for column in ("metric", "N", "median", "mean", "sd", "P10", "P90"):
        stats.add_column(column, justify="left" if column == "metric" else "right")
    rows: tuple[tuple[str, Distribution, bool], ...] = (
        ("T (tokens)", summary.T, False),
        ("K (reads)", summary.K, False),
        ("W (share)", summary.W, True),
        ("rounds", summary.rounds, False),
    )
    for name, dist, share in rows:
        show = _percent if share else _number
        stats.add_row(
            name,
            str(dist.n),
            show(dist.median),
            show(dist.mean),
            show(dist.sd),
            show(dist.p10),
            show(dist.p90),
        )
    console.print(stats)
    console.print(
        f"Sessions with no read during initialization: {_percent(summary.K_zero_share)}; "
        f"with W > 50%: {_percent(summary.W_over_half_share)}"
    )
    skipped = []
    if report.non_json_lines:
        skipped.append(f"{report.non_json_lines} non-JSON lines")
    if report.not_transcripts:
        skipped.append(f"{len(report.not_transcripts)} files that are not transcripts (no JSON line)")
    if report.truncated_last_lines:
        skipped.append(f"{report.truncated_last_lines} truncated last lines")
    if report.unknown_types:
        skipped.append(f"{sum(report.unknown_types.values())} records of unknown type")
    if report.orphan_subagent_files:
        skipped.append(f"{report.orphan_subagent_files} subagent files without their session")
    if skipped:
        console.print("Skipped: " + ", ".join(skipped))


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:,.2f}"


def _percent(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.0%}" if signed else f"{value:.0%}"
