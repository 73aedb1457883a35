"""Real e5 embeddings for vector benchmarks: commit messages of git repositories and this repository's documents.

Reads the commit messages (``git log --all --no-merges``, at least 20 characters, distinct, the
first 800 characters) of each git directory given, and the paragraphs (at least 80 characters) of
the Markdown files under ``tests/corpora`` and ``docs``; shuffles them with a fixed seed; embeds the
first ``--passages`` as passages and the first lines of the next ``--queries`` as queries with the
configured embedder (e5-small by default, about 10–100 texts/s on a shared 2-core machine). Writes
``passages.npy`` and ``queries.npy`` (float32, unit rows) and ``texts.json`` (model id, sources,
the query texts) to ``--out``, saving the passages every 2048 rows so a run cut short still
leaves what it embedded. ``benchmarks/bench_postgres_vectors.py --vectors`` reads them.

Usage::

    nice .venv/bin/python benchmarks/embed_real_texts.py --out DIR [--passages 30000] [--queries 200] GITDIR...
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def texts_of(git_dirs: list[Path]) -> list[tuple[str, str]]:
    """``(source, text)`` of every commit message of ``git_dirs`` and every paragraph of the documents."""
    texts: list[tuple[str, str]] = []
    for git_dir in git_dirs:
        log = subprocess.run(["git", "--git-dir", str(git_dir), "log", "--all", "--no-merges", "--format=%B%x00"],
                             capture_output=True, text=True, errors="replace", timeout=600, check=False).stdout
        messages = [m.strip() for m in log.split("\x00") if len(m.strip()) >= 20]
        name = git_dir.parent.name if git_dir.name in ("repo", ".git") else git_dir.name
        texts += [(name, m[:800]) for m in dict.fromkeys(messages)]
    for path in sorted([*(ROOT / "tests" / "corpora").rglob("*.md"), *(ROOT / "docs").rglob("*.md")]):
        for part in path.read_text(encoding="utf-8", errors="replace").split("\n\n"):
            if len(part.strip()) >= 80:
                texts.append(("docs", part.strip()[:800]))
    return texts


def main() -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from mission_memory.config import load_settings
    from mission_memory.embeddings.registry import make_embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dirs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--passages", type=int, default=30_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    texts = texts_of(args.git_dirs)
    random.Random(38).shuffle(texts)
    passages = texts[: args.passages]
    queries = [text.splitlines()[0] for _, text in texts[args.passages : args.passages + args.queries]]
    settings = load_settings()
    embedder = make_embedder(settings.embedder, settings)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "texts.json").write_text(json.dumps({
        "model_id": embedder.model_id, "available": len(texts), "sources": sorted({s for s, _ in passages}),
        "queries": queries}, ensure_ascii=False, indent=1), encoding="utf-8")
    np.save(args.out / "queries.npy", np.stack([embedder.embed_query(q) for q in queries]).astype(np.float32))
    started, done = time.perf_counter(), []
    for start in range(0, len(passages), 256):
        done.append(np.asarray(embedder.embed_passages([t for _, t in passages[start : start + 256]]), dtype=np.float32))
        count = start + len(done[-1])
        if count % 2048 == 0 or count == len(passages):
            np.save(args.out / "passages.npy", np.concatenate(done))
            print(f"{count} passages, {count / (time.perf_counter() - started):.1f}/s", flush=True)


if __name__ == "__main__":
    main()
