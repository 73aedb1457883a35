"""Secret redaction for captured prompts: builtins only (no ``re``; ``math`` only for long tokens).

The prompt hook runs this on every operator prompt before anything touches disk, inside a latency
budget of a few milliseconds (issue #3 item 4). Importing :mod:`re` alone costs ~6 ms of interpreter
start-up on the reference machine, so detection is done with ``str`` methods that run in C
(``find``, ``split``, ``translate``) and a short Python loop over candidate tokens only
(docs/adr/0011).

What is redacted (each replaced by ``[REDACTED:<kind>]``, kinds listed in :data:`KINDS`):

* ``<private>…</private>`` spans are dropped whole (an unclosed tag drops to the end) -> ``[private]``;
* PEM private-key blocks (``-----BEGIN … PRIVATE KEY-----`` to the matching ``-----END …-----``);
* values of credential assignments: ``password=``, ``token:``, ``"api_key": "…"``, ``SECRET_KEY=…``,
  ``--password x``, ``Authorization: Bearer …``, ``пароль: …`` (keys listed in :data:`ASSIGNMENT_KEYS`);
* passwords inside URLs (``scheme://user:password@host``);
* tokens with well-known prefixes (AWS ``AKIA…``, GitHub ``ghp_``/``github_pat_``, GitLab ``glpat-``,
  Slack ``xox?-``, OpenAI/Anthropic ``sk-``, Stripe ``sk_live_``, Google ``AIza``, Hugging Face ``hf_``,
  npm, PyPI, JWTs, …);
* long high-entropy strings: at least 32 characters of ``[A-Za-z0-9+/=_-]`` with letters and digits and
  a Shannon entropy of at least 3.8 bits/char (3.0 for hex), whose character class (lower, upper,
  digit) changes at 35 % of positions or more, which identifiers (``CamelCase``, ``snake_case``)
  do not. 40- and 64-digit hex strings (git and SHA-256 object ids) and UUIDs are kept, because prompts name commits far more often than they
  paste hex secrets.

Redaction errs towards over-redaction; it never raises on any ``str`` input.
"""

__all__ = ["ASSIGNMENT_KEYS", "KINDS", "redact"]

KINDS = (
    "private",
    "private-key",
    "assignment",
    "url-password",
    "aws-access-key",
    "token",
    "jwt",
    "high-entropy",
)

ASSIGNMENT_KEYS = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "api_key",
    "api-key",
    "apikey",
    "access_key",
    "access-key",
    "secret_key",
    "private_key",
    "client_secret",
    "credentials",
    "пароль",
    "токен",
    "секрет",
)

_AWS_PREFIXES = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "ABIA", "ACCA")

# (prefix, minimum total token length)
_TOKEN_PREFIXES = (
    ("github_pat_", 30),
    ("ghp_", 30),
    ("gho_", 30),
    ("ghu_", 30),
    ("ghs_", 30),
    ("ghr_", 30),
    ("glpat-", 20),
    ("gldt-", 20),
    ("xoxb-", 20),
    ("xoxp-", 20),
    ("xoxa-", 20),
    ("xoxr-", 20),
    ("xoxs-", 20),
    ("xapp-", 20),
    ("sk-ant-", 24),
    ("sk-proj-", 24),
    ("sk-", 24),
    ("sk_live_", 20),
    ("sk_test_", 20),
    ("rk_live_", 20),
    ("AIza", 35),
    ("ya29.", 30),
    ("hf_", 30),
    ("npm_", 36),
    ("pypi-", 40),
    ("shpat_", 30),
    ("dop_v1_", 40),
    ("SG.", 40),
)

_DELIMITERS = "\"'`()[]{}<>,;=|\\:@!?*"
_SPLIT_TABLE = {ord(ch): " " for ch in _DELIMITERS}
_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_HEX_CHARS = frozenset("0123456789abcdefABCDEF")
_VALUE_STOP = " \t\r\n,;}&)]>\"'`"
_QUOTES = "\"'`"


def redact(text: str) -> tuple[str, dict[str, int]]:
    """Return ``text`` with secrets replaced and the number of redactions per kind.

    Args:
        text: the operator prompt, any length (tested up to 1 MB).

    Returns:
        ``(redacted_text, counts)`` where ``counts`` maps a kind from :data:`KINDS` to how many
        spans or tokens of that kind were replaced; empty when nothing was found.
    """
    counts: dict[str, int] = {}
    if not text:
        return text, counts
    text = _drop_private_spans(text, counts)
    text = _redact_key_blocks(text, counts)
    text = _redact_assignments(text, counts)
    text = _redact_url_passwords(text, counts)
    text = _redact_tokens(text, counts)
    return text, counts


def _bump(counts: dict[str, int], kind: str, n: int = 1) -> None:
    counts[kind] = counts.get(kind, 0) + n


def _lowered(text: str) -> str:
    """Lower-case ``text`` keeping every index valid (full ``lower`` can change the length)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


def _drop_private_spans(text: str, counts: dict[str, int]) -> str:
    if "<" not in text:
        return text
    low = _lowered(text)
    if "<private>" not in low:
        return text
    out: list[str] = []
    pos = 0
    while True:
        start = low.find("<private>", pos)
        if start < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:start])
        out.append("[private]")
        _bump(counts, "private")
        end = low.find("</private>", start + 9)
        if end < 0:
            break
        pos = end + 10
    return "".join(out)


def _redact_key_blocks(text: str, counts: dict[str, int]) -> str:
    if "-----BEGIN" not in text:
        return text
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("-----BEGIN", pos)
        if start < 0:
            out.append(text[pos:])
            break
        header_end = text.find("-----", start + 10)
        header = text[start : header_end + 5] if header_end >= 0 else text[start:]
        if "PRIVATE KEY" not in header:
            out.append(text[pos : start + 10])
            pos = start + 10
            continue
        out.append(text[pos:start])
        out.append("[REDACTED:private-key]")
        _bump(counts, "private-key")
        end = text.find("-----END", start + 10)
        if end < 0:
            pos = len(text)
            out.append("")
            break
        close = text.find("-----", end + 8)
        pos = close + 5 if close >= 0 else len(text)
    return "".join(out)


def _value_span(text: str, pos: int) -> tuple[int, int]:
    """Span of the value that starts at (or after spaces from) ``pos``; ``(pos, pos)`` when none."""
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos >= n:
        return pos, pos
    quote = text[pos]
    if quote in _QUOTES:
        close = text.find(quote, pos + 1)
        newline = text.find("\n", pos + 1)
        if close > pos and (newline < 0 or close < newline):
            return pos + 1, close
        pos += 1
    end = pos
    while end < n and text[end] not in _VALUE_STOP:
        end += 1
    return pos, end


def _redact_assignments(text: str, counts: dict[str, int]) -> str:
    low = _lowered(text)
    spans: list[tuple[int, int]] = []
    for key in ASSIGNMENT_KEYS:
        start = low.find(key)
        while start >= 0:
            after = start + len(key)
            span = _assignment_value(text, low, start, after)
            if span is not None:
                spans.append(span)
            start = low.find(key, after)
    start = low.find("bearer ")
    while start >= 0:
        vstart, vend = _value_span(text, start + 7)
        if vend - vstart >= 8:
            spans.append((vstart, vend))
        start = low.find("bearer ", start + 7)
    if not spans:
        return text
    return _apply_spans(text, spans, "assignment", counts)


def _assignment_value(text: str, low: str, start: int, after: int) -> tuple[int, int] | None:
    """Value span of ``key = value`` / ``key: value`` / ``--key value`` at ``low[start:after]``."""
    n = len(text)
    # the key must end here: "password_hint" or "tokens" are not credential keys
    if after < n and (low[after].isalnum() or low[after] in "_-"):
        return None
    pos = after
    while pos < n and text[pos] in _QUOTES:
        pos += 1
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos < n and text[pos] in "=:":
        pos += 1
        while pos < n and text[pos] in "=>":
            pos += 1
    elif start >= 2 and text[start - 2 : start] == "--":
        pass  # "--password hunter2"
    else:
        return None
    vstart, vend = _value_span(text, pos)
    if vend - vstart < 3:
        return None
    return vstart, vend


def _redact_url_passwords(text: str, counts: dict[str, int]) -> str:
    if "://" not in text:
        return text
    spans: list[tuple[int, int]] = []
    pos = text.find("://")
    while pos >= 0:
        begin = pos + 3
        end = begin
        n = len(text)
        while end < n and text[end] not in " \t\r\n/\"'`<>":
            end += 1
        at = text.rfind("@", begin, end)
        if at > begin:
            colon = text.find(":", begin, at)
            if colon >= 0 and at - colon > 1:
                spans.append((colon + 1, at))
        pos = text.find("://", end)
    if not spans:
        return text
    return _apply_spans(text, spans, "url-password", counts)


def _apply_spans(text: str, spans: list[tuple[int, int]], kind: str, counts: dict[str, int]) -> str:
    spans.sort()
    out: list[str] = []
    pos = 0
    for start, end in spans:
        start = max(start, pos)  # a span overlapping the previous one starts where that ended
        if end <= start:
            continue
        out.append(text[pos:start])
        out.append("[REDACTED:" + kind + "]")
        _bump(counts, kind)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _redact_tokens(text: str, counts: dict[str, int]) -> str:
    found: dict[str, str] = {}
    for chunk in text.split():
        if len(chunk) < 20:  # a chunk this short cannot hold a 20-character token
            continue
        for word in chunk.translate(_SPLIT_TABLE).split():
            if len(word) < 20:
                continue
            word = word.strip(".")
            if word in found or word.startswith("[REDACTED"):
                continue
            kind = _token_kind(word)
            if kind is not None:
                found[word] = kind
    for word in sorted(found, key=len, reverse=True):
        kind = found[word]
        n = text.count(word)
        if n:
            text = text.replace(word, "[REDACTED:" + kind + "]")
            _bump(counts, kind, n)
    return text


def _token_kind(word: str) -> str | None:
    """Kind of secret ``word`` is (one delimiter-free token of >= 20 chars), or ``None``."""
    if len(word) == 20 and word[:4] in _AWS_PREFIXES and word.isalnum() and word.isupper():
        return "aws-access-key"
    for prefix, min_len in _TOKEN_PREFIXES:
        if word.startswith(prefix) and len(word) >= min_len:
            rest = word[len(prefix) :]
            if sum(ch.isdigit() for ch in rest) >= 2 or len(rest) >= 32:
                return "token"
    if word.startswith("eyJ") and word.count(".") == 2 and len(word) >= 30:
        return "jwt"
    if len(word) < 32 or "." in word or word[0] == "/":
        return None
    if not _B64_CHARS.issuperset(word):
        return None
    if _HEX_CHARS.issuperset(word):
        if len(word) in (40, 64):
            return None
        return "high-entropy" if _entropy(word) >= 3.0 else None
    if _looks_like_uuid(word):
        return None
    has_digit = any(ch.isdigit() for ch in word)
    has_alpha = any(ch.isalpha() for ch in word)
    if not (has_digit and has_alpha) or _class_changes(word) < 0.35 * len(word):
        return None
    return "high-entropy" if _entropy(word) >= 3.8 else None


def _class_changes(word: str) -> int:
    """How often the character class (lower, upper, digit) changes along ``word``, others skipped.

    Random tokens change class at most positions; identifiers (``CamelCase``, ``snake_case``) only
    at word boundaries, which keeps them out of the high-entropy kind.
    """
    changes = 0
    previous = -1
    for ch in word:
        cls = 0 if ch.islower() else 1 if ch.isupper() else 2 if ch.isdigit() else -1
        if cls >= 0 and cls != previous:
            changes += 1
            previous = cls
    return changes - 1


def _looks_like_uuid(word: str) -> bool:
    parts = word.split("-")
    return [len(p) for p in parts] == [8, 4, 4, 4, 12] and all(_HEX_CHARS.issuperset(p) for p in parts)


def _entropy(word: str) -> float:
    """Shannon entropy of ``word`` in bits per character."""
    import math  # a small extension module, loaded only when a long candidate token shows up

    freq: dict[str, int] = {}
    for ch in word:
        freq[ch] = freq.get(ch, 0) + 1
    n = len(word)
    total = 0.0
    for count in freq.values():
        p = count / n
        total -= p * math.log2(p)
    return total
