"""Ranking commands: ``ranking tune`` fits pull's fusion weights on retrieval-correction pairs.

Thin shell over :meth:`Memory.tune_ranking` (ADR 0032): parse the flags, call the core, print the
recall of the missed records before and after, on the training and the held-out pairs.
"""

from pathlib import Path
from typing import Annotated

import typer

from mission_memory.cli.numbers import number
from mission_memory.cli.opening import open_memory
from mission_memory.cli.output import console, print_json, reported_errors

__all__ = ["app"]

app = typer.Typer(help="Pull ranking: fit the fusion weights on retrieval corrections.", no_args_is_help=True, rich_markup_mode="markdown")


@app.command("tune")
def tune(
    pairs: Annotated[
        Path | None,
        typer.Option("--pairs", help="JSON Lines of retrieval-correction pairs (default: built from the store)."),
    ] = None,
    holdout: Annotated[float, typer.Option("--holdout", parser=number("--holdout", low=0, high=1),
                                           help="Share of the pairs held out, in (0, 1).")] = 0.3,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the train / held-out split.")] = 0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Measure and report; store nothing.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Fit the fusion weights on the pairs and adopt them only if held-out recall of missed records rises."""
    with reported_errors(), open_memory() as memory:
        report = memory.tune_ranking(pairs, holdout=holdout, seed=seed, dry_run=dry_run)
    if json_output:
        print_json(report.to_json())
        return
    b, a = report.before, report.after
    console.print(f"Pairs: {report.pairs} read, {report.used} with a missed record still stored "
                  f"({report.train} to fit, {report.holdout} held out)")
    console.print(f"Weights in use: k={b.rrf_k} dense={b.dense_weight} bm25={b.bm25_weight}")
    console.print(f"Fitted weights: k={a.rrf_k} dense={a.dense_weight} bm25={a.bm25_weight}")
    console.print(f"Recall of missed records, fit:      {report.train_recall_before:.1%} -> {report.train_recall_after:.1%}")
    console.print(f"Recall of missed records, held out: {report.holdout_recall_before:.1%} -> "
                  f"{report.holdout_recall_after:.1%}")
    console.print(("Adopted: " if report.adopted else "Not adopted: ") + report.reason)
