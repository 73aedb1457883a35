"""``main`` runs a copy of the app that holds only the command or group named first on the command line
(``app_for``), so Typer builds the parameters of that one command or group instead of all 52 commands; what every command prints,
its help and its usage errors, is the same as from the whole app."""

from __future__ import annotations

import typer.main
from typer.testing import CliRunner

from mission_memory.cli.app import app, app_for


def _names() -> list[str]:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.main.TyperGroup)
    return sorted(group.commands)


def test_each_command_and_group_alone_prints_what_the_whole_app_prints() -> None:
    names = _names()
    assert len(names) > 20
    runner = CliRunner()
    for name in names:
        one = app_for([name, "--help"])
        group = typer.main.get_command(one)
        assert isinstance(group, typer.main.TyperGroup)
        assert sorted(group.commands) == [name]
        for args in ([name, "--help"], [name, "--no-such-option"]):
            alone, whole = runner.invoke(one, args), runner.invoke(app, args)
            assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output), args


def test_the_whole_app_runs_without_a_name_first() -> None:
    for args in ([], ["--help"], ["--version"], ["statu"], ["--json"]):
        assert app_for(args) is app
