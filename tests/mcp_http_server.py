"""``mission-memory serve --transport http`` as a real subprocess on a free loopback port, for tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["http_mcp_server"]


@contextmanager
def http_mcp_server(data_dir: Path, *args: str, **env: str) -> Iterator[str]:
    """Start the streamable-HTTP server on ``data_dir``; yield its MCP URL once it listens (no sleeps).

    ``args`` are more ``serve`` options (``"--mission", "ops"``); ``env`` adds environment variables
    (``MISSION_MEMORY_OPERATOR="carol"``). The server is terminated when the block ends.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir), **env)
    with subprocess.Popen(
        [sys.executable, "-m", "mission_memory", "serve", "--transport", "http", "--port", str(port), *args],
        env=environment, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    ) as server:
        try:
            assert server.stderr is not None
            for line in server.stderr:  # wait for the server to say it listens
                if "Uvicorn running on" in line:
                    break
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.terminate()
            server.wait(timeout=30)
