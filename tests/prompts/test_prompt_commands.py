"""The ``mission-memory prompts`` and ``hook`` command groups, through typer's CliRunner and the real script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.cli.app import app

runner = CliRunner()


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def build(capture) -> None:
    capture("2025-03-03T09:00:00+00:00", "Додай експорт промптів", session="s-a", cwd="/src/alpha")
    capture("2025-03-03T09:05:00+00:00", "Ні, ти зламав тести", session="s-a", cwd="/src/alpha")
    capture("2025-03-03T09:10:00+00:00", "Why is the digest so long?", session="s-b", cwd="/src/beta")
    capture("2025-03-10T09:00:00+00:00", "yes", session="s-b", cwd="/src/beta")


def test_list_json_holds_every_field(capture):
    build(capture)
    rows = json.loads(invoke("prompts", "list", "--json"))
    assert rows[0]["prompt"] == "Додай експорт промптів"
    assert {"prompt_id", "timestamp", "session_id", "repository", "branch", "permission_mode"} <= set(rows[0])
    assert len(json.loads(invoke("prompts", "list", "--json", "--repository", "beta"))) == 2


def test_export_writes_json_lines_with_intents(capture, tmp_path):
    build(capture)
    out = tmp_path / "corpus.jsonl"
    invoke("prompts", "export", "-o", str(out))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["intent"] for r in rows] == ["new-task", "correction", "question", "approval"]


def test_intents_topics_and_switching_as_json_with_plots(capture, tmp_path):
    build(capture)
    intents = json.loads(invoke("prompts", "intents", "--json"))
    assert intents["counts"]["correction"] == 1 and len(intents["labels"]) == 6
    topics = json.loads(invoke("prompts", "topics", "--json", "--plot", str(tmp_path / "t.png")))
    assert [w["week"] for w in topics["weeks"]] == ["2025-W10", "2025-W11"]
    switching = json.loads(invoke("prompts", "switching", "--json", "--plot", str(tmp_path / "s.png")))
    assert switching["switches"] == 1 and switching["matrix"] == [[1, 1], [0, 1]]
    assert (tmp_path / "t.png").is_file() and (tmp_path / "s.png").is_file()
    assert "switch rate" in invoke("prompts", "switching")


def test_forget_needs_a_target_and_removes_a_session(capture):
    build(capture)
    result = runner.invoke(app, ["prompts", "forget", "--yes"])
    assert result.exit_code == 1 and "Error" in result.stderr
    assert json.loads(invoke("prompts", "forget", "--session", "s-a", "--yes", "--json"))["forgotten"]
    assert {r["session_id"] for r in json.loads(invoke("prompts", "list", "--json"))} == {"s-b"}
    missing = runner.invoke(app, ["prompts", "forget", "--session", "s-a", "--yes"])
    assert missing.exit_code == 1 and "no captured prompts" in missing.stderr


def test_hook_install_status_uninstall_in_a_project(tmp_path, monkeypatch, data_dir):
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    installed = json.loads(invoke("hook", "install", "--project", "--json"))
    assert installed["settings"] == str(project.resolve() / ".claude" / "settings.json")
    [hook] = installed["hooks"]
    assert "--data-dir" in hook["command"] and hook["runnable"]
    status = json.loads(invoke("hook", "status", "--json"))
    assert status["scopes"]["project"]["hooks"][0]["event"] == "UserPromptSubmit"
    assert status["scopes"]["user"]["hooks"] == []
    assert json.loads(invoke("hook", "uninstall", "--project", "--json"))["removed"] == 1
    both = runner.invoke(app, ["hook", "install", "--project", "--user"])
    assert both.exit_code == 1


def test_installing_a_different_command_in_the_other_scope_is_flagged(tmp_path, monkeypatch, data_dir):
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    invoke("hook", "install", "--user", "--data-dir", str(tmp_path / "elsewhere"))
    installed = json.loads(invoke("hook", "install", "--project", "--json"))
    assert installed["also_installed_in"] == str(tmp_path / "home" / ".claude" / "settings.json")


def test_installed_console_script_lists_the_corpus(capture):
    build(capture)
    script = shutil.which("mission-memory", path=str(Path(sys.executable).parent))
    assert script is not None
    done = subprocess.run([script, "prompts", "list", "--json"], capture_output=True, text=True, check=True)
    assert len(json.loads(done.stdout)) == 4
