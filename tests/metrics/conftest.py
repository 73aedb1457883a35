"""Fixtures of tests/metrics: sessions written in Claude Code's 1.x and 2.x record shapes.

``scenario_2x`` and ``scenario_1x`` build the sessions whose T, K and W the tests work out by
hand; ``scenario_corrections`` the one with operator corrections.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from transcript_builder import (
    REJECTION,
    REJECTION_WITH_REASON,
    Scenario,
    TranscriptWriter,
    text,
    tool,
    usage,
)


@pytest.fixture
def scenario_2x(tmp_path: Path) -> Scenario:
    """A 2.x session with a subagent in ``<session>/subagents/``.

    Main conversation (cwd /repo):
      prompt 1
      msg_A1 (T = 3 + 12000 + 18000 = 30003; 3 records, outputs 10/60/120): text, Read README.md,
             Read src/client.py
      msg_A2: Read docs/notes.md, Read src/client.py (again)
      msg_A3: Task (subagent runs: msg_S1 reads src/retry.py and README.md; msg_S2 Bash, rejected)
      msg_A4: Edit src/client.py                    <- first file-modifying call: init ends here
      msg_A5: Read tests/test_client.py, Write tests/test_client.py
      unknown record type, a non-JSON line, prompt 2, msg_A6: Bash, then a truncated last line.
    """
    root = tmp_path / "projects" / "-repo"
    main = TranscriptWriter(root / "sess-2x.jsonl", "sess-2x")
    main.other("file-history-snapshot", messageId="m0", snapshot={}, isSnapshotUpdate=False)
    main.prompt("Add a retry to the HTTP client", permissionMode="default")
    main.call(
        "msg_A1",
        [
            text("Let me look around."),
            tool("t1", "Read", file_path="/repo/README.md"),
            tool("t2", "Read", file_path="/repo/src/client.py"),
        ],
        usage(3, 12000, 18000),
        outputs=[10, 60, 120],
    )
    main.result("t1", "     1→# Repo")
    main.result("t2", "     1→import httpx")
    main.other("progress", data={"type": "hook_progress"})
    main.call(
        "msg_A2",
        [
            tool("t3", "Read", file_path="/repo/docs/notes.md"),
            tool("t4", "Read", file_path="/repo/src/client.py"),
        ],
        usage(5, 500, 30003, 80),
    )
    main.result("t3", "notes")
    main.result("t4", "client")
    main.call(
        "msg_A3",
        [tool("t5", "Task", subagent_type="Explore", prompt="find retry helpers")],
        usage(4, 300, 30508, 40),
    )
    main.clock += timedelta(seconds=20)  # the subagent runs meanwhile
    main.result("t5", "found src/retry.py", tool_use_result={"status": "completed"})
    main.call(
        "msg_A4",
        [tool("t6", "Edit", file_path="/repo/src/client.py", old_string="a", new_string="b")],
        usage(2, 200, 30800, 90),
    )
    main.result("t6", "The file /repo/src/client.py has been updated.")
    main.call(
        "msg_A5",
        [
            tool("t7", "Read", file_path="/repo/tests/test_client.py"),
            tool("t8", "Write", file_path="/repo/tests/test_client.py", content="def test(): ..."),
        ],
        usage(2, 150, 31000, 70),
    )
    main.result("t7", "tests")
    main.result("t8", "File created successfully")
    main.other("agent-telemetry-xyz", payload={"k": 1})
    main.raw("this line is not JSON at all")
    main.prompt("now run the tests", permissionMode="acceptEdits")
    main.call("msg_A6", [tool("t9", "Bash", command="pytest")], usage(1, 100, 31200, 30))
    main.result("t9", "3 passed", is_error=False)
    main.write(
        truncated_tail='{"parentUuid":"x","type":"assistant","message":{"id":"msg_A7","usage":{"input_'
    )

    sub = TranscriptWriter(
        root / "sess-2x" / "subagents" / "agent-a1b2c3.jsonl",
        "sess-2x",
        sidechain=True,
        start=datetime(2025, 10, 10, 9, 0, 12, tzinfo=UTC),
        agent_id="a1b2c3",
    )
    sub.prompt("find retry helpers")
    sub.call(
        "msg_S1",
        [tool("s1", "Read", file_path="/repo/src/retry.py"), tool("s2", "Read", file_path="/repo/README.md")],
        usage(4, 9000, 0, 50),
    )
    sub.result("s1", "retry")
    sub.result("s2", "readme")
    sub.call("msg_S2", [tool("s3", "Bash", command="grep -r retry")], usage(6, 400, 9000, 20))
    sub.result("s3", REJECTION, is_error=True, tool_use_result="User rejected tool use")
    return Scenario(root=root, main=main.path, subagents=[sub.write()])


@pytest.fixture
def scenario_1x(tmp_path: Path) -> Scenario:
    """A 1.x session (one record per API call, no cache fields, inline sidechain, relative path),
    plus a 2.0-style top-level ``agent-*.jsonl`` carrying the parent's sessionId.

      summary record; prompt 1
      msg_B1 (T = 2500, legacy usage): text, Read /p/docs/guide.md, Read docs/index.md (relative)
      inline sidechain: prompt to the subagent, msg_B2 reads /p/src/a.py
      msg_B3: Edit /p/docs/guide.md               <- init ends
      prompt 2 ("thanks")
    """
    root = tmp_path / "projects" / "-p"
    main = TranscriptWriter(
        root / "sess-old.jsonl",
        "sess-old",
        version="1.0.51",
        cwd="/p",
        split_blocks=False,
        start=datetime(2025, 10, 10, 10, 0, tzinfo=UTC),
    )
    main.record({"type": "summary", "summary": "Fixing docs", "leafUuid": "x"})
    main.prompt("Виправ помилку в документації")
    main.call(
        "msg_B1",
        [
            text("Reading the docs."),
            tool("b1", "Read", file_path="/p/docs/guide.md"),
            tool("b2", "Read", file_path="docs/index.md"),
        ],
        usage(2500, out=40, legacy=True),
    )
    main.result("b1", "guide")
    main.result("b2", "index")
    main.prompt("look at src/a.py", sidechain=True)
    main.call(
        "msg_B2",
        [tool("b3", "Read", file_path="/p/src/a.py")],
        usage(900, out=10, legacy=True),
        sidechain=True,
    )
    main.result("b3", "a", sidechain=True)
    main.call(
        "msg_B3",
        [tool("b4", "Edit", file_path="/p/docs/guide.md", old_string="teh", new_string="the")],
        usage(2600, out=30, legacy=True),
    )
    main.result("b4", "updated")
    main.prompt("thanks")
    main.write()
    agent = TranscriptWriter(
        root / "agent-0f0f.jsonl",
        "sess-old",
        version="2.0.5",
        cwd="/p",
        sidechain=True,
        start=datetime(2025, 10, 10, 10, 0, 4, tzinfo=UTC),
    )
    agent.prompt("warm up")
    agent.call("msg_W1", [text("ready")], usage(3, 1000, 0, 5))
    return Scenario(root=root, main=main.path, subagents=[agent.write()])


@pytest.fixture
def scenario_corrections(tmp_path: Path) -> Scenario:
    """A 2.x session with each kind of operator correction (see test_transcript_corrections)."""
    root = tmp_path / "projects" / "-r"
    w = TranscriptWriter(root / "sess-corr.jsonl", "sess-corr", cwd="/r")
    w.prompt("Refactor the parser")
    w.call(
        "msg_E1",
        [tool("e1", "Edit", file_path="/r/parser.py", old_string="x", new_string="y")],
        usage(3, 9000),
    )
    w.result("e1", REJECTION, is_error=True, tool_use_result="User rejected tool use")
    w.prompt([text("[Request interrupted by user for tool use]")])
    w.prompt("keep the public API stable, SECRET-PROMPT-ONE")
    w.call("msg_E2", [tool("e2", "Bash", command="pytest -x")], usage(3, 100, 9000))
    w.prompt([text("[Request interrupted by user for tool use]")])
    w.prompt("use the built-in runner SECRET-PROMPT-TWO")
    w.call(
        "msg_E3",
        [tool("e3", "Write", file_path="/r/notes.md", content="SECRET-FILE-TEXT")],
        usage(3, 100, 9100),
    )
    w.result("e3", "File created successfully")
    w.call("msg_E4", [text("Done.")], usage(3, 100, 9200))
    w.prompt("ні, не треба нотаток — видали цей файл SECRET-PROMPT-THREE")
    w.call("msg_E5", [text("Sure.")], usage(3, 100, 9300))
    w.prompt("no worries, thanks")
    w.call(
        "msg_E6",
        [tool("e6", "Edit", file_path="/r/x.py", old_string="a", new_string="b")],
        usage(3, 100, 9400),
    )
    w.result(
        "e6",
        REJECTION_WITH_REASON + "use tabs SECRET-REASON",
        is_error=True,
        tool_use_result="User rejected tool use",
    )
    w.call(
        "msg_E7",
        [tool("e7", "Edit", file_path="/r/x.py", old_string="a", new_string="\tb")],
        usage(3, 100, 9500),
    )
    w.result("e7", "updated")
    w.prompt("great")
    w.prompt([text("[Request interrupted by user]")])
    return Scenario(root=root, main=w.write(), subagents=[])


WriterFactory = Callable[..., TranscriptWriter]


@pytest.fixture
def transcript_writer() -> WriterFactory:
    """Factory for ad-hoc transcripts: ``transcript_writer(path, session_id, **options)``."""
    return TranscriptWriter
