"""The package's public names: the core API and the result types its methods return (docs/adr/0051).

Pinned so a move inside the package never breaks ``from mission_memory import Digest``.
"""

from __future__ import annotations

import subprocess
import sys

import mission_memory

PUBLIC = {
    "__version__", "Memory", "Correction", "CorrectionImport", "CorrectionRate",
    "DecisionAttributes", "Digest", "DigestEntry", "DomainEvent", "EscalationState", "IngestReport",
    "IntakeReport", "MissionScope", "ArtifactPruneReport", "EventPruneReport", "OpenAlert", "Record", "RecordedDecision", "RefreshReport",
    "RetrievalEvent", "RotationBrief", "TrackerIngestReport", "TransferSummary", "TuneReport",
}


def test_the_exported_names_are_exactly_the_public_ones_and_each_resolves_to_its_definition() -> None:
    assert set(mission_memory.__all__) == PUBLIC
    for name in PUBLIC - {"__version__"}:
        value = getattr(mission_memory, name)
        assert getattr(value, "__name__", None) == name, name


def test_importing_the_package_loads_none_of_them() -> None:
    code = "import sys, mission_memory; print(sorted(m for m in sys.modules if m.startswith('mission_memory')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['mission_memory']"


def test_the_methods_of_memory_are_annotated_with_exported_types() -> None:
    import inspect

    from mission_memory.api import Memory

    returned = {
        inspect.signature(getattr(Memory, name)).return_annotation
        for name in ("query", "ingest_repository", "rotation_brief", "record_events", "import_corrections",
                     "record_decision", "correction_rate", "escalation_status")
    }
    assert returned <= PUBLIC, returned - PUBLIC


def test_all_lists_every_lazy_export_once() -> None:
    assert sorted(mission_memory.__all__) == sorted(["__version__", *mission_memory._EXPORTS])
