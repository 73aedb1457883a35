"""Planted secrets of 50 kinds, each in a realistic prompt, run through the real hook: none reaches git.

Each case runs the installed hook command in a subprocess, then reads every object of the bare
prompt repository with git itself (decompressed) and checks that the secret, and every 8+ character
piece of it that is not an ordinary word, is absent, while the prompt's ordinary words are kept
(issue 9 item 4). The values are fake, shaped like the real formats.
"""

from __future__ import annotations

import json

import pytest

PEM_BODY = (
    "MIIEpAIBAAKCAQEAx3kL9pQ2mN8vR4tY6wZ1aB5cD7eF0gH2iJ4kL6mN8oP0qR2s\n"
    "T4uV6wX8yZ0aB2cD4eF6gH8iJ0kL2mN4oP6qR8sT0uV2wX4yZ6aB8cD0eF2gH4iJ6\n"
)
GCP_KEY_ID = "8f3c2a9b1d4e6f7081a2b3c4d5e6f708192a3b4c"
GCP_JSON = json.dumps(
    {
        "type": "service_account",
        "project_id": "mission-prod-4711",
        "private_key_id": GCP_KEY_ID,
        "private_key": "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "-----END PRIVATE KEY-----\n",
        "client_email": "deployer@mission-prod-4711.iam.gserviceaccount.com",
        "client_id": "104857600123456789012",
    },
    indent=2,
)

# (kind, prompt with {s} where the secret goes, secret)
CASES: list[tuple[str, str, str]] = [
    (
        "aws-access-key-id",
        "Deploy to staging with access key {s} from the ops vault.",
        "AKIAZ7Q3LMNOPQRS2TUV",
    ),
    (
        "aws-secret-access-key",
        "Set aws_secret_access_key = {s} in the profile and rerun terraform.",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
    ),
    (
        "aws-secret-prose",
        "The secret access key for the backup bucket is {s} so please rotate it.",
        "Qx7vT2mP9sK4wL1nR8dF3gH6jZ0cV5bN2aM4yU7e",
    ),
    (
        "github-classic-pat",
        "Clone the repo using {s} as the password.",
        "ghp_9fK2mQ7xL4pW8rT1vZ6nB3cY5dH0jS2gA4eU",
    ),
    (
        "github-fine-grained-pat",
        "Here is a fine-grained token: {s} — it expires next week.",
        "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",
    ),
    ("gitlab-pat", "Push the mirror with {s} please.", "glpat-Zx8kQ2pLr7mN4vB6cD1e"),
    (
        "slack-bot-token",
        "Configure the alert bot with {s} and post to the ops channel.",
        "xoxb-2718281828-3141592653-Zx8kQ2pLr7mN4vB6cD1eF3gH",
    ),
    (
        "slack-user-token",
        "My slack user token {s} should read the history.",
        "xoxp-1618033988-7498948482-0458683436-5637Zx8kQ2pLr7mN4vB6cD1e",
    ),
    (
        "slack-webhook",
        "Send the nightly report to https://hooks.slack.com/services/{s} when the build finishes.",
        "T0A1B2C3D/B0E4F5G6H/Zx8kQ2pLr7mN4vB6cD1eF3gH",
    ),
    (
        "discord-webhook",
        "Post release notes to https://discord.com/api/webhooks/{s} after tagging.",
        "1234567890123456789/Zx8kQ2pLr7mN4vB6cD1eF3gH5jK7lM9nB2vC4xZ6aS8dF0gH1jK3lQ5wE7rT9yU",
    ),
    (
        "stripe-live-key",
        "Charge the customer using {s} on the server side.",
        "sk_live_51H8xZ2eZvKYlo2C0aB3dE5fG7hJ9kL",
    ),
    (
        "stripe-restricted-key",
        "The reporting job reads with {s} only.",
        "rk_live_51H8xZ2eZvKYlo2C9yT6rE4wQ2pL0mN",
    ),
    (
        "twilio-auth-token",
        "Twilio account AC1f2e3d4c5b6a79808f7e6d5c4b3a2910 uses auth token {s} for SMS alerts.",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ),
    (
        "twilio-api-key",
        "Create the twilio client with api key {s} and our sid.",
        "SK0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    ),
    (
        "sendgrid-key",
        "Mail goes through SendGrid with {s} from the relay.",
        "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",
    ),
    (
        "openai-key",
        "export OPENAI_API_KEY={s}\nthen run the eval script.",
        "sk-proj-Zx8kQ2pLr7mN4vB6cD1eF3gH5jK7lM9nB2vC4xZ6aS8d",
    ),
    (
        "anthropic-key",
        "Use the Anthropic key {s} for the summarizer.",
        "sk-ant-api03-Zx8kQ2pLr7mN4vB6cD1eF3gH5jK7lM9nB2vC4xZ6aS8dF0gH1jK3lQ5wE7rT9yU-AbCdEfAA",
    ),
    (
        "google-api-key",
        "Geocoding calls need {s} in the query string.",
        "AIzaSyD8kQ2pLr7mN4vB6cD1eF3gH5jK7lM9nB2",
    ),
    (
        "jwt",
        "This session token fails validation: {s} — why?",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ik9sZW5hIn0.Zx8kQ2pLr7mN4vB6cD1eF3gH5jK7lM9nB2vC4xZ6aS8",
    ),
    (
        "pem-rsa",
        "Install this deploy key on the runner:\n{s}\nand restart the agent.",
        "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "-----END RSA PRIVATE KEY-----",
    ),
    (
        "pem-ec",
        "The signing key is\n{s}\nkeep it safe.",
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkL9pQ2mN8vR4tY6wZ1aB5cD7eF0gH2iJ4kL6mN8oP0oAoGCCqGSM49\n-----END EC PRIVATE KEY-----",
    ),
    (
        "pem-openssh",
        "Add to the bastion:\n{s}\nthen test ssh.",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "pgp-private-block",
        "Import the release signing key:\n{s}\nthen sign the tag.",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGXk9pQBCADx3kL9pQ2mN8vR4tY6wZ1aB5cD7eF0gH2iJ4kL6mN8oP0qR2s\n=Zx8k\n"
        "-----END PGP PRIVATE KEY BLOCK-----",
    ),
    (
        "gcp-service-account-private-key-id",
        "Use this service account for the export job:\n" + GCP_JSON.replace(GCP_KEY_ID, "{s}") + "\nthanks.",
        GCP_KEY_ID,
    ),
    (
        "gcp-service-account-private-key",
        "Use this service account for the export job:\n"
        + GCP_JSON.replace(PEM_BODY.replace("\n", "\\n"), "{s}")
        + "\nthanks.",
        PEM_BODY.replace("\n", "\\n"),
    ),
    (
        "azure-connection-string",
        "Blob uploads use DefaultEndpointsProtocol=https;AccountName=missionstore;AccountKey={s};"
        "EndpointSuffix=core.windows.net in production.",
        "Zx8kQ2pLr7mN4vB6cD1eF3gH5jK7lM9nB2vC4xZ6aS8dF0gH1jK3lQ5wE7rT9yU+AbCdEf/GhIjKl==",
    ),
    (
        "postgres-url",
        "Connect the worker to postgres://mission_app:{s}@db.internal:5432/mission and run migrations.",
        "Zx8kQ2pLr7",
    ),
    (
        "mongodb-srv-url",
        "Analytics reads from mongodb+srv://analyst:{s}@cluster0.ab1cd.mongodb.net/reports nightly.",
        "Pq4Lm9Xz2Rt7",
    ),
    (
        "basic-auth-url",
        "Fetch the artifact from https://ci-bot:{s}@nexus.internal/repository/raw/ now.",
        "Hk3Jx9Lm2Qp7",
    ),
    ("env-ampersand", "The .env has\nDB_PASSWORD={s}\nand nothing else.", "Tr0ub4dor&3"),
    ("env-hash", "In .env:\nAPI_SECRET={s}\nplease load it.", "pa55#word9Lk"),
    (
        "env-double-quotes-spaces",
        'Then set\nSMTP_PASSWORD="{s}"\nin the mail config.',
        "correct horse 9 battery",
    ),
    ("env-single-quotes", "Add\nREDIS_PASSWORD='{s}'\nto the staging file.", "r3d!s P@ss w0rd"),
    (
        "env-unquoted-spaces",
        "The broken line is\nADMIN_PASSWORD=my s3cret pass&word\nfix the parser.",
        "my s3cret pass&word",
    ),
    (
        "bearer-header",
        "curl -H 'Authorization: Bearer {s}' https://api.internal/v1/tasks returns 401.",
        "Zx8kQ2pLr7mN4vB6cD1eF3gH5jK7",
    ),
    (
        "basic-header",
        "The proxy sends Authorization: Basic {s} to the upstream.",
        "YWRtaW46U3VwZXJTZWNyZXQxMjM=",
    ),
    (
        "npm-token",
        "Publish with //registry.npmjs.org/:_authToken={s} in the npmrc.",
        "npm_Zx8kQ2pLr7mN4vB6cD1eF3gH5jK7lM9nB2vC",
    ),
    (
        "pypi-token",
        "Upload the wheel using token {s} on the release box.",
        "pypi-AgEIcHlwaS5vcmcCJGI3ZmM4ZDE2LTBhYjItNGQ5Mi1hMzk4LTlkZjQ4ZGJhZTcwNQACKlszLCJlYzVkMmQ",
    ),
    (
        "docker-config-auth",
        'The runner has ~/.docker/config.json {{"auths": {{"registry.internal": {{"auth": "{s}"}}}}}} configured.',
        "Y2ktYm90Olp4OGtRMnBMcjdtTjR2QjY=",
    ),
    (
        "kubernetes-secret-data",
        "The manifest is\napiVersion: v1\nkind: Secret\ndata:\n  password: {s}\n  username: YWRtaW4=\nplease review.",
        "WnA4a1EycExyN21ONHZCNmNEMWU=",
    ),
    (
        "kubernetes-tls-key",
        "Secret data:\n  tls.key: {s}\nis too long?",
        "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVND",
    ),
    ("sshpass", "Run sshpass -p '{s}' ssh deploy@10.0.0.5 uptime on the jump host.", "S3cure!Pass"),
    (
        "curl-user",
        "Try curl -u admin:{s} https://jenkins.internal/api/json to check.",
        "Jk8Lm2Np4Qr6",
    ),
    ("mysql-p", "Dump it with mysql -uroot -p{s} mission_db > dump.sql today.", "Mq7Zr2Kx9Lp4"),
    ("english-prose-password", "my password is {s} for the staging box", "hunter2Xy!"),
    ("english-prose-token", "the token for prod is {s}, use it carefully", "7fG2kL9mQ4xW8pR"),
    ("ukrainian-prose-server", "пароль від сервера — {s}", "Zx8kQ2pLr7"),
    ("ukrainian-prose-mail", "Нагадую: пароль від пошти — {s}, не пиши його в чат.", "Kv!t2024Lm"),
    ("ukrainian-colon", "Ось пароль: {s} для бази даних.", "Вишня7Сад9"),
    ("ukrainian-api-key", "ключ API {s} треба додати в налаштування", "Qm7Xr2Lk9Pz4Wn6"),
    ("ukrainian-token", "Токен для деплою: {s}. Дякую!", "dQ8mW3xZ7kP2"),
    (
        "huggingface-token",
        "Download the model with {s} please.",
        "hf_Zx8kQ2pLr7mN4vB6cD1eF3gH5jK7lM9nB2",
    ),
    (
        "telegram-bot-token",
        "The alert bot token is 6123456789:{s} on the ops box.",  # the bot id before ':' is public
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    ),
    (
        "private-key-hex-env",
        "Set PRIVATE_KEY={s} for the signer.",
        "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
    ),
]

ORDINARY_WORDS = {"services", "webhooks", "private", "begin", "block", "protocol"}
PEM_ARMOUR = {"BEGIN", "END", "PRIVATE", "KEY", "RSA", "EC", "OPENSSH", "PGP", "BLOCK"}


def secret_pieces(secret: str) -> list[str]:
    """The secret and every 8+ character alphanumeric piece of it that is not an ordinary word."""
    pieces = "".join(ch if ch.isalnum() else " " for ch in secret).split()
    kept = [secret]
    for piece in pieces:
        ordinary = piece.isalpha() and (piece.islower() or piece.isupper() or piece.istitle())
        if len(piece) >= 8 and not ordinary and piece.lower() not in ORDINARY_WORDS:
            kept.append(piece)
    return kept


def ordinary_words(prompt: str, secret: str) -> list[str]:
    """Words of the prompt around the secret (letters only, 4+ characters) that must survive."""
    words = [w.strip(".,:;!?\"'()[]{}«»—") for w in prompt.replace(secret, " ").split()]
    return [
        w
        for w in words
        if len(w) >= 4 and w.replace("'", "").isalpha() and w not in secret and w not in PEM_ARMOUR
    ]


def test_there_are_at_least_forty_kinds():
    assert len({kind for kind, _, _ in CASES}) == len(CASES) >= 40


@pytest.mark.parametrize(("template", "secret"), [(t, s) for _, t, s in CASES], ids=[k for k, _, _ in CASES])
def test_planted_secret_reaches_no_git_object_and_the_words_around_it_stay(
    template, secret, run_hook, payload, prompt_repo, git, stored_documents
):
    prompt = template.replace("{s}", secret).replace("{{", "{").replace("}}", "}")
    run = run_hook(payload(prompt))
    assert (run.returncode, run.stdout) == (0, b"")
    [doc] = stored_documents(prompt_repo)
    stored = str(doc["prompt"])
    everything = git(prompt_repo, "cat-file", "--batch-all-objects", "--batch").decode("utf-8", "replace")
    leaked = [piece for piece in secret_pieces(secret) if piece in everything or piece in stored]
    assert leaked == [], stored
    tails = [secret[-k:] for k in range(2, len(secret)) if "]" + secret[-k:] in stored]
    assert tails == [], stored  # no cut-off end of the secret right after a redaction marker
    missing = [word for word in ordinary_words(prompt, secret) if word not in stored]
    assert missing == [], stored


@pytest.mark.parametrize(
    "prompt",
    [
        "Cherry-pick 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b onto the release branch and rerun CI.",
        "The run with id 550e8400-e29b-41d4-a716-446655440000 failed at step 3; check the logs.",
        "Будь ласка, перевір, чому тест падає на гілці feature/пам'ять після коміту 9c1d4e5.",
        "Rename the password field to passwordHash in UserModel and update the token refresh docs.",
        "Пароль має бути щонайменше 12 символів; токен оновлюється кожні 15 хвилин.",
        "Set MISSION_MEMORY_DATA_DIR=/srv/mission-memory and run mission-memory hook status --json.",
    ],
    ids=["git-sha", "uuid", "ukrainian-prose", "identifiers", "ukrainian-policy", "env-path"],
)
def test_ordinary_prompt_is_stored_unchanged(prompt, run_hook, payload, prompt_repo, stored_documents):
    run = run_hook(payload(prompt))
    assert (run.returncode, run.stdout) == (0, b"")
    [doc] = stored_documents(prompt_repo)
    assert doc["prompt"] == prompt
    assert doc["redactions"] == {}
