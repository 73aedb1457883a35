"""Chunking a very large document (issue 9 item 7): time to split 20 MB of Markdown with no headings,
as one line and as short lines without blank lines, and the largest chunk produced.

Run: ``.venv/bin/python benchmarks/bench_large_document.py [--megabytes 20]``. Prints a plain table; no
embedding and no store, only `split_document`.
"""

from __future__ import annotations

import argparse
import time

from mission_memory.ingest.documents import split_document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=float, default=20.0, help="document size in MB (10^6 characters)")
    size = int(parser.parse_args().megabytes * 1_000_000)
    line = "Журнал завантажень синхронізується з архівом щоночі о 02:00 UTC.\n"
    shapes = {
        "one line": "x" * size,
        "short lines, no blank line": (line * (size // len(line) + 1))[:size],
        "paragraphs, no heading": (("word " * 60 + "\n\n") * (size // 302 + 1))[:size],
    }
    print(f"{'document shape':<30} {'chars':>12} {'chunks':>8} {'max chunk':>10} {'seconds':>8}")
    for name, text in shapes.items():
        start = time.perf_counter()
        chunks = split_document(text, "docs/big.md")
        elapsed = time.perf_counter() - start
        print(f"{name:<30} {len(text):>12,} {len(chunks):>8,} {max(len(c.text) for c in chunks):>10,} {elapsed:>8.2f}")


if __name__ == "__main__":
    main()
