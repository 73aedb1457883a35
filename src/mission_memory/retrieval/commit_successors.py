"""Commits that a later commit undid or overtook: a revert, and a version bump followed by a later one.

A pull about a dependency finds every commit that bumped it; the oldest bump ("Bump terraform-aws-eks
from 19.0 to 19.5") and the later upgrade ("Update terraform-aws-eks to v20.1") match the task alike,
and the older one, whose change is no longer what the repository runs, may rank first. Likewise a
commit and the ``Revert "…"`` that undid it. :func:`replaced_commits` finds, among a pull's commit
candidates, which one each such commit gave way to, so the ranking puts it below its successor
(docs/adr/0068). It reads subjects and bodies only, as git, Dependabot and Renovate write them:

* ``Revert "<subject>"`` (``git revert``), with ``This reverts commit <sha>.`` in the body when present;
* Dependabot's ``Bump <thing> from <old> to <new>`` (with or without a ``build(deps):`` prefix);
* Renovate's ``Update <thing> to v<new>`` / ``chore(deps): update dependency <thing> to v<new>``
  (``module``, ``helm release``, ``docker tag``, ``terraform`` variants, ``digest to``);
* a plain ``Upgrade <thing> to <version>`` / ``Update <thing> from <old> to <new>``.

Two bumps of the same thing in the same place (compared case-folded, quotes and backticks removed; a
trailing ``in /terraform`` or ``in staging`` is part of the place, a trailing ``(#123)`` is not): the
older gives way to the newer. A subject that goes on after the version ("Update X to 2 and drop Y")
is no bump.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from mission_memory.records import Record, RecordKind

__all__ = ["CommitFacts", "bumped_thing", "replaced_among", "replaced_commits"]

_PREFIX = r"(?:(?:build|chore|fix|ci|deps)(?:\([^)]*\))?!?:\s*)?"
_WHERE = r"(?:\s+in\s+(?P<where>.+?))?\s*(?:\(#\d+\))?\s*$"  # "in /terraform", "in staging", a PR number
_BUMPS = (
    re.compile(_PREFIX + r"bump\s+(?P<thing>[^\s]+)\s+from\s+\S+\s+to\s+v?[\w.-]*\d[\w.-]*" + _WHERE, re.IGNORECASE),
    re.compile(
        _PREFIX + r"(?:update|upgrade)\s+(?:dependency\s+|module\s+|helm\s+release\s+|docker\s+tag\s+|"
        r"terraform\s+|image\s+|package\s+)?(?P<thing>[^\s]+(?:\s+[^\s]+)?)\s+(?:digest\s+)?"
        r"(?:from\s+\S+\s+)?to\s+v?[\w.-]*\d[\w.-]*" + _WHERE,
        re.IGNORECASE,
    ),
)
_REVERT = re.compile(r'^revert\s+"(?P<subject>.+)"\s*$', re.IGNORECASE)
_REVERTS_SHA = re.compile(r"this reverts commit (?P<sha>[0-9a-f]{7,40})", re.IGNORECASE)
_NOT_A_THING = frozenset({"the", "all", "a", "an", "dependencies", "deps", "packages", "lock", "lockfile"})


@dataclass(frozen=True)
class CommitFacts:
    """What :func:`replaced_commits` reads of one commit candidate.

    Attributes:
        record_id: the commit record's id.
        sha: the commit's sha (``""`` when unknown).
        subject: the message's first line.
        text: the record's text (subject, body, files), searched for ``This reverts commit``.
        time: when the commit was authored (timezone-aware).
    """

    record_id: str
    sha: str
    subject: str
    text: str
    time: datetime


def bumped_thing(subject: str) -> str | None:
    """The dependency or component a version-bump subject updates, normalised; None when it is no bump.

    >>> bumped_thing("Bump actions/checkout from 3 to 4")
    'actions/checkout'
    >>> bumped_thing("chore(deps): update dependency Terraform-AWS-EKS to v20.1.0 (#812)")
    'terraform-aws-eks'
    >>> bumped_thing("Upgrade publisher postgres to 14 in staging")
    'publisher postgres in staging'
    """
    for pattern in _BUMPS:
        found = pattern.match(subject.strip())
        if found:
            thing = found.group("thing").strip("`'\"").lower()
            if thing in _NOT_A_THING:
                return None
            where = (found.group("where") or "").strip().lower()
            return f"{thing} in {where}" if where else thing
    return None


def replaced_commits(commits: Sequence[CommitFacts]) -> dict[str, str]:
    """Which of ``commits`` a later one of them reverted or overtook: record id -> its successor's record id.

    A reverted commit's successor is the revert (found by the sha in its body, else by the quoted
    subject; only a revert authored later counts). A version bump's successor is the newest bump of the
    same thing among ``commits``. A commit replaced both ways keeps the revert.
    """
    out: dict[str, str] = {}
    by_subject: dict[str, list[CommitFacts]] = {}
    for c in commits:
        by_subject.setdefault(c.subject.strip(), []).append(c)
    for revert in commits:
        found = _REVERT.match(revert.subject.strip())
        if not found:
            continue
        shas = [m.group("sha").lower() for m in _REVERTS_SHA.finditer(revert.text)]
        undone = [c for c in commits if c.sha and any(c.sha.lower().startswith(s) for s in shas)]
        if not undone:
            undone = by_subject.get(found.group("subject").strip(), [])
        for c in undone:
            if c.record_id != revert.record_id and c.time <= revert.time:
                out[c.record_id] = revert.record_id
    newest: dict[str, CommitFacts] = {}
    things: dict[str, str] = {}
    for c in commits:
        thing = bumped_thing(c.subject)
        if thing is None:
            continue
        things[c.record_id] = thing
        if thing not in newest or c.time > newest[thing].time:
            newest[thing] = c
    for record_id, thing in things.items():
        successor = newest[thing].record_id
        if successor != record_id:
            out.setdefault(record_id, successor)
    return out


def replaced_among(records: Sequence[Record]) -> dict[str, str]:
    """:func:`replaced_commits` over the commit records among ``records`` (others are ignored)."""
    facts = [
        CommitFacts(r.id, str(r.attributes.get("sha") or r.provenance.commit or ""), r.title, r.text, r.provenance.time)
        for r in records if r.kind is RecordKind.COMMIT
    ]
    return replaced_commits(facts) if len(facts) > 1 else {}
