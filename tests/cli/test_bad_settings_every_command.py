"""Every command reports a bad setting first: a clear error naming the variable, exit 1, no traceback.

The commands are walked from the app itself (a new command is covered without editing this file) and
run as the console script runs them (``main()``), with no arguments: the settings are checked before a
command parses its own. ``--help`` still works with a bad setting (it is how one finds the command again).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer.main

from mission_memory.cli.app import app, main


def _paths(command: object, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    subs = getattr(command, "commands", None)
    if not subs:
        yield path
        return
    for name, sub in subs.items():
        yield from _paths(sub, (*path, name))


COMMANDS = sorted(_paths(typer.main.get_command(app)))

BAD_SETTINGS = {
    "MISSION_MEMORY_TEAM_TOKENS": "{not json",
    "MISSION_MEMORY_ALERTMANAGER_MAPPING": "{not json",
    "MISSION_MEMORY_MAX_TOKEN_BUDGET": "lots",
}


def _run(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["mission-memory", *argv])
    try:
        main()
        code = 0
    except SystemExit as exited:
        code = exited.code if isinstance(exited.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_walk_finds_the_command_groups() -> None:
    assert len(COMMANDS) > 40 and ("team", "token", "list") in COMMANDS and ("status",) in COMMANDS


@pytest.mark.parametrize("variable", sorted(BAD_SETTINGS))
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_reports_a_bad_setting(command: tuple[str, ...], variable: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(variable, BAD_SETTINGS[variable])
    code, _, err = _run(list(command), monkeypatch, capsys)
    assert code == 1, err
    assert err.startswith("Error: ") and variable in err and "Traceback" not in err


def test_json_errors_stay_json_for_a_bad_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MISSION_MEMORY_TEAM_TOKENS", "{not json")
    code, _, err = _run(["status", "--json"], monkeypatch, capsys)
    assert code == 1
    assert err.startswith('{"error": ') and '"kind": "ConfigError"' in err and "MISSION_MEMORY_TEAM_TOKENS" in err


def test_help_still_works_with_a_bad_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MISSION_MEMORY_TEAM_TOKENS", "{not json")
    code, out, _ = _run(["status", "--help"], monkeypatch, capsys)
    assert code == 0 and "Usage" in out


def test_a_token_entry_that_is_invalid_is_reported_by_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MISSION_MEMORY_TEAM_TOKENS", '[{"id": "t-1", "operator": "ana"}]')
    code, _, err = _run(["status"], monkeypatch, capsys)
    assert code == 1 and "MISSION_MEMORY_TEAM_TOKENS is not a valid token list" in err


@pytest.mark.parametrize("command", [["team", "token", "list"], ["team", "token", "revoke", "t-00000000"]])
def test_a_token_file_setting_naming_no_file_is_an_error(command: list[str], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere" / "tok.toml"
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MISSION_MEMORY_TEAM_TOKEN_FILE", str(missing))
    code, out, err = _run(command, monkeypatch, capsys)
    assert code == 1, out
    assert "MISSION_MEMORY_TEAM_TOKEN_FILE" in err and "does not exist" in err


def test_token_add_still_creates_the_file_the_setting_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    named = tmp_path / "tok.toml"
    monkeypatch.setenv("MISSION_MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MISSION_MEMORY_TEAM_TOKEN_FILE", str(named))
    code, _, err = _run(["team", "token", "add", "--operator", "ana", "--clearance", "internal"], monkeypatch, capsys)
    assert code == 0, err
    assert named.exists()
    code, out, _ = _run(["team", "token", "list"], monkeypatch, capsys)
    assert code == 0 and "ana" in out
