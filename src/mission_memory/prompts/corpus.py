"""The prompt corpus: read the prompts the hook captured, and forget them for real.

The canonical store is the bare repository ``<data dir>/prompts.git`` that
``mission_memory.hook.prompt_capture`` writes: one orphan commit per prompt whose tree holds
``prompt.json``, under ``refs/prompts/<session>/<time_ns>-<pid>`` (docs/design.md §8, docs/adr/0012).
Reading goes through ``git`` itself (``for-each-ref`` + one ``cat-file --batch``), so packed refs and
packed objects after a ``git gc`` read the same as the hook's loose ones.

Errors: a missing ``git`` binary or a git failure is :class:`~mission_memory.errors.BackendUnavailable`;
an unknown session or prompt id given to :func:`forget` is :class:`~mission_memory.errors.NotFound`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mission_memory.capture.prompt_commit import session_slug
from mission_memory.errors import InputError, NotFound
from mission_memory.git_runner import run_git

__all__ = [
    "REF_PREFIX",
    "CapturedPrompt",
    "PromptCorpus",
    "default_prompt_repo",
]

REF_PREFIX = "refs/prompts/"
DOCUMENT_NAME = "prompt.json"


def default_prompt_repo(data_dir: Path) -> Path:
    """Where the hook writes for ``data_dir``: ``<data dir>/prompts.git``."""
    return data_dir / "prompts.git"


class CapturedPrompt(BaseModel):
    """One captured operator prompt: the hook's ``prompt.json`` plus where it is stored.

    Attributes:
        prompt_id: ``<session slug>/<time_ns>-<pid>``; the ref is ``refs/prompts/<prompt_id>``.
        ref: the full ref name.
        commit: the 40-hex id of the prompt's orphan commit.
        timestamp: capture time, timezone-aware UTC.
        prompt: the prompt text after redaction.
        redactions: number of redacted spans per kind (see ``mission_memory.capture.redaction.KINDS``).
        repository: git top-level of the session's working directory (else the directory itself).
        branch: checked-out branch, ``None`` when detached or outside git; ``head`` is then the commit.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    schema_version: int = Field(alias="schema")
    prompt_id: str
    ref: str
    commit: str
    timestamp: datetime
    time_ns: int
    session_id: str | None
    repository: str
    branch: str | None
    head: str | None
    cwd: str
    permission_mode: str | None
    hook_event_name: str | None
    transcript_path: str | None
    operator: str | None
    redactions: dict[str, int]
    prompt: str

    @property
    def repository_name(self) -> str:
        """The repository folder's name: how missions are named (``/src/mission-memory`` -> ``mission-memory``)."""
        return Path(self.repository).name or self.repository


class PromptCorpus:
    """The prompts stored in one bare prompt repository.

    Args:
        repo: path of the bare repository (``<data dir>/prompts.git``). A missing repository is an
            empty corpus (nothing was captured yet).
    """

    def __init__(self, repo: Path) -> None:
        self.repo = repo

    def exists(self) -> bool:
        """Whether the hook has created the repository yet."""
        return (self.repo / "HEAD").is_file() and (self.repo / "objects").is_dir()

    def _git(self, *args: str, input: bytes | None = None) -> bytes:
        return run_git(self.repo, *args, stdin=input, bare=True)

    def refs(self) -> dict[str, str]:
        """Every prompt ref -> its commit id (packed and loose refs alike)."""
        if not self.exists():
            return {}
        out = self._git("for-each-ref", "--format=%(refname) %(objectname)", REF_PREFIX).decode()
        pairs = (line.split(" ", 1) for line in out.splitlines() if line.strip())
        return {name: sha for name, sha in pairs}

    def prompts(self) -> list[CapturedPrompt]:
        """Every captured prompt, oldest first.

        Raises:
            BackendUnavailable: git cannot read the repository.
            InputError: a stored document is not a prompt document of a known schema.
        """
        refs = self.refs()
        if not refs:
            return []
        names = sorted(refs)
        request = "".join(f"{refs[name]}:{DOCUMENT_NAME}\n" for name in names).encode()
        stream = self._git("cat-file", "--batch", input=request)
        documents = _split_batch(stream, len(names))
        prompts = []
        for name, raw in zip(names, documents, strict=True):
            if raw is None:
                raise InputError(f"prompt ref {name} has no {DOCUMENT_NAME}")
            try:
                prompts.append(CapturedPrompt.model_validate_json(_with_location(raw, name, refs[name])))
            except ValidationError as exc:
                raise InputError(f"prompt ref {name} holds an invalid {DOCUMENT_NAME}: {exc}") from exc
        return sorted(prompts, key=lambda p: (p.time_ns, p.prompt_id))

    def forget(self, *, sessions: Iterable[str] = (), prompt_ids: Iterable[str] = ()) -> list[str]:
        """Delete the refs of whole sessions and of single prompts, then prune their objects.

        The forgotten commits, trees and blobs are removed from disk: loose object files are unlinked
        and the packs are rewritten without them (``git repack -a -d``), after reflogs are expired.
        Objects a concurrently running hook has just written stay untouched.

        Args:
            sessions: session ids (as captured, or their ref-safe slug).
            prompt_ids: prompt ids (``<session>/<time_ns>-<pid>``), full refs, or commit ids (>= 7 hex).

        Returns:
            The prompt ids that were forgotten.

        Raises:
            NotFound: a session or prompt id matches nothing (then nothing is deleted).
        """
        refs = self.refs()
        chosen: dict[str, str] = {}
        for session in sessions:
            matches = {n: s for n, s in refs.items() if _session_of(n) in (session, session_slug(session))}
            if not matches:
                raise NotFound(f"no captured prompts for session {session!r}")
            chosen.update(matches)
        for wanted in prompt_ids:
            matches = {n: s for n, s in refs.items() if _matches_prompt(n, s, wanted)}
            if not matches:
                raise NotFound(f"no captured prompt with id {wanted!r}")
            chosen.update(matches)
        if not chosen:
            return []
        doomed = self._objects_of(sorted(set(chosen.values())))
        deletions = "".join(f"delete {name} {sha}\n" for name, sha in sorted(chosen.items()))
        self._git("update-ref", "--stdin", input=deletions.encode())
        self._git("reflog", "expire", "--expire=now", "--all")
        self._git("pack-refs", "--all")
        self._git("repack", "-a", "-d", "-q")
        for sha in doomed:
            (self.repo / "objects" / sha[:2] / sha[2:]).unlink(missing_ok=True)
        self._git("prune-packed")
        return [name[len(REF_PREFIX) :] for name in sorted(chosen)]

    def _objects_of(self, commits: Sequence[str]) -> list[str]:
        """The commit, tree and blob ids that make up each prompt commit in ``commits``."""
        request = "".join(f"{c}^{{tree}}\n{c}:{DOCUMENT_NAME}\n" for c in commits).encode()
        out = self._git("cat-file", "--batch-check=%(objectname)", input=request).decode().split()
        return [*commits, *(sha for sha in out if len(sha) == 40)]


def _session_of(ref: str) -> str:
    return ref[len(REF_PREFIX) :].rsplit("/", 1)[0]


def _matches_prompt(ref: str, sha: str, wanted: str) -> bool:
    wanted = wanted.strip()
    if ref == wanted or ref == REF_PREFIX + wanted:
        return True
    hexchars = set("0123456789abcdef")
    return len(wanted) >= 7 and set(wanted.lower()) <= hexchars and sha.startswith(wanted.lower())


def _with_location(raw: bytes, ref: str, commit: str) -> bytes:
    """Add ``ref`` and ``commit`` to the stored JSON object (they are not part of the document)."""
    head = raw.rstrip()
    if not head.startswith(b"{") or not head.endswith(b"}"):
        return raw
    extra = f', "ref": "{ref}", "commit": "{commit}"'.encode()
    return head[:-1].rstrip() + extra + b"}"


def _split_batch(stream: bytes, count: int) -> list[bytes | None]:
    """Split ``git cat-file --batch`` output into ``count`` object bodies (``None`` for missing)."""
    bodies: list[bytes | None] = []
    pos = 0
    for _ in range(count):
        newline = stream.index(b"\n", pos)
        header = stream[pos:newline].split()
        pos = newline + 1
        if len(header) < 3 or header[1] == b"missing":
            bodies.append(None)
            continue
        size = int(header[2])
        bodies.append(stream[pos : pos + size])
        pos += size + 1
    return bodies
