"""Operator corrections found in transcripts: kinds, tools, files — and never any text."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from transcript_builder import Scenario

from mission_memory.metrics.transcript_corrections import (
    CorrectionKind,
    CorrectionSignal,
    find_corrections,
    is_correction_cue,
)
from mission_memory.metrics.transcript_sessions import read_sessions


def test_rejections_interruptions_and_redirecting_prompts_are_found_in_order(
    scenario_corrections: Scenario,
) -> None:
    sessions, _ = read_sessions([scenario_corrections.root])
    found = [(c.kind, c.signal, c.tool, c.file) for c in find_corrections(sessions)]
    assert found == [
        (CorrectionKind.TOOL_REJECTED, CorrectionSignal.REJECTED, "Edit", "/r/parser.py"),
        # the interruption marker right after the refusal belongs to it and is not repeated
        (CorrectionKind.REDIRECTING_PROMPT, CorrectionSignal.PROMPT_AFTER_REJECTION, "Edit", "/r/parser.py"),
        (CorrectionKind.INTERRUPTION, CorrectionSignal.INTERRUPTED_TOOL_USE, "Bash", None),
        (CorrectionKind.REDIRECTING_PROMPT, CorrectionSignal.PROMPT_AFTER_INTERRUPTION, "Bash", None),
        (CorrectionKind.REDIRECTING_PROMPT, CorrectionSignal.CORRECTION_CUE, "Write", "/r/notes.md"),
        # "no worries, thanks" follows a text-only answer: not a redirect
        (CorrectionKind.TOOL_REJECTED, CorrectionSignal.REJECTED_WITH_REASON, "Edit", "/r/x.py"),
        # the agent went on after the reasoned refusal, so "great" is not a redirect
        (CorrectionKind.INTERRUPTION, CorrectionSignal.INTERRUPTED, None, None),
    ]


def test_correction_events_carry_session_time_and_a_resolvable_record_reference(
    scenario_corrections: Scenario,
) -> None:
    sessions, _ = read_sessions([scenario_corrections.root])
    first = find_corrections(sessions)[0]
    assert first.session_id == "sess-corr"
    assert first.transcript.endswith("sess-corr.jsonl")
    assert first.record_uuid == "sess-corr-0003"
    assert first.time is not None and first.time.isoformat() == "2025-10-10T09:00:03+00:00"
    assert first.sidechain is False


def test_correction_events_never_contain_prompt_reason_or_file_text(scenario_corrections: Scenario) -> None:
    sessions, _ = read_sessions([scenario_corrections.root])
    dumped = json.dumps([c.model_dump(mode="json") for c in find_corrections(sessions)], ensure_ascii=False)
    for secret in ("SECRET", "public API", "built-in runner", "нотаток", "use tabs", "pytest -x"):
        assert secret not in dumped


def test_correction_ids_are_stable_across_reads(scenario_corrections: Scenario) -> None:
    first = [c.id for c in find_corrections(read_sessions([scenario_corrections.root])[0])]
    second = [c.id for c in find_corrections(read_sessions([scenario_corrections.root])[0])]
    assert first == second
    assert len(set(first)) == len(first)


def test_a_rejection_inside_a_subagent_is_marked_as_sidechain(scenario_2x: Scenario) -> None:
    sessions, _ = read_sessions([scenario_2x.root])
    corrections = find_corrections(sessions)
    assert [(c.kind, c.tool, c.sidechain) for c in corrections] == [
        (CorrectionKind.TOOL_REJECTED, "Bash", True)
    ]
    assert corrections[0].transcript.endswith("agent-a1b2c3.jsonl")


def test_correction_events_are_frozen_and_reject_unknown_fields(scenario_corrections: Scenario) -> None:
    event = find_corrections(read_sessions([scenario_corrections.root])[0])[0]
    with pytest.raises(ValidationError):
        event.tool = "Write"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        type(event).model_validate({**event.model_dump(), "prompt": "text"})


@pytest.mark.parametrize(
    "prompt",
    [
        "no, use pnpm",
        "Don't touch the tests",
        "actually the header is fine",
        "use the stdlib instead",
        "Why did you delete it?",
        "ні, не так",
        "Не треба міняти API",
        "зроби це замість того",
        "Стоп, спочатку тести",
    ],
)
def test_correction_cues_are_recognised_in_english_and_ukrainian(prompt: str) -> None:
    assert is_correction_cue(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "now run the tests",
        "no worries, thanks",
        "add a README",
        "notes look good",
        "Додай тести",
        "nothing else",
    ],
)
def test_ordinary_prompts_are_not_correction_cues(prompt: str) -> None:
    assert not is_correction_cue(prompt)
