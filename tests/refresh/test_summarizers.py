"""Summarizers: the extractive one is deterministic; the LLM one is capped and falls back, saying why."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest
from pytest_httpserver import HTTPServer

from mission_memory.ingest.git_history import Commit
from mission_memory.refresh.summarizers import (
    ChatCompletionsSummarizer,
    ExtractiveSummarizer,
    InMemorySpendLedger,
    SummaryMaterial,
)
from mission_memory.trackers.base import Task, TaskComment

NOW = datetime(2025, 1, 10, 9, 0, tzinfo=UTC)
TODAY = date(2025, 1, 10)


def _commit(n: int, day: int, subject: str, body: str = "", files: tuple[str, ...] = ()) -> Commit:
    when = datetime(2025, 1, day, 12, tzinfo=UTC)
    return Commit(
        sha=f"{n:x}" * 40,
        parents=("0" * 40,),
        author="Olena",
        authored_at=when,
        committed_at=when,
        subject=subject,
        body=body,
        files=files,
        insertions=10 * n,
        deletions=n,
    )


TASK = Task(
    key="OPS-7",
    title="Antivirus scan retries for uploads",
    description="Scans time out on field laptops; retry them with backoff.",
    labels=("LONG-TERM",),
    state="In Progress",
    url="https://plane.example/ops/7",
    created_at=datetime(2024, 12, 1, tzinfo=UTC),
    updated_at=datetime(2025, 1, 9, tzinfo=UTC),
)
MATERIAL = SummaryMaterial(
    task=TASK,
    commits=[
        _commit(
            1, 2, "OPS-7: add a retry queue for antivirus scans",
            "Scans that time out go to the queue.\n\nSigned-off-by: Olena <olena@example.org>", ("scan/queue.py",),
        ),
        _commit(2, 4, "OPS-7: exponential backoff for scan retries", "", ("scan/queue.py", "scan/backoff.py")),
        _commit(3, 6, "Fix typo in README"),
    ],
    comments=[
        TaskComment("c1", "taras", datetime(2025, 1, 3, 8, tzinfo=UTC), "The retry queue works on the field laptops. Backoff should cap at ten minutes."),
        TaskComment("c2", "олена", datetime(2025, 1, 5, 8, tzinfo=UTC), "Черга повторних спроб перевірки працює. Чи варто сповіщати оператора?"),
    ],
    since=datetime(2025, 1, 1, tzinfo=UTC),
)

OK_BODY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "qwen2.5:7b",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "- Retry queue added [1111111]."}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 300, "completion_tokens": 21, "total_tokens": 321},
}


def _llm(base_url: str, ledger: InMemorySpendLedger, cap: int = 100_000, timeout: float = 5.0) -> ChatCompletionsSummarizer:
    return ChatCompletionsSummarizer(
        base_url, "qwen2.5:7b", "secret-key", ledger, cap, timeout=timeout, clock=lambda: NOW
    )


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (kernel backlog) but never answers: reads time out."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def test_extractive_summary_is_deterministic_most_significant_first_and_cited() -> None:
    first = ExtractiveSummarizer(max_sentences=4).summarize(MATERIAL)
    second = ExtractiveSummarizer(max_sentences=4).summarize(MATERIAL)
    assert first == second
    assert first.summarizer == "extractive" and first.tokens_spent == 0 and first.fallback_reason is None
    lines = first.text.splitlines()
    assert lines[0] == (
        "OPS-7 — Antivirus scan retries for uploads: 3 commit(s) by 1 author(s) (+60/−6 lines) "
        "and 2 comment(s) since 2025-01-01 00:00 UTC."
    )
    assert lines[1] == "Most changed files: `scan/queue.py` (2), `scan/backoff.py` (1)."
    assert lines[2] == "Period 2025-01-02 to 2025-01-06 (5 active day(s)); the 4 most significant of 5 events, latest included:"
    bullets = [line for line in lines if line.startswith("- ")]
    assert len(bullets) == 4
    assert bullets[0] == "- 2025-01-04 · 2222222 · OPS-7: exponential backoff for scan retries"  # biggest change
    assert "- 2025-01-02 · 1111111 · OPS-7: add a retry queue for antivirus scans" in bullets
    assert any("comment c1 (taras)" in b for b in bullets)
    assert bullets[-1] == "- 2025-01-06 · 3333333 · Fix typo in README (latest)"  # least significant, but the latest


def test_extractive_summary_of_nothing_says_so() -> None:
    empty = SummaryMaterial(task=TASK, commits=[], comments=[], since=None)
    result = ExtractiveSummarizer().summarize(empty)
    assert result.text == "No commits or comments on OPS-7 since tracking began."


def test_extractive_summary_keeps_ukrainian_sentences() -> None:
    result = ExtractiveSummarizer(max_sentences=20).summarize(MATERIAL)
    assert "comment c2 (олена) · Черга повторних спроб перевірки працює." in result.text
    assert "Signed-off-by" not in result.text  # git trailers are not sentences


def test_llm_summary_is_used_and_its_tokens_are_counted(httpserver: HTTPServer) -> None:
    httpserver.expect_oneshot_request(
        "/v1/chat/completions", method="POST", headers={"Authorization": "Bearer secret-key"}
    ).respond_with_json(OK_BODY)
    ledger = InMemorySpendLedger()
    result = _llm(httpserver.url_for("/v1"), ledger).summarize(MATERIAL)

    assert result.text == "- Retry queue added [1111111]."
    assert result.summarizer == "chat-completions:qwen2.5:7b"
    assert result.tokens_spent == 321 and result.fallback_reason is None
    assert ledger.spent_on(TODAY) == 321
    request = json.loads(httpserver.log[0][0].get_data())
    assert request["model"] == "qwen2.5:7b" and request["max_tokens"] == 700
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert "[1111111]" in request["messages"][1]["content"] and "[comment:c2]" in request["messages"][1]["content"]
    httpserver.check_assertions()


def test_a_server_error_falls_back_to_extractive_and_says_why(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_data("model crashed", status=500)
    ledger = InMemorySpendLedger()
    result = _llm(httpserver.url_for("/v1"), ledger).summarize(MATERIAL)

    assert result.summarizer == "extractive"
    assert result.fallback_reason is not None and "HTTP 500" in result.fallback_reason
    first_line, _, rest = result.text.partition("\n\n")
    assert first_line.startswith("Extractive summary used instead of the LLM (qwen2.5:7b): ")
    assert "HTTP 500: model crashed" in first_line
    assert rest == ExtractiveSummarizer().summarize(MATERIAL).text
    assert ledger.spent_on(TODAY) == 0


def test_an_answer_without_content_falls_back_but_its_tokens_count(httpserver: HTTPServer) -> None:
    body = {**OK_BODY, "choices": []}
    httpserver.expect_request("/v1/chat/completions").respond_with_json(body)
    ledger = InMemorySpendLedger()
    result = _llm(httpserver.url_for("/v1"), ledger).summarize(MATERIAL)
    assert result.fallback_reason is not None and "without message content" in result.fallback_reason
    assert ledger.spent_on(TODAY) == 321 and result.tokens_spent == 321


def test_a_closed_port_falls_back(closed_port: int) -> None:
    result = _llm(f"http://127.0.0.1:{closed_port}/v1", InMemorySpendLedger()).summarize(MATERIAL)
    assert result.summarizer == "extractive"
    assert result.fallback_reason is not None and "unreachable (ConnectError" in result.fallback_reason
    assert result.text.startswith("Extractive summary used instead of the LLM")


def test_a_timeout_falls_back(silent_port: int) -> None:
    result = _llm(f"http://127.0.0.1:{silent_port}/v1", InMemorySpendLedger(), timeout=0.2).summarize(MATERIAL)
    assert result.fallback_reason is not None and "timed out after 0.2 s" in result.fallback_reason
    assert result.summarizer == "extractive"


def test_the_daily_cap_stops_the_call_before_it_is_made(httpserver: HTTPServer) -> None:
    ledger = InMemorySpendLedger()
    ledger.add(TODAY, 99_900)
    result = _llm(httpserver.url_for("/v1"), ledger, cap=100_000).summarize(MATERIAL)

    assert httpserver.log == []
    assert result.fallback_reason == "daily LLM token cap reached (99900 of 100000)"
    assert result.text.startswith(
        "Extractive summary used instead of the LLM (qwen2.5:7b): daily LLM token cap reached (99900 of 100000)."
    )
    assert ledger.spent_on(TODAY) == 99_900


def test_yesterdays_spend_does_not_count_against_today(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_json(OK_BODY)
    ledger = InMemorySpendLedger()
    ledger.add(date(2025, 1, 9), 100_000)
    result = _llm(httpserver.url_for("/v1"), ledger, cap=100_000).summarize(MATERIAL)
    assert result.fallback_reason is None


def test_nothing_to_summarize_makes_no_call(httpserver: HTTPServer) -> None:
    empty = SummaryMaterial(task=TASK, commits=[], comments=[], since=None)
    result = _llm(httpserver.url_for("/v1"), InMemorySpendLedger()).summarize(empty)
    assert httpserver.log == []
    assert result.fallback_reason is None and result.text.startswith("No commits or comments")


def test_llm_open_questions_are_parsed_with_their_refs(httpserver: HTTPServer) -> None:
    content = (
        "- Чи варто сповіщати оператора? [ref: comment:c2]\n"
        "- Should backoff cap at ten minutes? [ref: 1111111]\n"
        "* What happens to files that never pass?\n"
        "Some chatter the parser ignores."
    )
    body = {**OK_BODY, "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
    httpserver.expect_request("/v1/chat/completions").respond_with_json(body)
    ledger = InMemorySpendLedger()
    result = _llm(httpserver.url_for("/v1"), ledger).extract_open_questions(MATERIAL)

    assert [(q.text, q.ref, q.source_kind) for q in result.questions] == [
        ("Чи варто сповіщати оператора?", "comment:c2", "llm"),
        ("Should backoff cap at ten minutes?", "1111111", "llm"),
        ("What happens to files that never pass?", "task:OPS-7", "llm"),
    ]
    assert result.tokens_spent == 321 and result.fallback_reason is None
    assert ledger.spent_on(TODAY) == 321


def test_llm_open_questions_fall_back_to_none_with_the_reason(httpserver: HTTPServer) -> None:
    ledger = InMemorySpendLedger()
    ledger.add(TODAY, 10**9)
    result = _llm(httpserver.url_for("/v1"), ledger).extract_open_questions(MATERIAL)
    assert result.questions == ()
    assert result.fallback_reason is not None and result.fallback_reason.startswith("daily LLM token cap reached")
    assert httpserver.log == []
