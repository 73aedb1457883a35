"""The tool's arguments are taken as JSON types, not coerced: a model's slip comes back as an error naming it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from mission_memory.mcp.server import build_server


def _call(arguments: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(build_server()) as client:
            return await client.call_tool("workflow_memory_query", arguments)

    return anyio.run(go)


@pytest.mark.parametrize(("arguments", "named"), [
    ({"task_description": "x", "token_budget": True}, "token_budget"),  # was taken as the budget 1
    ({"task_description": "x", "token_budget": "8000"}, "token_budget"),
    ({"task_description": "x", "timeline": "yes"}, "timeline"),  # was taken as true
    ({"task_description": "x", "timeline": 1}, "timeline"),
])
def test_a_boolean_for_the_budget_or_text_for_the_timeline_flag_is_an_error_naming_it(
    arguments: dict[str, Any], named: str
) -> None:
    result = _call(arguments)
    assert result.is_error, result.content[0].text
    assert named in result.content[0].text
    assert "too small" not in result.content[0].text


def test_json_integers_and_booleans_are_taken() -> None:
    result = _call({"task_description": "x", "token_budget": 2000, "timeline": False})
    assert not result.is_error, result.content[0].text
