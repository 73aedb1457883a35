"""Terminal output shared by every command group: the rich consoles, JSON printing, error mapping.

Errors are mapped in one place, :func:`reported_errors`: ``Error: <message>`` on stderr and exit
code 1, or, when the command was given ``--json``, one JSON object on stderr with the same exit code.

Stored text reaches the terminal only through this module (ADR 0089): :data:`console` and
:data:`err_console` escape every control, bidi and invisible character of what they print
(:func:`mission_memory.fence.terminal_safe`, applied to every string and every rendered segment,
tables included) and read no markup unless a call asks for it with ``markup=True`` (then stored
parts are escaped with :func:`rich.markup.escape`); :func:`echo_text` prints plain text the same
way and :func:`print_json` writes those characters as JSON escapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from mission_memory.errors import BudgetError, InputError, MissionMemoryError, user_message
from mission_memory.fence import json_terminal_safe, terminal_safe

__all__ = ["TerminalConsole", "check_budget_flag", "clip_argument", "console", "echo_text", "err_console", "json_text", "print_json", "reported_errors"]

_ARGUMENT_ECHO_CHARS = 300
"""An argument echoed in a JSON error is cut to this many characters (a 120k-character task is not repeated)."""


def clip_argument(value: Any) -> Any:
    """``value`` for echoing in an error: long text cut to 300 characters with its full length noted."""
    if isinstance(value, str) and len(value) > _ARGUMENT_ECHO_CHARS:
        return f"{value[:_ARGUMENT_ECHO_CHARS]}… ({len(value)} characters)"
    return value


def check_budget_flag(budget: int | None, maximum: int, least: int = 1, what: str = "") -> None:
    """Refuse a ``--budget`` outside ``least..maximum`` tokens, naming the flag the user typed.

    The core names its own parameter (``token_budget``); on the command line the user gave
    ``--budget``, so the CLI checks the flag first. None (the command's default) passes.

    Args:
        budget: the ``--budget`` value, in tokens, or None.
        maximum: ``settings.max_token_budget`` (MISSION_MEMORY_MAX_TOKEN_BUDGET), in tokens.
        least: the fewest tokens the command's output takes whatever is asked (a digest's:
            :func:`~mission_memory.retrieval.digest.least_digest_budget`); 1 when the core states its own need.
        what: what ``least`` holds, for the message (``a digest's header and closing line``).

    Raises:
        InputError: ``--budget 0 is outside 112..200000 tokens (112: the least a digest's header and
            closing line take; the maximum is the setting MISSION_MEMORY_MAX_TOKEN_BUDGET)``.
    """
    if budget is not None and not least <= budget <= maximum:
        floor = f"{least}: the least {what} take; " if what else ""
        raise InputError(
            f"--budget {budget} is outside {least}..{maximum} tokens ({floor}the maximum is the setting "
            "MISSION_MEMORY_MAX_TOKEN_BUDGET)"
        )


class TerminalConsole(Console):
    """A rich console that shows stored text as text: controls, bidi and invisible characters escaped
    (:func:`~mission_memory.fence.terminal_safe`) in every string it renders and in every segment it
    emits (a :class:`~rich.text.Text` built elsewhere, a table cell), rich's own styling codes kept.
    Markup, emoji codes and highlighting are off unless a call turns them on."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, emoji=False, highlight=False, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """:meth:`rich.console.Console.render_str` of ``text`` made terminal-safe first (markup tags hold no controls)."""
        return super().render_str(terminal_safe(text), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Any:
        """The segments of ``renderable``, each text segment terminal-safe; control segments (rich's own) unchanged."""
        for segment in super().render(renderable, options):
            if segment.control or terminal_safe(segment.text) is segment.text:
                yield segment
            else:
                yield Segment(terminal_safe(segment.text), segment.style)


console = TerminalConsole(soft_wrap=True)
err_console = TerminalConsole(stderr=True, soft_wrap=True)


def echo_text(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print ``text`` (a digest, a brief, a listing) as it is, with its control, bidi and invisible
    characters escaped (:func:`~mission_memory.fence.terminal_safe`); on stderr with ``err``."""
    typer.echo(terminal_safe(text), err=err, nl=nl)


def json_text(payload: Any, indent: int | None = 2) -> str:
    """``payload`` as JSON, non-ASCII kept readable, control, bidi and invisible characters written as
    JSON escapes (:func:`~mission_memory.fence.json_terminal_safe`): it parses to the same value."""
    return json_terminal_safe(json.dumps(payload, ensure_ascii=False, indent=indent, default=str))


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON on stdout, non-ASCII kept readable (Ukrainian stays Ukrainian),
    nothing a terminal would act on (:func:`json_text`)."""
    typer.echo(json_text(payload))


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
            typer.echo(json_text(payload, indent=None), err=True)
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
