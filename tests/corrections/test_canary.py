"""Practitioner records hold abstractions only (docs/design.md §3, docs/adr/0025): canary strings planted in
prompts, transcripts (operator text, tool inputs, diffs, tool output) reach no byte that mission-memory
writes, through every corrections path."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.config import load_settings
from mission_memory.mcp.server import build_server
from mission_memory.stores.sqlite import SqliteStore
from tests.canary_scan import assert_no_canary, find_canaries, make_canaries
from tests.conftest import GitRepo
from tests.corrections.captured_prompts import capture_prompt
from tests.metrics.transcript_builder import REJECTION_WITH_REASON, TranscriptWriter, text, tool, usage

CANARIES = make_canaries(
    "prompt", "prompt_uk", "user_text", "tool_input", "diff_old", "diff_new", "bash", "reason", "output", "path"
)


def _plant_transcript(path: Path, root: Path, session: str, start: datetime) -> Path:
    c = CANARIES
    w = TranscriptWriter(path, session, cwd=str(root), start=start)
    w.prompt(f"Make the ledger faster {c['user_text']}")
    w.call("m1", [tool("e1", "Edit", file_path=f"{root}/src/ledger.py", old_string=c["diff_old"],
                       new_string=c["diff_new"])], usage(3, 10))
    w.result("e1", f"The file has been updated. {c['output']}", tool_use_result={
        "filePath": f"{root}/src/ledger.py", "oldString": c["diff_old"], "newString": c["diff_new"],
        "structuredPatch": [{"lines": [f"-{c['diff_old']}", f"+{c['diff_new']}"]}],
    })
    w.call("m2", [text("Done.")], usage(3, 10))
    w.prompt(f"no, don't touch the ledger schema, revert it {c['user_text']}")
    w.call("m3", [tool("e2", "Edit", file_path=f"{root}/src/ledger.py", old_string=c["diff_new"],
                       new_string=c["diff_old"])], usage(3, 10))
    w.result("e2", "The file has been updated.")
    w.call("m4", [tool("b1", "Bash", command=f"rm -rf {c['bash']}")], usage(3, 10))
    w.result("b1", REJECTION_WITH_REASON + c["reason"], is_error=True)
    w.call("m5", [tool("w1", "Write", file_path=f"{root}/{c['path']}/notes.md", content=c["tool_input"])],
           usage(3, 10))
    w.result("w1", "The user doesn't want to proceed with this tool use.", is_error=True,
             tool_use_result="User rejected tool use")
    w.prompt([text("[Request interrupted by user for tool use]")])
    return w.write()


def test_no_canary_reaches_the_data_dir_or_the_exports_through_any_corrections_path(
    mission_repo: GitRepo, data_dir: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "alice@example.org")
    root = mission_repo.root
    exports = tmp_path / "exports"
    exports.mkdir()
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(root), "--json"]).exit_code == 0
    now = datetime.now(UTC)
    with Memory.open() as memory:
        memory.query("How is the ledger file backed up?", scope="domain", session_id="sess-canary")

    # explicit, through the CLI: the summary is the operator's own abstraction
    explicit = runner.invoke(app, [
        "correct", "--class", "missed-decision", "--category", "data", "--component", "docs",
        "--outcome", "modified", "--summary", "The ledger stays in SQLite for offline field teams",
        "--expected", "ADR-2", "--session", "sess-canary", "--json",
    ])
    assert explicit.exit_code == 0, explicit.output
    assert json.loads(explicit.stdout)["label"]["retrieval_caused"] == "true"

    # the prompt corpus, captured by the hook into its own repository
    hook_dir = tmp_path / "hook-data"
    moment = now + timedelta(minutes=1)
    for offset, words in enumerate([
        f"Speed up the uploader {CANARIES['prompt']}",
        f"no, don't change src/ledger.py, revert it {CANARIES['prompt']}",
        f"ні, не чіпай тести {CANARIES['prompt_uk']}",
    ]):
        when = (moment + timedelta(seconds=offset)).isoformat()
        capture_prompt(hook_dir, when, words, session="sess-canary", cwd=root)

    # a transcript of the same session, after the query
    transcript = _plant_transcript(tmp_path / "projects" / "uploader" / "sess-canary.jsonl", root,
                                   "sess-canary", now + timedelta(minutes=2))
    imported = runner.invoke(app, ["corrections", "import", "--prompts", str(hook_dir / "prompts.git"),
                                   "--transcripts", str(transcript), "--json"])
    assert imported.exit_code == 0, imported.output
    report = json.loads(imported.stdout)
    assert report["sources"]["prompt"]["added"] == 2 and report["sources"]["transcript"]["added"] >= 4

    # the MCP write tool
    async def mcp_call() -> Any:
        async with Client(build_server(write_tools=True)) as client:
            return await client.call_tool("record_correction", {
                "correction_class": "wrong-approach", "category": "tests", "outcome": "rejected",
                "summary": "Tests run with the project's runner", "session_id": "sess-canary",
            })

    assert not anyio.run(mcp_call).is_error

    # labelling again, the rate with its plot, the pairs export
    assert runner.invoke(app, ["corrections", "label"]).exit_code == 0
    rate = runner.invoke(app, ["corrections", "rate", "--by", "day", "--json", "--plot", str(exports / "rate.png")])
    assert rate.exit_code == 0, rate.output
    (exports / "rate.json").write_text(rate.stdout, encoding="utf-8")
    pairs = runner.invoke(app, ["corrections", "pairs", "-o", str(exports / "pairs.jsonl")])
    assert pairs.exit_code == 0, pairs.output
    assert (exports / "pairs.jsonl").read_text(encoding="utf-8").count("\n") >= 1
    listing = runner.invoke(app, ["corrections", "rate"])
    (exports / "rate.txt").write_text(listing.stdout, encoding="utf-8")

    # vector snapshot files too: reopen the store so it writes them, and query once
    store = SqliteStore(load_settings().database_path, snapshot_min_rows=1)
    with Memory(load_settings(), store=store) as memory:
        memory.query("ledger", scope="practitioner", session_id="sess-canary")
    snapshots = list(data_dir.glob("*.vectors/*"))
    assert snapshots, "no vector snapshot was written"

    # the scan reads every byte: it finds the canaries where they belong (the operator's own prompt
    # repository and the transcript), and nowhere mission-memory wrote
    assert {h.canary for h in find_canaries([hook_dir, transcript], CANARIES.values())} == set(CANARIES.values())
    scanned = assert_no_canary([data_dir, exports], CANARIES.values(), scanned_at_least=6)
    assert scanned >= 6
