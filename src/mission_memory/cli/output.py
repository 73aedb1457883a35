"""Terminal output shared by every command group: the rich consoles, JSON printing, error mapping."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console

from mission_memory.errors import MissionMemoryError

__all__ = ["console", "err_console", "print_json", "reported_errors"]

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON on stdout, non-ASCII kept readable (Ukrainian stays Ukrainian)."""
    typer.echo(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn a :class:`MissionMemoryError` into ``Error: <message>`` on stderr and exit code 1."""
    try:
        yield
    except MissionMemoryError as exc:
        err_console.print(f"[bold red]Error:[/] {exc}", markup=True, highlight=False)
        raise typer.Exit(1) from None
