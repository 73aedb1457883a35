"""Ingesting a repository: commits, ADRs, principles and documents into the memory layers.

Incremental and idempotent. Files are read once per run and turned into records whose ids derive
from their content; only records whose id is not stored yet are embedded and written, so a re-run
on an unchanged repository adds nothing and embeds nothing. Commits are read from the last
ingested HEAD on. Files that cannot be read as text (binary, too large, not UTF-8) are skipped and
reported with a reason; only regular files inside the repository are opened, a link leading out of it
or to a device or FIFO is reported instead (`mission_memory.ingest.file_reading`, ADR 0056). A folder that is not a git work tree is ingested as documents only, minus
what its ``.gitignore`` files exclude; files matching ``.mission-memory-ignore`` at the root are left out
either way (see `mission_memory.ingest.exclusion`), and ``include``/``exclude`` globs narrow a run further.
YAML and TOML files under documentation folders are ingested as documents, one chunk per top-level key
or item (`mission_memory.ingest.structured_documents`); one that does not parse is skipped with the
parser's reason. Document chunks are embedded by their informative head
(`mission_memory.ingest.passage_heads`, ADR 0034). The report says which top-level folders cost the most
records and seconds, so a user knows what to exclude.

Records are written in batches, each batch one transaction: a process killed mid-ingest leaves a
sound store holding the batches already committed, and a re-run completes the rest.

One bad record never stops a run (`mission_memory.ingest.record_failures`, ADR 0085): a file or commit
whose reading, parsing, redaction, embedding or writing raises is left out, named in the report's
``failures`` and in a warning, and the ingest goes on; what was stored of a failed file before is kept,
and commits are read again from the last complete run until none fails.
"""

from __future__ import annotations

import time as clock
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any

from mission_memory.decisions import Decision, Principle
from mission_memory.embeddings import Embedder
from mission_memory.errors import BackendUnavailable, InputError
from mission_memory.fence import check_mission_name
from mission_memory.ingest.access_levels import AccessRules, with_access
from mission_memory.ingest.adr import find_adr_paths, parse_adr
from mission_memory.ingest.decision_records import (
    RECORD_TEXT_CAP,
    bounded_text,
    component_of,
    decision_records,
)
from mission_memory.ingest.documents import DOCUMENT_SUFFIXES, split_document
from mission_memory.ingest.exclusion import PathGlobs
from mission_memory.ingest.file_reading import decode_text, read_inside
from mission_memory.ingest.generated_documents import generated_kind, generated_sections
from mission_memory.ingest.git_history import Commit, GitRepository, History
from mission_memory.ingest.passage_heads import passage_text
from mission_memory.ingest.principles import find_principle_paths, parse_principles
from mission_memory.ingest.record_failures import RecordFailure, failure_of
from mission_memory.ingest.recorded_decisions import reconcile_recorded, survives_ingest
from mission_memory.ingest.source import RepositorySource
from mission_memory.ingest.structured_documents import (
    StructuredDocumentError,
    is_structured_document,
    split_structured_document,
)
from mission_memory.ingest.tracked_tree import store_tracked_files
from mission_memory.records import Provenance, Record, RecordKind, SourceKind, record_id_for, source_key_for
from mission_memory.stores.base import MemoryStore
from mission_memory.stores.write_path import passage_vectors, store_records

__all__ = ["MAX_RECORDS_PER_FILE", "IngestReport", "ProgressFn", "ingest_repository"]

ProgressFn = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: called as work advances (phases: read, embed)."""

_BATCH = 64

MAX_RECORDS_PER_FILE = 2000
"""Default cap on the document records one file yields (ADR 0056). A long handbook split at 2,400
characters a chunk stays under it up to about 4.8 MB of text, far past ``max_file_bytes``' default;
only a file of many tiny sections reaches it."""


@dataclass
class IngestReport:
    """What one ingest run did.

    Attributes:
        mission: the mission name records were filed under.
        path: the repository root.
        head: the commit ingested up to, or None.
        added, updated, unchanged, removed: counts by record kind.
        skipped: files not ingested, with the reason (``binary``, ``too-large``,
            ``undecodable file name``, ``unreadable``, ``outside-repository`` (a link leading out of the
            repository), ``not-a-regular-file`` (FIFO, device, socket, folder), ``invalid-yaml``,
            ``invalid-toml``); a parse failure also carries ``detail``, the parser's message with its line.
        relocated: unchanged records whose source location was updated (the same repository ingested
            from another path): not embedded again, ids kept.
        decoded: files that are not UTF-8, read by the fallback
            (:data:`~mission_memory.ingest.file_reading.TEXT_FALLBACK`): path -> encoding; their
            records carry ``decoded_as``.
        cut: files that would have yielded more records than the per-file cap, each
            ``{"path", "records", "kept"}``: only their first ``kept`` records were ingested.
        embedded: vectors computed in this run.
        vectors_reused: records whose id changed but whose embedded text did not: their vector was
            copied from the record they replace instead of being computed again.
        seconds: wall-clock seconds of the run.
        folders: cost per top-level folder (``(root)`` for files at the root, ``(git history)`` for
            commits): ``{folder: {"records": n, "embedded": n, "seconds": s}}``; seconds are the folder's
            file reading plus its share of embedding and writing (by characters embedded).
        warnings: what the run decided on the reader's behalf (a supersession cycle broken by date,
            an oversized decision kept to its head), one sentence each.
        shallow: the repository is a shallow clone: commits before its boundary are not in it, so
            they are not ingested (issue 21).
        unreadable_history: blobs of the history git could not read (a damaged or partial clone),
            each ``{"commit", "path", "object"}``: the commit is ingested, that file's diffstat is left
            out (:meth:`~mission_memory.ingest.git_history.GitRepository.history`).
        failures: records left out because a stage raised
            (:class:`~mission_memory.ingest.record_failures.RecordFailure`: path or commit, stage,
            reason), each also named in ``warnings``; the run is partial when there is one.
    """

    mission: str
    path: str
    head: str | None = None
    added: Counter[str] = field(default_factory=Counter)
    updated: Counter[str] = field(default_factory=Counter)
    unchanged: Counter[str] = field(default_factory=Counter)
    removed: Counter[str] = field(default_factory=Counter)
    skipped: list[dict[str, str]] = field(default_factory=list)
    decoded: dict[str, str] = field(default_factory=dict)
    relocated: int = 0
    cut: list[dict[str, Any]] = field(default_factory=list)
    embedded: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    folders: dict[str, dict[str, float]] = field(default_factory=dict)
    vectors_reused: int = 0
    shallow: bool = False
    unreadable_history: list[dict[str, str]] = field(default_factory=list)
    failures: list[RecordFailure] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        """True when records were left out because a stage raised (see ``failures``)."""
        return bool(self.failures)

    def fail(self, source: str, stage: str, exc: BaseException) -> RecordFailure:
        """Name ``source`` (a path, ``path#anchor`` or commit sha) as left out at ``stage`` because of
        ``exc``, in ``failures`` and ``warnings``; returns the failure."""
        failure = failure_of(source, stage, exc)
        self.failures.append(failure)
        self.warnings.append(failure.warning())
        return failure

    @contextmanager
    def isolated(self, source: str, stage: str) -> Iterator[None]:
        """Run the block for ``source``; an exception it raises is named with :meth:`fail` instead of
        propagating (the rest of the block is skipped), so one record never stops the run (ADR 0085)."""
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - one bad record never stops a run (ADR 0085)
            self.fail(source, stage, exc)

    def costliest_folders(self, limit: int = 10) -> list[dict[str, Any]]:
        """The folders that cost the most seconds, most first: ``[{"folder", "records", "embedded", "seconds"}]``."""
        ranked = sorted(self.folders.items(), key=lambda item: (-item[1]["seconds"], -item[1]["records"], item[0]))
        return [
            {"folder": name, "records": int(cost["records"]), "embedded": int(cost["embedded"]),
             "seconds": round(cost["seconds"], 2)}
            for name, cost in ranked[:limit]
        ]

    def _charge(self, folder: str, *, records: int = 0, embedded: int = 0, seconds: float = 0.0) -> None:
        cost = self.folders.setdefault(folder, {"records": 0, "embedded": 0, "seconds": 0.0})
        cost["records"] += records
        cost["embedded"] += embedded
        cost["seconds"] += seconds

    def by_layer(self) -> dict[str, dict[str, int]]:
        """Counts per layer: ``{layer: {"added": n, "updated": n, "unchanged": n, "removed": n}}``."""
        from mission_memory.records import LAYER_OF_KIND

        out: dict[str, dict[str, int]] = {}
        for label, counter in (("added", self.added), ("updated", self.updated),
                               ("unchanged", self.unchanged), ("removed", self.removed)):
            for kind, n in counter.items():
                layer = LAYER_OF_KIND[RecordKind(kind)].value
                out.setdefault(layer, {"added": 0, "updated": 0, "unchanged": 0, "removed": 0})[label] += n
        return out

    def to_json(self) -> dict[str, Any]:
        """The report as ``mission-memory ingest --json`` prints it."""
        reasons = Counter(s["reason"] for s in self.skipped)
        return {
            "mission": self.mission,
            "path": self.path,
            "head": self.head,
            "added": sum(self.added.values()),
            "updated": sum(self.updated.values()),
            "unchanged": sum(self.unchanged.values()),
            "removed": sum(self.removed.values()),
            "embedded": self.embedded,
            "vectors_reused": self.vectors_reused,
            "relocated": self.relocated,
            "skipped": {"count": len(self.skipped), "by_reason": dict(reasons), "files": self.skipped},
            "decoded_by_fallback": {"count": len(self.decoded), "files": [
                {"path": _readable_file_name(p), "encoding": e} for p, e in sorted(self.decoded.items())]},
            "cut": list(self.cut),
            "by_kind": {
                label: dict(counter)
                for label, counter in (("added", self.added), ("updated", self.updated),
                                       ("unchanged", self.unchanged), ("removed", self.removed))
            },
            "by_layer": self.by_layer(),
            "warnings": list(self.warnings),
            "shallow": self.shallow,
            "unreadable_history": list(self.unreadable_history),
            "partial": self.partial,
            "failures": [f.to_json() for f in self.failures],
            "seconds": round(self.seconds, 2),
            "records_per_second": round(self.embedded / self.seconds, 2) if self.seconds > 0 else None,
            "folders": self.costliest_folders(limit=len(self.folders)),
        }


def _read_text(root: Path, relative: str, max_bytes: int) -> tuple[str | None, str | None, str | None]:
    """``(text, None, encoding)`` or ``(None, reason, detail)``; only a regular file under ``root`` is
    read, at most ``max_bytes`` of it (:func:`~mission_memory.ingest.file_reading.read_inside`), and
    decoded by :func:`~mission_memory.ingest.file_reading.decode_text` (UTF-8, else the stated
    fallback; a binary file is skipped). The detail of a skip says more (a too-large file's size and
    the limit), or is None."""
    read = read_inside(root, relative, max_bytes)
    if read.data is None:
        detail = read.too_large_detail(max_bytes, "MISSION_MEMORY_MAX_FILE_BYTES") if read.reason == "too-large" else None
        return None, read.reason, detail
    decoded = decode_text(read.data)
    return decoded.text, decoded.reason, decoded.encoding


def _mark_decoded(records: list[Record], decoded: dict[str, str]) -> list[Record]:
    """``records`` with those of a file read by the fallback (``decoded``: path -> encoding) carrying
    ``decoded_as``: the encoding, their ids derived again from the marked attributes."""
    if not decoded:
        return records
    out = []
    for r in records:
        path = r.attributes.get("path")
        encoding = decoded.get(path) if isinstance(path, str) else None
        if encoding is None or r.attributes.get("decoded_as") == encoding:
            out.append(r)
            continue
        attributes = {**r.attributes, "decoded_as": encoding}
        out.append(r.model_copy(update={"attributes": attributes, "id": record_id_for(
            r.source_key, r.title, r.text, attributes, r.criticality, r.component)}))
    return out


def _readable_file_name(path: str) -> str:
    """A file name as text that can be shown and stored: bytes that are not UTF-8 (held as surrogate
    escapes, see `os.fsdecode`) become ``\\xNN``, e.g. ``docs/bad-\\xff.md``; a UTF-8 name is returned as is.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return path


def _folder_of(path: str) -> str:
    """The top-level folder a repository-relative path is charged to (``(root)`` for root files)."""
    return path.split("/", 1)[0] if "/" in path else "(root)"


_HISTORY_FOLDER = "(git history)"


def _record_folder(record: Record) -> str:
    path = record.attributes.get("path")
    return _folder_of(path) if isinstance(path, str) and record.kind is not RecordKind.COMMIT else _HISTORY_FOLDER


def _commit_record(source: RepositorySource, mission: str, commit: Commit, mission_type: str | None) -> Record:
    assert source.git is not None
    files = list(commit.files)
    shown = ", ".join(files[:12]) + (f" (+{len(files) - 12} more)" if len(files) > 12 else "")
    lines = [commit.subject]
    if commit.body:
        lines += ["", commit.body]
    lines += ["", f"Files: {shown or '(none)'}", f"Diffstat: {len(files)} files, +{commit.insertions} -{commit.deletions}"]
    attributes: dict[str, Any] = {
        "sha": commit.sha,
        "parents": list(commit.parents),
        "merge": commit.is_merge,
        "has_body": bool(commit.body),
        "author": commit.author,
        "committed_at": commit.committed_at.isoformat(),
        "files": files[:500],
        "files_count": len(files),
        "insertions": commit.insertions,
        "deletions": commit.deletions,
        "tracker_keys": commit.tracker_keys,
    }
    if mission_type:
        attributes["mission_type"] = mission_type
    return Record.build(
        kind=RecordKind.COMMIT,
        title=commit.subject or commit.sha[:12],
        text="\n".join(lines),
        provenance=Provenance(
            kind=SourceKind.COMMIT, ref=commit.sha, uri=source.git.commit_uri(commit.sha), mission=mission,
            time=commit.authored_at.astimezone(UTC), commit=commit.sha,
        ),
        criticality=0.4 if commit.is_merge else 0.3,
        component=commit.component,
        attributes=attributes,
    )


def _document_records(
    source: RepositorySource, mission: str, path: str, text: str, mission_type: str | None,
    report: IngestReport, cap: int,
) -> list[Record]:
    """Document chunk records of one file, at most ``cap`` of them (the first, in document order; a cut
    file is named in ``report.cut`` and its warnings); raises StructuredDocumentError for YAML/TOML
    that does not parse."""
    sha, changed = source.changed(path)
    records = []
    seen: Counter[str] = Counter()
    split = split_structured_document(text, path) if is_structured_document(path) else split_document(text, path)
    chunks = [chunk for chunk in split if chunk.text.strip()]
    if len(chunks) > cap:
        shown = _readable_file_name(path)
        report.cut.append({"path": shown, "records": len(chunks), "kept": cap})
        report.warnings.append(
            f"{shown}: would yield {len(chunks):,} records, more than the cap of {cap:,} per file; only its first"
            f" {cap:,} sections are ingested (split the file, or exclude it)"
        )
        chunks = chunks[:cap]
    # Tool-written files and sections are marked, so pull weights them down (docs/adr/0068).
    whole = generated_kind(path, text)
    tables = [False] * len(chunks) if whole else generated_sections(
        text, [(chunk.start_line, chunk.heading_path, chunk.text) for chunk in chunks])
    for chunk, table in zip(chunks, tables, strict=True):
        ref = f"{path}#{chunk.anchor}" if chunk.anchor else path
        seen[ref] += 1
        slot = ref if seen[ref] == 1 else f"{ref}~{seen[ref]}"
        title = f"{path} › {' › '.join(chunk.heading_path)}" if chunk.heading_path else path
        attributes: dict[str, Any] = {"path": path, "anchor": chunk.anchor, "line": chunk.start_line, "slot": slot}
        if whole or table:
            attributes["generated"] = whole or "terraform-docs"
        if mission_type:
            attributes["mission_type"] = mission_type
        records.append(
            Record.build(
                kind=RecordKind.DOC_CHUNK,
                title=title,
                text=chunk.text.strip(),
                provenance=Provenance(
                    kind=SourceKind.DOC, ref=ref, uri=source.uri(path, chunk.anchor, sha), mission=mission,
                    time=changed, commit=sha,
                ),
                criticality=0.5 if path.lower() == "readme.md" else 0.4,
                component=component_of(path),
                attributes=attributes,
                slot=slot,
            )
        )
    return records


def _principle_records(
    source: RepositorySource, mission: str, path: str, principles: Iterable[Principle], mission_type: str | None
) -> list[Record]:
    sha, changed = source.changed(path)
    out = []
    for p in principles:
        attributes: dict[str, Any] = {"principle_id": p.id, "version": p.version, "status": p.status, "path": path,
                                      "rationale": p.rationale}
        if mission_type:
            attributes["mission_type"] = mission_type
        anchor = p.id.lower()
        out.append(
            Record.build(
                kind=RecordKind.PRINCIPLE,
                title=f"{p.id}: {p.title}",
                text=bounded_text(p.text.strip() or p.statement, RECORD_TEXT_CAP),
                provenance=Provenance(
                    kind=SourceKind.PRINCIPLE, ref=f"{path}#{anchor}", uri=source.uri(path, anchor, sha),
                    mission=mission, time=changed, commit=sha,
                ),
                criticality=0.8,
                attributes=attributes,
            )
        )
    return out


def _file_records(
    source: RepositorySource, mission: str, path: str, text: str, mission_type: str | None,
    report: IngestReport, cap: int,
) -> list[Record]:
    """The document records of one file (:func:`_document_records`), or none: YAML/TOML that does not
    parse is skipped with the parser's reason, any other exception names the file in
    ``report.failures`` (ADR 0085). Never raises."""
    with report.isolated(_readable_file_name(path), "parse"):
        try:
            return _document_records(source, mission, path, text, mission_type, report, cap)
        except StructuredDocumentError as exc:
            report.skipped.append({"path": _readable_file_name(path), "reason": exc.reason, "detail": exc.detail})
    return []


def _decision_records(
    source: RepositorySource, mission: str, adrs: list[tuple[str, Decision]], principles: list[Principle],
    mission_type: str | None, report: IngestReport,
) -> list[Record]:
    """The decision records of the parsed ADRs (:func:`decision_records`, which links them to each
    other). When that raises, each ADR is tried alone: those that raise are named in
    ``report.failures`` and the rest are built again together, so their links stay (ADR 0085)."""
    try:
        return decision_records(source, mission, adrs, principles, mission_type, report.warnings)
    except Exception:  # noqa: BLE001 - find the ADRs that raise; the others are built together below
        good = []
        for rel, decision in adrs:
            with report.isolated(_readable_file_name(rel), "parse"):
                decision_records(source, mission, [(rel, decision)], principles, mission_type, [])
                good.append((rel, decision))
    try:
        return decision_records(source, mission, good, principles, mission_type, report.warnings)
    except Exception as exc:  # noqa: BLE001 - only together do they raise: each is named, left out
        for rel, _ in good:
            report.fail(_readable_file_name(rel), "parse", exc)
        return []


def ingest_repository(
    store: MemoryStore,
    embedder: Embedder,
    path: Path,
    mission: str | None = None,
    mission_type: str | None = None,
    max_file_bytes: int = 1_000_000,
    progress: ProgressFn | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    passage_heads: Mapping[RecordKind, int] | None = None,
    access_rules: AccessRules | None = None,
    max_records_per_file: int = MAX_RECORDS_PER_FILE,
    replace_repository: bool = False,
) -> IngestReport:
    """Ingest a repository (or a plain folder of documents) into the store.

    Args:
        store: the store to write to.
        embedder: makes the vectors of new records.
        path: the repository (any folder inside its work tree) or a plain folder.
        mission: mission name; defaults to the repository folder's name.
        mission_type: optional mission type recorded on every record (for the ``mission_type`` filter).
        max_file_bytes: larger files are skipped (reason ``too-large``).
        progress: see :data:`ProgressFn`.
        include: ``.gitignore``-style globs; when given, only files matching one are ingested (commits
            are not files: history is ingested either way).
        exclude: ``.gitignore``-style globs of files left out, on top of ``.mission-memory-ignore``.
            Globs narrow one run: records stored earlier from files outside them are kept (a file named
            in ``.mission-memory-ignore`` is removed at the next ingest instead).
        passage_heads: characters embedded per record kind (see
            :func:`~mission_memory.ingest.passage_heads.passage_text`); None for the default heads, an
            empty mapping to embed every record whole (the behaviour before ADR 0034, kept for comparison).
        access_rules: the settings' path-pattern access levels; front matter ``access:`` is read
            either way (:mod:`~mission_memory.ingest.access_levels`, ADR 0045). Default: none. A
            commit takes the most restricted level of the files it touches; when the mapping or a
            file's level changes, the whole history is read again to reclassify stored commits.
        max_records_per_file: the most document records one file may yield; a file that would yield
            more keeps its first ones and is named in the report's ``cut`` and ``warnings`` (ADR 0056:
            a 957 KB file of one-line sections made 88,001 records and an hour of embedding).
        replace_repository: ingest a git repository into a mission that holds the commits of another
            one (:func:`check_same_repository`); its files' records replace the stored ones.

    Returns:
        What was added, updated, left unchanged, removed and skipped, and what each top-level folder cost.

    Raises:
        InputError: ``path`` does not exist or is not a folder, the mission holds the history of
            another git repository (unless ``replace_repository``), a file's front matter names an
            unknown access level, or ``.mission-memory-ignore`` (or, in a
            plain folder, a ``.gitignore``), ``include`` or ``exclude`` holds a line that is not a valid
            pattern; nothing is written.
        BackendUnavailable: git or the store failed.
    """
    path = path.expanduser()
    if not path.exists():
        raise InputError(f"ingest path {path} does not exist")
    if not path.is_dir():
        raise InputError(f"ingest path {path} is a file; give the repository's folder")
    if ".git" in path.resolve().parts:
        raise InputError(f"ingest path {path} is inside a .git folder; give the repository's work tree")
    started = clock.perf_counter()
    globs = PathGlobs(include, exclude) if include or exclude else None
    store.ensure_sound()
    source = RepositorySource(path.resolve(), globs)
    mission = check_mission_name(mission if mission is not None else source.root.name)
    if source.git is not None and not replace_repository:
        check_same_repository(store, mission, source.git)
    report = IngestReport(mission=mission, path=str(source.root))
    if source.root != path.resolve():
        report.warnings.append(
            f"{path} is inside the git repository {source.root}: the whole repository is ingested as"
            f" mission {mission!r} (narrow it with --include)"
        )

    files = source.files()
    adr_paths = set(find_adr_paths(files))
    principle_paths = set(find_principle_paths(files)) - adr_paths
    doc_paths = [
        f for f in files
        if (f.lower().endswith(DOCUMENT_SUFFIXES) or is_structured_document(f))
        and f not in adr_paths and f not in principle_paths
    ]
    texts: dict[str, str] = {}
    candidates = sorted(adr_paths | principle_paths) + doc_paths
    for i, rel in enumerate(candidates, start=1):
        read_started = clock.perf_counter()
        shown = _readable_file_name(rel)
        with report.isolated(shown, "read"):
            text, reason, encoding = (
                (None, "undecodable file name", None) if shown != rel
                else _read_text(source.root, rel, max_file_bytes)
            )
            if text is None:
                detail = {"detail": encoding} if encoding else {}  # a skip's third value is its detail
                report.skipped.append({"path": shown, "reason": reason or "unreadable", **detail})
            else:
                texts[rel] = text
                if encoding not in (None, "utf-8"):
                    report.decoded[rel] = str(encoding)
        report._charge(_folder_of(rel), seconds=clock.perf_counter() - read_started)
        if progress:
            progress("read", i, len(candidates))

    principles: list[Principle] = []
    principle_records: list[Record] = []
    for rel in sorted(principle_paths & texts.keys()):
        with report.isolated(_readable_file_name(rel), "parse"):
            parsed = parse_principles(texts[rel], rel)
            built = _principle_records(source, mission, rel, parsed, mission_type)
            principles.extend(parsed)
            principle_records.extend(built)
    adrs = []
    for rel in sorted(adr_paths & texts.keys()):
        with report.isolated(_readable_file_name(rel), "parse"):
            adrs.append((rel, parse_adr(texts[rel], rel)))
    records: list[Record] = principle_records + _decision_records(
        source, mission, adrs, principles, mission_type, report
    )
    for rel, d in adrs:
        if len(d.text.strip()) > RECORD_TEXT_CAP:
            records.extend(_file_records(source, mission, rel, texts[rel], mission_type, report,
                                         max_records_per_file))
            report.warnings.append(
                f"{rel}: the decision's text ({len(d.text):,} characters) is kept to its first "
                f"{RECORD_TEXT_CAP:,} in the decision record; the whole text is ingested as document chunks"
            )
    for rel in doc_paths:
        if rel in texts:
            records.extend(_file_records(source, mission, rel, texts[rel], mission_type, report,
                                         max_records_per_file))
    records = _mark_decoded(records, report.decoded)
    access = access_rules or AccessRules({})
    records = access.assign(records, texts)  # before anything is stored
    file_levels = access.file_levels(records)  # a commit takes the levels of the files it touches
    # Decisions recorded with `decide` survive the re-read of their files (docs/adr/0028).
    records, recorded_keys = reconcile_recorded(store, mission, source.root, records)
    file_kinds = [RecordKind.DOC_CHUNK.value, RecordKind.DECISION.value, RecordKind.PRINCIPLE.value]
    file_keys = [r.source_key for r in records] + recorded_keys
    if globs is not None:
        # Globs narrow what this run reads; records of files outside them stay (the ignore file removes).
        stored = sum(store.count_kind(mission, kind) for kind in file_kinds)
        outside = [
            r for r in store.records_of_kind(file_kinds, mission=mission, limit=max(1, stored))
            if isinstance(r.attributes.get("path"), str) and not globs.keeps(r.attributes["path"])
        ]
        file_keys += [r.source_key for r in outside]
        # Files this run does not read keep their stored level for the commits that touch them.
        file_levels = AccessRules.file_levels(outside) | file_levels
    access_print = access.fingerprint(file_levels)

    commit_shas: set[str] = set()
    if source.git is not None:
        report.head = source.git.head()
        since = store.get_state(mission, f"git_head:{source.root}")
        if since and report.head and not source.git.is_ancestor(since, report.head):
            since = None
        recorded = store.get_state(mission, f"commit_access:{source.root}")
        if recorded != access_print:
            since = None  # the mapping or a file's level changed: reclassify every stored commit (ADR 0045)
            if changed := access.mapping_change(recorded):
                report.warnings.append(changed)
        report.shallow = source.git.is_shallow()
        if store.get_state(mission, f"git_shallow:{source.root}") == "true" and not report.shallow:
            since = None  # the clone was deepened: the history before the old boundary is new
        history = source.git.history(since)
        commit_shas = {c.sha for c in history.commits}
        for c in history.commits:
            with report.isolated(c.sha, "parse"):
                records.append(with_access(_commit_record(source, mission, c, mission_type),
                                           access.commit_level(c.files, file_levels)))
        _report_history(report, source.root, history)

    _store_new(store, embedder, records, report, progress, passage_heads)
    if source.git is not None:
        # Commits before the last ingested HEAD were not read again; count them as unchanged.
        known_commits = store.count_kind(mission, RecordKind.COMMIT.value)
        report.unchanged[RecordKind.COMMIT.value] = (
            known_commits - report.added[RecordKind.COMMIT.value] - report.updated[RecordKind.COMMIT.value]
        )
    # Replaced records were deleted by upsert; files that disappeared leave records behind: drop them.
    # A decision recorded while this run embedded is not in file_keys: the store judges each record it
    # is about to delete, as stored then, by the rule reconcile_recorded used (docs/adr/0056).
    # What was stored of a file that failed this time stays: the file is still there (ADR 0085).
    failed_paths = {f.source.split("#", 1)[0] for f in report.failures}
    for kind, n in _delete_missing(store, mission, file_kinds, file_keys, source.root, failed_paths).items():
        report.removed[kind] += n
    if report.head and not any(f.source in commit_shas for f in report.failures):
        # A commit that failed is read again next time: the run does not move past it.
        store.set_state(mission, f"git_head:{source.root}", report.head)
    if source.git is not None:
        store.set_state(mission, f"commit_access:{source.root}", access_print)
        store.set_state(mission, f"git_shallow:{source.root}", "true" if report.shallow else "false")
        store_tracked_files(store, mission, source.git.tracked_files())
    report.seconds = clock.perf_counter() - started
    return report


_IDENTITY_SAMPLE = 200
"""How many of a repository's latest commits (with its root commits) are looked up in the store to
tell whether a mission already holds this repository's history."""


def check_same_repository(store: MemoryStore, mission: str, git: GitRepository) -> None:
    """Refuse to ingest a git repository into a mission that holds another repository's history.

    A mission's files are reconciled on every ingest: what the repository no longer holds is
    removed. Ingesting a different repository that happens to share the folder name (the default
    mission) therefore removed the first one's ADRs and documents and mixed the two histories (a
    new user's trial: 39 ADRs and 470 documents gone, without a warning). The mission is taken to
    hold this repository when it holds no commit at all, or when one of this repository's root
    commits or its :data:`_IDENTITY_SAMPLE` latest commits is stored in it (a moved or new clone of
    the same repository, with new commits since, passes).

    Raises:
        InputError: the mission holds commits and none of these; the message names both ways on
            (another ``--mission``, or ``--replace-repository``).
    """
    if store.count_kind(mission, RecordKind.COMMIT.value) == 0:
        return
    shas = (git.git("rev-list", "--max-parents=0", "HEAD", check=False) or "").split()
    shas += (git.git("rev-list", "-n", str(_IDENTITY_SAMPLE), "HEAD", check=False) or "").split()
    if not shas:
        return  # a repository without commits replaces no history
    keys = [source_key_for(mission, RecordKind.COMMIT, sha) for sha in dict.fromkeys(shas)]
    if store.ids_by_source_keys(keys):
        return
    raise InputError(
        f"mission {mission!r} holds the history of another git repository than {git.root}: ingesting it"
        f" there would remove that repository's ADRs and documents; give --mission NAME to ingest it as"
        f" its own mission, or --replace-repository to replace the mission's files with this repository's"
    )


def _report_history(report: IngestReport, root: Path, history: History) -> None:
    """Name a shallow clone and the blobs git could not read in the report's fields and warnings."""
    if report.shallow:
        report.warnings.append(
            f"{root} is a shallow clone: only the commits it holds are ingested, not the history before its"
            " boundary (git fetch --unshallow, then ingest again, to add it)"
        )
    report.unreadable_history = [u.to_json() for u in history.unreadable]
    if history.unreadable:
        objects = sorted({u.object for u in history.unreadable})
        shown = ", ".join(f"{u.path} in {u.commit[:12]}" for u in history.unreadable[:5])
        more = f" (+{len(history.unreadable) - 5} more)" if len(history.unreadable) > 5 else ""
        report.warnings.append(
            f"git could not read {len(objects)} object{'s' if len(objects) != 1 else ''} of the history (a damaged"
            f" or partial clone): their diffstat is left out, the commits are ingested: {shown}{more}"
        )


def _store_new(
    store: MemoryStore, embedder: Embedder, records: list[Record], report: IngestReport,
    progress: ProgressFn | None, passage_heads: Mapping[RecordKind, int] | None = None,
) -> None:
    """Embed and write the records not stored yet, :data:`_BATCH` per transaction. A batch that raises
    is stored record by record: a record whose embedding or writing raises is left out and named in
    ``report.failures`` (ADR 0085). The store failing a write (:class:`BackendUnavailable`), or no
    record of a batch of several embedding alone (the embedder is down), stops the run."""
    unique = list({r.id: r for r in records}.values())
    known = store.known_ids(r.id for r in unique)
    for r in unique:
        report._charge(_record_folder(r), records=1)
        if r.id in known:
            report.unchanged[r.kind.value] += 1
    # The same repository read from another path: its unchanged records point where it is now.
    stored_uris = {rid: r.provenance.uri for rid, r in store.get([r.id for r in unique if r.id in known]).items()}
    report.relocated += store.relocate({r.id: r.provenance.uri for r in unique
                                        if r.id in stored_uris and stored_uris[r.id] != r.provenance.uri})
    fresh = [r for r in unique if r.id not in known]
    total = len(fresh)
    done = 0
    if progress:
        progress("embed", 0, total)

    def charged(batch: Sequence[Record], passages: Sequence[str], spent: float) -> None:
        nonlocal done
        chars = sum(len(p) for p in passages) or 1
        for r, passage in zip(batch, passages, strict=True):
            report._charge(_record_folder(r), embedded=1, seconds=spent * len(passage) / chars)
        done += len(batch)
        if progress:
            progress("embed", done, total)

    def passage(record: Record) -> str:
        return passage_text(record, passage_heads)

    def stored(chunk: Sequence[Record]) -> None:
        result = store_records(store, embedder, chunk, passage=passage, batch=None, reuse_vectors=True,
                               on_batch=charged)
        report.added.update(result.added)
        report.updated.update(result.replaced)
        report.unchanged.update(result.unchanged)
        report.embedded += result.embedded
        report.vectors_reused += result.vectors_reused

    for start in range(0, len(fresh), _BATCH):
        chunk = fresh[start : start + _BATCH]
        try:
            stored(chunk)
            continue
        except Exception:  # noqa: BLE001, S112 - find the records that raise; store the others one by one
            pass
        unembeddable: list[Exception] = []
        failed_before = len(report.failures)
        for record in chunk:
            try:
                passage_vectors(embedder, [record], [passage(record)])
            except Exception as exc:  # noqa: BLE001 - this record's vector fails: named, left out
                unembeddable.append(exc)
                report.fail(record.provenance.ref, "embed", exc)
                continue
            try:
                stored([record])
            except BackendUnavailable:
                raise  # the store cannot be written: no record's fault, the run stops
            except Exception as exc:  # noqa: BLE001 - this record's write fails: named, left out
                report.fail(record.provenance.ref, "store", exc)
        if len(chunk) > 1 and len(unembeddable) == len(chunk):
            raise unembeddable[0]  # not one record of the batch embeds: the embedder fails, not a record
        done += len(report.failures) - failed_before  # left out, but no longer waiting
        if progress:
            progress("embed", done, total)


def _delete_missing(
    store: MemoryStore, mission: str, kinds: list[str], keep: list[str], root: Path, failed_paths: set[str],
) -> Counter[str]:
    """Delete the records of ``kinds`` whose source key is not in ``keep``, sparing recorded decisions
    that survive the ingest and the records of files that failed in this run."""

    def spare(record: Record) -> bool:
        return survives_ingest(record, root) or record.attributes.get("path") in failed_paths

    removed: Counter[str] = Counter()
    for kind in kinds:
        removed[kind] += store.delete_missing(mission, [kind], keep, spare=spare)
    return +removed
