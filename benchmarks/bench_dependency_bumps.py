"""Are bumps of the same dependency shown newest first? Dependency tasks on govuk-infrastructure.

Asks a handful of dependency-upgrade tasks through ``Memory.query`` on the store ``bench_ranking.py``
ingested (``--data-root``/data-govuk-infrastructure), under main's ranking (ADR 0068's rules off) and
today's, and counts, among the commits each digest shows, the pairs that bump the same thing
(:func:`~mission_memory.retrieval.commit_successors.bumped_thing`) and how many of them rank the
newer commit first (docs/adr/0068).

Usage::

    nice -n 5 .venv/bin/python benchmarks/bench_dependency_bumps.py --data-root /work/rankdata [--budget 4000]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import mission_memory.retrieval.query as query_module
from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.retrieval.commit_successors import bumped_thing
from mission_memory.retrieval.ranking import RankingParams

TASKS = ["Upgrade the Terraform AWS provider", "Update the GitHub codeql action", "Bump actions/checkout",
         "Update the ruby setup action used in CI", "Upgrade the EKS module", "Update the Helm provider version",
         "Upgrade the external-secrets chart", "Bump the Kubernetes provider for Terraform"]
WAYS = {"main": RankingParams(fold_sections=False, generated_factor=1.0, replaced_commits=False),
        "today": RankingParams()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", type=Path, required=True)
    parser.add_argument("--budget", type=int, default=4000)
    args = parser.parse_args()
    original = query_module.tuned_params
    mission = "govuk-infrastructure"
    for label, ranking in WAYS.items():
        def params(store: Any, base: RankingParams | None = None, ranking: RankingParams = ranking) -> RankingParams:
            return original(store, ranking)

        query_module.tuned_params = params  # what run_query calls for its defaults
        pairs = newer_first = bumps = 0
        with Memory.open(load_settings(data_dir=args.data_root / f"data-{mission}")) as memory:
            for task in TASKS:
                digest = memory.query(task, token_budget=args.budget, filters={"mission": mission})
                shown = sorted((e for e in digest.entries if e.record.kind.value == "commit"), key=lambda e: -e.score)
                things = [(bumped_thing(e.record.title), e.record.provenance.time) for e in shown]
                bumps += sum(1 for thing, _ in things if thing)
                for i, (thing, moment) in enumerate(things):
                    for later_thing, later_moment in things[i + 1:]:
                        if thing and thing == later_thing:
                            pairs += 1
                            newer_first += moment >= later_moment
        print(f"{label:6} bump commits shown {bumps}  same-thing pairs {pairs}  newer ranked first {newer_first}")
    query_module.tuned_params = original


if __name__ == "__main__":
    main()
