"""mission-memory: memory for long-horizon agents whose human operators rotate.

The package import is deliberately lazy: ``import mission_memory`` costs nothing beyond this
module, so the prompt-capture hook (stdlib only) and the CLI start fast. ``Memory``, the one
core API every shell calls, and the result types its methods return are imported on first
attribute access (``from mission_memory import Memory, Digest``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Memory": "mission_memory.api",
    "Correction": "mission_memory.corrections.practitioner_records",
    "CorrectionImport": "mission_memory.corrections.recording",
    "CorrectionRate": "mission_memory.corrections.rate",
    "DecisionAttributes": "mission_memory.decisions",
    "Digest": "mission_memory.retrieval.digest",
    "DigestEntry": "mission_memory.retrieval.digest",
    "DomainEvent": "mission_memory.operations.domain_events",
    "EscalationState": "mission_memory.operations.escalation",
    "IngestReport": "mission_memory.ingest.repository",
    "IntakeReport": "mission_memory.operations.event_intake",
    "MissionScope": "mission_memory.mission_scope",
    "ArtifactPruneReport": "mission_memory.refresh.artifacts",
    "EventPruneReport": "mission_memory.operations.retention",
    "OpenAlert": "mission_memory.operations.alert_state",
    "Record": "mission_memory.records",
    "RecordedDecision": "mission_memory.ingest.recorded_decisions",
    "RefreshReport": "mission_memory.refresh.orchestrator",
    "RetrievalEvent": "mission_memory.retrieval_events",
    "RotationBrief": "mission_memory.handover.brief",
    "TrackerIngestReport": "mission_memory.ingest.tracker_items",
    "TransferSummary": "mission_memory.stores.transfer",
    "TuneReport": "mission_memory.retrieval.ranking_tune",
}
"""Public name -> the module that defines it: the core API and the types its methods return."""

__all__ = [
    "ArtifactPruneReport",
    "Correction",
    "CorrectionImport",
    "CorrectionRate",
    "DecisionAttributes",
    "Digest",
    "DigestEntry",
    "DomainEvent",
    "EscalationState",
    "EventPruneReport",
    "IngestReport",
    "IntakeReport",
    "Memory",
    "MissionScope",
    "OpenAlert",
    "Record",
    "RecordedDecision",
    "RefreshReport",
    "RetrievalEvent",
    "RotationBrief",
    "TrackerIngestReport",
    "TransferSummary",
    "TuneReport",
    "__version__",
]

if TYPE_CHECKING:
    from mission_memory.api import Memory
    from mission_memory.corrections.practitioner_records import Correction
    from mission_memory.corrections.rate import CorrectionRate
    from mission_memory.corrections.recording import CorrectionImport
    from mission_memory.decisions import DecisionAttributes
    from mission_memory.handover.brief import RotationBrief
    from mission_memory.ingest.recorded_decisions import RecordedDecision
    from mission_memory.ingest.repository import IngestReport
    from mission_memory.ingest.tracker_items import TrackerIngestReport
    from mission_memory.mission_scope import MissionScope
    from mission_memory.operations.alert_state import OpenAlert
    from mission_memory.operations.domain_events import DomainEvent
    from mission_memory.operations.escalation import EscalationState
    from mission_memory.operations.event_intake import IntakeReport
    from mission_memory.operations.retention import EventPruneReport
    from mission_memory.records import Record
    from mission_memory.refresh.artifacts import ArtifactPruneReport
    from mission_memory.refresh.orchestrator import RefreshReport
    from mission_memory.retrieval.digest import Digest, DigestEntry
    from mission_memory.retrieval.ranking_tune import TuneReport
    from mission_memory.retrieval_events import RetrievalEvent
    from mission_memory.stores.transfer import TransferSummary


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mission_memory' has no attribute {name!r}")
    return getattr(import_module(module), name)
