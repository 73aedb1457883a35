"""Precision and recall of the correction link's topic rule (ADR 0062) on a labelled set from real history.

The shared corpus' transcripts hold task prompts but no correction, so the corrections come from the
repository history (``tdr-docs.bundle``): every non-merge commit whose subject says it corrects
(``Fix…``, ``Correct…``, ``Typo…``, ``Revert…``) is a correction, its subject the summary and the
top-level folder most of its files live in the component. Each is paired with

* the subject of the commit just before it (the task it most likely follows), and
* the subject of the commit fifteen positions earlier (a task of the same repository, usually another one),
* one of the transcripts' real task prompts (``tests/corpora/transcripts``; always another task).

A pair is labelled *about* (1) when the correction touches a file the task's commit touched, else 0
(transcript prompts: 0). The label comes from files, which the rule never sees: it gets the
correction's summary and component and the task's text only, as the link does at run time.

Usage::

    .venv/bin/python benchmarks/bench_correction_link.py [--bundle tests/corpora/tdr-docs.bundle]
        [--out tests/corrections/link_labels.tsv]

Prints the counts, precision and recall (with Wilson 95 % intervals) and writes the labelled pairs.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from mission_memory.corrections.topic_link import topic_related

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

SHARED = corpus_path()
CORRECTION = re.compile(r"^(fix|correct|typo|revert|amend)", re.IGNORECASE)
_US, _RS = "\x1f", "\x1e"


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def commits(bundle: Path) -> list[tuple[str, str, set[str]]]:
    with tempfile.TemporaryDirectory() as work:
        repo = Path(work) / "repo"
        subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True)
        out = subprocess.run(["git", "log", "--reverse", "--no-merges", "--name-only", f"--format={_RS}%h{_US}%s"],
                             cwd=repo, capture_output=True, text=True, check=True).stdout
    rows = []
    for chunk in out.split(_RS):
        if chunk.strip():
            head, _, names = chunk.partition("\n")
            sha, subject = head.split(_US, 1)
            rows.append((sha, subject, {n.strip() for n in names.splitlines() if n.strip()}))
    return rows


def component(files: set[str]) -> str | None:
    tops = Counter(f.split("/", 1)[0] for f in files if "/" in f)
    return tops.most_common(1)[0][0] if tops else None


def transcript_prompts(folder: Path) -> list[str]:
    prompts = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            content = record.get("message", {}).get("content") if record.get("type") == "user" else None
            if isinstance(content, str) and not content.startswith(("<", "Caveat", "This session is being continued")):
                prompts.append(" ".join(content.split()))
    return prompts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, default=SHARED / "tdr-docs.bundle")
    parser.add_argument("--transcripts", type=Path, default=SHARED / "transcripts")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "corrections" / "link_labels.tsv")
    args = parser.parse_args()
    rows = commits(args.bundle)
    prompts = transcript_prompts(args.transcripts)
    pairs: list[tuple[str, str, str, str, int]] = []
    n_corrections = 0
    for i, (sha, subject, files) in enumerate(rows):
        if i < 15 or not CORRECTION.match(subject):
            continue
        n_corrections += 1
        comp = component(files) or ""
        for j in (i - 1, i - 15):
            task_sha, task, task_files = rows[j]
            pairs.append((f"{sha}<-{task_sha}", subject, comp, task, int(bool(files & task_files))))
        pairs.append((f"{sha}<-transcript", subject, comp, prompts[n_corrections % len(prompts)], 0))
    tp = fp = fn = tn = 0
    for _, summary, comp, task, label in pairs:
        said = topic_related(summary, comp or None, task)
        tp += said and label
        fp += said and not label
        fn += (not said) and label
        tn += (not said) and not label
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        out.write("pair\tcorrection_summary\tcomponent\ttask\tabout\n")
        for row in pairs:
            out.write("\t".join(str(x).replace("\t", " ") for x in row) + "\n")
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    print(f"{n_corrections} corrections, {len(pairs)} pairs ({tp + fn} about the task, {fp + tn} not);"
          f" {len(prompts)} transcript prompts")
    print(f"linked {tp + fp}: true positives {tp}, false positives {fp}; missed {fn}; rightly unlinked {tn}")
    lo, hi = wilson(tp, tp + fp)
    print(f"precision {precision:.3f} (Wilson 95 % [{lo:.2f}, {hi:.2f}])")
    lo, hi = wilson(tp, tp + fn)
    print(f"recall    {recall:.3f} (Wilson 95 % [{lo:.2f}, {hi:.2f}])")
    old_fp = fp + tn  # the old rule linked every pair (same operator within the window)
    print(f"the rule before (link to the latest event in the window): precision {(tp + fn) / len(pairs):.3f},"
          f" recall 1.000; {old_fp} wrong links")
    print(f"labelled pairs written to {args.out}")


if __name__ == "__main__":
    main()
