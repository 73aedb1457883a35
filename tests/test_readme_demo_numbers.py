"""The README states the demo's size once, the same way in both places, and says where its store lives.

A user read "~740 records" in one place and "about 900 records" in another (the demo printed 956), and
found the demo's store shared by every checkout without the README saying where it is.
"""

from __future__ import annotations

import re
from pathlib import Path

from mission_memory.cli.core_commands import DEMO_DATA_DIR_NAME

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_gives_one_record_count_for_the_demo() -> None:
    counts = set(re.findall(r"(?:~|about |roughly )([\d,]+) records", README.read_text(encoding="utf-8")))
    assert len(counts) == 1, counts


def test_the_readme_says_where_the_demo_store_lives() -> None:
    text = README.read_text(encoding="utf-8")
    assert f"`<data dir>/{DEMO_DATA_DIR_NAME}`" in text
    assert "MISSION_MEMORY_DATA_DIR" in text and "~/.local/share/mission-memory" in text
