"""``mission-memory team token add|list|revoke``: the token is printed once and stored as a hash."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.errors import ConfigError
from mission_memory.teams.operator_tokens import (
    OperatorTokenVerifier,
    TokenSource,
    hash_token,
    read_token_file,
)


def _run(*args: str) -> str:
    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, done.output
    return done.stdout


def test_add_prints_the_token_once_and_stores_only_its_hash(data_dir: Path) -> None:
    token = _run("team", "token", "add", "--operator", "olena", "--clearance", "restricted", "--role", "lead",
                 "--mission", "ops", "--expires", "30d").strip()
    assert token.startswith("mmt_") and len(token) > 40
    text = (data_dir / "team-tokens.toml").read_text(encoding="utf-8")
    assert token not in text and hash_token(token) in text
    (entry,) = read_token_file(data_dir / "team-tokens.toml")
    assert (entry.operator, entry.clearance.value, entry.role.value, entry.missions) == ("olena", "restricted", "lead", ("ops",))
    assert entry.expires is not None and entry.expires - datetime.now(UTC) > timedelta(days=29)
    listed = json.loads(_run("team", "token", "list", "--json"))
    assert [t["operator"] for t in listed] == ["olena"] and "sha256" not in listed[0]
    assert listed[0]["expired"] is False
    assert token not in _run("team", "token", "list")


def test_piped_list_prints_every_field_whole_one_token_per_line(data_dir: Path) -> None:
    operator, missions = "olena-kovalenko-from-the-night-shift", ["harbour-watch-northern-sector", "ops"]
    _run("team", "token", "add", "--operator", operator, "--clearance", "internal",
         "--mission", missions[0], "--mission", missions[1])
    header, line = _run("team", "token", "list").splitlines()
    assert header.split("\t") == ["id", "operator", "clearance", "role", "missions", "expires"]
    fields = line.split("\t")
    assert fields[1:] == [operator, "internal", "operator", ",".join(missions), "never"]
    assert fields[0] == read_token_file(data_dir / "team-tokens.toml")[0].id


def test_revoke_removes_the_token_and_the_verifier_refuses_it(data_dir: Path) -> None:
    token = _run("team", "token", "add", "--operator", "bob", "--clearance", "internal").strip()
    source = TokenSource(data_dir / "team-tokens.toml")
    verifier = OperatorTokenVerifier(source)
    accepted = anyio.run(verifier.verify_token, token)
    assert accepted is not None and accepted.entry.operator == "bob" and accepted.subject == "bob"
    (entry,) = read_token_file(data_dir / "team-tokens.toml")
    _run("team", "token", "revoke", entry.id)
    assert anyio.run(verifier.verify_token, token) is None
    assert read_token_file(data_dir / "team-tokens.toml") == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--operator", "bob", "--clearance", "cosmic"], "clearance 'cosmic' is not one of"),
        (["--operator", "bob", "--clearance", "internal", "--role", "admiral"], "role 'admiral' is not one of"),
        (["--operator", "bob", "--clearance", "internal", "--expires", "soon"], "--expires 'soon'"),
        (["--operator", "bob", "--clearance", "internal", "--expires", "2020-01-01"], "is not in the future"),
        (["--operator", " ", "--clearance", "internal"], "--operator is empty"),
    ],
)
def test_bad_token_options_are_errors_naming_them_and_write_nothing(
    data_dir: Path, args: list[str], message: str
) -> None:
    done = CliRunner().invoke(app, ["team", "token", "add", *args])
    assert done.exit_code == 1 and message in done.output
    assert not (data_dir / "team-tokens.toml").exists()


def test_an_expired_token_is_refused_by_the_verifier(data_dir: Path) -> None:
    from mission_memory.teams.operator_tokens import add_token

    past = datetime.now(UTC) - timedelta(hours=3)
    issued = add_token(data_dir / "team-tokens.toml", operator="bob", clearance="internal",
                       expires=past + timedelta(hours=1), now=past)
    assert anyio.run(OperatorTokenVerifier(TokenSource(data_dir / "team-tokens.toml")).verify_token, issued.token) is None


def test_a_broken_token_file_is_an_error_naming_the_file(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "team-tokens.toml").write_text('[[tokens]]\nid = "t-1"\noperator = "bob"\nclearance = "cosmic"\n'
                                               'sha256 = "' + "0" * 64 + '"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"team-tokens\.toml is not a valid token list \(token 1 \(id 't-1'\) clearance"):
        TokenSource(data_dir / "team-tokens.toml").entries()
    done = CliRunner().invoke(app, ["serve", "--transport", "http", "--port", "9"])
    assert done.exit_code == 1 and "team-tokens.toml" in done.output


def test_tokens_from_the_environment_need_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [{"id": "t-env", "operator": "ci", "clearance": "public", "sha256": hash_token("mmt_ci-token")}]
    source = TokenSource.from_environment_text(json.dumps(entries))
    assert source.lookup("mmt_ci-token") is not None and source.lookup("mmt_other") is None
    with pytest.raises(ConfigError, match="MISSION_MEMORY_TEAM_TOKENS is not JSON"):
        TokenSource.from_environment_text("[{")


def test_a_server_with_tokens_refuses_a_call_that_carries_none(data_dir: Path) -> None:
    from mcp import Client as McpClient

    from mission_memory.mcp.server import build_server

    source = TokenSource(entries=TokenSource.from_environment_text(json.dumps(
        [{"id": "t-1", "operator": "bob", "clearance": "internal", "sha256": hash_token("mmt_b")}]
    )).entries().values())

    async def go() -> object:
        async with McpClient(build_server(tokens=source)) as client:  # in-process: no HTTP, so no bearer header
            return await client.call_tool("workflow_memory_query", {"task_description": "anything"})

    result = anyio.run(go)
    assert result.is_error and "needs an operator token" in result.content[0].text  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
def test_a_token_file_others_can_write_is_refused_by_the_server_and_by_add(data_dir: Path, mode: int) -> None:
    from mission_memory.teams.operator_tokens import add_token

    path = data_dir / "team-tokens.toml"
    add_token(path, operator="bob", clearance="internal")
    path.chmod(mode)
    before = path.read_text(encoding="utf-8")
    with pytest.raises(ConfigError, match=r"team-tokens\.toml is writable by .*chmod 600"):
        TokenSource(path).entries()
    served = CliRunner().invoke(app, ["serve", "--transport", "http", "--port", "9"])
    assert served.exit_code == 1 and "is writable by" in served.output and "chmod 600" in served.output
    added = CliRunner().invoke(app, ["team", "token", "add", "--operator", "eve", "--clearance", "secret"])
    assert added.exit_code == 1 and "is writable by" in added.output
    assert path.read_text(encoding="utf-8") == before  # nothing was added to it


def test_a_token_file_setting_naming_a_missing_file_stops_the_server(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo in the variable must not start a server without authentication."""
    monkeypatch.setenv("MISSION_MEMORY_TEAM_TOKEN_FILE", str(tmp_path / "team-tokns.toml"))
    done = CliRunner().invoke(app, ["serve", "--transport", "http", "--port", "9"])
    assert done.exit_code == 1
    assert "MISSION_MEMORY_TEAM_TOKEN_FILE names" in done.output and "team-tokns.toml" in done.output
