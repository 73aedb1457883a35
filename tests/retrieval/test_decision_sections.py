"""One record per decision: an ADR's sections never out-rank, nor push out, its decision record (docs/adr/0066).

An ADR longer than the decision record's text cap is also ingested as document chunks of its
sections. Its decision record is embedded from the head of the file (the long context), so a task
about what the "Reasoning" section says matches that section far better than the decision itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import RecordKind
from mission_memory.retrieval.ranking import Candidate, RankingParams
from tests.conftest import GitRepo

_CONTEXT = [
    "Our main Kubernetes cluster was built in 2019 with kOps on EC2 instances in three availability zones. "
    "It hosts about forty publishing applications, their background workers and the search indexers.",
    "The cluster has grown from twelve to sixty worker instances. Application teams deploy through Helm charts "
    "from the continuous delivery pipeline, and each team owns a namespace with its own resource quotas.",
    "Traffic reaches the applications through the load balancers in front of the ingress controllers; the "
    "content delivery network caches most public pages, so the cluster mainly serves cache misses and editors.",
    "The publishing platform must stay available during working hours for editors in several departments, "
    "and the public site has an availability target of 99.95 per cent measured monthly.",
    "Observability comes from Prometheus, Grafana dashboards and the logging stack; alerts page the on-call "
    "engineer through the incident tool, and runbooks live in the developer documentation.",
    "Several options were discussed at the architecture review in March, with representatives of the "
    "application teams, the security team and the finance partner who approves infrastructure spending.",
]
MANAGED = "docs/adr/0004-run-the-main-cluster-on-a-managed-kubernetes-service.md"
LONG_ADR = (
    "# 4. Run the main cluster on a managed Kubernetes service\n\nDate: 2024-03-20\n\n## Status\n\nAccepted\n\n"
    "## Context\n\n"
    + "\n\n".join(f"### Background, part {i + 1}\n\n" + "\n\n".join(_CONTEXT) for i in range(20))
    + "\n\n## Decision\n\nWe will move the main cluster to Amazon EKS.\n\n"
    "## Reasoning\n\nSelf-managed control plane nodes meant that every quarter two engineers spent a week on etcd "
    "backups, rotating the control plane certificates and rehearsing etcd restores before each Kubernetes "
    "version upgrade. A managed control plane takes etcd backups, certificate rotation and control plane "
    "upgrades off our hands, so that toil ends.\n\n"
    "## Consequences\n\nWe depend on the provider's upgrade calendar.\n"
)
SHORT_ADRS = {
    "docs/adr/0001-record-architecture-decisions.md": (
        "# 1. Record architecture decisions\n\nDate: 2023-01-05\n\n## Status\n\nAccepted\n\n## Context\n\n"
        "We need to record the architectural decisions made on this project.\n\n## Decision\n\n"
        "We will use Architecture Decision Records, as described by Michael Nygard.\n\n"
        "## Consequences\n\nSee Michael Nygard's article.\n"),
    "docs/adr/0002-use-postgresql-for-the-content-store.md": (
        "# 2. Use PostgreSQL for the content store\n\nDate: 2023-04-11\n\n## Status\n\nAccepted\n\n## Context\n\n"
        "The content store keeps every published edition and needs transactions and point-in-time recovery.\n\n"
        "## Decision\n\nWe will use PostgreSQL on the managed database service, with daily snapshots kept for "
        "35 days.\n\n## Consequences\n\nRestores are tested monthly.\n"),
    "docs/adr/0003-use-helm-for-application-packages.md": (
        "# 3. Use Helm for application packages\n\nDate: 2023-09-02\n\n## Status\n\nAccepted\n\n## Context\n\n"
        "Applications are deployed with hand-written manifests that drift between environments.\n\n"
        "## Decision\n\nWe will package every application as a Helm chart kept in one charts repository.\n\n"
        "## Consequences\n\nChart versions are bumped by the release pipeline.\n"),
}
TASK = "Who takes over etcd backups and control plane certificate rotation once the cluster moves?"


@pytest.fixture
def cluster_repo(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_git_repo("platform")
    repo.commit("Record the first platform decisions", "2023-09-02T10:00:00+00:00", SHORT_ADRS)
    repo.commit("ADR 4: the main cluster moves to a managed control plane", "2024-03-20T10:00:00+00:00",
                {MANAGED: LONG_ADR})
    return repo


def _path(ref: str) -> str:
    return ref.split("#", 1)[0]


@pytest.mark.parametrize("max_entries", [10, 1])
def test_an_adrs_reasoning_section_does_not_outrank_or_replace_its_decision(
    cluster_repo: GitRepo, tmp_path: Path, max_entries: int
) -> None:
    with Memory.open(load_settings(data_dir=tmp_path / "data", max_digest_entries=max_entries)) as memory:
        report = memory.ingest_repository(cluster_repo.root, mission="platform")
        assert any(MANAGED in w and "document chunks" in w for w in report.warnings)  # the long ADR is chunked too
        sections = [r for batch in memory.store.iterate() for r in batch
                    if r.kind is RecordKind.DOC_CHUNK and _path(r.provenance.ref) == MANAGED]
        assert any(r.provenance.ref.endswith("#reasoning") for r in sections)

        digest = memory.query(TASK, token_budget=4000, filters={"mission": "platform"})

    best = max(digest.entries, key=lambda e: e.score)
    assert best.record.kind is RecordKind.DECISION and best.record.provenance.ref == MANAGED
    own = [e for e in digest.entries if _path(e.record.provenance.ref) == MANAGED]
    assert [e.record.kind for e in own] == [RecordKind.DECISION]  # its sections are folded into it
    # ... and the section that matched is shown under the decision, inside the entry's fence
    assert "Decision: We will move the main cluster to Amazon EKS." in best.text
    assert "Best-matching section, Reasoning: Self-managed control plane nodes meant that" in best.text
    assert best.text.index("Best-matching section") < best.text.index("Context:")
    decisions = [e.record.provenance.ref for e in digest.entries if e.record.kind is RecordKind.DECISION]
    assert decisions[0] == MANAGED


def test_folding_gives_the_decision_its_best_sections_score_and_demotes_a_superseded_one() -> None:
    from mission_memory.retrieval.ranking import fold_sections

    ranked = [Candidate("chunk-a", 0.9), Candidate("other", 0.6), Candidate("decision-a", 0.4),
              Candidate("chunk-a2", 0.3), Candidate("chunk-b", 0.8), Candidate("chunk-c", 0.7)]
    ranked.sort(key=lambda c: -c.score)
    params = RankingParams()
    out = fold_sections(
        ranked, {"chunk-a": "decision-a", "chunk-a2": "decision-a", "chunk-b": "decision-b", "chunk-c": "decision-c"},
        {"decision-b": True}, params,
    )
    by_id = {c.record_id: c for c in out}
    assert [c.record_id for c in out] == ["decision-a", "chunk-c", "other", "decision-b"]
    assert by_id["decision-a"].score == pytest.approx(0.9) and by_id["decision-a"].sections == ("chunk-a", "chunk-a2")
    # decision-b was no candidate: it enters, superseded, with its section's score demoted
    assert by_id["decision-b"].superseded and by_id["decision-b"].score == pytest.approx(0.8 * params.superseded_factor)
    # decision-c is neither ranked nor allowed in (filtered out): its section stays
    assert "decision-c" not in by_id
