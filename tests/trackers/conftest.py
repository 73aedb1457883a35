"""Fixtures for the tracker tests: a recording ``sleep`` (no test sleeps), a fixed clock and a closed port."""

from __future__ import annotations

import socket

import pytest

FIXED_NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z as Unix seconds


class RecordingSleep:
    """A ``sleep`` that records the requested waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def recording_sleep() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture
def fixed_clock() -> float:
    return FIXED_NOW


@pytest.fixture
def closed_port_url() -> str:
    """``http://127.0.0.1:<port>`` where nothing listens: a socket was bound there and closed."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
