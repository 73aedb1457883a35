"""One correction-cue vocabulary feeds the intent labeller and the transcript scanner alike."""

from __future__ import annotations

import pytest

from mission_memory.metrics.transcript_corrections import is_correction_cue
from mission_memory.prompts.correction_cues import CORRECTION_CUES, matching_cues, normalise, redirects
from mission_memory.prompts.intents import Intent, label_intent


def test_the_vocabulary_covers_english_and_ukrainian_for_both_uses():
    for language in ("en", "uk"):
        cues = [c for c in CORRECTION_CUES if c.language == language]
        assert any(c.redirects for c in cues)
        assert any(c.weight > 0 for c in cues)


@pytest.mark.parametrize(
    "prompt",
    [
        "The build is red: you broke the tests",
        "Тести червоні — ти зламав їх",
        "hmm, no, keep the old name",
        "ну ні, так не піде",
        "Please never touch the migrations folder",
        "Це не те, що я просив: не чіпай конфіг",
    ],
)
def test_strong_cues_the_labeller_scores_now_also_mark_a_transcript_redirect(prompt):
    assert label_intent(prompt).intent is Intent.CORRECTION
    assert is_correction_cue(prompt)


@pytest.mark.parametrize(
    "prompt", ["no worries, thanks", "No problem, carry on", "Додай тести", "now run the tests"]
)
def test_ordinary_openings_are_no_correction_for_either_caller(prompt):
    assert not is_correction_cue(prompt)
    assert label_intent(prompt).intent is not Intent.CORRECTION


def test_the_labeller_explains_a_correction_with_patterns_from_the_vocabulary():
    label = label_intent("Ні, ти зламав тести")
    vocabulary = {c.pattern for c in CORRECTION_CUES}
    assert label.intent is Intent.CORRECTION
    assert set(label.cues) <= vocabulary
    assert {c.pattern for c in matching_cues(normalise("Ні, ти зламав тести")) if c.weight > 0} == set(
        label.cues
    )


def test_normalise_strips_markup_and_unifies_apostrophes():
    assert normalise("  > **Don’t** do that") == "don't** do that"
    assert redirects("> **Don’t** do that")
