"""The failure rule of ingest: one bad record never stops a run (docs/adr/0085).

A file or commit whose reading, parsing, redaction, embedding or writing raises is left out of the
run, named in the report (:class:`RecordFailure`: its path or commit, the stage, the reason) and in a
warning, and the ingest goes on with the rest; the command's exit status then says the run was
partial (:data:`PARTIAL_EXIT_CODE`). A failure of the store itself (:class:`BackendUnavailable`
from a write) or of the embedder as a whole (no record of a batch can be embedded alone) is not a
record's fault: it stops the run as before.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

__all__ = ["PARTIAL_EXIT_CODE", "REASON_CHARS", "STAGES", "RecordFailure", "failure_of"]

PARTIAL_EXIT_CODE = 3
"""Exit status of ``mission-memory ingest`` when records were left out (1 is an error that stopped the
run, 2 a usage error)."""

STAGES = ("read", "parse", "redact", "embed", "store")
"""Where a record can fail: reading its file, parsing it into sections, decisions, principles or a
commit, building the stored record (redaction and its content-derived id), computing its vector,
writing it."""

REASON_CHARS = 300
"""The reason is the exception's class and message on one line, cut to this many characters."""

# Frames of these modules (and functions, when named) mark a failure as a stage of its own, wherever
# the caller was: the redaction pass and the construction of a record's content-derived id, the embedder.
_STAGE_OF_FRAME = (
    ("mission_memory/capture/redaction", None, "redact"),
    ("mission_memory/records.py", frozenset({"build", "redacted", "record_id_for"}), "redact"),
    ("mission_memory/embeddings/", None, "embed"),
)


@dataclass(frozen=True)
class RecordFailure:
    """A file's or commit's records left out of an ingest because one stage raised.

    Attributes:
        source: the repository-relative path (with ``#anchor`` when one record of a file failed) or
            the commit sha.
        stage: one of :data:`STAGES`.
        reason: ``"<ExceptionClass>: <message>"``, one line, at most :data:`REASON_CHARS` characters.
    """

    source: str
    stage: str
    reason: str

    def to_json(self) -> dict[str, str]:
        """``{"source", "stage", "reason"}``, as ``ingest --json`` lists it under ``failures``."""
        return {"source": self.source, "stage": self.stage, "reason": self.reason}

    def warning(self) -> str:
        """The report's warning line for this failure."""
        return f"{self.source}: left out, {self.stage} failed ({self.reason}); the rest of the ingest went on"


def failure_of(source: str, stage: str, exc: BaseException) -> RecordFailure:
    """The failure of ``source`` at ``stage`` (the phase the caller was in), refined by where ``exc``
    was raised: in the redaction pass or the record's construction (``redact``) or in the embedder
    (``embed``); the innermost such frame decides.

    Raises:
        ValueError: ``stage`` is not one of :data:`STAGES`.
    """
    if stage not in STAGES:
        raise ValueError(f"unknown ingest stage {stage!r}: use one of {', '.join(STAGES)}")
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        filename = frame.filename.replace("\\", "/")
        refined = next((named for module, functions, named in _STAGE_OF_FRAME
                        if module in filename and (functions is None or frame.name in functions)), None)
        if refined is not None:
            stage = refined
            break
    message = " ".join(str(exc).split())
    reason = _printable(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)
    if len(reason) > REASON_CHARS:
        reason = reason[: REASON_CHARS - 1] + "…"
    return RecordFailure(source=_printable(source), stage=stage, reason=reason)


def _printable(text: str) -> str:
    """``text`` with every character that is not printable (controls, escapes, lone surrogates) shown
    as ``\\xNN`` / ``\\uNNNN``: a failure names input, and input reaches a terminal only escaped."""
    return "".join(c if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF else ascii(c)[1:-1] for c in text)
