"""``mission-memory hook install|uninstall|status``: register the Claude Code hooks.

A thin shell over :mod:`mission_memory.hook.installer`; see that module for what is written where.
"""

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from mission_memory.capture import dropped_prompts
from mission_memory.cli.output import console, print_json, reported_errors
from mission_memory.errors import InputError, counted
from mission_memory.hook import installer
from mission_memory.hook.installer import SettingsScope

__all__ = ["app"]

app = typer.Typer(
    rich_markup_mode="markdown",
    help="Install the Claude Code hooks: prompt capture (UserPromptSubmit) and the SessionStart digest.",
    no_args_is_help=True,
)

ProjectOpt = Annotated[bool, typer.Option("--project", help="Edit ./.claude/settings.json (the default).")]
UserOpt = Annotated[bool, typer.Option("--user", help="Edit ~/.claude/settings.json.")]


def _scope(project: bool, user: bool) -> SettingsScope:
    if project and user:
        raise InputError("choose one of --project and --user")
    return SettingsScope.USER if user else SettingsScope.PROJECT


def _data_dir_to_bake(data_dir: Path | None) -> tuple[Path, Path | None]:
    """The effective data dir, and the value to bake into hook commands (``None`` for the default)."""
    from mission_memory.config import load_settings

    settings = load_settings(data_dir=data_dir)
    effective = settings.data_dir.expanduser().resolve()
    default = installer.default_data_dir().expanduser().resolve()
    return effective, (None if effective == default else effective)


@app.command("install")
def install(
    project: ProjectOpt = False,
    user: UserOpt = False,
    session_start: Annotated[
        bool, typer.Option("--session-start", help="Also inject a pull digest when a session starts.")
    ] = False,
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Data dir the hooks write to (default: the settings').")
    ] = None,
    timeout: Annotated[int, typer.Option(min=1, max=60, help="Prompt hook timeout, seconds.")] = (
        installer.PROMPT_HOOK_TIMEOUT_S
    ),
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Register the prompt-capture hook (and optionally the SessionStart digest) in Claude Code settings."""
    with reported_errors():
        scope = _scope(project, user)
        path = installer.settings_path(scope)
        effective, baked = _data_dir_to_bake(data_dir)
        hooks = installer.install_hooks(path, session_start=session_start, data_dir=baked, timeout_s=timeout)
        other_scope = SettingsScope.USER if scope is SettingsScope.PROJECT else SettingsScope.PROJECT
        other = installer.settings_path(other_scope)
        ours = {h.command for h in hooks}
        duplicates = [h.command for h in installer.installed_hooks(other) if h.command not in ours]
    if json_output:
        print_json(
            {
                "settings": str(path),
                "data_dir": str(effective),
                "hooks": [_hook_dict(h) for h in hooks],
                "also_installed_in": str(other) if duplicates else None,
            }
        )
        return
    console.print(f"Installed in {path}:")
    for hook in hooks:
        console.print(f"  {hook.event.value} (timeout {hook.timeout}s): {hook.command}")
    from mission_memory.prompts.corpus import default_prompt_repo

    console.print(f"Prompts are stored in {default_prompt_repo(effective)}")
    if duplicates:
        console.print(
            f"[yellow]Note:[/] {other} also registers a different mission-memory hook command; Claude Code runs "
            "both, so each prompt would be captured twice. Remove one with `mission-memory hook uninstall`.",
            markup=True,
        )


@app.command("uninstall")
def uninstall(
    project: ProjectOpt = False,
    user: UserOpt = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Remove mission-memory's hook entries (only those) from Claude Code settings."""
    with reported_errors():
        path = installer.settings_path(_scope(project, user))
        removed = installer.uninstall_hooks(path)
    if json_output:
        print_json({"settings": str(path), "removed": removed})
        return
    console.print(f"Removed {counted(removed, 'hook entry', 'hook entries')} from {path}")


@app.command("status")
def status(
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Data dir to report on.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Show where the hooks are installed, whether they can run, and what the prompt repository holds."""
    with reported_errors():
        effective, _ = _data_dir_to_bake(data_dir)
        scopes: dict[str, dict[str, Any]] = {
            scope.value: {
                "settings": str(path),
                "hooks": [_hook_dict(h) for h in installer.installed_hooks(path)],
            }
            for scope in SettingsScope
            for path in [installer.settings_path(scope)]
        }
        from mission_memory.prompts.corpus import PromptCorpus, default_prompt_repo

        repo = default_prompt_repo(effective)
        corpus = PromptCorpus(repo)
        refs = corpus.refs()
        log = effective / "logs" / "prompt-hook.log"
        problems = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.is_file() else []
        dropped = dropped_prompts.read_record(str(effective))
        unwritable = _unwritable(effective, repo)
    report = {
        "scopes": scopes,
        "data_dir": str(effective),
        "prompt_repository": str(repo),
        "prompts": len(refs),
        "log": str(log),
        "logged_problems": len(problems),
        "last_problem": problems[-1] if problems else None,
        "dropped_prompts": _dropped_dict(dropped, effective),
        "unwritable": unwritable,
    }
    if json_output:
        print_json(report)
        return
    for scope, info in scopes.items():
        hooks = info["hooks"]
        console.print(f"[bold]{scope}[/] {escape(str(info['settings']))}: " + ("" if hooks else "not installed"), markup=True)
        for hook in hooks:
            ok = "ok" if hook["runnable"] else "BROKEN (interpreter or script missing)"
            console.print(f"  {hook['event']} timeout={hook['timeout']}s {ok}: {hook['command']}")
    console.print(f"Prompt repository {repo}: {len(refs)} prompts")
    console.print(
        f"Hook log {log}: {len(problems)} problems" + (f"; last: {problems[-1]}" if problems else "")
    )
    console.print(_dropped_line(report["dropped_prompts"]), markup=True)
    for item in unwritable:
        console.print(
            f"[red]The hook cannot store prompts: {escape(item['path'])} is not writable ({escape(str(item['reason']))}).[/] "
            "Prompts sent now are lost, and not even counted: the dropped-prompt record is in that data dir.",
            markup=True,
        )


def _unwritable(data_dir: Path, repo: Path) -> list[dict[str, str]]:
    """The places the prompt hook must write and cannot, each ``{"path", "reason"}`` (errno name).

    A data dir (or its prompt repository, or its dropped-prompt record) that cannot be written
    loses every prompt, and the record that would count the loss cannot be written either: only
    this check can tell (issue: a read-only data dir lost prompts while ``hook status`` said
    ``Dropped prompts: 0``). Folders are probed by creating and removing a temporary file, the
    record by opening it for writing (nothing is written). A data dir that does not exist yet is
    not a problem: the hook creates it.
    """
    import errno
    import os
    import tempfile

    def reason(exc: OSError) -> str:
        return errno.errorcode.get(exc.errno or 0, type(exc).__name__)

    out: list[dict[str, str]] = []
    for folder in (data_dir, repo / "objects", data_dir / "logs"):
        if not folder.is_dir():
            continue
        try:
            handle, probe = tempfile.mkstemp(prefix=".write-probe-", dir=folder)
        except OSError as exc:
            out.append({"path": str(folder), "reason": reason(exc)})
            continue
        os.close(handle)
        os.unlink(probe)
    record = data_dir / dropped_prompts.RECORD_NAME
    if record.is_file():
        try:
            os.close(os.open(record, os.O_WRONLY))
        except OSError as exc:
            out.append({"path": str(record), "reason": reason(exc)})
    return out


def _stamp(ns: int) -> str | None:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="seconds") if ns else None


def _dropped_dict(record: dropped_prompts.DroppedPrompts | None, data_dir: Path) -> dict[str, object]:
    """The dropped-prompt record for ``hook status`` (docs/adr/0020); counts are 0 when it is missing."""
    record = record or dropped_prompts.DroppedPrompts()
    return {
        "record": str(data_dir / dropped_prompts.RECORD_NAME),
        "preallocated": (data_dir / dropped_prompts.RECORD_NAME).is_file(),
        "total": record.total,
        "storage": record.storage,
        "input": record.input,
        "deadline": record.deadline,
        "first": _stamp(record.first_ns),
        "last": _stamp(record.last_ns),
        "last_reason": record.last_reason or None,
    }


def _dropped_line(info: Any) -> str:
    if not info["preallocated"]:
        return (
            f"Dropped prompts: record {escape(str(info['record']))} missing (created by `hook install` or the first stored "
            "prompt); prompts lost before it exists are not counted"
        )
    if not info["total"]:
        return "Dropped prompts: 0"
    return (  # rich markup: the values read from the record are escaped
        f"[red]Dropped prompts: {info['total']}[/] ({info['storage']} not stored: data dir not writable; "
        f"{info['input']} unreadable hook input); first {escape(str(info['first']))}, last {escape(str(info['last']))} "
        f"({escape(str(info['last_reason']))})"
    )


def _hook_dict(hook: installer.InstalledHook) -> dict[str, object]:
    return {
        "event": hook.event.value,
        "command": hook.command,
        "timeout": hook.timeout,
        "runnable": hook.runnable,
    }
