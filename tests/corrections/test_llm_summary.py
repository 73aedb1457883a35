"""With an LLM endpoint configured, a captured prompt's correction is summarised by the LLM, which sees
the prompt; a sentence that copies the prompt is refused and the field-built summary kept; the store
never holds the prompt (real HTTP on loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from mission_memory.api import Memory
from mission_memory.corrections.llm_summary import LlmCorrectionSummaries, copies_prompt
from tests.canary_scan import assert_no_canary, make_canaries
from tests.conftest import GitRepo
from tests.corrections.captured_prompts import capture_prompt

CANARIES = make_canaries("revert", "tests")
KEPT = "The operator had an agent edit in the source component undone."


def _answer(content: str) -> dict[str, object]:
    return {"choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"total_tokens": 60}}


def test_the_llm_writes_the_summary_and_a_copying_sentence_falls_back_to_the_fields(
    mission_repo: GitRepo, data_dir: Path, tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISSION_MEMORY_LLM_BASE_URL", httpserver.url_for("/v1"))
    monkeypatch.setenv("MISSION_MEMORY_LLM_MODEL", "tiny")
    root = mission_repo.root
    hook_dir = tmp_path / "hook-data"
    capture_prompt(hook_dir, "2025-10-10T09:00:00+00:00", "Add retries to the uploader", session="s1", cwd=root)
    capture_prompt(hook_dir, "2025-10-10T09:05:00+00:00",
                   f"no, don't change src/ledger.py, revert it {CANARIES['revert']}", session="s1", cwd=root)
    capture_prompt(hook_dir, "2025-10-10T09:09:00+00:00", f"ні, не чіпай тести {CANARIES['tests']}",
                   session="s1", cwd=root)
    httpserver.expect_ordered_request("/v1/chat/completions", method="POST").respond_with_json(_answer(KEPT))
    httpserver.expect_ordered_request("/v1/chat/completions", method="POST").respond_with_json(
        _answer(f"The operator said: не чіпай тести {CANARIES['tests']}."))

    with Memory.open() as memory:
        memory.ingest_repository(root)
        memory.import_corrections(prompts=hook_dir / "prompts.git", operator="alice")
        corrections = sorted(memory.corrections(), key=lambda c: c.time)

    httpserver.check_assertions()
    sent = [json.loads(request.get_data())["messages"][1]["content"] for request, _ in httpserver.log]
    assert CANARIES["revert"] in sent[0] and CANARIES["tests"] in sent[1]  # the LLM saw the prompts
    assert [c.category for c in corrections] == ["revert", "tests"]
    assert corrections[0].summary == KEPT
    assert corrections[1].summary.startswith("Operator corrected the agent in a prompt")  # built from the fields
    assert_no_canary([data_dir], CANARIES.values())


def test_an_unreachable_endpoint_keeps_the_field_summaries_and_is_called_once(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_data("down", status=503)
    llm = LlmCorrectionSummaries(httpserver.url_for("/v1"), "tiny", deadline_seconds=5)
    assert llm.summary("no, revert it", "prompt-correction", "revert", "src", "rejected") is None
    assert llm.summary("no, not like that", "prompt-correction", "approach", None, "modified") is None
    assert len(httpserver.log) == 1 and llm.failed == 1 and "HTTP 503" in str(llm.failure)


def test_a_silent_endpoint_is_cut_at_the_deadline(httpserver: HTTPServer) -> None:
    import time

    def slow(_request: object) -> object:
        time.sleep(3)
        from werkzeug import Response

        return Response(json.dumps(_answer(KEPT)), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(slow)
    llm = LlmCorrectionSummaries(httpserver.url_for("/v1"), "tiny", deadline_seconds=0.5)
    started = time.perf_counter()
    assert llm.summary("no, revert it", "prompt-correction", "revert", "src", "rejected") is None
    assert time.perf_counter() - started < 2.5 and llm.failure is not None


@pytest.mark.parametrize(("sentence", "copied"), [
    ("The operator asked to undo a change in the source component.", False),
    ("The operator said don't change the ledger at all.", True),    # four words in a row
    ("The operator protected ledger.py from edits.", True),         # an identifier of the prompt
    ("The operator rejected the key ab12cd34 being used.", True),
])
def test_the_copy_check(sentence: str, copied: bool) -> None:
    prompt = "no, don't change the ledger, revert ledger.py and drop key ab12cd34"
    assert copies_prompt(sentence, prompt) is copied
