"""The installer edits Claude Code settings without clobbering anything that is not its own."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from mission_memory.errors import InputError
from mission_memory.hook import installer
from mission_memory.hook.installer import HookEvent

EXISTING = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "/usr/local/bin/other-prompt-logger", "timeout": 3}]}
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash.sh"}]}],
    },
}


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    path = tmp_path / "project" / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(EXISTING, indent=4), encoding="utf-8")
    return path


def test_install_keeps_other_settings_and_hooks(settings_file, data_dir):
    installed = installer.install_hooks(settings_file, data_dir=data_dir)
    data = json.loads(settings_file.read_text(encoding="utf-8"))
    assert {k: v for k, v in data.items() if k != "hooks"} == {
        k: v for k, v in EXISTING.items() if k != "hooks"
    }
    assert data["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    groups = data["hooks"]["UserPromptSubmit"]
    assert groups[0] == EXISTING["hooks"]["UserPromptSubmit"][0]
    [ours] = groups[1]["hooks"]
    assert ours["type"] == "command" and ours["timeout"] == installer.PROMPT_HOOK_TIMEOUT_S
    [hook] = installed
    assert hook.event is HookEvent.USER_PROMPT_SUBMIT and hook.runnable


def test_command_runs_the_script_by_path_with_an_absolute_real_interpreter(data_dir):
    args = shlex.split(installer.prompt_hook_command(data_dir))
    interpreter = Path(args[0])
    assert interpreter.is_absolute() and interpreter == interpreter.resolve()
    assert "shims" not in interpreter.parts
    assert args[1:3] == ["-S", "-E"]
    assert args[3].endswith("mission_memory/hook/prompt_capture.py") and Path(args[3]).is_absolute()
    assert args[4:] == ["--timeout-s", str(installer.PROMPT_HOOK_TIMEOUT_S), "--data-dir", str(data_dir.resolve())]


def test_reinstall_does_not_duplicate(settings_file, data_dir):
    installer.install_hooks(settings_file, data_dir=data_dir)
    installer.install_hooks(settings_file, data_dir=data_dir)
    assert len(installer.installed_hooks(settings_file)) == 1
    assert len(json.loads(settings_file.read_text())["hooks"]["UserPromptSubmit"]) == 2


def test_uninstall_removes_only_its_own_entries(settings_file, data_dir):
    installer.install_hooks(settings_file, data_dir=data_dir, session_start=True)
    assert {h.event for h in installer.installed_hooks(settings_file)} == set(HookEvent)
    assert installer.uninstall_hooks(settings_file) == 2
    assert json.loads(settings_file.read_text(encoding="utf-8")) == EXISTING
    assert installer.uninstall_hooks(settings_file) == 0


def test_session_start_hook_uses_the_package_interpreter_and_a_matcher(settings_file, data_dir):
    installer.install_hooks(settings_file, data_dir=data_dir, session_start=True)
    [group] = json.loads(settings_file.read_text())["hooks"]["SessionStart"]
    assert group["matcher"] == installer.SESSION_START_MATCHER
    [entry] = group["hooks"]
    assert entry["timeout"] == installer.SESSION_START_TIMEOUT_S
    assert "session_start.py" in entry["command"] and " -E " in entry["command"]


def test_install_into_a_missing_file_creates_it(tmp_path, data_dir):
    path = tmp_path / "fresh" / ".claude" / "settings.json"
    installer.install_hooks(path, data_dir=data_dir)
    assert list(json.loads(path.read_text())["hooks"]) == ["UserPromptSubmit"]


@pytest.mark.parametrize("content", ["{broken", "[1, 2]", '{"hooks": []}'])
def test_settings_that_are_not_a_json_object_are_left_unchanged(tmp_path, content, data_dir):
    path = tmp_path / "settings.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match="left unchanged"):
        installer.install_hooks(path, data_dir=data_dir)
    assert path.read_text(encoding="utf-8") == content


def test_user_scope_lives_under_home(tmp_path):
    assert (
        installer.settings_path(installer.SettingsScope.USER)
        == tmp_path / "home" / ".claude" / "settings.json"
    )
    project = installer.settings_path(installer.SettingsScope.PROJECT, tmp_path)
    assert project == tmp_path.resolve() / ".claude" / "settings.json"


def test_install_preallocates_the_dropped_prompt_record_where_the_hook_will_write(tmp_path, data_dir):
    from mission_memory.capture import dropped_prompts

    installer.install_hooks(tmp_path / "settings.json")  # no --data-dir: the hook reads the environment
    assert (data_dir / dropped_prompts.RECORD_NAME).stat().st_size == dropped_prompts.RECORD_SIZE
    record = dropped_prompts.read_record(str(data_dir))
    assert record is not None and (record.total, record.last_reason) == (0, "")
