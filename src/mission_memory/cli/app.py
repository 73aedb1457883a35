"""Root of the ``mission-memory`` command line.

Each command group lives in its own module (``*_commands.py``) and is registered here. Commands
parse input, call one core method and render the result; errors from the package's error tree are
printed as ``Error: <message>`` on stderr with exit code 1.
"""

from __future__ import annotations

import sys

import typer

from mission_memory.errors import MissionMemoryError

app = typer.Typer(
    name="mission-memory",
    help="Memory for long-horizon agents whose operators rotate: ingest a mission, query a digest.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# --- command groups (one module each) ---------------------------------------------------------
from mission_memory.cli import core_commands  # noqa: E402

core_commands.register(app)
from mission_memory.cli import metrics_commands  # noqa: E402

app.add_typer(metrics_commands.app, name="metrics")
from mission_memory.cli import hook_commands, prompt_commands  # noqa: E402

app.add_typer(hook_commands.app, name="hook")
app.add_typer(prompt_commands.app, name="prompts")
from mission_memory.cli import refresh_commands  # noqa: E402

app.add_typer(refresh_commands.app, name="refresh")
# --- end of command groups --------------------------------------------------------------------


def main() -> None:
    """Console-script entry point: run the app, mapping package errors to ``Error: ...``."""
    try:
        app()
    except MissionMemoryError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
