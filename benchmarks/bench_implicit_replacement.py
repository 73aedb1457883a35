"""Precision of the probable-successor links (docs/adr/0086) on hand-labelled pairs of real ADRs.

``benchmarks/data/implicit_replacement_labels.json`` holds two sets of (later ADR, earlier ADR it
names) pairs with a hand label each: does the later one replace, reverse, amend or partly supersede
what the earlier one decided? ``pairs`` is the set the cue list was written against; ``held_out``
was labelled before the detector first ran on it. For every ADR of the listed folders (read from
the bare mirrors under ``--mirrors``), the bench parses the text and prints, per set: probable links
made on labelled pairs (right / wrong), links made on unlabelled pairs, labelled replacements
linked as stated links (supersedes / amends) or as probable ones, and those missed.

Usage::

    python benchmarks/bench_implicit_replacement.py [--mirrors /work/.mirror]
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from mission_memory.ingest.adr import parse_adr

LABELS = Path(__file__).resolve().parent / "data" / "implicit_replacement_labels.json"


def _links(mirrors: Path, repo: str, folder: str) -> tuple[set[tuple[str, int, int]], set[tuple[str, int, int]]]:
    """(probable links, stated supersedes/amends links) of one ADR folder, as (repo, later, earlier)."""
    git = mirrors / repo.replace("/", "+") / "repo"
    listing = subprocess.run(["git", "-C", str(git), "-c", "core.quotepath=off", "ls-tree", "--name-only", "HEAD",
                              f"{folder}/" if folder else "."], capture_output=True, text=True, check=True).stdout
    probable: set[tuple[str, int, int]] = set()
    stated: set[tuple[str, int, int]] = set()
    for path in listing.splitlines():
        if not path.endswith(".md"):
            continue
        text = subprocess.run(["git", "-C", str(git), "show", f"HEAD:{path}"], capture_output=True, text=True).stdout
        decision = parse_adr(text, path)
        if decision.number is None:
            continue
        probable |= {(repo, decision.number, int(r)) for r in decision.probably_supersedes if r.isdigit()}
        stated |= {(repo, decision.number, int(r)) for r in (*decision.supersedes, *decision.amends) if r.isdigit()}
    return probable, stated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    data = json.loads(LABELS.read_text(encoding="utf-8"))
    for name, pairs in (("tuning set", data["pairs"]), ("held-out set", data["held_out"]["pairs"])):
        labels = {(p["repo"], p["later"], p["earlier"]): p["replaces"] for p in pairs}
        repos = sorted({p["repo"] for p in pairs})
        probable: set[tuple[str, int, int]] = set()
        stated: set[tuple[str, int, int]] = set()
        for repo in repos:
            found, said = _links(args.mirrors, repo, data["folders"][repo])
            probable |= found
            stated |= said
        right = sorted(k for k in probable if labels.get(k) is True)
        wrong = sorted(k for k in probable if labels.get(k) is False)
        unlabelled = sorted(k for k in probable if k not in labels)
        positives = [k for k, v in labels.items() if v]
        as_stated = [k for k in positives if k in stated]
        missed = sorted(k for k in positives if k not in stated and k not in probable)
        judged = len(right) + len(wrong)
        print(f"{name}: {len(pairs)} labelled pairs, {len(positives)} replacing, in {len(repos)} repositories")
        print(f"  probable links on labelled pairs: {len(right)} right, {len(wrong)} wrong"
              f" (precision {len(right) / judged:.2f})" if judged else "  no probable link on a labelled pair")
        print(f"  probable links on unlabelled pairs: {len(unlabelled)} {unlabelled}")
        print(f"  replacements linked: {len(as_stated)} as stated links, {len(right)} as probable; missed {len(missed)}")
        for key in wrong:
            print(f"    wrong: {key}")
        for key in missed:
            print(f"    missed: {key}")


if __name__ == "__main__":
    main()
