"""Intent labels against hand-labelled Ukrainian and English prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from mission_memory.prompts import intents
from mission_memory.prompts.intents import Intent, label_intent

HERE = Path(__file__).parent


def labelled(name: str) -> list[tuple[Intent, str]]:
    rows = []
    for line in (HERE / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            label, text = line.split("\t", 1)
            rows.append((Intent(label), text))
    return rows


def accuracy(rows: list[tuple[Intent, str]]) -> float:
    return sum(label_intent(text).intent is label for label, text in rows) / len(rows)


def test_labelled_sets_cover_every_label_in_both_languages():
    def is_ukrainian(text: str) -> bool:
        return any("а" <= ch <= "я" or ch in "іїєґ" for ch in text.lower())

    for name in ("intent_labels.tsv", "intent_labels_holdout.tsv", "intent_labels_holdout2.tsv"):
        rows = labelled(name)
        assert {label for label, text in rows if is_ukrainian(text)} == set(Intent)
        assert {label for label, text in rows if text.isascii()} == set(Intent)


def test_accuracy_on_the_development_set(record_property):
    score = accuracy(labelled("intent_labels.tsv"))
    record_property("intent_accuracy_dev", score)
    assert score >= 0.9


def test_accuracy_on_the_revision_set(record_property):
    # scored 34/48 before its misses drove one generic revision of the cue lists
    score = accuracy(labelled("intent_labels_holdout.tsv"))
    record_property("intent_accuracy_revision", score)
    assert score >= 0.9


def test_accuracy_on_the_held_out_set_stays_above_the_recorded_floor(record_property):
    # never used for tuning: 36/48 with the first cue lists, 40/48 (0.833) with the revised ones
    score = accuracy(labelled("intent_labels_holdout2.tsv"))
    record_property("intent_accuracy_holdout", score)
    assert score >= 0.8


@pytest.mark.parametrize("language", ["en", "uk"])
def test_accuracy_holds_in_each_language(language):
    rows = labelled("intent_labels.tsv")
    half = rows[: len(rows) // 2] if language == "en" else rows[len(rows) // 2 :]
    assert accuracy(half) >= 0.9


def test_every_label_is_documented_in_the_module():
    for intent in Intent:
        assert f"``{intent.value}``" in (intents.__doc__ or "")


def test_a_prompt_without_cues_opens_a_session_as_a_new_task():
    assert label_intent("Міграції бази", first_in_session=True).intent is Intent.NEW_TASK
    assert label_intent("Міграції бази").intent is Intent.CLARIFICATION


def test_label_explains_itself_with_the_matched_cues():
    label = label_intent("Ні, ти зламав тести")
    assert label.intent is Intent.CORRECTION and label.score > 0 and label.cues
