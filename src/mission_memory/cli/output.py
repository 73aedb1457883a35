"""Terminal output shared by every command group: the rich consoles, JSON printing, error mapping.

Errors are mapped in one place, :func:`reported_errors`: ``Error: <message>`` on stderr and exit
code 1, or, when the command was given ``--json``, one JSON object on stderr with the same exit code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from mission_memory.errors import BudgetError, InputError, MissionMemoryError, user_message

__all__ = ["check_budget_flag", "clip_argument", "console", "err_console", "print_json", "reported_errors"]

_ARGUMENT_ECHO_CHARS = 300
"""An argument echoed in a JSON error is cut to this many characters (a 120k-character task is not repeated)."""


def clip_argument(value: Any) -> Any:
    """``value`` for echoing in an error: long text cut to 300 characters with its full length noted."""
    if isinstance(value, str) and len(value) > _ARGUMENT_ECHO_CHARS:
        return f"{value[:_ARGUMENT_ECHO_CHARS]}… ({len(value)} characters)"
    return value


def check_budget_flag(budget: int | None, maximum: int) -> None:
    """Refuse a ``--budget`` outside ``1..maximum`` tokens, naming the flag the user typed.

    The core names its own parameter (``token_budget``); on the command line the user gave
    ``--budget``, so the CLI checks the flag first. None (the command's default) passes.

    Args:
        budget: the ``--budget`` value, in tokens, or None.
        maximum: ``settings.max_token_budget`` (MISSION_MEMORY_MAX_TOKEN_BUDGET), in tokens.

    Raises:
        InputError: ``--budget -5 is outside 1..200000 tokens …``.
    """
    if budget is not None and not 1 <= budget <= maximum:
        raise InputError(
            f"--budget {budget} is outside 1..{maximum} tokens (the maximum is the setting "
            "MISSION_MEMORY_MAX_TOKEN_BUDGET)"
        )


console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON on stdout, non-ASCII kept readable (Ukrainian stays Ukrainian)."""
    typer.echo(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn a :class:`MissionMemoryError` into a message on stderr and exit code 1.

    Without ``--json``: ``Error: <message>``. When the running command was given ``--json`` (found
    on the click context, so every command with that flag gets it without passing anything):
    ``{"error": <message>, "kind": <error class>, "input": {"command": ..., "arguments": {...}}}``
    on stderr, so a script reading JSON never has to parse prose. Either way pydantic's help URL is
    removed from the message. Ctrl-C (`KeyboardInterrupt`) prints how to continue and exits 130.
    """
    try:
        yield
    except MissionMemoryError as exc:
        ctx = _current_context()
        if isinstance(exc, BudgetError) and ctx is not None and _budget_flag(ctx):
            exc = exc.for_parameter(_budget_flag(ctx))  # the flag the user typed, not the core's parameter
        message = user_message(exc)
        if ctx is not None and _json_requested(ctx):
            payload = {
                "error": message,
                "kind": type(exc).__name__,
                "input": {"command": ctx.command_path, "arguments": _arguments(ctx)},
            }
            typer.echo(json.dumps(payload, ensure_ascii=False, default=str), err=True)
        else:
            err_console.print(f"[bold red]Error:[/] {escape(message)}", markup=True, highlight=False)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err_console.print(
            "Interrupted. Each write to the store is one transaction, so it holds only completed steps;"
            " re-run the same command to continue (ingest keeps what it stored).",
            markup=False, highlight=False,
        )
        raise typer.Exit(130) from None


def _current_context() -> Any:
    """The running command's click context, or None (typer from 0.2x ships its own copy of click)."""
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # an older typer runs on the click package
        from click import get_current_context  # type: ignore[no-redef]
    return get_current_context(silent=True)


def _budget_flag(ctx: Any) -> str:
    """How the running command spells its token-budget option (``--budget``), or "" when it has none."""
    for p in ctx.command.params:
        if p.name == "budget":
            return next((o for o in getattr(p, "opts", ()) if o.startswith("--")), "")
    return ""


def _json_params(ctx: Any) -> set[str]:
    """Names of the command's parameters spelled ``--json`` (none, or one)."""
    return {p.name for p in ctx.command.params if "--json" in getattr(p, "opts", ()) and p.name is not None}


def _json_requested(ctx: Any) -> bool:
    """Whether the command's ``--json`` flag is set (False for commands without one)."""
    return any(bool(ctx.params.get(name)) for name in _json_params(ctx))


def _arguments(ctx: Any) -> dict[str, Any]:
    """The command's parameters as given, JSON-ready (enums as their values, paths as text)."""
    out: dict[str, Any] = {}
    for name, value in ctx.params.items():
        if name not in _json_params(ctx):
            out[name] = clip_argument(getattr(value, "value", value))
    return out
