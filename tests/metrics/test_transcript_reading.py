"""Reading Claude Code transcripts: record shapes, subagent files, damaged lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_builder import Scenario, TranscriptWriter, tool, usage

from mission_memory.errors import InputError
from mission_memory.metrics.transcript_sessions import find_transcript_files, read_sessions
from mission_memory.metrics.transcripts import (
    ApiCall,
    Interruption,
    OperatorPrompt,
    ToolCall,
    read_transcript_file,
)


def test_repeated_usage_records_of_one_api_call_count_once(scenario_2x: Scenario) -> None:
    transcript = read_transcript_file(scenario_2x.main)
    calls = [e for e in transcript.events if isinstance(e, ApiCall)]
    assert [c.message_id for c in calls] == ["msg_A1", "msg_A2", "msg_A3", "msg_A4", "msg_A5", "msg_A6"]
    first = calls[0]
    assert (first.input_tokens, first.cache_creation_input_tokens, first.cache_read_input_tokens) == (
        3,
        12000,
        18000,
    )
    assert first.context_tokens == 30003


def test_output_tokens_of_a_streamed_call_are_the_largest_value_seen(scenario_2x: Scenario) -> None:
    calls = [e for e in read_transcript_file(scenario_2x.main).events if isinstance(e, ApiCall)]
    assert calls[0].output_tokens == 120


def test_truncated_last_line_non_json_line_and_unknown_type_are_skipped_and_counted(
    scenario_2x: Scenario,
) -> None:
    transcript = read_transcript_file(scenario_2x.main)
    assert transcript.truncated_last_line is True
    assert transcript.non_json_lines == 1
    assert transcript.unknown_types == {"agent-telemetry-xyz": 1}
    assert transcript.skipped_types == {"file-history-snapshot": 1, "progress": 1}


def test_a_complete_file_is_not_reported_as_truncated(scenario_1x: Scenario) -> None:
    transcript = read_transcript_file(scenario_1x.main)
    assert transcript.truncated_last_line is False
    assert transcript.non_json_lines == 0
    assert transcript.skipped_types == {"summary": 1}


def test_an_unparsable_line_that_ends_with_a_newline_is_a_non_json_line_not_a_truncation(
    tmp_path: Path,
) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s")
    writer.prompt("hello")
    writer.raw('{"type": "assistant", "message": {')
    transcript = read_transcript_file(writer.write())
    assert (transcript.non_json_lines, transcript.truncated_last_line) == (1, False)


def test_json_values_that_are_not_objects_are_counted_as_non_json_lines(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s")
    writer.raw("[1, 2, 3]")
    writer.raw('"just a string"')
    writer.prompt("hello")
    transcript = read_transcript_file(writer.write())
    assert transcript.non_json_lines == 2
    assert len([e for e in transcript.events if isinstance(e, OperatorPrompt)]) == 1


def test_subagent_files_under_the_session_folder_join_their_session(scenario_2x: Scenario) -> None:
    sessions, report = read_sessions([scenario_2x.root])
    assert [s.session_id for s in sessions] == ["sess-2x"]
    assert [f.path.name for f in sessions[0].subagents] == ["agent-a1b2c3.jsonl"]
    assert all(e.sidechain for e in sessions[0].subagents[0].events)
    assert report.files == 2
    assert report.orphan_subagent_files == 0


def test_a_main_file_given_directly_brings_its_subagent_folder(scenario_2x: Scenario) -> None:
    sessions, _ = read_sessions([scenario_2x.main])
    assert len(sessions[0].subagents) == 1


def test_top_level_agent_files_join_the_session_named_by_their_session_id(scenario_1x: Scenario) -> None:
    sessions, _ = read_sessions([scenario_1x.root])
    assert [s.session_id for s in sessions] == ["sess-old"]
    assert [f.path.name for f in sessions[0].subagents] == ["agent-0f0f.jsonl"]


def test_subagent_files_without_their_session_are_skipped_and_counted(scenario_2x: Scenario) -> None:
    sessions, report = read_sessions([scenario_2x.subagents[0]])
    assert sessions == []
    assert report.orphan_subagent_files == 1


def test_one_record_per_call_in_the_older_format_gives_every_tool_call(scenario_1x: Scenario) -> None:
    transcript = read_transcript_file(scenario_1x.main)
    reads = [e for e in transcript.events if isinstance(e, ToolCall) and e.name == "Read"]
    assert [(r.file_path, r.sidechain) for r in reads] == [
        ("/p/docs/guide.md", False),
        ("/p/docs/index.md", False),  # relative path resolved against the record's cwd
        ("/p/src/a.py", True),
    ]
    assert transcript.versions == ("1.0.51",)


def test_legacy_usage_without_cache_fields_counts_only_input_tokens(scenario_1x: Scenario) -> None:
    calls = [e for e in read_transcript_file(scenario_1x.main).events if isinstance(e, ApiCall)]
    assert calls[0].context_tokens == 2500


def test_local_commands_meta_records_and_compaction_summaries_are_not_operator_prompts(
    tmp_path: Path,
) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s")
    writer.prompt(
        "Caveat: The messages below were generated by the user while running local commands.", isMeta=True
    )
    writer.prompt("<command-name>/clear</command-name>\n<command-message>clear</command-message>")
    writer.prompt("<local-command-stdout></local-command-stdout>")
    writer.prompt("This session is being continued from a previous conversation that ran out of context.")
    writer.prompt("Summary", isCompactSummary=True)
    writer.prompt([{"type": "text", "text": "[Request interrupted by user]"}])
    writer.prompt("Додай тести до парсера")
    events = read_transcript_file(writer.write()).events
    assert [type(e) for e in events] == [Interruption, OperatorPrompt]
    prompt = events[1]
    assert isinstance(prompt, OperatorPrompt)
    assert prompt.opening == "Додай тести до парсера"


def test_synthetic_assistant_records_are_not_api_calls(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s")
    writer.prompt("hi")
    writer.call("msg_1", [tool("x", "Bash", command="ls")], usage(1, 2, 3))
    writer.record(
        {
            "type": "assistant",
            "isApiErrorMessage": True,
            "message": {"id": "err", "model": "<synthetic>", "content": [], "usage": usage(0)},
        }
    )
    calls = [e for e in read_transcript_file(writer.write()).events if isinstance(e, ApiCall)]
    assert [c.message_id for c in calls] == ["msg_1"]


def test_invalid_utf8_bytes_do_not_stop_reading(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path / "s.jsonl", "s")
    writer.prompt("hello")
    path = writer.write()
    path.write_bytes(path.read_bytes() + b'\xff\xfe{"broken\n')
    transcript = read_transcript_file(path)
    assert transcript.non_json_lines == 1


def test_a_path_that_does_not_exist_is_an_input_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(InputError, match="nowhere"):
        find_transcript_files([missing])


def test_folders_are_searched_recursively_for_jsonl_files(
    scenario_2x: Scenario, scenario_1x: Scenario
) -> None:
    found = find_transcript_files([scenario_2x.root.parent])
    assert {p.name for p in found} == {
        "sess-2x.jsonl",
        "agent-a1b2c3.jsonl",
        "sess-old.jsonl",
        "agent-0f0f.jsonl",
    }
