"""Every clock flag of the CLI is read by one parser (utc.parse_clock): the same forms, the same error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.cli.app import app

runner = CliRunner()

BAD = "yesterday-ish"


@pytest.mark.parametrize("args", [
    ["feed", "-", "--now", BAD],
    ["escalation", "status", "--now", BAD],
    ["refresh", "status", "--now", BAD],
    ["correct", "--class", "wrong-approach", "--category", "data", "--outcome", "modified",
     "--summary", "A sentence.", "--mission", "m", "--time", BAD],
    ["prompts", "list", "--since", BAD],
])
def test_a_bad_clock_flag_is_named_with_the_one_message(args: list[str], tmp_path: Path) -> None:
    flag = args[-2]
    result = runner.invoke(app, [*args, "--json"], input='{"id": "e"}\n')
    assert result.exit_code == 1, result.output
    error = json.loads(result.stderr.strip().splitlines()[-1])["error"]
    assert error.startswith(f"{flag} '{BAD}' is not an ISO 8601 time (e.g. 2026-03-01T12:00:00Z)"), error


def test_the_cli_parses_no_clock_of_its_own() -> None:
    """``datetime.fromisoformat`` on a flag lives in utc.py only (one clock parser)."""
    cli = Path(__file__).resolve().parents[2] / "src" / "mission_memory" / "cli"
    found = [p.name for p in cli.glob("*.py") if "fromisoformat(value" in p.read_text()]
    assert not found, found
