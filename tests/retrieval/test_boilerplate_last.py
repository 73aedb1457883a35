"""No boilerplate first: generated tables weigh less, and a reverted or overtaken commit ranks below its successor (docs/adr/0068)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.records import RecordKind
from tests.conftest import GitRepo


def _module_readme(name: str, purpose: str) -> str:
    return f"""# {name} module

{purpose}

<!-- BEGIN_TF_DOCS -->
## Inputs

| Name | Description | Type | Default | Required |
|------|-------------|------|---------|:--------:|
| <a name="input_bucket_name"></a> [bucket\\_name](#input\\_bucket\\_name) | Name of the S3 bucket for access logging | `string` | n/a | yes |
| <a name="input_access_logging"></a> [access\\_logging](#input\\_access\\_logging) | Ship S3 access logging for the bucket to the logging bucket | `bool` | `true` | no |
| <a name="input_log_prefix"></a> [log\\_prefix](#input\\_log\\_prefix) | Prefix of access log objects in the logging bucket | `string` | `""` | no |

## Outputs

| Name | Description |
|------|-------------|
| <a name="output_logging_bucket"></a> [logging\\_bucket](#output\\_logging\\_bucket) | The access logging bucket of the S3 bucket |
<!-- END_TF_DOCS -->
"""


GUIDE = """# Logs of who read application data

Security needs to trace every read of an object holding application data. Each bucket therefore sends
its server logs to the central log store; name the log folder after the application, and never let a
bucket keep its own logs.
"""


@pytest.fixture
def infra_repo(make_git_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_git_repo("infra")
    modules = {f"terraform/modules/{name}/README.md": _module_readme(name, purpose) for name, purpose in [
        ("s3", "A private bucket."), ("static-site", "A website bucket."), ("backups", "A bucket for backups."),
        ("artefacts", "A bucket for build artefacts."), ("exports", "A bucket for data exports."),
    ]}
    repo.commit("Add the bucket modules", "2024-01-05T10:00:00+00:00", {**modules, "docs/access-logging.md": GUIDE})
    repo.commit("Bump terraform-aws-modules/eks/aws from 19.0.4 to 19.5.1",
                "2024-02-01T10:00:00+00:00", {"terraform/eks/versions.tf": 'eks = "19.5.1"\n'})
    repo.commit("Update terraform-aws-modules/eks/aws to v20.8.4", "2024-06-01T10:00:00+00:00",
                {"terraform/eks/versions.tf": 'eks = "20.8.4"\n'})
    sha = repo.commit("Enable IMDSv2 on the worker nodes of the cluster", "2024-07-01T10:00:00+00:00",
                      {"terraform/eks/nodes.tf": "imds = 2\n"})
    repo.commit(f'Revert "Enable IMDSv2 on the worker nodes of the cluster"\n\nThis reverts commit {sha}.',
                "2024-07-02T10:00:00+00:00", {"terraform/eks/nodes.tf": "imds = 1\n"})
    return repo


def _refs(memory: Memory, task: str) -> list[tuple[str, str, bool]]:
    digest = memory.query(task, token_budget=6000, filters={"mission": "infra"})
    ordered = sorted(digest.entries, key=lambda e: -e.score)
    return [(e.record.kind.value, e.record.title if e.record.kind is RecordKind.COMMIT else e.record.provenance.ref,
             e.superseded) for e in ordered]


def test_a_hand_written_guide_ranks_above_generated_input_tables(infra_repo: GitRepo, tmp_path: Path) -> None:
    with Memory.open(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.ingest_repository(infra_repo.root, mission="infra")
        ranked = _refs(memory, "Where do the access logs of our S3 buckets go?")
    docs = [ref for kind, ref, _ in ranked if kind == "doc_chunk"]
    guide = next(i for i, ref in enumerate(docs) if ref.startswith("docs/access-logging.md"))
    tables = [i for i, ref in enumerate(docs) if ref.endswith(("#inputs", "#outputs"))]
    assert tables and guide < min(tables)  # the guide that answers ranks above every generated table


def test_an_older_bump_and_a_reverted_commit_rank_below_their_successors(infra_repo: GitRepo, tmp_path: Path) -> None:
    with Memory.open(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.ingest_repository(infra_repo.root, mission="infra")
        bumps = [(ref, old) for kind, ref, old in _refs(memory, "Bump the terraform-aws-modules eks module version")
                 if kind == "commit" and "eks/aws" in ref]
        imds = [(ref, old) for kind, ref, old in _refs(memory, "Enable IMDSv2 on the cluster's worker nodes")
                if kind == "commit" and "IMDSv2" in ref]
    assert [ref for ref, _ in bumps][:2] == ["Update terraform-aws-modules/eks/aws to v20.8.4",
                                             "Bump terraform-aws-modules/eks/aws from 19.0.4 to 19.5.1"]
    assert [old for _, old in bumps][:2] == [False, True]  # the older bump is marked superseded
    assert [ref for ref, _ in imds][:2] == ['Revert "Enable IMDSv2 on the worker nodes of the cluster"',
                                            "Enable IMDSv2 on the worker nodes of the cluster"]
    assert imds[1][1]


def test_bumps_pair_only_for_the_same_thing_in_the_same_place_and_reverts_by_sha() -> None:
    from datetime import UTC, datetime

    from mission_memory.retrieval.commit_successors import CommitFacts, replaced_commits

    def commit(rid: str, subject: str, day: int, text: str = "") -> CommitFacts:
        return CommitFacts(rid, f"{rid:0<40}", subject, text or subject, datetime(2024, 1, day, tzinfo=UTC))

    facts = [
        commit("a", "Bump actions/checkout from 3 to 4 in /terraform", 1),
        commit("b", "Bump actions/checkout from 4 to 5 in /terraform (#90)", 5),
        commit("c", "Bump actions/checkout from 3 to 4 in /docs", 2),
        commit("d", "Upgrade publisher postgres to 14 in staging", 3),
        commit("e", "Upgrade publisher postgres to 14 in production", 4),
        commit("f", "Update README to describe the release", 6),
        commit("g", "Update docs and bump the module to 2", 7),
        commit("h", "Enable the cache", 8),
        commit("i", 'Revert "Enable the cache"', 9, f'Revert "Enable the cache"\n\nThis reverts commit {"h":0<40}.'),
    ]
    assert replaced_commits(facts) == {"a": "b", "h": "i"}
