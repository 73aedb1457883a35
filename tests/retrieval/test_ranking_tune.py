"""``ranking tune``: fusion weights fitted on retrieval-correction pairs from a real store (ADR 0032)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.api import Memory
from mission_memory.cli.app import app
from mission_memory.config import load_settings
from mission_memory.errors import InputError
from mission_memory.records import Provenance, Record, RecordKind, SourceKind
from mission_memory.retrieval.ranking import FUSION_STATE_KEY, FUSION_STATE_MISSION
from tests.conftest import GitRepo

# Forty decisions about upgrading the Kubernetes cluster, near-identical in meaning and in
# words, and six about other subjects that each carry one rare code name; sixty unrelated commits
# make the shared words moderately rare. A question about one code name's cluster upgrade is
# answered by the decision with the code name (BM25 ranks it first), but the dense retriever
# prefers the cluster decisions, and with equal fusion weights the fused ranking buries it.
CLUSTER_TOPICS = [
    "node pools", "ingress", "network policies", "pod security", "etcd backups", "logging", "service mesh",
    "node images", "DNS", "volumes", "workload identity", "autoscaling", "secrets", "quotas", "metrics",
    "admission webhooks", "load balancers", "registries", "namespaces", "taints", "probes", "cron jobs",
    "certificates", "audit logs", "priority classes", "daemon sets", "stateful sets", "config maps",
    "service accounts", "role bindings", "pod budgets", "limit ranges", "storage classes", "gateways",
    "sidecars", "init containers", "image pulls", "node labels", "topology spread", "runtime classes",
]
CODE_NAMES = ["quokkaforge", "zebrafrost", "marmotline", "ibexgate", "lemurvault", "okapirun"]
SUBJECTS = [
    "office printer fleet", "payroll spreadsheet export", "conference room booking",
    "newsletter template", "expense receipts scanner", "holiday calendar",
]
DIGEST_CAP = 10
"""The entry cap these tests ask and tune with: what is served, and what tune's recall counts, is the first
ten (the default cap of 25, ADR 0067, would serve the buried decisions anyway)."""
RRF_IN_USE = json.dumps({"weights": {"fusion": "rrf", "rrf_k": 60, "dense_weight": 1.0, "bm25_weight": 1.0}})
FILLERS = ["printer toner", "canteen menu", "parking permits", "desk booking", "visitor badges", "coffee beans"]


def _adr(number: int, title: str, decision: str) -> str:
    return (
        f"# {number}. {title}\n\nDate: 2024-03-01\n\n## Status\n\nAccepted\n\n"
        f"## Context\n\n{decision}\n\n## Decision\n\n{decision}\n\n## Consequences\n\nNone worth noting.\n"
    )


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tune")
    repo = GitRepo(root / "cluster-repo")
    for i in range(60):
        repo.commit(f"Update the {FILLERS[i % 6]} list, round {i}", "2024-02-01T10:00:00+00:00",
                    {f"office/{i}.txt": f"{FILLERS[i % 6]} {i}\n"})
    for n, topic in enumerate(CLUSTER_TOPICS, start=1):
        text = f"Kubernetes cluster upgrade: each Kubernetes cluster upgrade rolls the {topic} of the cluster."
        repo.commit(f"Decide how cluster {topic} change", "2024-03-01T10:00:00+00:00",
                    {f"docs/adr/{n:04d}-cluster-{n}.md": _adr(n, f"Kubernetes cluster upgrade and {topic}", text)})
    for n, (name, subject) in enumerate(zip(CODE_NAMES, SUBJECTS, strict=True), start=len(CLUSTER_TOPICS) + 1):
        text = f"Project {name} replaces the {subject}; the {name} plan is owned by the facilities team."
        repo.commit(f"Decide on the {subject}", "2024-03-01T10:00:00+00:00",
                    {f"docs/adr/{n:04d}-{name}.md": _adr(n, f"{name.capitalize()} for the {subject}", text)})
    data = root / "data"
    with Memory.open(load_settings(data_dir=data, max_digest_entries=DIGEST_CAP)) as memory:
        memory.ingest_repository(repo.root, mission="cluster")
    return data


def _questions() -> list[tuple[str, str]]:
    return [(name, f"Plan the {name} upgrade of the Kubernetes cluster") for name in CODE_NAMES]


def _write_pairs(memory: Memory, path: Path, missed_of: Callable[[str], str]) -> int:
    """Ask each question once (logging a retrieval event) and write one pair per question."""
    decisions = {
        name: r.id for r in memory.store.records_of_kind(["decision"], limit=100)
        for name in CODE_NAMES if name in r.title.lower()
    }
    lines, missing = [], 0
    for name, question in _questions():
        digest = memory.query(question, token_budget=4000)
        served = [e.record.id for e in digest.entries]
        target = decisions[missed_of(name)]
        missing += target not in served
        lines.append(json.dumps({
            "correction_id": f"{name:0<32}"[:32], "event_id": digest.retrieval_event_id,
            "time": "2024-04-01T10:00:00+00:00", "mission": "cluster", "query": question,
            "retrieved": served, "missed": [target], "correction_class": "missing-context", "category": "retrieval",
        }))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return missing


def _tune(args: list[str], data: Path) -> dict:
    env = {"MISSION_MEMORY_DATA_DIR": str(data), "MISSION_MEMORY_MAX_DIGEST_ENTRIES": str(DIGEST_CAP)}
    result = CliRunner().invoke(app, ["ranking", "tune", *args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_tune_adopts_weights_that_find_the_missed_records_and_pull_then_serves_them(
    store_dir: Path, tmp_path: Path
) -> None:
    """The weights in use are plain RRF with k = 60 (as adopted earlier, say), which buries them."""
    pairs = tmp_path / "pairs.jsonl"
    with Memory.open(load_settings(data_dir=store_dir, max_digest_entries=DIGEST_CAP)) as memory:
        memory.store.set_state(FUSION_STATE_MISSION, FUSION_STATE_KEY, RRF_IN_USE)
        missing = _write_pairs(memory, pairs, missed_of=lambda name: name)
    assert missing >= len(CODE_NAMES) - 2, "the weights in use already serve the code-name decisions"

    dry = _tune(["--pairs", str(pairs), "--holdout", "0.34", "--seed", "1", "--dry-run"], store_dir)
    assert not dry["adopted"] and dry["holdout_recall_after"] > dry["holdout_recall_before"]
    with Memory.open(load_settings(data_dir=store_dir, max_digest_entries=DIGEST_CAP)) as memory:
        assert memory.store.get_state(FUSION_STATE_MISSION, FUSION_STATE_KEY) == RRF_IN_USE

    report = _tune(["--pairs", str(pairs), "--holdout", "0.34", "--seed", "1"], store_dir)
    assert report["adopted"], report
    assert report["holdout_recall_after"] > report["holdout_recall_before"]
    assert report["after"] != report["before"]
    with Memory.open(load_settings(data_dir=store_dir, max_digest_entries=DIGEST_CAP)) as memory:
        served_after = _write_pairs(memory, tmp_path / "again.jsonl", missed_of=lambda name: name)
        memory.store.set_state(FUSION_STATE_MISSION, FUSION_STATE_KEY, "")
    assert served_after < missing


def test_tune_keeps_the_weights_when_no_weighting_finds_the_missed_records(store_dir: Path, tmp_path: Path) -> None:
    """Pairs whose 'missed' record has nothing to do with the question: no weighting serves it."""
    pairs = tmp_path / "pairs.jsonl"
    unrelated = dict(zip(CODE_NAMES, CODE_NAMES[1:] + CODE_NAMES[:1], strict=True))
    with Memory.open(load_settings(data_dir=store_dir, max_digest_entries=DIGEST_CAP)) as memory:
        _write_pairs(memory, pairs, missed_of=lambda name: unrelated[name])
    report = _tune(["--pairs", str(pairs)], store_dir)
    assert not report["adopted"]
    assert report["holdout_recall_after"] <= report["holdout_recall_before"]
    with Memory.open(load_settings(data_dir=store_dir, max_digest_entries=DIGEST_CAP)) as memory:
        assert not memory.store.get_state(FUSION_STATE_MISSION, FUSION_STATE_KEY)


def test_tune_names_the_bad_line_of_a_pairs_file_and_a_bad_holdout(store_dir: Path, tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"query": "x", "missed": ["a"]}\n{"query": "y", "missed": "not-a-list"}\n', encoding="utf-8")
    with Memory.open(load_settings(data_dir=store_dir, max_digest_entries=DIGEST_CAP)) as memory:
        with pytest.raises(InputError, match=r"pairs.jsonl:2: .*'missed' must be a list"):
            memory.tune_ranking(pairs)
        good = tmp_path / "good.jsonl"
        good.write_text('{"query": "x", "missed": ["a"]}\n', encoding="utf-8")
        with pytest.raises(InputError, match="holdout must be a share between 0 and 1"):
            memory.tune_ranking(good, holdout=1.5)
    result = CliRunner().invoke(app, ["ranking", "tune", "--pairs", str(tmp_path / "absent.jsonl")],
                                env={"MISSION_MEMORY_DATA_DIR": str(store_dir),
                                     "MISSION_MEMORY_MAX_DIGEST_ENTRIES": str(DIGEST_CAP)})
    assert result.exit_code == 1 and "cannot read pairs file" in result.output


def test_tune_without_pairs_says_where_pairs_come_from(tmp_path: Path) -> None:
    """An empty store holds no correction records, so there is nothing to fit on."""
    with (
        Memory.open(load_settings(data_dir=tmp_path / "empty")) as memory,
        pytest.raises(InputError, match="no retrieval-correction pairs: pass --pairs FILE"),
    ):
        memory.tune_ranking()


def test_tune_without_a_pairs_file_builds_the_pairs_from_the_stored_correction_records(
    store_dir: Path, tmp_path: Path
) -> None:
    """Correction records (practitioner layer, docs/design.md §3.8) name the retrieval event and
    the missed records; the query comes from the event."""
    data = tmp_path / "data"
    shutil.copytree(store_dir, data)
    with Memory.open(load_settings(data_dir=data, max_digest_entries=DIGEST_CAP)) as memory:
        decisions = {
            name: r.id for r in memory.store.records_of_kind(["decision"], limit=100)
            for name in CODE_NAMES if name in r.title.lower()
        }
        records = []
        for i, (name, question) in enumerate(_questions()):
            event = memory.query(question, token_budget=4000, session_id="s-1").retrieval_event_id
            correction_id = f"{i:032x}"
            records.append(Record.build(
                kind=RecordKind.CORRECTION_PATTERN, title="Memory missed the code-name decision",
                text="Memory missed the code-name decision", operator="ana", component="cluster",
                provenance=Provenance(kind=SourceKind.CORRECTION, ref=f"correction/{correction_id}",
                                      uri=f"mission-memory://correction/{correction_id}", mission="cluster",
                                      time=datetime(2024, 4, 1, 10, i, tzinfo=UTC)),
                slot=correction_id,
                attributes={"correction_id": correction_id, "outcome": "rejected", "retrieval_caused": "true",
                            "session_id": "s-1", "retrieval_event_id": event,
                            "missed_record_ids": [decisions[name]], "served_record_ids": []},
            ))
        memory.store.upsert(records, memory.embedder.embed_passages([r.embedding_text for r in records]),
                            memory.embedder.model_id)
        report = memory.tune_ranking(holdout=0.34, seed=1, dry_run=True)
    assert report.pairs == len(CODE_NAMES) and report.used == len(CODE_NAMES)
    assert report.holdout_recall_after > report.holdout_recall_before


def test_pairs_from_the_store_include_a_derived_correction_that_followed_another_sessions_query(
    store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A correction from a captured prompt follows the same operator's query of another session when its
    own session asked nothing (docs/adr/0082); ``ranking tune`` looked its event up by the correction's
    session only, so that pair was silently left out."""
    from datetime import timedelta

    from mission_memory.corrections.practitioner_records import Correction, CorrectionSource
    from mission_memory.corrections.recording import store_corrections
    from mission_memory.retrieval.ranking_tune import pairs_from_store

    data = tmp_path / "data"
    shutil.copytree(store_dir, data)
    monkeypatch.setenv("MISSION_MEMORY_OPERATOR", "ana")
    with Memory.open(load_settings(data_dir=data, max_digest_entries=DIGEST_CAP)) as memory:
        name, question = _questions()[0]
        digest = memory.query(question, token_budget=400, session_id="session-of-the-query")
        served = {e.record.id for e in digest.entries}
        missed = next(r.id for r in memory.store.records_of_kind(["decision"], limit=100)
                      if r.id not in served and name in r.title.lower())
        event = memory.retrieval_events(1)[0]
        correction = Correction(
            correction_id="c" * 32, correction_class="redirect", category="retrieval", outcome="modified",
            summary=f"You missed the {name} plan", source=CorrectionSource.PROMPT, mission="cluster",
            operator="ana", session_id="a-later-session", time=event.time + timedelta(minutes=5),
            expected=(missed,),
        )
        (labelled,), _ = store_corrections(memory.store, memory.embedder, [correction],
                                           window=timedelta(minutes=120), threshold=0.87)
        assert labelled.label.retrieval_event_id == event.id and missed in labelled.label.missed_record_ids
        pairs = pairs_from_store(memory.store)
    assert [(p.event_id, p.missed) for p in pairs] == [(event.id, (missed,))]
