"""The README and the guides under docs/ cannot rot: their shell blocks run, in order, on a fresh store
in a small real repository (issue 36), servers and webhooks included (tests/docs_runner.py). A block
that cannot run here (it installs from the network or needs Docker) says so, visibly, on the line
before it: ``_(not run by the docs test: <reason>)_``."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.docs_runner import Block, BlockFailed, Sandbox, run_guide, sandbox, shell_blocks

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ("README.md", "docs/coding-agents.md", "docs/on-call.md", "docs/teams.md", "docs/store.md",
          "docs/configuration.md")
TOTAL_DEADLINE_S = 480.0
"""Every block of every guide, server starts included, within this many seconds (about 60 s of CPU:
enough on two cores at a load of 15)."""


def _environment(data_dir: Path, home: Path) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "MISSION_MEMORY_DATA_DIR": str(data_dir), "HOME": str(home), "MISSION_MEMORY_OPERATOR": "ana",
           "TMPDIR": str(home.parent / "tmp")}
    env.pop("MISSION_MEMORY_EVENT_MISSION", None)
    (home.parent / "tmp").mkdir(exist_ok=True)
    return env


TEAM_DATABASE = "postgresql://mission@db.example.org:5432/mission_memory"
"""The database docs/teams.md names; the test runs its blocks on a database of tests/postgres_server.py."""
RUNBOOK = """# Checkout error budget burn

When CheckoutErrorBudgetBurn fires: check the latest release of checkout-api, then the payments
upstream's latency. Roll the release back if the burn started with it.
"""


def _a_readers_home(home: Path) -> None:
    """What the guides expect of the reader's machine, in the test's own home: a clone of the mission's
    repository at ``~/src/myrepo`` (an ADR, a README, and an agent instructions file that grew over two commits), a folder of
    runbooks at ``~/src/shop-runbooks``, and Claude Code session transcripts (tests/corpora/transcripts)
    under ``~/.claude/projects`` in two project folders."""
    (home / "src" / "shop-runbooks").mkdir(parents=True)
    (home / "src" / "shop-runbooks" / "checkout-error-budget-burn.md").write_text(RUNBOOK)
    myrepo = GitRepo(home / "src" / "myrepo")  # small: its ingest embeds a handful of records
    myrepo.commit("Uploader: README and the ledger decision", "2024-02-01T10:00:00+00:00", {
        "README.md": "# Uploader\n\nMoves records to the archive; retries failed chunks.\n",
        "docs/adr/0001-keep-the-ledger-in-sqlite.md": "# 1. Keep the ledger in SQLite\n\n## Status\n\nAccepted\n\n"
        "## Context\n\nField teams work offline.\n\n## Decision\n\nThe upload ledger is SQLite in WAL mode.\n",
    })
    myrepo.commit("Agent instructions", "2025-01-02T09:00:00+00:00", {"CLAUDE.md": "# Uploader\n\nRun the tests.\n"})
    myrepo.commit("Agent instructions: the ledger", "2025-01-09T09:00:00+00:00",
                  {"CLAUDE.md": "# Uploader\n\nRun the tests.\n\nThe ledger is SQLite (ADR 1); never PostgreSQL.\n"})
    transcripts = ROOT / "tests" / "corpora" / "transcripts"
    for project, names in (("-home-me-myrepo", ("compact", "subagent")), ("-home-me-myrepo-with-memory", ("crud", "todos"))):
        (home / ".claude" / "projects" / project).mkdir(parents=True)
        for name in names:
            shutil.copy(transcripts / f"{name}.jsonl", home / ".claude" / "projects" / project / f"{name}.jsonl")


def test_the_block_reader_finds_blocks_and_reasons() -> None:
    text = "x\n\n_(not run by the docs test: needs a server)_\n```bash\nserve\n```\n```bash\nls\n```\n```\nplain\n```\n"
    assert shell_blocks(text, "g.md") == [Block("g.md", 4, "serve", "needs a server"), Block("g.md", 7, "ls", None)]


def test_an_indented_block_of_a_list_item_loses_its_indent() -> None:
    text = "1. step\n\n   ```bash\n   cat > f <<'EOF'\n   x\n   EOF\n   ```\n"
    assert shell_blocks(text)[0].code == "cat > f <<'EOF'\nx\nEOF"


@pytest.mark.parametrize("guide", GUIDES)
def test_every_guide_exists_and_each_block_runs_or_says_why_not(guide: str) -> None:
    for block in shell_blocks((ROOT / guide).read_text(), guide):
        assert block.reason is None or len(block.reason.split()) >= 2, f"{guide}:{block.line}: give the reason a block is not run"


CANNOT_RUN_HERE = ("package index", "test suite itself", "`claude` command", "over the network", "Docker",
                   "operators.csv")
"""What a block may be left unrun for: an install from the network, the suite itself, Claude Code's own
command, a tracker on the network, Docker, a team's own session mapping. A server, a webhook, the hook,
transcripts, a repository of the reader's or PostgreSQL are no reason: the test provides them."""


def test_only_what_cannot_run_here_is_left_unrun() -> None:
    blocks = [block for guide in GUIDES for block in shell_blocks((ROOT / guide).read_text(), guide)]
    unrun = [block for block in blocks if block.reason is not None]
    for block in unrun:
        assert any(reason in block.reason for reason in CANNOT_RUN_HERE), f"{block.guide}:{block.line}: {block.reason}"
    assert len(unrun) <= len(blocks) // 4, f"{len(unrun)} of {len(blocks)} blocks are not run"


def test_the_readme_is_a_front_door() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.split("\n")) <= 250
    blocks = shell_blocks(text)
    assert sum(block.reason is None for block in blocks) >= len(blocks) * 2 // 3, "most of its blocks must run"


@pytest.mark.parametrize(("broken", "says"), [
    ("mission-memory brief --no-such-option", "exit 2"),       # a command whose option was renamed
    ("false | cat\necho the pipe hid it", "exit 1"),           # a failing stage of a pipe
    ("mission-memory status\necho \"$UNSET_IN_THE_GUIDE\"", "exit 1"),  # a variable the guide never set
    ("mission-memory serve --transport http --port 8765 --no-such-option", "the server stopped"),
])
def test_a_broken_block_fails_the_run_and_names_its_line(tmp_path: Path, data_dir: Path, broken: str, says: str) -> None:
    guide = tmp_path / "broken.md"
    guide.write_text(f"# A guide\n\n```bash\nmission-memory --version\n```\n\nThen:\n\n```bash\n{broken}\n```\n\n```bash\ntrue\n```\n")
    home = tmp_path / "home"
    with sandbox(tmp_path, _environment(data_dir, home), 60) as box, pytest.raises(BlockFailed) as failed:
        run_guide(box, guide, "broken.md")
    assert str(failed.value).startswith(f"broken.md:9: {says}")
    assert [block.line for block, _ in box.timings] == [3]  # the first ran, the one after the broken never did


def test_the_shell_blocks_run_on_a_fresh_store(mission_repo: GitRepo, data_dir: Path, tmp_path: Path,
                                               postgres_url: str) -> None:
    """Every block not marked runs, the README's first and then each guide's, in order, in one sandbox: a
    repository with the ADRs the tours ask about and this repository's docs/examples (the webhook
    payloads the on-call drill posts), a fresh data dir, a home holding what the guides expect of a
    reader's machine, and for the team guide's PostgreSQL a database of the tests' server."""
    shutil.copytree(ROOT / "docs" / "examples", mission_repo.root / "docs" / "examples")
    home = tmp_path / "docs-home"
    _a_readers_home(home)
    started = time.monotonic()
    database = {TEAM_DATABASE: postgres_url}
    with sandbox(mission_repo.root, _environment(data_dir, home), TOTAL_DEADLINE_S, database) as box:
        ran = sum(run_guide(box, ROOT / guide, guide) for guide in GUIDES)
    slowest = sorted(box.timings, key=lambda timed: -timed[1])
    print(f"{ran} blocks in {time.monotonic() - started:.1f} s; CPU seconds per block, most first:",
          ", ".join(f"{block.guide}:{block.line} {seconds:.1f}" for block, seconds in slowest))
    assert ran >= 35
    _the_on_call_drill_tells_its_story(box)


def _the_on_call_drill_tells_its_story(box: Sandbox) -> None:
    """docs/on-call.md's drill (issue 37): the alert is received and listed, the flood turns the mission
    degraded, the incoming operator's brief opens with the incident, the alert and the note, and the
    resolved notification closes the alert."""
    guide = "docs/on-call.md"
    assert '"added":1' in box.output_of(guide, "--data-binary @firing.json")
    assert '"mode":"degraded"' in box.output_of(guide, "@flood.jsonl")
    state = box.output_of(guide, "mission-memory events firing --mission checkout\nmission-memory escalation")
    assert "1 alert open" in state and "CheckoutErrorBudgetBurn" in state and "checkout-api-7:9102" in state
    assert "Escalation: degraded" in state and "status investigating" in state
    brief = box.output_of(guide, "mission-memory brief --mission checkout")
    assert brief.index("Severity: critical") < brief.index("CheckoutErrorBudgetBurn") < brief.index("×60")
    assert "status identified" in brief and "commander ana@example.org" in brief
    assert "roll release 142 back" in brief and "the likely cause" in brief and "Next check:" in brief
    closed = box.output_of(guide, "--data-binary @resolved.json")
    assert "No alert is firing." in closed and "status resolved" in closed and "0 open of 1" in closed
    assert "commander bo@example.org" in closed and "Closed: bo@example.org" in closed
