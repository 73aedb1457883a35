"""Root of the ``mission-memory`` command line.

Each command group lives in its own module (``*_commands.py``) and is registered here. Commands
parse input, call one core method and render the result; errors from the package's error tree are
printed as ``Error: <message>`` on stderr with exit code 1.
"""

import copy
import json
import sys

import typer
import typer.main

from mission_memory.cli.output import clip_argument
from mission_memory.errors import MissionMemoryError
from mission_memory.fence import json_terminal_safe, terminal_safe

app = typer.Typer(
    name="mission-memory",
    help="Memory for long-horizon agents whose operators rotate: ingest a mission, query a digest.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="markdown",
)



def _print_version(value: bool) -> None:
    if value:
        from mission_memory import __version__

        typer.echo(f"mission-memory {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
    ),
) -> None:
    """Memory for long-horizon agents whose operators rotate: ingest a mission, query a digest."""


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
from mission_memory.cli import decision_commands  # noqa: E402

decision_commands.register(app)
from mission_memory.cli import brief_commands  # noqa: E402

app.add_typer(brief_commands.brief_app, name="brief")
app.add_typer(brief_commands.handover_app, name="handover")
from mission_memory.cli import incident_commands  # noqa: E402

app.add_typer(incident_commands.app, name="incident")
from mission_memory.cli import event_commands  # noqa: E402

event_commands.register(app, core_commands.events_app)
from mission_memory.cli import correction_commands  # noqa: E402

correction_commands.register(app)
from mission_memory.cli import ranking_commands  # noqa: E402

app.add_typer(ranking_commands.app, name="ranking")
from mission_memory.cli import team_commands  # noqa: E402

app.add_typer(team_commands.app, name="team")
from mission_memory.cli import transfer_commands  # noqa: E402

transfer_commands.register(app)
# --- end of command groups --------------------------------------------------------------------


def main() -> None:
    """Console-script entry point: run the app, mapping package errors to ``Error: ...``.

    With ``--json`` anywhere on the command line, a usage error (an unknown option, a bad choice)
    is printed like every other error under ``--json``: one JSON object on stderr, exit code 2.
    """
    if "--json" in sys.argv[1:]:
        raise SystemExit(_main_json())
    try:
        check_settings(sys.argv[1:])
        app_for(sys.argv[1:])()
    except MissionMemoryError as exc:
        print(terminal_safe(f"Error: {exc}"), file=sys.stderr)
        raise SystemExit(1) from None


def check_settings(argv: list[str]) -> None:
    """Check every ``MISSION_MEMORY_*`` setting before any command runs, so each command reports a bad
    one the same way (``Error: invalid setting (...; set by MISSION_MEMORY_...)``, exit 1), whether or
    not it reads that setting itself: :func:`~mission_memory.config.load_settings`, and the token
    settings as the server reads them (:func:`~mission_memory.teams.operator_tokens.check_token_settings`).
    Help and ``--version`` (and no command at all, which prints help) are shown whatever the settings.

    Raises:
        ConfigError: the first bad setting, named.
    """
    if not argv or {"--help", "--version"} & set(argv):
        return
    from mission_memory.config import load_settings

    settings = load_settings()
    if settings.team_tokens:
        from mission_memory.teams.operator_tokens import check_token_settings

        check_token_settings(settings)


def app_for(args: list[str]) -> typer.Typer:
    """The app to run for the command line ``args``: ``app`` itself, or, when ``args`` start with the name
    of one of its commands or command groups, a copy of ``app`` that holds only that one.

    Typer builds click's parameters of every command of the app it runs before it parses the command line
    (about 0.014 CPU-s for the 52 commands); a command needs only its own. The root's options, ``--help``
    of the whole app and a name that is none of the app's (click's "No such command") get the whole app.
    """
    if not args:
        return app
    commands = [info for info in app.registered_commands
                if info.callback is not None
                and (info.name or typer.main.get_command_name(info.callback.__name__)) == args[0]]
    groups = [info for info in app.registered_groups if typer.main.solve_typer_info_defaults(info).name == args[0]]
    if not commands and not groups:
        return app
    one = copy.copy(app)
    one.registered_commands = commands
    one.registered_groups = groups
    return one


def _main_json() -> int:
    """Run the app without click's own usage-error printing; return the exit code."""
    try:
        check_settings(sys.argv[1:])
        result = app_for(sys.argv[1:])(standalone_mode=False)
    except _click_exceptions() as exc:
        payload = {
            "error": exc.format_message(),  # type: ignore[attr-defined]
            "kind": type(exc).__name__,
            "input": {"command": "mission-memory", "argv": [clip_argument(a) for a in sys.argv[1:]]},
        }
        print(json_terminal_safe(json.dumps(payload, ensure_ascii=False)), file=sys.stderr)
        return int(exc.exit_code)  # type: ignore[attr-defined]
    except typer.Abort:
        print(json.dumps({"error": "aborted", "kind": "Abort"}), file=sys.stderr)
        return 1
    except MissionMemoryError as exc:
        print(json_terminal_safe(json.dumps({"error": str(exc), "kind": type(exc).__name__}, ensure_ascii=False)),
              file=sys.stderr)
        return 1
    return result if isinstance(result, int) else 0


def _click_exceptions() -> tuple[type[Exception], ...]:
    """Click's exception base class: typer's bundled copy of click, and the click package if present."""
    found: list[type[Exception]] = []
    try:
        from typer._click.exceptions import ClickException as Bundled

        found.append(Bundled)
    except ImportError:  # an older typer runs on the click package
        pass
    try:
        from click.exceptions import ClickException as Package

        found.append(Package)
    except ImportError:
        pass
    return tuple(found)
