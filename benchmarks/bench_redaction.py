"""Recall of secret redaction on the planted-secret sets and its false-positive rate on real text.

Prints, for ``mission_memory.capture.redaction.redact`` (the one rule set every intake applies,
docs/adr/0053):

* per-family recall on the held-out set (``tests/security/planted_secrets_heldout.json``, written
  before the rules were tuned) and on the development set (``planted_secrets_dev.json`` plus the
  53 kinds of ``tests/hook/test_planted_secrets.py``), with every missed format listed;
* false positives: redacted spans per 10,000 whitespace tokens of the shared corpus (the
  ``tdr-docs`` bundle's Markdown files and commit messages, the Claude Code transcripts' text) and
  of this repository's ``docs/`` and commit messages, with examples of what was cut;
* the time ``redact`` takes per MB of the corpus, and in process on the prompts of
  ``bench_prompt_hook.py`` (best of 5 rounds), beside the other checkout's when ``--other-src`` is given;
* how many corpus texts a second pass would change (redaction must be idempotent, or a record re-built
  from its stored text would get a new id).

A planted case counts as caught when no piece of 8 characters (the whole secret if shorter) of any of
its secrets is left in the redacted text, other than pieces the sentence around it holds anyway.

Usage::

    python benchmarks/bench_redaction.py [--corpus tests/corpora] [--examples 12] [--other-src DIR]

``--other-src`` scores another checkout's ``src/`` (e.g. a worktree of the old code) beside this one.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

SETS = ROOT / "tests" / "security"
WINDOW = 8

Redact = Callable[[str], tuple[str, dict[str, int]]]


def leaked(case: dict[str, Any], redacted: str) -> list[str]:
    """The pieces of ``case``'s secrets left in ``redacted`` (empty when the case is caught)."""
    context = case["text"]
    for secret in case["secrets"]:
        context = context.replace(secret, "\x00")
    left: list[str] = []
    for secret in case["secrets"]:
        width = min(WINDOW, len(secret))
        for i in range(len(secret) - width + 1):
            piece = secret[i : i + width]
            if piece in redacted and piece not in context:
                left.append(piece)
                break
    return left


def hook_cases() -> list[dict[str, Any]]:
    """The 53 kinds of tests/hook/test_planted_secrets.py as development cases."""
    spec = importlib.util.spec_from_file_location("planted_hook", ROOT / "tests" / "hook" / "test_planted_secrets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [{"id": f"hook/{kind}", "family": "hook-kinds", "format": kind, "lang": "en",
             "text": template.replace("{s}", secret).replace("{{", "{").replace("}}", "}"), "secrets": [secret]} for kind, template, secret in module.CASES]


def load_sets() -> dict[str, list[dict[str, Any]]]:
    heldout = json.loads((SETS / "planted_secrets_heldout.json").read_text(encoding="utf-8"))
    dev = json.loads((SETS / "planted_secrets_dev.json").read_text(encoding="utf-8")) + hook_cases()
    return {"held-out": heldout, "development": dev}


def recall(redact: Redact, cases: list[dict[str, Any]]) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Per family ``(caught, total)`` and the misses as ``id format: pieces left``."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    for case in cases:
        out, _ = redact(case["text"])
        left = leaked(case, out)
        per[case["family"]][1] += 1
        if left:
            misses.append(f"{case['id']} [{case['lang']}] {case['format']}: left {left}")
        else:
            per[case["family"]][0] += 1
    return {k: (v[0], v[1]) for k, v in sorted(per.items())}, misses


def corpus_texts(corpus: Path) -> dict[str, list[tuple[str, str]]]:
    """``source -> [(label, text)]``: the shared corpus's documents, commits and transcripts, and
    this repository's docs/ and commit messages."""
    out: dict[str, list[tuple[str, str]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-redaction-") as tmp:
        clone = Path(tmp) / "tdr-docs"
        subprocess.run(["git", "clone", "-q", str(corpus / "tdr-docs.bundle"), str(clone)], check=True)
        out["tdr-docs files"] = [(str(p.relative_to(clone)), p.read_text(encoding="utf-8", errors="replace"))
                                 for p in sorted(clone.rglob("*.md")) if ".git" not in p.parts]
        out["tdr-docs commits"] = commit_messages(clone)
    out["transcripts"] = transcript_texts(corpus / "transcripts")
    out["own docs/"] = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
                        for p in sorted((ROOT / "docs").rglob("*.md"))]
    out["own commits"] = commit_messages(ROOT)
    return out


def commit_messages(repo: Path) -> list[tuple[str, str]]:
    raw = subprocess.run(["git", "-C", str(repo), "log", "--format=%H%x00%B%x01"], check=True,
                         capture_output=True, text=True).stdout
    found = []
    for entry in raw.split("\x01"):
        if "\x00" in entry:
            sha, body = entry.strip("\n").split("\x00", 1)
            found.append((sha[:10], body))
    return found


def transcript_texts(folder: Path) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for path in sorted(folder.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                continue
            for text in strings_in(item.get("message", {})):
                found.append((f"{path.name}:{n + 1}", text))
    return found


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def cut_spans(before: str, after: str) -> list[str]:
    """What redaction removed from ``before``, piece by piece (for examples)."""
    a, b = before.split(), after.split()
    pieces = []
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            pieces.append(" ".join(a[i1:i2])[:120])
    return pieces


def false_positives(redact: Redact, texts: dict[str, list[tuple[str, str]]], examples: int) -> None:
    print(f"\n{'source':<18} {'items':>6} {'tokens':>9} {'spans':>6} {'per 10k':>8} {'ms/MB':>7}  kinds")
    shown: list[str] = []
    unstable = 0
    for source, items in texts.items():
        tokens = spans = 0
        kinds: Counter[str] = Counter()
        size = sum(len(t.encode()) for _, t in items)
        start = time.perf_counter()
        results = [(label, text, *redact(text)) for label, text in items]
        elapsed = time.perf_counter() - start
        for label, text, out, counts in results:
            tokens += len(text.split())
            n = sum(counts.values())
            spans += n
            kinds.update(counts)
            if n:
                unstable += redact(out)[0] != out
                for piece in cut_spans(text, out)[:2]:
                    shown.append(f"{source} {label}: {piece!r}")
        rate = spans / tokens * 10_000 if tokens else 0.0
        ms_mb = elapsed * 1000 / (size / 1e6) if size else 0.0
        print(f"{source:<18} {len(items):>6} {tokens:>9} {spans:>6} {rate:>8.2f} {ms_mb:>7.1f}  {dict(kinds)}")
    print(f"texts a second pass would change: {unstable}")
    print(f"\nexamples of redacted spans ({min(examples, len(shown))} of {len(shown)}):")
    for line in shown[:examples]:
        print("  " + line)


def prompt_timings(redacts: dict[str, Redact], rounds: int = 15) -> dict[str, str]:
    """In-process time of each ``redact`` on the prompts bench_prompt_hook.py sends: the best of
    ``rounds`` rounds, the checkouts taking turns within each round so background load hits both."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_prompt_hook import LARGE, SECRETS, TYPICAL

    prompts = (("typical", TYPICAL, 2000), ("secrets", SECRETS, 1000), ("10 KB", LARGE, 50))
    best = {(name, label): float("inf") for name in redacts for label, _, _ in prompts}
    for _ in range(rounds):
        for label, text, n in prompts:
            for name, redact in redacts.items():
                start = time.perf_counter()
                for _ in range(n):
                    redact(text)
                best[name, label] = min(best[name, label], (time.perf_counter() - start) / n)
    return {name: ", ".join(f"{label} {best[name, label] * 1000:.4f} ms" for label, _, _ in prompts)
            for name in redacts}


def load_redact(src: Path) -> Redact:
    """``redact`` from the ``capture/redaction.py`` under ``src`` (another checkout's, for comparison)."""
    spec = importlib.util.spec_from_file_location(f"redaction_{abs(hash(src))}", src / "mission_memory" / "capture" / "redaction.py")
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.redact  # type: ignore[no-any-return]


def report(name: str, redact: Redact, sets: dict[str, list[dict[str, Any]]], show_misses: bool) -> None:
    print(f"== {name}")
    for set_name, cases in sets.items():
        per, misses = recall(redact, cases)
        caught = sum(c for c, _ in per.values())
        total = sum(t for _, t in per.values())
        fams = ", ".join(f"{fam} {c}/{t}" for fam, (c, t) in per.items())
        print(f"{set_name:<12} recall {caught}/{total} = {caught / total:.1%}  ({fams})")
        if show_misses:
            for miss in misses:
                print("    missed " + miss)


OUTSIDE = ROOT / "benchmarks" / "data" / "redaction"
"""The outside-sourced sets (benchmarks/data/redaction/README.md says where each piece comes from)."""

SEED_WORDS_LEFT = 3
"""A seed-phrase case is missed when this many of its words or more are left whole in the output."""


def outside_sets() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """``(secrets, ordinary lines, detectors' own false-positive samples)`` of benchmarks/data/redaction/."""
    def load(name: str) -> list[dict[str, Any]]:
        return json.loads((OUTSIDE / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    return load("secrets.json"), load("ordinary_lines.json"), load("detector_false_positives.json")


def outside_leaked(case: dict[str, Any], redacted: str) -> bool:
    """Is any of ``case``'s secret left in ``redacted`` (a seed phrase: 3 of its words or more)?"""
    if "secret_words" in case:
        words = set(redacted.replace(",", " ").replace('"', " ").split())
        return sum(word in words for word in case["secret_words"]) >= SEED_WORDS_LEFT
    return bool(leaked(case, redacted))


def outside_report(contenders: dict[str, Redact], show_misses: int) -> None:
    """Recall per family and per language, lines altered per family, each contender side by side."""
    secrets, ordinary, hard = outside_sets()
    names = list(contenders)
    print(f"\n== outside-sourced sets: {len(secrets)} secrets in {len({c['format'] for c in secrets})} formats, "
          f"{len(ordinary)} ordinary lines, {len(hard)} detectors' false-positive samples")
    missed: dict[str, list[str]] = {name: [] for name in names}
    rows: dict[str, dict[str, list[int]]] = defaultdict(lambda: {name: [0, 0] for name in names})
    for case in secrets:
        for name, redact in contenders.items():
            caught = not outside_leaked(case, redact(case["text"])[0])
            for key in ("all", f"family {case['family']}", f"lang {case['lang']}"):
                rows[key][name][0] += caught
                rows[key][name][1] += 1
            if not caught:
                missed[name].append(f"{case['id']} {case['format']}: {case['text'][:100]!r}")
    print(f"\n{'recall':<34}" + "".join(f"{name:>22}" for name in names))
    for key in sorted(rows, key=lambda k: (k != "all", k)):
        cells = "".join(f"{c:>9}/{t:<5} {c / t:>6.1%}" for c, t in (rows[key][n] for n in names))
        print(f"{key:<34}{cells}")
    altered: dict[str, dict[str, list[int]]] = defaultdict(lambda: {name: [0, 0] for name in names})
    examples: dict[str, list[str]] = {name: [] for name in names}
    for line in ordinary + hard:
        group = "detector false positives" if line in hard else line["family"]
        for name, redact in contenders.items():
            out = redact(line["text"])[0]
            changed = out != line["text"]
            for key in (group, "ordinary lines, all") if line not in hard else (group,):
                altered[key][name][0] += changed
                altered[key][name][1] += 1
            if changed and line not in hard:
                examples[name].append(f"{line['id']}: {line['text'][:100]!r} -> {out[:100]!r}")
    print(f"\n{'lines altered':<34}" + "".join(f"{name:>22}" for name in names))
    for key in sorted(altered, key=lambda k: (not k.startswith("ordinary"), k)):
        cells = "".join(f"{c:>9}/{t:<5} {c / t:>6.1%}" for c, t in (altered[key][n] for n in names))
        print(f"{key:<34}{cells}")
    for name in names:
        if show_misses:
            print(f"\n{name}: {len(missed[name])} missed, {len(examples[name])} ordinary lines altered")
            for miss in missed[name][:show_misses]:
                print("    missed " + miss)
            for example in examples[name][:show_misses]:
                print("    altered " + example)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=corpus_path())
    parser.add_argument("--examples", type=int, default=12)
    parser.add_argument("--other-src", type=Path, help="also score the redaction.py of this src/ folder")
    parser.add_argument("--no-corpus", action="store_true", help="skip the false-positive part")
    parser.add_argument("--outside-only", action="store_true",
                        help="only the outside-sourced sets of benchmarks/data/redaction/ (recall and lines altered)")
    parser.add_argument("--misses", type=int, default=0, help="list this many misses and altered lines per checkout")
    args = parser.parse_args()
    outside = {"this checkout": load_redact(ROOT / "src")}
    if args.other_src:
        outside = {"other": load_redact(args.other_src), **outside}
    outside_report(outside, args.misses)
    if args.outside_only:
        return
    sets = load_sets()
    print(f"held-out: {len(sets['held-out'])} formats; development: {len(sets['development'])} formats")
    if args.other_src:
        report(f"other: {args.other_src}", load_redact(args.other_src), sets, show_misses=False)
    mine = load_redact(ROOT / "src")
    report("this checkout", mine, sets, show_misses=True)
    print("\nredact() in process, bench_prompt_hook.py's prompts (best of 15 interleaved rounds):")
    contenders = {"this checkout": mine}
    if args.other_src:
        contenders["other"] = load_redact(args.other_src)
    for name, cells in prompt_timings(contenders).items():
        print(f"  {name + ':':<15}{cells}")
    if not args.no_corpus:
        texts = corpus_texts(args.corpus)
        if args.other_src:
            print(f"\n== false positives, other: {args.other_src}")
            false_positives(load_redact(args.other_src), texts, args.examples)
        print("\n== false positives, this checkout")
        false_positives(mine, texts, args.examples)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
