"""Tool lineage: tools read from Python and JSON manifests at real git commits, and their delta."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from mission_memory.errors import InputError
from mission_memory.refresh.tool_lineage import (
    MAX_FILE_BYTES,
    ToolParameter,
    diff_tools,
    extract_tools,
    render_tool_delta,
    tools_at_commit,
)

SERVER_V1 = '''
from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("uploader")


@mcp.tool()
def search_uploads(query: str, limit: int = 10, ctx: Context | None = None) -> list[str]:
    """Find uploads whose name matches a query."""
    return []


@mcp.tool(name="cancel_upload")
async def cancel(upload_id: str, reason: str = "operator request") -> bool:
    """Cancel one upload."""
    return True


@mcp.tool
def purge_cache(ctx: Context) -> None:
    """Drop the thumbnail cache."""


def helper(x: int) -> int:
    return x
'''

SERVER_V2 = '''
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("uploader")


@mcp.tool()
def search_uploads(query: str | None, limit: int = 25, *, sort: Literal["new", "old"] = "new", ctx: Context) -> list[str]:
    """Find uploads whose name matches a query."""
    return []


@mcp.tool(name="cancel_upload")
async def cancel(upload_id: str, reason: str = "operator request") -> bool:
    """Cancel one upload."""
    return True


def build_server() -> MCPServer:
    server = MCPServer("ops")

    @server.tool(name="retry_scan", description="Retry the antivirus scan of a file.")
    def retry(file_id: str, attempts: int = 3) -> bool:
        return True

    return server
'''

MANIFEST_V1 = {
    "tools": [
        {
            "name": "ledger_status",
            "description": "Show the ledger state.",
            "inputSchema": {"type": "object", "properties": {"verbose": {"type": "boolean", "default": False}}},
        }
    ]
}
MANIFEST_V2 = {
    "tools": [
        {
            "name": "ledger_status",
            "description": "Show the ledger state.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "verbose": {"type": "boolean", "default": False},
                    "since": {"type": "string", "description": "ISO date"},
                },
                "required": ["since"],
            },
        }
    ]
}


def test_python_tools_are_found_with_parameters_and_without_the_context() -> None:
    tools = extract_tools({"server.py": SERVER_V1})
    assert sorted(tools) == ["cancel_upload", "purge_cache", "search_uploads"]
    search = tools["search_uploads"]
    assert search.path == "server.py"
    assert search.description == "Find uploads whose name matches a query."
    assert search.parameters == (
        ToolParameter("query", "str", None, True),
        ToolParameter("limit", "int", "10", False),
    )
    assert search.input_schema == {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "default": 10}},
        "required": ["query"],
    }
    assert tools["cancel_upload"].parameters[1] == ToolParameter("reason", "str", "'operator request'", False)
    assert tools["purge_cache"].parameters == ()


def test_tools_inside_a_factory_take_the_decorator_name_and_description() -> None:
    tools = extract_tools({"src/ops/server.py": SERVER_V2})
    retry = tools["retry_scan"]
    assert retry.description == "Retry the antivirus scan of a file."
    assert [p.name for p in retry.parameters] == ["file_id", "attempts"]
    sort = tools["search_uploads"].input_schema["properties"]["sort"]
    assert sort == {"enum": ["new", "old"], "default": "new"}
    query = tools["search_uploads"].input_schema["properties"]["query"]
    assert query == {"anyOf": [{"type": "string"}, {"type": "null"}]}


def test_manifests_in_the_tools_list_shape_are_read_and_other_json_is_ignored() -> None:
    rpc = {"jsonrpc": "2.0", "id": 1, "result": MANIFEST_V2}
    bare = [{"name": "ping", "inputSchema": {"type": "object", "properties": {}}}]
    tools = extract_tools({
        "tools.json": json.dumps(MANIFEST_V1),
        "rpc/tools.json": json.dumps(rpc),
        "bare.json": json.dumps(bare),
        "package.json": json.dumps({"name": "x", "dependencies": {}}),
        "broken.json": '{"tools": [',
        "broken.py": "def (:\n  @mcp.tool",
        "README.md": "@mcp.tool() def fake(): ...",
    })
    assert sorted(tools) == ["ledger_status", "ping"]
    # the first path in sorted order wins: rpc/tools.json sorts before tools.json
    status = tools["ledger_status"]
    assert status.path == "rpc/tools.json"
    assert status.parameters == (
        ToolParameter("verbose", "boolean", "false", False),
        ToolParameter("since", "string", None, True),
    )


def test_tools_at_commit_reads_git_objects_not_the_work_tree(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("svc")
    first = repo.commit("OPS-7: first tools", "2025-01-01T12:00:00+00:00", files={"server.py": SERVER_V1})
    repo.write("server.py", "")  # an uncommitted change must not matter
    assert sorted(tools_at_commit(repo.root, first)) == ["cancel_upload", "purge_cache", "search_uploads"]
    assert sorted(tools_at_commit(repo.root, "HEAD")) == ["cancel_upload", "purge_cache", "search_uploads"]


def test_tools_at_commit_skips_huge_files(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("big")
    padding = "# " + "x" * 100 + "\n"
    huge = SERVER_V1 + padding * (MAX_FILE_BYTES // len(padding) + 1)
    sha = repo.commit("big file", "2025-01-01T12:00:00+00:00", files={"gen/huge.py": huge, "ok.json": json.dumps(MANIFEST_V1)})
    assert sorted(tools_at_commit(repo.root, sha)) == ["ledger_status"]


def test_an_unknown_commit_is_an_input_error(make_git_repo: Callable[[str], Any]) -> None:
    repo = make_git_repo("empty")
    repo.commit("init", "2025-01-01T12:00:00+00:00", files={"a.txt": "a"})
    with pytest.raises(InputError, match="not a commit"):
        tools_at_commit(repo.root, "0" * 40)


def test_the_delta_between_two_commits_lists_added_modified_and_retired_tools(
    make_git_repo: Callable[[str], Any],
) -> None:
    repo = make_git_repo("uploader")
    before = repo.commit(
        "OPS-7: first tools",
        "2025-01-01T12:00:00+00:00",
        files={"server.py": SERVER_V1, "manifest/tools.json": json.dumps(MANIFEST_V1)},
    )
    repo.git("rm", "-q", "server.py")
    after = repo.commit(
        "OPS-7: move tools into the ops package, retry scans, drop cache purge",
        "2025-01-05T12:00:00+00:00",
        files={"src/ops/server.py": SERVER_V2, "manifest/tools.json": json.dumps(MANIFEST_V2)},
    )
    delta = diff_tools(tools_at_commit(repo.root, before), tools_at_commit(repo.root, after))

    assert [t.name for t in delta.added] == ["retry_scan"]
    assert [t.name for t in delta.retired] == ["purge_cache"]
    assert [c.after.name for c in delta.modified] == ["ledger_status", "search_uploads"]
    assert not delta.is_empty  # cancel_upload only moved: not modified

    ledger = delta.modified[0].schema_diff
    assert ledger["added"] == [{"name": "since", "annotation": "string", "default": None, "required": True}]
    assert ledger["removed"] == [] and ledger["changed"] == []

    search = delta.modified[1].schema_diff
    assert search["added"] == [{"name": "sort", "annotation": "Literal['new', 'old']", "default": "'new'", "required": False}]
    assert search["removed"] == []
    assert search["changed"] == [
        {"name": "query", "changes": {"annotation": {"before": "str", "after": "str | None"}}},
        {"name": "limit", "changes": {"default": {"before": "10", "after": "25"}}},
    ]
    assert search["path"] == {"before": "server.py", "after": "src/ops/server.py"}

    text = render_tool_delta(delta)
    assert "**Added tools (1)**" in text and "`retry_scan` (src/ops/server.py) — Retry the antivirus scan" in text
    assert "**Modified tools (2)**" in text
    assert "added parameter `since: string`" in text
    assert "parameter `limit`: default `10` → `25`" in text
    assert "parameter `query`: type `str` → `str | None`" in text
    assert "**Retired tools (1)**\n- `purge_cache` (was in server.py)" in text


def test_a_removed_parameter_and_required_flag_change_are_in_the_diff() -> None:
    before = extract_tools({"s.py": "@app.tool\ndef f(a: int, b: int = 1, c: str = 'x') -> None: ...\n"})
    after = extract_tools({"s.py": "@app.tool\ndef f(a: int = 0, b: int = 1) -> None: ...\n"})
    diff = diff_tools(before, after).modified[0].schema_diff
    assert [p["name"] for p in diff["removed"]] == ["c"]
    assert diff["changed"] == [
        {"name": "a", "changes": {"default": {"before": None, "after": "0"}, "required": {"before": True, "after": False}}}
    ]
    assert "removed parameter `c: str = 'x'` (optional)" in render_tool_delta(diff_tools(before, after))


def test_no_change_renders_a_plain_sentence() -> None:
    tools = extract_tools({"s.py": SERVER_V1})
    delta = diff_tools(tools, tools)
    assert delta.is_empty
    assert render_tool_delta(delta) == "No agent tools were added, modified or retired in this period."


def test_a_ukrainian_docstring_and_manifest_description_survive() -> None:
    source = '@mcp.tool()\ndef перевірити(файл: str) -> bool:\n    """Перевірити файл антивірусом."""\n    return True\n'
    tools = extract_tools({"uk.py": source})
    assert tools["перевірити"].description == "Перевірити файл антивірусом."
    assert tools["перевірити"].parameters == (ToolParameter("файл", "str", None, True),)


def test_context_parameters_are_skipped_in_every_spelling() -> None:
    source = (
        "@server.tool()\n"
        "def a(x: int, ctx: 'Context[ServerSession, None]', c2: mcp.server.Context, context=None) -> None: ...\n"
    )
    assert [p.name for p in extract_tools({"s.py": source})["a"].parameters] == ["x"]


def test_string_annotations_get_a_schema_too() -> None:
    tools = extract_tools({"s.py": "@mcp.tool()\ndef f(limit: 'int | None' = None) -> None: ...\n"})
    assert tools["f"].input_schema["properties"]["limit"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "default": None,
    }
