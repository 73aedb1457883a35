"""Prompts captured through the hook's own capture code, at fixed times, into a chosen data dir."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from mission_memory.capture import prompt_commit


def capture_prompt(hook_dir: Path, when: str, prompt: str, *, session: str, cwd: Path) -> None:
    """Store a prompt through the hook's own capture code, into ``hook_dir/prompts.git``."""
    moment = datetime.fromisoformat(when)
    raw = json.dumps({
        "session_id": session, "cwd": str(cwd), "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit", "prompt": prompt,
    }, ensure_ascii=False).encode()
    prompt_commit.capture(raw, str(hook_dir), now_ns=int(moment.timestamp()) * 1_000_000_000)
