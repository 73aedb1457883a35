"""Issue 35 item 3: every derived field (handover-note titles, comment titles, capped texts) is cut
after redaction, never before: a secret the cut would split is redacted whole, no prefix of it stored.

Each case puts a secret across the cut: at 6adcb71 the handover note's title was the first 89
characters of the raw first line, so the secret's head, no longer recognisable, was stored in
``records.title``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from pytest_httpserver import HTTPServer

from mission_memory.capture.redaction import redact_text, redacted_cut
from mission_memory.handover.notes import build_handover_note
from mission_memory.refresh.summarizers import InMemorySpendLedger, SummaryMaterial
from tests.refresh.test_summarizers import MATERIAL, OK_BODY, TASK, _llm

GITHUB_TOKEN = "ghp_" + "R8kLq2Wm5pZx7Nv3Tb6Yc1Hd4Jf9Gs0Ae2Ui"
PROSE_PASSWORD = "Hx3^vB9qLm2kQw"


def _heads(secret: str) -> list[str]:
    """Every prefix of ``secret`` of 4 characters or more (what a cut could leave)."""
    return [secret[:n] for n in range(4, len(secret) + 1)]


@pytest.mark.parametrize(("lead", "secret"), [
    ("Deploy key rotated after the incident, the new CI token for the release pipeline is ", GITHUB_TOKEN),
    ("Warning for the next shift: the reporting database admin account (ro) my password is ", PROSE_PASSWORD),
])
def test_a_handover_title_does_not_keep_the_head_of_a_split_secret(lead: str, secret: str) -> None:
    assert len(lead) < 89 < len(lead) + len(secret)  # the old cut falls inside the secret
    note = build_handover_note(f"{lead}{secret} until Friday.", "warning", mission="ledger",
                               operator="olena", at=datetime(2025, 3, 1, 9, 0, tzinfo=UTC))
    assert secret not in note.text
    for head in _heads(secret):
        assert head not in note.title, f"title keeps {head!r}: {note.title!r}"
    assert note.title.startswith("Handover warning: Deploy key" if "Deploy" in lead else "Handover warning: Warning")
    assert note.title.endswith("…")


@pytest.mark.parametrize("limit", [20, 40, 60, 89, 120])
def test_redacted_cut_never_keeps_the_head_of_a_secret_and_never_splits_a_marker(limit: int) -> None:
    text = "Rotated; the CI token is " + GITHUB_TOKEN + " and my password is " + PROSE_PASSWORD + " for now."
    cut = redacted_cut(text, limit)
    assert len(cut) <= limit
    for secret in (GITHUB_TOKEN, PROSE_PASSWORD):
        for head in _heads(secret):
            assert head not in cut
    assert cut.count("[REDACTED:") == cut.count("]")  # no marker cut in two
    assert redact_text(cut) == cut
    assert redacted_cut(cut, limit) == cut  # cutting again changes nothing


def test_the_material_sent_to_a_summarizer_is_redacted_before_it_is_cut(httpserver: HTTPServer) -> None:
    """The refresh summarizer's prompt cuts the task description at 2,000 characters, a commit body at
    1,500 and a comment at 3,000: each is redacted first, so no head of a secret the cut would split
    leaves for the LLM endpoint (a real HTTP server on loopback) or comes back in a summary."""
    description = "x" * (2000 - 60) + " the deploy token is " + GITHUB_TOKEN + " until Friday."
    body = "y" * (1500 - 40) + " my password is " + PROSE_PASSWORD + " for the replica."
    comment = "z" * (3000 - 50) + " staging CI token " + GITHUB_TOKEN + " (rotated)."
    task = replace(TASK, description=description)
    material = SummaryMaterial(task=task, commits=[replace(MATERIAL.commits[0], body=body)],
                               comments=[replace(MATERIAL.comments[0], text=comment)], since=MATERIAL.since)
    httpserver.expect_oneshot_request("/v1/chat/completions", method="POST").respond_with_json(OK_BODY)
    _llm(httpserver.url_for("/v1"), InMemorySpendLedger()).summarize(material)
    sent = json.loads(httpserver.log[0][0].get_data())["messages"][1]["content"]
    for secret in (GITHUB_TOKEN, PROSE_PASSWORD):
        for head in _heads(secret):
            assert head not in sent, f"the prompt keeps {head!r}"
    assert "[REDACTED:" in sent
