"""The three refresh artifacts of a task (docs/design.md §5, step 3), built from what a pass has read.

* the executive summary of what changed since the last refresh (a :class:`Summarizer`: an LLM when
  configured, else extractive), with a line naming the commits and comments it covers;
* the tool-lineage delta: the agent tools the repository defines, compared between the commit of
  the last refresh (or of the task's creation) and the pass's commit;
* the open questions: proposed decisions matching the task, unanswered questions in its comments,
  TODO/FIXME lines added in the period to the files it touched (plus LLM-extracted questions).

Each artifact is a workflow-layer :class:`Record` with ``source: push-refresh``, provenance to the
commits and comments covered (``attributes["commits"]``, ``attributes["comments"]``), the task
(``attributes["task"]``) and its kind (``attributes["artifact"]``). The refresh time is in the source
key, so every refresh adds new records and a replayed refresh adds none. Nothing here writes, except
:func:`prune_superseded_artifacts`: a later refresh of the same task and kind supersedes an artifact
(pull never shows it beside its successor, ADR 0030), and once such an artifact is older than a set
age it is deleted, its provenance (id, refresh time, commits and comments covered) kept in the
current artifact's ``attributes["pruned_predecessors"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from mission_memory.capture.redaction import redact_value
from mission_memory.ingest.access_levels import AccessRules, label_access, with_access
from mission_memory.ingest.git_history import Commit, GitRepository
from mission_memory.records import (
    AccessLevel,
    Layer,
    Provenance,
    Record,
    RecordKind,
    SourceKind,
    record_id_for,
    source_key_for,
)
from mission_memory.refresh.open_questions import (
    OpenQuestion,
    added_todos,
    find_open_questions,
    render_open_questions,
)
from mission_memory.refresh.refresh_store import RefreshStore
from mission_memory.refresh.signals import TaskActivity
from mission_memory.refresh.summarizers import QuestionsResult, Summarizer, SummaryMaterial
from mission_memory.refresh.tool_lineage import diff_tools, render_tool_delta, tools_at_commit
from mission_memory.retrieval.query_terms import query_terms
from mission_memory.stores.base import MemoryStore, SearchFilter
from mission_memory.stores.filters import ACCESS_ORDER
from mission_memory.teams.access_control import most_restricted
from mission_memory.trackers.base import Task, TaskComment
from mission_memory.utc import as_utc

__all__ = [
    "ARTIFACT_KINDS",
    "ArtifactPruneReport",
    "BuiltArtifacts",
    "RepositoryAsOf",
    "build_artifacts",
    "prune_superseded_artifacts",
]

ARTIFACT_KINDS = ("summary", "tool_lineage", "open_questions")
_ARTIFACT_CRITICALITY = 0.6
_PROPOSED_DECISIONS_SEARCHED = 20


@dataclass(frozen=True)
class BuiltArtifacts:
    """The three records of one refresh of one task, built but not stored.

    Attributes:
        records: summary, tool-lineage delta and open questions, in :data:`ARTIFACT_KINDS` order.
        summarizer: who wrote the summary (``extractive``, ``chat-completions:<model>``).
        fallback_reason: why the configured LLM was not used, or None.
    """

    records: list[Record]
    summarizer: str
    fallback_reason: str | None


class RepositoryAsOf:
    """A git repository as of a clock: its target is the newest commit reachable from HEAD committed
    at or before ``now``, so a pass replayed with ``--now`` sees the history it would have seen.

    Commit lists are read with one ``git log`` per distinct starting commit and cached.

    Args:
        path: any folder inside the work tree.
        now: the clock (timezone-aware).

    Raises:
        InputError: ``path`` is not inside a git work tree.
        BackendUnavailable: git is missing or fails.
    """

    def __init__(self, path: Path, now: datetime) -> None:
        self.git = GitRepository(path)
        self.now = now
        self.target = self._commit_before(now)
        self._commits: dict[str | None, list[Commit]] = {}

    def _commit_before(self, moment: datetime) -> str | None:
        if self.git.head() is None:
            return None
        out = self.git.git("rev-list", "-1", f"--before={as_utc(moment).isoformat()}", "HEAD", check=False)
        return out.strip() or None if out else None

    def baseline(self, last_commit: str | None, task: Task) -> str | None:
        """The commit the tool lineage is compared against: the last refresh's when the repository
        still has it, else the newest commit at the task's creation (None: the task predates them all)."""
        if last_commit and self.git.git("cat-file", "-e", f"{last_commit}^{{commit}}", check=False) is not None:
            return last_commit
        return self._commit_before(task.created_at)

    def commits_after(self, since: str | None) -> list[Commit]:
        """Commits after ``since`` (all when None or unknown), committed at or before the clock."""
        if since is not None and (self.target is None or not self.git.is_ancestor(since, self.target)):
            since = None
        if since not in self._commits:
            self._commits[since] = [c for c in self.git.commits(since) if c.committed_at <= self.now]
        return self._commits[since]


def build_artifacts(
    store: RefreshStore,
    task: Task,
    *,
    last_refresh: datetime | None,
    last_commit: str | None,
    activity: TaskActivity,
    comments: Sequence[TaskComment],
    repo: RepositoryAsOf | None,
    summarizer: Summarizer,
    mission: str,
    now: datetime,
    access_rules: AccessRules | None = None,
) -> BuiltArtifacts:
    """Build (not store) the summary, tool-lineage delta and open-questions records of one task.

    Args:
        store: read for the proposed decisions that match the task (nothing is written).
        task: the task.
        last_refresh, last_commit: the task's previous refresh time and commit, or None.
        activity: the commits and new comments since then.
        comments: all the task's comments up to ``now`` (older answers settle newer questions).
        repo: the repository as of ``now``, or None.
        summarizer: writes the executive summary (and, for an LLM, extracts questions).
        mission: the mission of the records.
        now: the refresh time; it is in each record's source key, so each refresh adds records.
        access_rules: the settings' path mapping (``MISSION_MEMORY_ACCESS_PATHS``), for the commits'
            levels; None: only the levels their ingested commit records carry.

    Returns:
        The three records in :data:`ARTIFACT_KINDS` order, and who wrote the summary; they take the
        most restricted level of the task's ``access:LEVEL`` label and of the commits they cover
        (:func:`material_access`; default ``internal``). The summarizer is told that level, and an
        LLM summarizer sends nothing above its ``max_access``.

    Raises:
        InputError: an ``access:`` label naming an unknown level (that task fails; the pass goes on).
    """
    level = material_access(store, task, activity.commits, mission, access_rules)
    material = SummaryMaterial(task=task, commits=activity.commits, comments=activity.comments, since=last_refresh,
                               access_level=level)
    summary = summarizer.summarize(material)
    baseline = repo.baseline(last_commit, task) if repo is not None else None
    readable = _readable_at(access_rules, level)
    lineage_text = _tool_lineage_text(repo, baseline, readable)
    questions, questions_note = _open_questions(store, task, activity, comments, repo, baseline, summarizer,
                                                material, mission, level, readable)
    questions_text = render_open_questions(questions)
    if questions_note:
        questions_text = f"{questions_note}\n\n{questions_text}"

    since = last_refresh.isoformat() if last_refresh else None
    covered = _covered_footer(activity)
    attributes: dict[str, Any] = {
        "task": task.key,
        "task_url": task.url,
        "tracker": task.tracker,
        "refreshed_at": now.isoformat(),
        "since": since,
        "commits": [c.sha for c in activity.commits],
        "comments": [c.url or c.id for c in activity.comments],
        "commit_range": [baseline, repo.target if repo is not None else None],
    }
    heading = f"{task.key} {task.title}".strip()
    day = now.strftime("%Y-%m-%d")
    texts = {
        "summary": (f"{heading}: what changed (refresh {day})", f"{summary.text.strip()}\n\n{covered}"),
        "tool_lineage": (f"{heading}: tool-lineage delta (refresh {day})", lineage_text),
        "open_questions": (f"{heading}: open questions (refresh {day})", questions_text),
    }
    records: list[Record] = []
    for artifact in ARTIFACT_KINDS:
        title, text = texts[artifact]
        extra: dict[str, Any] = {"artifact": artifact}
        if artifact == "summary":
            extra |= {"summarizer": summary.summarizer, "fallback_reason": summary.fallback_reason,
                      "tokens_spent": summary.tokens_spent}
        records.append(Record.build(
            kind=RecordKind.REFRESH_ARTIFACT,
            title=title,
            text=text,
            provenance=Provenance(
                kind=SourceKind.PUSH_REFRESH, ref=task.key, uri=task.url or f"task:{task.key}", mission=mission,
                time=now, commit=repo.target if repo is not None else None,
            ),
            criticality=_ARTIFACT_CRITICALITY,
            attributes=attributes | extra,
            slot=f"{task.key}:{artifact}:{now.isoformat()}",
        ))
    records = [with_access(r, level) for r in records]  # the material's level, ADR 0045
    return BuiltArtifacts(records=records, summarizer=summary.summarizer, fallback_reason=summary.fallback_reason)


def material_access(
    store: RefreshStore, task: Task, commits: Sequence[Commit], mission: str, access_rules: AccessRules | None
) -> AccessLevel:
    """The access level of a task's refresh material: the most restricted of its label and its commits.

    A commit's level is the most restricted of the path mapping over the files it touches and the
    level its ingested commit record carries (which also counts the files' front matter, ADR 0045);
    a commit not ingested yet gets the path mapping's level alone.

    Raises:
        InputError: an ``access:`` label with an unknown level (the message names the task).
    """
    levels = [label_access(task.labels, f"{task.tracker} task {task.key}")]
    rules = access_rules or AccessRules({})
    levels += [rules.commit_level(c.files, {}) for c in commits]
    keys = {source_key_for(mission, RecordKind.COMMIT, c.sha) for c in commits}
    if keys:
        stored = store.get(list(store.ids_by_source_keys(sorted(keys)).values()))
        levels += [r.access_level for r in stored.values()]
    return most_restricted([level for level in levels if level is not None])


def _covered_footer(activity: TaskActivity) -> str:
    shas = ", ".join(c.sha[:12] for c in activity.commits) or "none"
    return f"Covered: {len(activity.commits)} commits ({shas}); {len(activity.comments)} new comments."


def _readable_at(access_rules: AccessRules | None, level: AccessLevel) -> Callable[[str], bool]:
    """Whether a file's path (by the path mapping) is at or below ``level``: what an artifact at that
    level may quote from the repository (tools, TODOs)."""
    rules = access_rules or AccessRules({})

    def readable(path: str) -> bool:
        found = rules.path_level(path)
        return found is None or ACCESS_ORDER.index(found.value) <= ACCESS_ORDER.index(level.value)

    return readable


def _tool_lineage_text(
    repo: RepositoryAsOf | None, baseline: str | None, readable: Callable[[str], bool] = lambda _path: True
) -> str:
    """The tool-lineage delta, leaving out tools declared in files above the artifact's level."""
    if repo is None:
        return "No repository given to this refresh: the tool lineage was not computed."
    if repo.target is None:
        return f"The repository {repo.git.root.name} has no commit as of {repo.now.isoformat()}: no tools yet."
    before = tools_at_commit(repo.git.root, baseline) if baseline else {}
    after = tools_at_commit(repo.git.root, repo.target)
    before = {name: tool for name, tool in before.items() if readable(tool.path)}
    after = {name: tool for name, tool in after.items() if readable(tool.path)}
    delta = diff_tools(before, after)
    span = f"between {baseline[:12] if baseline else 'the start of the history'} and {repo.target[:12]}"
    if delta.is_empty:
        return f"Agent tools {span}: no tool was added, modified or retired ({len(after)} tools defined)."
    return f"Agent tools {span}:\n\n{render_tool_delta(delta)}"


def _open_questions(
    store: RefreshStore,
    task: Task,
    activity: TaskActivity,
    comments: Sequence[TaskComment],
    repo: RepositoryAsOf | None,
    baseline: str | None,
    summarizer: Summarizer,
    material: SummaryMaterial,
    mission: str,
    level: AccessLevel = AccessLevel.INTERNAL,
    readable: Callable[[str], bool] = lambda _path: True,
) -> tuple[list[OpenQuestion], str | None]:
    """Open questions: proposed decisions, unanswered comment questions, TODOs added (+ LLM-extracted).

    Only proposed decisions at or below ``level`` (the artifact's) are quoted, so an artifact never
    names a decision its readers may not see (ADR 0045)."""
    todos: list[OpenQuestion] = []
    if repo is not None and repo.target is not None:
        files = {f for c in activity.commits for f in c.files}
        linked = [p.strip("/") for p in task.linked_files if p.strip("/")]
        todos = [
            q for q in added_todos(repo.git.root, baseline, repo.target)
            if ((path := q.ref.rsplit(":", 1)[0]) in files or any(path == p or path.startswith(p + "/") for p in linked))
            and readable(path)
        ]
    questions = list(find_open_questions(
        proposed_decisions=_proposed_decisions(store, task, mission, level), comments=comments, todos=todos,
    ))
    note: str | None = None
    extract = getattr(summarizer, "extract_open_questions", None)  # LLM summarizers extract questions too
    if extract is not None:
        extracted: QuestionsResult = extract(material)
        if extracted.fallback_reason:
            note = f"LLM question extraction not used: {extracted.fallback_reason}."
        seen = {q.text.strip().lower() for q in questions}
        questions.extend(q for q in extracted.questions if q.text.strip().lower() not in seen)
    return questions, note


def _proposed_decisions(
    store: RefreshStore, task: Task, mission: str, level: AccessLevel = AccessLevel.INTERNAL
) -> list[Record]:
    """Stored decisions still ``proposed``, at or below ``level``, that match the task's words (BM25 in
    the workflow layer)."""
    terms = query_terms(f"{task.key} {task.title} {task.description}")
    if not terms:
        return []
    hits = store.bm25_search(
        terms, SearchFilter(layers=(Layer.WORKFLOW,), mission=mission, max_access=level), _PROPOSED_DECISIONS_SEARCHED
    )
    records = store.get([h.record_id for h in hits])
    return [
        r for r in (records[h.record_id] for h in hits if h.record_id in records)
        if r.kind is RecordKind.DECISION and r.attributes.get("status") == "proposed"
    ]


_ARTIFACTS_READ = 1_000_000


@dataclass(frozen=True)
class ArtifactPruneReport:
    """What :func:`prune_superseded_artifacts` did.

    Attributes:
        pruned: ids of the superseded artifacts deleted.
        rewritten: how many current artifacts now name pruned predecessors (their ids changed,
            as ids derive from the attributes; their source keys and vectors did not).
    """

    pruned: tuple[str, ...] = ()
    rewritten: int = 0

    def to_json(self) -> dict[str, Any]:
        """``{"pruned": n, "pruned_ids": [...], "rewritten": n}``."""
        return {"pruned": len(self.pruned), "pruned_ids": list(self.pruned), "rewritten": self.rewritten}


def _predecessor_entry(record: Record) -> dict[str, Any]:
    a = record.attributes
    return {
        "id": record.id,
        "refreshed_at": a.get("refreshed_at") or record.provenance.time.isoformat(),
        "commit": record.provenance.commit,
        "commit_range": a.get("commit_range"),
        "commits": a.get("commits", []),
        "comments": a.get("comments", []),
    }


def prune_superseded_artifacts(
    store: MemoryStore, *, now: datetime, older_than: timedelta, model_id: str, mission: str | None = None
) -> ArtifactPruneReport:
    """Delete refresh artifacts that a later refresh of the same task and kind superseded and that
    are older than ``older_than``; the current artifact keeps their provenance chain (issue 12 item 1).

    For each (mission, task, artifact kind), the newest artifact is current. Superseded ones whose
    refresh time is before ``now - older_than`` are deleted; first the current one is rewritten
    (one upsert under its source key, its vector of ``model_id`` kept) with
    ``attributes["pruned_predecessors"]``: one entry per pruned artifact, oldest first, with its id,
    refresh time, commit, commit range, commits and comments covered, including the entries the
    pruned ones carried themselves. A crash between the two writes leaves the predecessors both
    stored and named; the next run deletes them. Running it again prunes nothing new.

    Args:
        store: the store (read, upserted, deleted from).
        now: the clock (timezone-aware).
        older_than: minimum age of a superseded artifact before it is pruned.
        model_id: the embedding model whose vector the rewritten current artifact keeps.
        mission: only this mission's artifacts; None for all.

    Returns:
        The pruned ids and how many current artifacts were rewritten.
    """
    cutoff = now - older_than
    groups: dict[tuple[str, str, str], list[Record]] = {}
    for record in store.records_of_kind([RecordKind.REFRESH_ARTIFACT.value], mission=mission, limit=_ARTIFACTS_READ):
        task, artifact = record.attributes.get("task"), record.attributes.get("artifact")
        if task and artifact:
            groups.setdefault((record.provenance.mission, str(task), str(artifact)), []).append(record)
    pruned: list[str] = []
    rewritten = 0
    for records in groups.values():
        records.sort(key=lambda r: (r.provenance.time, r.id), reverse=True)
        current, older = records[0], records[1:]
        victims = [r for r in older if r.provenance.time < cutoff]
        if not victims:
            continue
        chain: dict[str, dict[str, Any]] = {}
        for holder in (current, *victims):
            for entry in holder.attributes.get("pruned_predecessors", []):
                chain.setdefault(str(entry.get("id")), entry)
        for victim in victims:
            chain.setdefault(victim.id, _predecessor_entry(victim))
        ordered = sorted(chain.values(), key=lambda e: str(e.get("refreshed_at")))
        if ordered != current.attributes.get("pruned_predecessors"):
            attributes = redact_value({**current.attributes, "pruned_predecessors": ordered})
            renewed = current.model_copy(update={
                "attributes": attributes,
                "id": record_id_for(current.source_key, current.title, current.text, attributes,
                                    current.criticality, current.component),
            })
            vector = store.vectors_for([current.id], model_id).get(current.id)
            store.upsert([renewed], vector[None, :] if vector is not None else None, model_id)
            rewritten += 1
        store.delete([v.id for v in victims])
        pruned.extend(v.id for v in victims)
    return ArtifactPruneReport(tuple(pruned), rewritten)
