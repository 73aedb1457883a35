"""Writes Claude Code transcripts from the documented record shapes (1.x and 2.x) for tests.

``TranscriptWriter`` writes one JSONL file the way Claude Code does: 2.x writes one assistant
record per content block repeating ``message.id`` and ``usage`` (``split_blocks=True``), 1.x one
record per API call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REJECTION = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
    "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the "
    "user to tell you how to proceed."
)
REJECTION_WITH_REASON = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
    "file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n"
)


def usage(inp: int, created: int = 0, read: int = 0, out: int = 1, *, legacy: bool = False) -> dict[str, Any]:
    """A ``message.usage`` object; ``legacy`` leaves out the cache fields as early 1.x did."""
    if legacy:
        return {"input_tokens": inp, "output_tokens": out}
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": created,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": created, "ephemeral_1h_input_tokens": 0},
        "output_tokens": out,
        "service_tier": "standard",
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(tool_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


class TranscriptWriter:
    """Writes one transcript file record by record; each record is ``step`` (one second) after the last."""

    def __init__(
        self,
        path: Path,
        session_id: str,
        *,
        version: str = "2.0.13",
        cwd: str = "/repo",
        start: datetime = datetime(2025, 10, 10, 9, 0, tzinfo=UTC),
        sidechain: bool = False,
        split_blocks: bool = True,
        agent_id: str | None = None,
        step: timedelta = timedelta(seconds=1),
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.version = version
        self.cwd = cwd
        self.clock = start
        self.step = step
        self.sidechain = sidechain
        self.split_blocks = split_blocks
        self.agent_id = agent_id
        self.lines: list[str] = []
        self.counter = 0

    def _base(self, kind: str, sidechain: bool | None = None) -> dict[str, Any]:
        self.counter += 1
        self.clock += self.step
        record: dict[str, Any] = {
            "parentUuid": None,
            "isSidechain": self.sidechain if sidechain is None else sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": self.version,
            "gitBranch": "main",
            "type": kind,
            "uuid": f"{self.path.stem}-{self.counter:04d}",
            "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
        }
        if self.agent_id:
            record["agentId"] = self.agent_id
        return record

    def record(self, record: dict[str, Any]) -> None:
        self.lines.append(json.dumps(record, ensure_ascii=False))

    def raw(self, line: str) -> None:
        self.lines.append(line)

    def prompt(
        self, content: str | list[dict[str, Any]], *, sidechain: bool | None = None, **extra: Any
    ) -> None:
        record = self._base("user", sidechain)
        record["message"] = {"role": "user", "content": content}
        record.update(extra)
        self.record(record)

    def call(
        self,
        message_id: str,
        blocks: list[dict[str, Any]],
        use: dict[str, Any],
        *,
        sidechain: bool | None = None,
        outputs: list[int] | None = None,
    ) -> None:
        """One API call; 2.x: one record per block, ``outputs`` giving each record's output_tokens."""
        chunks = [[b] for b in blocks] if self.split_blocks else [blocks]
        for index, chunk in enumerate(chunks):
            record = self._base("assistant", sidechain)
            record_usage = dict(use)
            if outputs:
                record_usage["output_tokens"] = outputs[index]
            record["message"] = {
                "model": "claude-sonnet-4-5-20250929",
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": chunk,
                "stop_reason": None,
                "stop_sequence": None,
                "usage": record_usage,
            }
            record["requestId"] = f"req_{message_id}"
            self.record(record)

    def result(
        self,
        tool_id: str,
        content: str,
        *,
        is_error: bool | None = None,
        tool_use_result: Any = None,
        sidechain: bool | None = None,
    ) -> None:
        record = self._base("user", sidechain)
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        record["message"] = {"role": "user", "content": [block]}
        if tool_use_result is not None:
            record["toolUseResult"] = tool_use_result
        self.record(record)

    def other(self, kind: str, **fields: Any) -> None:
        record = self._base(kind)
        record.update(fields)
        self.record(record)

    def write(self, *, truncated_tail: str | None = None) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(line + "\n" for line in self.lines)
        if truncated_tail is not None:
            body += truncated_tail
        self.path.write_text(body, encoding="utf-8")
        return self.path


@dataclass
class Scenario:
    """Where a fixture wrote its session: the projects folder, the main file, subagent files."""

    root: Path
    main: Path
    subagents: list[Path]
