"""Run a guide's shell blocks as a reader would, for tests/test_docs.py (issue 36, 37).

A guide is Markdown; its ``bash``/``sh``/``shell`` blocks run in order, each in its own
``bash -euo pipefail`` (a failing command, an unset variable or a failing pipe stage fails the block),
in one sandbox: a working directory and an environment (data dir, home) of the test's own. A block that
cannot run here says so on the line before it: ``_(not run by the docs test: <reason>)_``.

A block that starts ``mission-memory serve --transport http`` is a server a reader leaves running in a
terminal of its own: the runner starts it as a background process group, waits until it listens, and
runs the next blocks against it; it stops it when the next server block starts (as Ctrl-C would) and
when the sandbox closes. The documented port 8765 is replaced by a free loopback port in every block,
``--host 0.0.0.0`` by ``--host 127.0.0.1``, and the test's own replacements (the documented
PostgreSQL URL by a database of the test server): nothing else of a block is changed. Every block and
every server start shares one total deadline.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Block", "BlockFailed", "Sandbox", "run_guide", "sandbox", "shell_blocks"]

NOT_RUN = re.compile(r"^_\(not run by the docs test: (?P<reason>.+)\)_$")
FENCE = re.compile(r"^(?P<indent> {0,3})```(?P<lang>[\w-]*)\s*$")
SERVE = re.compile(r"^\s*mission-memory serve\b.*--transport http\b", re.MULTILINE)
DOCUMENTED_PORT = "8765"
LISTENING = "Uvicorn running on"


@dataclass(frozen=True)
class Block:
    """One shell block of a guide: the guide's path, the line of its opening fence (1-based), its code,
    and the reason it is not run (None: it runs)."""

    guide: str
    line: int
    code: str
    reason: str | None


class BlockFailed(AssertionError):
    """A block exited non-zero, outlived the deadline, or (a server block) stopped before it listened."""


def shell_blocks(text: str, guide: str = "") -> list[Block]:
    """Every ``bash``/``sh``/``shell`` block of the Markdown ``text``, in order (indented fences of list
    items included); ``guide`` names the file in each :class:`Block`."""
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        if opened["lang"] in {"bash", "sh", "shell"}:
            before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            marked = NOT_RUN.match(before)
            indent = len(opened["indent"])
            code = "\n".join(line[indent:] if line[:indent].isspace() else line for line in lines[i + 1:end])
            blocks.append(Block(guide, i + 1, code, marked["reason"] if marked else None))
        i = end + 1
    return blocks


@dataclass
class _Server:
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)
    listening: bool = False
    reader: threading.Thread | None = None

    def start(self) -> None:
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            if LISTENING in line:
                self.listening = True
                self.ready.set()
        self.ready.set()  # the server stopped: whoever waits learns it at once

    def stop(self) -> None:
        """Stop the block's process group (bash and the server it runs): SIGTERM, then SIGKILL."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        if self.reader is not None:
            self.reader.join(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()


@dataclass
class Sandbox:
    """Where blocks run: ``cwd``, ``env``, the total deadline (``time.monotonic()`` seconds), the servers
    started so far, and the CPU seconds each block's processes used (for the test's report; a server's
    count when it is stopped, so a server block counts its start only)."""

    cwd: Path
    env: dict[str, str]
    deadline: float
    replacements: dict[str, str] = field(default_factory=dict)
    port: str = DOCUMENTED_PORT
    servers: list[_Server] = field(default_factory=list)
    timings: list[tuple[Block, float]] = field(default_factory=list)
    outputs: dict[Block, str] = field(default_factory=dict)

    def output_of(self, guide: str, command: str) -> str:
        """What the first block of ``guide`` whose code holds ``command`` printed (stdout, then stderr)."""
        return next(out for block, out in self.outputs.items() if block.guide == guide and command in block.code)

    def remaining(self, block: Block) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise BlockFailed(f"{block.guide}:{block.line}: the docs run's total deadline passed before this block")
        return left

    def run(self, block: Block) -> None:
        """Run one block; raise :class:`BlockFailed` naming ``guide:line`` with its output when it fails."""
        started = _children_cpu()
        if SERVE.search(block.code):
            self._serve(block)
        else:
            code = self._localised(block.code)
            try:
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=self.cwd, env=self.env,
                                      capture_output=True, text=True, timeout=self.remaining(block))
            except subprocess.TimeoutExpired as late:
                raise BlockFailed(f"{block.guide}:{block.line}: still running at the total deadline\n{code}") from late
            if done.returncode != 0:
                raise BlockFailed(f"{block.guide}:{block.line}: exit {done.returncode}\n{code}\n--- stdout\n"
                                  f"{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
            self.outputs[block] = done.stdout + done.stderr
        self.timings.append((block, _children_cpu() - started))

    def _localised(self, code: str) -> str:
        for documented, here in self.replacements.items():
            code = code.replace(documented, here)
        return code.replace(DOCUMENTED_PORT, self.port).replace("--host 0.0.0.0", "--host 127.0.0.1")

    def _serve(self, block: Block) -> None:
        self.stop_servers()
        self.port = str(_free_port())
        code = self._localised(block.code)
        server = _Server(subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", code], cwd=self.cwd, env=self.env, start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        self.servers.append(server)
        server.start()
        in_time = server.ready.wait(timeout=self.remaining(block))
        if not server.listening:  # the deadline passed, or its output ended: the block stopped
            server.stop()
            raise BlockFailed(f"{block.guide}:{block.line}: the server "
                              f"{'stopped' if in_time else 'did not listen before the deadline'}\n{code}\n"
                              f"--- output\n{''.join(server.output)[-3000:]}")

    def stop_servers(self) -> None:
        """Stop every server a block started (idempotent)."""
        for server in self.servers:
            server.stop()


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def sandbox(cwd: Path, env: dict[str, str], deadline_s: float,
            replacements: dict[str, str] | None = None) -> Iterator[Sandbox]:
    """A :class:`Sandbox` whose servers are stopped when the block ends, whatever happened.
    ``replacements``: documented text → the sandbox's (a database URL), replaced in every block."""
    box = Sandbox(cwd, env, time.monotonic() + deadline_s, dict(replacements or {}))
    try:
        yield box
    finally:
        box.stop_servers()


def run_guide(box: Sandbox, guide: Path, name: str | None = None) -> int:
    """Run every block of ``guide`` not marked as not run, in order; return how many ran."""
    blocks = [b for b in shell_blocks(guide.read_text(encoding="utf-8"), name or str(guide)) if b.reason is None]
    for block in blocks:
        box.run(block)
    return len(blocks)
