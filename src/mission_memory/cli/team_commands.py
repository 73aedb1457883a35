"""Team server commands: ``team token add``, ``team token list`` and ``team token revoke`` (ADR 0046).

Tokens go to the token file (``MISSION_MEMORY_TEAM_TOKEN_FILE``, default ``<data dir>/team-tokens.toml``)
as SHA-256 hashes; ``add`` prints the token once, and it cannot be shown again. ``serve --transport
http`` picks the file up, and re-reads it when it changes, so no restart is needed.
"""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table

from mission_memory.cli.output import console, echo_text, err_console, print_json, reported_errors
from mission_memory.errors import InputError

__all__ = ["app"]

app = typer.Typer(help="A shared team server: operator tokens with clearances and roles.", no_args_is_help=True, rich_markup_mode="markdown")
token_app = typer.Typer(help="Issue, list and revoke operator tokens (stored hashed).", no_args_is_help=True, rich_markup_mode="markdown")
app.add_typer(token_app, name="token")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _token_file() -> Path:
    """The token file ``add`` writes (created when missing)."""
    from mission_memory.config import load_settings

    return load_settings().token_file_path


def _token_file_to_read() -> Path:
    """The token file ``list`` and ``revoke`` read; a file ``MISSION_MEMORY_TEAM_TOKEN_FILE`` names must exist
    (:func:`~mission_memory.teams.operator_tokens.token_file_to_read`)."""
    from mission_memory.config import load_settings
    from mission_memory.teams.operator_tokens import token_file_to_read

    settings = load_settings()
    return token_file_to_read(settings) or settings.token_file_path


def _expiry(value: str | None, now: datetime) -> datetime | None:
    """``--expires``: an ISO 8601 date/time (naive = UTC) or a duration ``30d`` / ``12h``."""
    if value is None:
        return None
    text = value.strip().lower()
    for unit, span in (("d", timedelta(days=1)), ("h", timedelta(hours=1))):
        if text.endswith(unit) and text[:-1].isdigit():
            return now + int(text[:-1]) * span
    from mission_memory.utc import parse_clock

    try:
        return parse_clock(value, "--expires")
    except InputError:
        raise InputError(
            f"--expires {value!r} is neither a date/time (2027-01-31, 2027-01-31T09:00:00Z) nor a duration (30d, 12h)"
        ) from None


@token_app.command("add")
def add(
    operator: Annotated[str, typer.Option("--operator", help="The operator the token's requests run as.")],
    clearance: Annotated[str, typer.Option("--clearance", help="Highest access level readable: public, internal, restricted, secret.")],
    role: Annotated[str, typer.Option("--role", help="operator (own practitioner records) or lead (everyone's).")] = "operator",
    mission: Annotated[
        list[str] | None, typer.Option("--mission", help="Scope workflow views to this mission (repeatable); default: all.")
    ] = None,
    expires: Annotated[
        str | None, typer.Option("--expires", help="Expiry: a date/time (ISO 8601, UTC when naive) or a duration (30d, 12h).")
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Issue a token; print it once (it is stored only as a SHA-256 hash)."""
    from mission_memory.teams.operator_tokens import add_token

    now = datetime.now(UTC)
    with reported_errors():
        path = _token_file()
        issued = add_token(
            path, operator=operator, clearance=clearance, role=role, missions=mission or (),
            expires=_expiry(expires, now), now=now,
        )
    entry = issued.entry
    if json_output:
        print_json({"token": issued.token, **entry.model_dump(mode="json", exclude={"sha256"}), "file": str(path)})
        return
    typer.echo(issued.token)
    expiry = entry.expires.isoformat() if entry.expires else "never"
    err_console.print(
        f"Token {entry.id} for {entry.operator} (clearance {entry.clearance.value}, role {entry.role.value}, "
        f"expires {expiry}) added to {path}. It is shown only now: hand it to the operator."
    )


@token_app.command("list")
def list_tokens(json_output: JsonOpt = False) -> None:
    """List the issued tokens (ids, operators, clearances, roles, expiry; never the tokens)."""
    from mission_memory.teams.operator_tokens import read_token_file

    with reported_errors():
        path = _token_file_to_read()
        entries = read_token_file(path)
    now = datetime.now(UTC)
    if json_output:
        print_json([e.model_dump(mode="json", exclude={"sha256"}) | {"expired": e.expired(now)} for e in entries])
        return
    if not entries:
        console.print(f"No tokens in {path}: add one with `mission-memory team token add`.")
        return
    header = ("id", "operator", "clearance", "role", "missions", "expires")
    rows = [
        (e.id, e.operator, e.clearance.value, e.role.value, ",".join(e.missions) or "all",
         (e.expires.isoformat() + (" (expired)" if e.expired(now) else "")) if e.expires else "never")
        for e in entries
    ]
    if not console.is_terminal:
        # Piped: one tab-separated line per token, whole (a table would be cut to 80 columns).
        for row in (header, *rows):
            echo_text("\t".join(row))
        return
    table = Table(*(Column(name, overflow="fold") for name in header))
    for row in rows:
        table.add_row(*row)
    console.print(table)


@token_app.command("revoke")
def revoke(
    token_id: Annotated[str, typer.Argument(help="The token's id (see `team token list`).")],
    json_output: JsonOpt = False,
) -> None:
    """Remove a token; a running server refuses it from its next request."""
    from mission_memory.teams.operator_tokens import revoke_token

    with reported_errors():
        path = _token_file_to_read()
        entry = revoke_token(path, token_id)
    if json_output:
        print_json({"revoked": entry.id, "operator": entry.operator})
    else:
        console.print(f"Revoked token {entry.id} of {entry.operator}.")
