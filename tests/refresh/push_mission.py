"""A small real mission for push-refresh tests: a git repository whose MCP tool changes, and a local
task folder holding two LONG-TERM tasks (one named in commits, one idle) and one unlabelled task.

Timeline (UTC)::

    2025-01-01  C1  server.py: search_logs(query, limit=10); a proposed ADR on capping scan retries
    2025-01-02      OPS-7 created; comment asks "Should we cap the scan retries at five?"
    2025-01-03  C2  OPS-7: retry queue for antivirus scans (src/scan.py with a TODO)
    2025-01-05 12:00   first pass (FIRST_PASS)
    2025-01-06  C3  OPS-7: search_logs gains `severity`, `limit` default 10 -> 20
    2025-01-06 10:00   second pass, within 24 h (WITHIN_DAY)
    2025-01-13 12:00   pass eight days after the first (EIGHT_DAYS_LATER)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tests.conftest import GitRepo

FIRST_PASS = datetime(2025, 1, 5, 12, 0, tzinfo=UTC)
WITHIN_DAY = datetime(2025, 1, 6, 10, 0, tzinfo=UTC)
EIGHT_DAYS_LATER = datetime(2025, 1, 13, 12, 0, tzinfo=UTC)

SERVER_V1 = '''from mcp.server.mcpserver import MCPServer

mcp = MCPServer("ops")


@mcp.tool()
def search_logs(query: str, limit: int = 10) -> list[str]:
    """Search the scanner logs."""
    return []
'''

SERVER_V2 = '''from mcp.server.mcpserver import MCPServer

mcp = MCPServer("ops")


@mcp.tool()
def search_logs(query: str, limit: int = 20, severity: str | None = None) -> list[str]:
    """Search the scanner logs, optionally by severity."""
    return []
'''

SCAN = '''def scan_with_retries(path: str) -> bool:
    # TODO: cap the antivirus retries before the queue grows without bound
    return True
'''

PROPOSED_ADR = """# 4. Cap antivirus scan retries at five attempts

Date: 2025-01-01

## Status

Proposed

## Context

Antivirus scans time out under load and the retry queue grows without bound.

## Decision

Retry a failed scan at most five times, then mark the file for an operator.

## Consequences

Some files wait for an operator instead of being retried forever.
"""

OPS_7 = """---
key: OPS-7
title: Antivirus scan retry queue
labels: [LONG-TERM, antivirus]
state: In Progress
created: 2025-01-02T09:00:00Z
files: [src/scan.py]
---

Scans time out under load; failed scans must be retried from a queue, never dropped.

## Comments

### Olena · 2025-01-02T10:00:00Z

Should we cap the scan retries at five?
"""

OPS_9 = """---
key: OPS-9
title: Quarterly key rotation runbook
labels: [LONG-TERM]
state: Todo
created: 2024-12-20T09:00:00Z
---

Keep the key rotation runbook current.
"""

OPS_11 = """---
key: OPS-11
title: Fix the typo in the banner
labels: [chore]
created: 2025-01-02T09:00:00Z
---

Short task, not long-term.
"""

LATE_COMMENT = """
### Taras · 2025-01-08T09:00:00Z

Severity filtering landed; do we also need it in the digest?
"""


@dataclass
class PushMission:
    """The repository and the tasks folder of the scenario, with the shas of its commits."""

    repo: GitRepo
    tasks_dir: Path
    c1: str
    c2: str
    c3: str

    def add_late_comment(self) -> None:
        """Append a comment on OPS-7 dated 2025-01-08 (between the second and the third pass)."""
        path = self.tasks_dir / "OPS-7.md"
        path.write_text(path.read_text(encoding="utf-8") + LATE_COMMENT, encoding="utf-8")


def build_push_mission(make_git_repo: Callable[[str], GitRepo], tmp_path: Path) -> PushMission:
    """Build the scenario's repository (all three commits) and its task folder."""
    repo = make_git_repo("ops-agent")
    c1 = repo.commit("Initial MCP server with log search", "2025-01-01T09:00:00+00:00",
                     {"server.py": SERVER_V1, "README.md": "# Ops agent\n",
                      "docs/adr/0004-cap-antivirus-scan-retries.md": PROPOSED_ADR})
    c2 = repo.commit("OPS-7: retry queue for antivirus scans", "2025-01-03T09:00:00+00:00",
                     {"src/scan.py": SCAN})
    c3 = repo.commit("OPS-7: filter log search by severity", "2025-01-06T08:00:00+00:00",
                     {"server.py": SERVER_V2})
    tasks_dir = tmp_path / "tasks"
    tasks_dir.mkdir()
    for name, text in (("OPS-7.md", OPS_7), ("OPS-9.md", OPS_9), ("OPS-11.md", OPS_11)):
        (tasks_dir / name).write_text(text, encoding="utf-8")
    return PushMission(repo=repo, tasks_dir=tasks_dir, c1=c1, c2=c2, c3=c3)
