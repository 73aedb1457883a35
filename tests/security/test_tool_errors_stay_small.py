"""A tool error goes into the model's context: 100,000 unknown filter keys once came back as a
4.8 MB error text (issue 22 item 6). The error names the first few and counts the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mission_memory.errors import InputError
from mission_memory.mcp.server import build_server
from mission_memory.retrieval.filters import parse_filters
from tests.mcp_http_server import http_mcp_server

KEYS = {f"unknown_key_{i:06d}": i for i in range(100_000)}


def test_a_hundred_thousand_unknown_filter_keys_give_a_short_tool_error_over_http(data_dir: Path) -> None:
    async def go(url: str) -> Any:
        async with Client(url) as client:
            return [
                await client.call_tool("workflow_memory_query", {"task_description": "x", "filters": KEYS}),
                await client.call_tool("workflow_memory_query", {"task_description": "x", **KEYS}),
            ]

    with http_mcp_server(data_dir) as url:
        answers = anyio.run(go, url)
    for result in answers:
        text = result.content[0].text
        assert result.is_error
        assert len(text) < 2_000, len(text)
        assert "unknown_key_000000" in text and "99,995 more" in text


def test_an_in_process_client_and_the_api_bound_the_text_too() -> None:
    async def go() -> Any:
        async with Client(build_server()) as client:
            return await client.call_tool("workflow_memory_query", {"task_description": "x", "filters": KEYS})

    result = anyio.run(go)
    assert result.is_error and len(result.content[0].text) < 2_000
    with pytest.raises(InputError) as refused:
        parse_filters({**KEYS, "x" * 100_000: 1})
    assert len(str(refused.value)) < 2_000 and "more problems" in str(refused.value)
