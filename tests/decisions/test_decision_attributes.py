"""One typed model for a decision record's attributes (docs/adr/0051): what ingest and recorded
decisions write reads back unchanged, so record ids, which hash the stored mapping, stay stable."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mission_memory.decisions import DecisionAttributes, RejectedAlternative
from mission_memory.ingest.adr import find_adr_paths, parse_adr
from mission_memory.ingest.decision_records import decision_records
from mission_memory.ingest.source import RepositorySource
from mission_memory.records import record_id_for


def test_every_decision_record_of_the_shared_corpus_reads_back_to_the_mapping_ingest_stored(
    tmp_path: Path, corpora: Path
) -> None:
    clone = tmp_path / "tdr-docs"
    subprocess.run(["git", "clone", "-q", str(corpora / "tdr-docs.bundle"), str(clone)], check=True)
    source = RepositorySource(clone)
    files = source.files()
    adrs = [(p, parse_adr((clone / p).read_text(encoding="utf-8"), p)) for p in find_adr_paths(files)]
    records = decision_records(source, "tdr", adrs, [], "platform", [])
    assert len(records) >= 30
    for record in records:
        typed = DecisionAttributes.read(record.attributes)
        assert typed.as_dict() == record.attributes, record.provenance.ref
        assert typed.path == record.provenance.ref and typed.mission_type == "platform"
        again = record_id_for(record.source_key, record.title, record.text, typed.as_dict(),
                              record.criticality, record.component)
        assert again == record.id
    for record in records:  # the cheap check pull uses agrees with the model's
        typed = DecisionAttributes.read(record.attributes)
        assert DecisionAttributes.marks_superseded(record.attributes) is typed.is_superseded
    superseded = [r for r in records if DecisionAttributes.read(r.attributes).superseded_by]
    assert superseded and all(DecisionAttributes.read(r.attributes).is_superseded for r in superseded)


def test_a_recorded_decision_keeps_its_recorder_and_unknown_keys_survive_a_rewrite() -> None:
    written = DecisionAttributes(
        status="accepted", decision="Keep uploads for 30 days", rejected_alternatives=(RejectedAlternative("7 days", None),),
        format="recorded", decided_by="alice@example.org", session_id=None, recorded=True,
        extra={"outcome": "accepted"},
    ).as_dict()
    assert written["decided_by"] == "alice@example.org" and written["recorded"] is True and "session_id" in written
    assert written["rejected_alternatives"] == [{"option": "7 days", "reason": None}]
    assert DecisionAttributes.read(written).as_dict() == written
    assert DecisionAttributes.read(written).decider == "alice@example.org"


def test_a_mistyped_stored_field_reads_as_its_default_instead_of_failing() -> None:
    read = DecisionAttributes.read({"number": "12", "supersedes": "0003", "recorded": "yes", "deciders": ["bob", None]})
    assert (read.number, read.supersedes, read.recorded, read.deciders) == (None, (), False, ("bob",))
    assert read.decider == "bob" and not read.is_superseded
