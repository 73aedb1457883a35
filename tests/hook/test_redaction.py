"""Secret redaction: every planted credential kind goes, ordinary prompt text (Ukrainian too) stays."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mission_memory.capture.redaction import KINDS, redact


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        ("key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
        (
            "token ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0123456789.",
            "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0123456789",
            "token",
        ),
        ("gl glpat-x7Yz9Qw3Er5Ty1Ui8OpL", "glpat-x7Yz9Qw3Er5Ty1Ui8OpL", "token"),
        ("slack (xoxp-2718281828-3141592653-AbCdEf)", "xoxp-2718281828-3141592653-AbCdEf", "token"),
        ("KEY=sk-ant-api03-abc123def456ghi789jkl", "sk-ant-api03-abc123def456ghi789jkl", "token"),
        ("use sk-ant-api03-abc123def456ghi789jkl now", "sk-ant-api03-abc123def456ghi789jkl", "token"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIz", "eyJhbGciOiJIUzI1NiJ9", "jwt"),
        ('password="correct horse battery"', "correct horse battery", "assignment"),
        ("DB_PASSWORD: s3cr3t-Pa55", "s3cr3t-Pa55", "assignment"),
        ('{"api_key": "abcd1234efgh"}', "abcd1234efgh", "assignment"),
        ("mysql --password hunter22 -u root", "hunter22", "assignment"),
        ("Authorization: Bearer abcdefghijklmnop123", "abcdefghijklmnop123", "assignment"),
        ("Пароль: Київ2024Секрет — не забудь", "Київ2024Секрет", "assignment"),
        ("redis://default:hunter2hunter2@cache:6379/0", "hunter2hunter2", "url-password"),
        (
            "aws secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
            "high-entropy",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXk",
            "private-key",
        ),
        ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN never closed", "MIIEvQIBADAN", "private-key"),
        ("a <private>my diary</private> b", "my diary", "private"),
        ("a <PRIVATE>не для запису", "не для запису", "private"),
    ],
)
def test_each_secret_kind_is_redacted(text, secret, kind):
    redacted, counts = redact(text)
    assert secret not in redacted
    assert counts.get(kind, 0) >= 1
    assert kind in KINDS


@pytest.mark.parametrize(
    "text",
    [
        "Revert commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b please",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of the file",
        "request 550e8400-e29b-41d4-a716-446655440000 failed",
        "see src/mission_memory/hook/prompt_capture.py and tests/test_2024_report_v3.py",
        "rename AbstractSingletonProxyFactoryBeanImplementationV2 to Factory",
        "test_hook_never_blocks_or_fails_on_broken_json_input2 is flaky",
        "the token is expired and the password field is empty",
        "open https://github.com/anthropics/claude-code/issues/1234",
        "Виправ, будь ласка, тест — пароль тут ні до чого, і токен теж.",
        "use sk-learn and scikit-learn",
        "password_hint: shown to the user",
    ],
)
def test_ordinary_prompt_text_is_kept(text):
    assert redact(text) == (text, {})


def test_the_same_secret_twice_is_redacted_everywhere():
    token = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng0123456789"
    redacted, counts = redact(f"{token} and again {token}")
    assert token not in redacted
    assert counts == {"token": 2}


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text())
def test_redaction_never_raises_and_removes_a_planted_token(before, after):
    token = "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    redacted, _ = redact(f"{before} {token} {after}")
    assert token not in redacted


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "GET /export?token=Zx8kQ2pLr7mN&page=2 fails",
            "GET /export?token=[REDACTED:assignment]&page=2 fails",
        ),
        (
            '{"password": "p@ss \\"quoted\\" w0rd", "user": "olena"}',
            '{"password": "[REDACTED:assignment]", "user": "olena"}',
        ),
        (
            "export DB_PASSWORD=Tr0ub4dor&3 # prod\nnext line",
            "export DB_PASSWORD=[REDACTED:assignment]\nnext line",
        ),
        ("set password = Tr0ub4dor&3 now", "set password = [REDACTED:assignment] now"),
        ("oauth: use the device flow", "oauth: use the device flow"),
        ("mysql -u root -p mission_db", "mysql -u root -p mission_db"),
        (
            "the password is hashed with sha256 before storage",
            "the password is hashed with sha256 before storage",
        ),
        ("токен оновлюється кожні 15 хвилин", "токен оновлюється кожні 15 хвилин"),
    ],
    ids=[
        "query-ampersand",
        "escaped-quotes",
        "env-line",
        "spaced-assignment",
        "oauth",
        "mysql-prompt",
        "prose-sha",
        "uk-no-secret",
    ],
)
def test_value_boundaries(text, expected):
    assert redact(text)[0] == expected
