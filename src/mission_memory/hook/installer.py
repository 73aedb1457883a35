"""Register the mission-memory hooks in Claude Code's settings JSON, and take them out again.

Claude Code reads hooks from ``~/.claude/settings.json`` (user) and ``<project>/.claude/settings.json``
(project) in this shape::

    {"hooks": {"UserPromptSubmit": [{"matcher": "", "hooks": [
        {"type": "command", "command": "<shell command>", "timeout": 5}]}]}}

This module owns that edit: it adds one matcher group per hook, with an explicit ``timeout`` (seconds)
and an absolute interpreter path, keeps every other setting and every other hook as it was, and on
uninstall removes only the entries whose command runs one of this package's hook scripts. Settings
files are rewritten atomically (temporary file + ``os.replace``). A settings file that is not a JSON
object is never overwritten: :class:`~mission_memory.errors.InputError` is raised instead.
"""

from __future__ import annotations

import compileall
import json
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from mission_memory.capture import dropped_prompts, prompt_commit
from mission_memory.errors import ConfigError, InputError

__all__ = [
    "HookEvent",
    "InstalledHook",
    "SettingsScope",
    "default_data_dir",
    "hook_interpreter",
    "install_hooks",
    "installed_hooks",
    "prompt_hook_command",
    "session_start_command",
    "settings_path",
    "uninstall_hooks",
]

HOOK_DIR = Path(__file__).resolve().parent
PROMPT_HOOK_SCRIPT = HOOK_DIR / "prompt_capture.py"
SESSION_START_SCRIPT = HOOK_DIR / "session_start.py"
PROMPT_HOOK_TIMEOUT_S = prompt_commit.DEFAULT_TIMEOUT_S
"""The prompt hook's timeout (s), written into the settings and, as ``--timeout-s``, into its command:
the capture gives up before it (docs/adr/0055)."""
SESSION_START_TIMEOUT_S = 15
SESSION_START_MATCHER = "startup|clear|compact"
_OWN_MARKERS = ("mission_memory/hook/", "mission_memory\\hook\\")


class HookEvent(StrEnum):
    """Claude Code hook events this package registers a command for."""

    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    SESSION_START = "SessionStart"


class SettingsScope(StrEnum):
    """Which Claude Code settings file to edit."""

    PROJECT = "project"
    USER = "user"


@dataclass(frozen=True)
class InstalledHook:
    """One mission-memory hook found in a settings file.

    Attributes:
        event: the Claude Code event it runs on.
        command: the shell command as written in the settings file.
        timeout: its ``timeout`` in seconds, or ``None`` when the entry has none.
        runnable: whether the interpreter and the script the command names both exist.
    """

    event: HookEvent
    command: str
    timeout: int | None
    runnable: bool


def settings_path(scope: SettingsScope, project_dir: Path | None = None) -> Path:
    """Path of Claude Code's settings file for ``scope``.

    Args:
        scope: project (``<project_dir>/.claude/settings.json``, default the current folder) or user
            (``~/.claude/settings.json``).
    """
    if scope is SettingsScope.USER:
        return Path.home() / ".claude" / "settings.json"
    return (project_dir or Path.cwd()).resolve() / ".claude" / "settings.json"


def default_data_dir() -> Path:
    """The data dir platformdirs gives when ``MISSION_MEMORY_DATA_DIR`` is not set."""
    import platformdirs

    return Path(platformdirs.user_data_dir("mission-memory", appauthor=False))


def hook_interpreter() -> Path:
    """The real interpreter binary to run the prompt hook with: ``sys.executable`` with links resolved.

    The prompt hook is stdlib-only and runs with ``-S``, so the base interpreter behind a virtual
    environment serves as well and skips nothing; resolving also gets past version-manager links.

    Raises:
        ConfigError: the interpreter is a version-manager shim (pyenv/asdf), which costs ~80 ms a run.
    """
    path = Path(sys.executable).resolve()
    if "shims" in path.parts:
        raise ConfigError(
            f"interpreter {path} is a version-manager shim; run the installer with a real python"
        )
    return path


def _data_dir_args(data_dir: Path | None) -> list[str]:
    if data_dir is None:
        return []
    return ["--data-dir", str(data_dir.expanduser().resolve())]


def prompt_hook_command(data_dir: Path | None = None, timeout_s: int = PROMPT_HOOK_TIMEOUT_S) -> str:
    """Shell command for the ``UserPromptSubmit`` hook:
    ``<python> -S -E <prompt_capture.py> --timeout-s N [--data-dir DIR]``.

    Args:
        data_dir: baked in as ``--data-dir`` when given (a non-default data dir), so the hook writes
            where the CLI reads even though Claude Code's environment lacks ``MISSION_MEMORY_DATA_DIR``.
        timeout_s: the timeout written beside the command in the settings; the capture gives up
            :data:`~mission_memory.capture.prompt_commit.GIVE_UP_SHARE` of it after its start and
            counts the prompt as dropped, before Claude Code kills it (docs/adr/0055).
    """
    args = [str(hook_interpreter()), "-S", "-E", str(PROMPT_HOOK_SCRIPT), "--timeout-s", str(timeout_s),
            *_data_dir_args(data_dir)]
    return shlex.join(args)


def session_start_command(data_dir: Path | None = None) -> str:
    """Shell command for the ``SessionStart`` digest hook: the package's own interpreter, ``-E``.

    Unlike the prompt hook it imports the core API and its dependencies, so it keeps the virtual
    environment's interpreter (``sys.executable`` as is, an absolute path).
    """
    args = [str(Path(sys.executable).absolute()), "-E", str(SESSION_START_SCRIPT), *_data_dir_args(data_dir)]
    return shlex.join(args)


def _is_own(entry: Any) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(command, str) and any(marker in command for marker in _OWN_MARKERS)


def _event_of(command: str) -> HookEvent | None:
    if "session_start.py" in command:
        return HookEvent.SESSION_START
    if "prompt_capture.py" in command:
        return HookEvent.USER_PROMPT_SUBMIT
    return None


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if text.strip() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"settings file {path} cannot be read as JSON ({exc}); left unchanged") from exc
    if not isinstance(data, dict):
        raise InputError(f"settings file {path} does not hold a JSON object; left unchanged")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InputError(f"settings file {path}: 'hooks' is not an object; left unchanged")
    return data


def _save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove_own(data: dict[str, Any], events: set[HookEvent] | None = None) -> int:
    """Drop this package's entries (of ``events``, default all) from ``data``; return how many."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    removed = 0
    for event_name in list(hooks):
        groups = hooks[event_name]
        if not isinstance(groups, list):
            continue
        if events is not None and event_name not in {e.value for e in events}:
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [entry for entry in inner if not _is_own(entry)]
            removed += len(inner) - len(kept)
            if kept or not inner:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event_name] = kept_groups
        elif groups:
            del hooks[event_name]
    return removed


def install_hooks(
    path: Path,
    *,
    session_start: bool = False,
    data_dir: Path | None = None,
    timeout_s: int = PROMPT_HOOK_TIMEOUT_S,
) -> list[InstalledHook]:
    """Add (or refresh) the prompt hook, and optionally the SessionStart hook, in settings ``path``.

    Re-running replaces this package's earlier entries instead of adding duplicates; other settings
    and hooks are kept as they were. The hook modules are byte-compiled so the first prompt does not
    pay for it.

    Args:
        path: the settings file (created with its folder if missing).
        session_start: also register the SessionStart digest hook (timeout 15 s).
        data_dir: a non-default data dir to bake into the commands (``--data-dir``).
        timeout_s: the prompt hook's timeout in seconds.

    Returns:
        The hooks now installed in ``path``.

    Raises:
        InputError: ``path`` exists but is not a JSON object.
        ConfigError: the interpreter is a version-manager shim, or the data dir cannot be written.
    """
    data = _load(path)
    entries = [(HookEvent.USER_PROMPT_SUBMIT, "", prompt_hook_command(data_dir, timeout_s), timeout_s)]
    if session_start:
        entries.append(
            (
                HookEvent.SESSION_START,
                SESSION_START_MATCHER,
                session_start_command(data_dir),
                SESSION_START_TIMEOUT_S,
            )
        )
    _remove_own(data, {event for event, *_ in entries})
    hooks = data.setdefault("hooks", {})
    for event, matcher, command, timeout in entries:
        groups = hooks.get(event.value)
        if not isinstance(groups, list):
            groups = []
            hooks[event.value] = groups
        groups.append(
            {"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": timeout}]}
        )
    _save(path, data)
    compileall.compile_dir(str(HOOK_DIR), quiet=2, maxlevels=0)
    try:  # pre-allocate while there is room; the hook also creates it on its first good run
        dropped_prompts.ensure_record(str(data_dir) if data_dir else prompt_commit.default_data_dir())
    except OSError as exc:
        raise ConfigError(f"cannot create the dropped-prompt record in the data dir: {exc}") from exc
    return installed_hooks(path)


def uninstall_hooks(path: Path) -> int:
    """Remove every mission-memory hook entry from settings ``path``; return how many were removed.

    A missing file removes nothing. Other hooks and settings are untouched.

    Raises:
        InputError: ``path`` exists but is not a JSON object.
    """
    if not path.exists():
        return 0
    data = _load(path)
    removed = _remove_own(data)
    if removed:
        _save(path, data)
    return removed


def installed_hooks(path: Path) -> list[InstalledHook]:
    """The mission-memory hooks registered in settings ``path`` (empty when the file is missing).

    Raises:
        InputError: ``path`` exists but is not a JSON object.
    """
    data = _load(path)
    found: list[InstalledHook] = []
    hooks = data.get("hooks") or {}
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for entry in inner if isinstance(inner, list) else []:
                if not _is_own(entry):
                    continue
                command = str(entry["command"])
                event = _event_of(command)
                if event is None:
                    continue
                timeout = entry.get("timeout")
                found.append(
                    InstalledHook(
                        event=event,
                        command=command,
                        timeout=timeout if isinstance(timeout, int) else None,
                        runnable=_runnable(command),
                    )
                )
    return found


def _runnable(command: str) -> bool:
    try:
        parts = shlex.split(command)
    except ValueError:
        return False
    scripts = [p for p in parts if p.endswith(".py")]
    return bool(parts) and os.access(parts[0], os.X_OK) and all(Path(p).is_file() for p in scripts)
