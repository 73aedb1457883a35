"""``mission-memory prompts …``: read, label, analyse and forget the captured prompt corpus.

Thin shells over :mod:`mission_memory.prompts`: each command reads the corpus from
``<data dir>/prompts.git`` (or ``--repo``), calls one function and renders the result as a table or,
with ``--json``, as JSON.
"""

from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from mission_memory.cli.output import console, json_text, print_json, reported_errors
from mission_memory.errors import InputError, counted
from mission_memory.utc import parse_clock_flag

if TYPE_CHECKING:
    from mission_memory.prompts.corpus import CapturedPrompt, PromptCorpus
    from mission_memory.prompts.intents import Intent

__all__ = ["app"]

app = typer.Typer(
    rich_markup_mode="markdown",
    help="The prompt corpus captured by the hook: list, export, intents, topics, switching, forget.",
    no_args_is_help=True,
)

RepoOpt = Annotated[
    Path | None, typer.Option("--repo", help="Prompt repository (default: `<data dir>/prompts.git`).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
SessionOpt = Annotated[str | None, typer.Option("--session", help="Only this session id.")]
RepositoryOpt = Annotated[
    str | None,
    typer.Option("--repository", help="Only prompts typed in this repository (path or folder name)."),
]
SinceOpt = Annotated[
    str | None, typer.Option("--since", help="Only prompts at or after this ISO date/time (UTC).")
]


def _corpus(repo: Path | None) -> "PromptCorpus":
    from mission_memory.config import load_settings
    from mission_memory.prompts.corpus import PromptCorpus, default_prompt_repo

    return PromptCorpus(repo or default_prompt_repo(load_settings().data_dir))


def _selected(
    repo: Path | None, session: str | None = None, repository: str | None = None, since: str | None = None
) -> "list[CapturedPrompt]":
    start = parse_clock_flag(since, "--since")
    return [
        p
        for p in _corpus(repo).prompts()
        if (session is None or p.session_id == session)
        and (repository is None or repository in (p.repository, p.repository_name))
        and (start is None or p.timestamp >= start)
    ]


def _labels(prompts: "list[CapturedPrompt]") -> "list[Intent]":
    from mission_memory.prompts.intents import label_intent

    seen: set[str | None] = set()
    labels = []
    for p in prompts:
        labels.append(label_intent(p.prompt, first_in_session=p.session_id not in seen).intent)
        seen.add(p.session_id)
    return labels


def _record(p: "CapturedPrompt") -> dict[str, object]:
    return p.model_dump(mode="json", by_alias=True)


@app.command("list")
def list_prompts(
    repo: RepoOpt = None,
    session: SessionOpt = None,
    repository: RepositoryOpt = None,
    since: SinceOpt = None,
    limit: Annotated[int, typer.Option(min=0, help="Show the newest N prompts (0: all).")] = 50,
    json_output: JsonOpt = False,
) -> None:
    """List captured prompts, oldest first (the newest --limit of them)."""
    with reported_errors():
        prompts = _selected(repo, session, repository, since)
    if limit:
        prompts = prompts[-limit:]
    if json_output:
        print_json([_record(p) for p in prompts])
        return
    table = Table("time (UTC)", "repository", "branch", "prompt")
    table.add_column("prompt id", overflow="fold", min_width=24)
    for p in prompts:
        first = p.prompt.strip().split("\n", 1)[0]
        table.add_row(
            p.timestamp.strftime("%Y-%m-%d %H:%M"), p.repository_name, p.branch or "", first[:80], p.prompt_id
        )
    console.print(table)


@app.command("export")
def export(
    repo: RepoOpt = None,
    session: SessionOpt = None,
    repository: RepositoryOpt = None,
    since: SinceOpt = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="One JSON array instead of JSON Lines.")
    ] = False,
) -> None:
    """Export prompts with all their fields and intent labels, as JSON Lines (default) or a JSON array."""
    with reported_errors():
        prompts = _selected(repo, session, repository, since)
    rows = [{**_record(p), "intent": label.value} for p, label in zip(prompts, _labels(prompts), strict=True)]
    if json_output:
        text = json_text(rows) + "\n"
    else:
        text = "".join(json_text(row, indent=None) + "\n" for row in rows)
    if output is None:
        typer.echo(text, nl=False)
    else:
        from mission_memory.stores.private_files import write_private_text

        write_private_text(output, text)
        console.print(f"Wrote {len(rows)} prompts to {output}")


@app.command("intents")
def intents(
    repo: RepoOpt = None,
    session: SessionOpt = None,
    repository: RepositoryOpt = None,
    since: SinceOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Label every prompt: new-task, correction, clarification, question, approval, meta."""
    from mission_memory.prompts.intents import Intent

    with reported_errors():
        prompts = _selected(repo, session, repository, since)
    labels = _labels(prompts)
    counts = Counter(labels)
    if json_output:
        print_json(
            {
                "labels": [intent.value for intent in Intent],
                "counts": {intent.value: counts.get(intent, 0) for intent in Intent},
                "prompts": [
                    {"prompt_id": p.prompt_id, "timestamp": p.timestamp.isoformat(), "intent": label.value}
                    for p, label in zip(prompts, labels, strict=True)
                ],
            }
        )
        return
    table = Table("intent", "prompts", "share")
    for intent in Intent:
        n = counts.get(intent, 0)
        table.add_row(intent.value, str(n), f"{n / len(prompts):.0%}" if prompts else "-")
    console.print(table)


@app.command("topics")
def topics(
    repo: RepoOpt = None,
    repository: RepositoryOpt = None,
    since: SinceOpt = None,
    top: Annotated[int, typer.Option(min=1, max=50, help="How many topics to track.")] = 10,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Also draw topics over time to this PNG.")
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Topic-frequency distribution per ISO week (share of each week's prompts mentioning a topic)."""
    from mission_memory.prompts.topics import topic_distribution

    with reported_errors():
        prompts = _selected(repo, None, repository, since)
        distribution = topic_distribution([(p.timestamp, p.prompt) for p in prompts], top=top)
        if plot is not None:
            from mission_memory.prompts.plots import plot_topics_over_time

            plot_topics_over_time(distribution, plot)
    if json_output:
        print_json({**distribution.as_dict(), "plot": str(plot) if plot else None})
        return
    table = Table("week", "prompts", *distribution.topics)
    for week in distribution.weeks:
        table.add_row(week.week, str(week.prompts), *(str(week.counts[t]) for t in distribution.topics))
    console.print(table)
    if plot is not None:
        console.print(f"Plot written to {plot}")


@app.command("switching")
def switching(
    repo: RepoOpt = None,
    since: SinceOpt = None,
    idle_minutes: Annotated[
        float, typer.Option("--idle-minutes", min=0.0, help="A pause longer than this ends a visit.")
    ] = 30.0,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Also draw the switching matrix to this PNG.")
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Cross-project switching: transitions between repositories, switch rate, dwell per repository."""
    from mission_memory.prompts.switching import switching_stats

    with reported_errors():
        prompts = _selected(repo, None, None, since)
        stats = switching_stats(
            [(p.timestamp, p.repository) for p in prompts], idle_gap=timedelta(minutes=idle_minutes)
        )
        names = _short_names(stats.repositories)
        if plot is not None:
            from mission_memory.prompts.plots import plot_switching_matrix

            plot_switching_matrix(stats, plot, names=[names[r] for r in stats.repositories])
    if json_output:
        print_json({**stats.as_dict(), "plot": str(plot) if plot else None})
        return
    console.print(f"{len(prompts)} prompts, {stats.switches} switches, switch rate {stats.switch_rate:.1%}")
    table = Table("repository", "prompts", "visits", "dwell total", "dwell median")
    for d in stats.dwell:
        table.add_row(
            names[d.repository],
            str(d.prompts),
            str(d.visits),
            _duration(d.total_seconds),
            _duration(d.median_seconds),
        )
    console.print(table)
    if plot is not None:
        console.print(f"Plot written to {plot}")


@app.command("forget")
def forget(
    session: Annotated[
        list[str] | None, typer.Option("--session", help="Forget every prompt of this session.")
    ] = None,
    prompt: Annotated[
        list[str] | None, typer.Option("--prompt", help="Forget this prompt (prompt id or commit id).")
    ] = None,
    repo: RepoOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    json_output: JsonOpt = False,
) -> None:
    """Really remove prompts: their refs are deleted and their git objects pruned from disk."""
    with reported_errors():
        if not session and not prompt:
            raise InputError("give --session and/or --prompt")
        if not yes and not typer.confirm("Permanently remove these prompts from the corpus?"):
            raise typer.Exit(1)
        forgotten = _corpus(repo).forget(sessions=session or [], prompt_ids=prompt or [])
    if json_output:
        print_json({"forgotten": forgotten})
        return
    console.print(f"Forgot {counted(len(forgotten), 'prompt')}")


def _short_names(repositories: list[str]) -> dict[str, str]:
    """Folder names for display, the full path kept where two repositories share a name."""
    names = Counter(Path(r).name or r for r in repositories)
    return {r: (Path(r).name or r) if names[Path(r).name or r] == 1 else r for r in repositories}


def _duration(seconds: float) -> str:
    minutes = seconds / 60
    return f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"
