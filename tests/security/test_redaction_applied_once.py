"""Issue 34 items 1-2: redaction is idempotent and applied once; a file list naming a
``*credentials*`` file is not a secret and does not crash an ingest.

A commit whose message lists ``docs/adr/ADR003-AWS-credentials.md, docs/adr/ADR004-…`` had the next
path read as a password in prose; redacting the result ate the path after that (the marker's own
word ``secret`` counted as a prose key), so the store's last guard derived another id than
:meth:`Record.build` and ``store_records`` raised ``KeyError`` on a real repository.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mission_memory.capture.redaction import redact, redact_text, redacted_cut
from mission_memory.cli.app import app
from mission_memory.records import Provenance, Record, RecordKind, SourceKind, record_id_for
from mission_memory.stores.sqlite import SqliteStore
from mission_memory.stores.write_path import store_records
from tests.conftest import GitRepo

FILE_LIST = (
    "docs/adr/ADR003-AWS-credentials.md, docs/adr/ADR004-domain-naming-scheme.md, "
    "docs/adr/ADR005-Use-Terraform2.md, docs/adr/ADR006-secret-Store9.md, docs/adr/ADR007-token-TTL4x.md"
)


def test_a_file_list_naming_a_credentials_file_is_kept_whole() -> None:
    assert redact_text(FILE_LIST) == FILE_LIST
    message = f"Add ADRs\n\nFiles: {FILE_LIST}\n"
    assert redact_text(message) == message


def test_redacting_redacted_text_changes_nothing() -> None:
    text = "my password is Hx3^vB9qLm2k, docs/adr/ADR004-domain-naming-scheme.md, docs/adr/ADR005-Use-Terraform2.md"
    once = redact_text(text)
    assert "Hx3^vB9qLm2k" not in once
    assert redact_text(once) == once
    assert "docs/adr/ADR004-domain-naming-scheme.md" in once


def test_a_real_repository_with_such_a_commit_ingests_and_reingests(make_git_repo: object) -> None:
    repo: GitRepo = make_git_repo("platform-manual")  # type: ignore[operator]
    files = {
        "docs/adr/ADR003-AWS-credentials.md": "# 3. AWS credentials\n\n## Status\n\nAccepted\n\n## Decision\n\nUse roles.\n",
        "docs/adr/ADR004-domain-naming-scheme.md": "# 4. Domain naming\n\n## Status\n\nAccepted\n\n## Decision\n\nUse x.\n",
        "docs/adr/ADR005-Use-Terraform2.md": "# 5. Terraform\n\n## Status\n\nAccepted\n\n## Decision\n\nUse it.\n",
    }
    repo.commit(f"Import ADRs\n\n{', '.join(files)}\n", "2024-03-01T10:00:00+00:00", files)
    repo.commit("Rename\n\n" + FILE_LIST + ", docs/adr/ADR008-x.md", "2024-03-02T10:00:00+00:00",
                {"README.md": "# Manual\n\nSee docs/adr/ADR003-AWS-credentials.md, docs/adr/ADR004-domain-naming-scheme.md.\n"})
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(repo.root), "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["added"] > 0
    second = runner.invoke(app, ["ingest", str(repo.root), "--json"])
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["added"] == 0


_PIECES = st.sampled_from([
    "password", "Password:", "credentials", "credentials.md", "token", "secret", "api key", "пароль", "гасло",
    "docs/adr/ADR004-domain-naming-scheme.md", "ADR003-AWS-credentials.md,", "is", "=", ": ", ", ", "\n",
    "Hx3^vB9qLm2k", "hunter2Xy!", "ghp_" + "A1b2C3d4" * 5, "AKIAIOSFODNN7EXAMPLE", "[REDACTED:prose-secret]",
    "https://user:p@ss/w0rd@db.example.com/x", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "tribe glimpse oyster velvet harbor cactus nephew quantum dolphin ribbon sunset wagon", "`", "\"", "'",
    "export DB_PASSWORD=Tr0ub4dor&3", "mysql -pS3cr3tPw", "?sig=abcdefghij0123", "<private>", "</private>",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcDEF123", "sk-" + "Zx9" * 10, "$", "{", "}",
])
_SECRETISH = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=24).map(" ".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), _SECRETISH, st.lists(_PIECES, max_size=30).map("".join)))
@example(FILE_LIST)
@example("my password is Hx3^vB9qLm2k, docs/adr/ADR004-domain-naming-scheme.md, docs/adr/ADR005-Use-Terraform2.md")
@example("==PASS")  # an operator at the start of a line, with nothing before it: found by this property
def test_redaction_is_idempotent(text: str) -> None:
    once, _ = redact(text)
    assert redact(once)[0] == once


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=_SECRETISH, text=_SECRETISH, note=_SECRETISH)
@example(title="Import ADRs", text="password: " + FILE_LIST, note=FILE_LIST)
def test_a_built_record_passes_the_stores_guard_unchanged(title: str, text: str, note: str) -> None:
    provenance = Provenance(kind=SourceKind.COMMIT, ref="abc", uri="https://git.example.org/c/abc", mission="m", time=datetime(2024, 1, 1, tzinfo=UTC))
    record = Record.build(kind=RecordKind.COMMIT, title=title, text=text, provenance=provenance,
                          attributes={"note": note, "files": [note, title]})
    guarded = record.redacted()
    assert guarded is record
    assert record.id == record_id_for(record.source_key, record.title, record.text, record.attributes,
                                      record.criticality, record.component)


class _CountingEmbedder:
    """A small deterministic embedder (the store path under test, not the model): one unit vector per text."""

    model_id = "counting-test"
    dim = 4

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_passages([text])[0]

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.array([[len(t) + 1.0, t.count(" ") + 1.0, 1.0, 1.0] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(title=_SECRETISH, text=_SECRETISH, raw=_SECRETISH)
@example(title="Import ADRs", text=FILE_LIST, raw="password: " + FILE_LIST)
def test_the_stored_id_is_the_id_of_the_stored_text(tmp_path: Path, title: str, text: str, raw: str) -> None:
    """Records made by Record.build and one that bypassed it (an import of an old export, its text
    unredacted) are stored through store_records; every stored record's id is the id derived from
    what is stored, and the built ones keep the id Record.build gave them."""
    provenance = Provenance(kind=SourceKind.COMMIT, ref="abc", uri="https://git.example.org/c/abc", mission="m",
                            time=datetime(2024, 1, 1, tzinfo=UTC))
    built = Record.build(kind=RecordKind.COMMIT, title=title, text=text, provenance=provenance)
    other = Record.build(kind=RecordKind.DOC_CHUNK, title="imported", text="x", provenance=provenance)
    imported = other.model_copy(update={"text": raw + "\npassword: Qz7!pWm3Lk9v"})  # its id is of "x", its text unredacted
    store = SqliteStore(tmp_path / f"{uuid.uuid4().hex}.db")
    try:
        result = store_records(store, _CountingEmbedder(), [built, imported])
        stored_ids = set(result.outcome.added) | set(result.outcome.unchanged)
        stored = store.get(sorted(stored_ids))
        assert built.id in stored and len(stored) == 2
        for record in stored.values():
            assert record.id == record_id_for(record.source_key, record.title, record.text, record.attributes,
                                              record.criticality, record.component)
            assert redact_text(record.text) == record.text and "Qz7!pWm3Lk9v" not in record.text
    finally:
        store.close()


def test_every_text_of_the_corpus_is_redacted_once_and_keeps_its_id(corpora: Path, tmp_path: Path) -> None:
    """Issue 34 item 2 over the repository's corpus (tests/corpora): every Markdown file, commit message
    and transcript string is a fixed point after one redaction, a cut after redaction is a fixed point,
    and a record built from it passes the store's guard as itself (same text, same id)."""
    clone = tmp_path / "tdr-docs"
    subprocess.run(["git", "clone", "-q", str(corpora / "tdr-docs.bundle"), str(clone)], check=True)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(clone.rglob("*.md")) if ".git" not in p.parts]
    log = subprocess.run(["git", "-C", str(clone), "log", "--format=%B%x00"], check=True, capture_output=True, text=True)
    texts += [body for body in log.stdout.split("\x00") if body.strip()]
    for path in sorted((corpora / "transcripts").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            texts.extend(_strings(json.loads(line)))
    assert len(texts) > 700
    provenance = Provenance(kind=SourceKind.DOC, ref="x", uri="https://example.org/x", mission="m",
                            time=datetime(2024, 1, 1, tzinfo=UTC))
    unstable = []
    for n, text in enumerate(texts):
        once = redact_text(text)
        cut = redacted_cut(text, 90)
        record = Record.build(kind=RecordKind.DOC_CHUNK, title=cut, text=text, provenance=provenance)
        if redact_text(once) != once or redacted_cut(cut, 90) != cut or record.redacted() is not record:
            unstable.append(f"{n}: {text[:80]!r}")
    assert not unstable


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
