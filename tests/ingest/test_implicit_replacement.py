"""Implicit replacement (issue 34 item 3, docs/adr/0086): a later ADR that names earlier ones and says
what they decided has changed is their *probable* successor: linked, shown as probable in the digest,
and ranked above them for a question about the current state."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mission_memory.api import Memory
from mission_memory.config import load_settings
from mission_memory.decisions import DecisionStatus
from mission_memory.ingest.adr import parse_adr
from mission_memory.records import RecordKind
from tests.conftest import GitRepo

HAPROXY_2016 = """\
# 8. Use HAProxy to terminate TLS in front of the router

Date: 2016-05-10

## Status

Accepted

## Context

The AWS load balancer cannot pass the client's address to the router over TLS, and it cannot serve
our wildcard certificate for every application route.

## Decision

HAProxy terminates TLS in front of the router. The load balancer passes TCP through to HAProxy.

## Consequences

We run and patch HAProxy on every router instance.
"""

HAPROXY_PROXY_PROTOCOL = """\
# 14. HAProxy speaks the proxy protocol to the router

Date: 2016-09-02

## Status

Accepted

## Context

HAProxy terminates TLS (ADR-8) and the router must still see the client's address.

## Decision

HAProxy sends the proxy protocol header to the router on every connection.
"""

LOAD_BALANCER_2019 = """\
# 21. Terminate TLS at the AWS load balancer

Date: 2019-03-04

## Status

Accepted

## Context

In ADR008 and ADR014 we decided to use HAProxy in front of the router, because the load balancer could
not pass the client's address over TLS or serve our certificate. These problems have since been fixed:
the load balancer now supports the proxy protocol and serves certificates from the certificate manager.

## Decision

The AWS load balancer terminates TLS in front of the router; HAProxy is removed from the routers.

## Consequences

One fewer component to run and patch on the routers.
"""


def test_a_later_adr_naming_earlier_ones_whose_problems_were_fixed_is_their_probable_successor() -> None:
    decision = parse_adr(LOAD_BALANCER_2019, "docs/adr/0021-terminate-tls-at-the-aws-load-balancer.md")
    assert decision.probably_supersedes == ("0008", "0014")
    assert decision.supersedes == () and decision.status is DecisionStatus.ACCEPTED


@pytest.mark.parametrize(
    "sentence",
    [
        "See ADR-8 for the background.",
        "It does not revisit ADR-8's trigger mechanics.",
        "Our [decision to replace the router](0008-replace-the-router.md) led us here.",
        "Was previously ADR 0008; renumbered when the two series were merged.",
        "In ADR-8 we decided to use HAProxy, and that is not changing.",
        "ADR-8 chose HAProxy.\n\n- This ADR supersedes the TODO in router.go.",
    ],
)
def test_a_mention_without_a_change_to_what_it_decided_is_no_link(sentence: str) -> None:
    text = f"# 21. Something later\n\n## Status\n\nAccepted\n\n## Context\n\n{sentence}\n\n## Decision\n\nDo it.\n"
    assert parse_adr(text, "docs/adr/0021-something-later.md").probably_supersedes == ()


@pytest.mark.parametrize(
    "sentence",
    [
        "This ADR in part supersedes [0008](0008-use-haproxy.md).",
        "We are revisiting [ADR 8](0008-use-haproxy.md) here because the ecosystem has matured.",
        "The [prior decision](https://example.org/repo/blob/main/docs/adr/0008-use-haproxy.md) isn't practical.",
    ],
)
def test_replacement_said_in_other_words_is_a_probable_link(sentence: str) -> None:
    text = f"# 21. Something later\n\n## Status\n\nAccepted\n\n## Context\n\n{sentence}\n\n## Decision\n\nDo it.\n"
    assert parse_adr(text, "docs/adr/0021-something-later.md").probably_supersedes == ("0008",)


def test_a_title_that_reverts_an_earlier_adr_names_it() -> None:
    text = "# ADR 0018: Revert ADR 3 Update the Builder using Dependabot\n\n## Status\n\nAccepted\n"
    assert parse_adr(text, "docs/adr/0018-revert-0003.md").probably_supersedes == ("0003",)


def test_a_forward_mention_is_never_a_replacement() -> None:
    text = "# 5. Early\n\n## Context\n\nADR-21 will later replace this.\n"
    assert parse_adr(text, "docs/adr/0005-early.md").probably_supersedes == ()


@pytest.fixture(scope="module")
def tls_memory(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    work = tmp_path_factory.mktemp("implicit")
    repo = GitRepo(work / "platform")
    repo.commit("ADR 8: HAProxy terminates TLS", "2016-05-10T10:00:00+00:00",
                {"docs/adr/0008-use-haproxy-to-terminate-tls.md": HAPROXY_2016})
    repo.commit("ADR 14: proxy protocol", "2016-09-02T10:00:00+00:00",
                {"docs/adr/0014-haproxy-proxy-protocol.md": HAPROXY_PROXY_PROTOCOL})
    repo.commit("ADR 21: TLS at the load balancer", "2019-03-04T10:00:00+00:00",
                {"docs/adr/0021-terminate-tls-at-the-aws-load-balancer.md": LOAD_BALANCER_2019})
    memory = Memory.open(load_settings(data_dir=work / "data"))
    memory.ingest_repository(repo.root, mission="platform")
    return memory


def test_the_probable_successor_ranks_first_for_the_current_state(tls_memory: Memory) -> None:
    digest = tls_memory.query("What terminates TLS in front of the router today?", token_budget=4000,
                              filters={"mission": "platform"})
    decisions = [e for e in digest.entries if e.record.kind is RecordKind.DECISION]
    numbers = [e.record.attributes.get("number") for e in decisions]
    assert numbers[0] == 21, numbers
    new = decisions[0]
    assert "Probably supersedes: ADR-0008, ADR-0014" in new.block
    assert "SUPERSEDED]" not in new.block
    for entry in decisions[1:]:
        assert entry.score < new.score and "[PROBABLY SUPERSEDED]" in entry.block


def test_the_earlier_decision_asked_by_name_is_shown_as_probably_superseded(tls_memory: Memory) -> None:
    digest = tls_memory.query("What did ADR-8 decide about TLS?", token_budget=4000, filters={"mission": "platform"})
    by_number = {e.record.attributes.get("number"): e for e in digest.entries if e.record.kind is RecordKind.DECISION}
    old = by_number[8]
    assert "[PROBABLY SUPERSEDED]" in old.block and "[SUPERSEDED]" not in old.block
    assert "Probably superseded by: ADR-0021" in old.block
    assert old.record.attributes["status"] == "accepted"  # the status as written stays
    assert 21 in by_number


def test_an_ingest_without_probable_links_stores_no_new_keys(
    make_git_repo: Callable[[str], GitRepo], tmp_path: Path
) -> None:
    repo = make_git_repo("plain")
    repo.commit("ADR 8", "2016-05-10T10:00:00+00:00", {"docs/adr/0008-use-haproxy-to-terminate-tls.md": HAPROXY_2016})
    with Memory.open(load_settings(data_dir=tmp_path / "data")) as memory:
        memory.ingest_repository(repo.root, mission="plain")
        stored = [r for r in memory.store.records_of_kind([RecordKind.DECISION.value], mission="plain", limit=10)]
    assert len(stored) == 1
    assert not {"probably_superseded_by", "probably_supersedes", "amends", "amended_by"} & stored[0].attributes.keys()
