"""Secret redaction for captured prompts: builtins only (no ``re``; ``math`` only for long tokens).

The prompt hook runs this on every operator prompt before anything touches disk, inside a latency
budget of a few milliseconds (issue #3 item 4). Importing :mod:`re` alone costs ~6 ms of interpreter
start-up on the reference machine, so detection is done with ``str`` methods that run in C
(``find``, ``split``, ``translate``) and a short Python loop over candidate tokens only
(docs/adr/0011).

What is redacted (each replaced by ``[REDACTED:<kind>]``, kinds listed in :data:`KINDS`):

* ``<private>…</private>`` spans are dropped whole (an unclosed tag drops to the end) -> ``[private]``;
* PEM private-key blocks (``-----BEGIN … PRIVATE KEY-----`` to the matching ``-----END …-----``);
* webhook URLs whose path is the credential (Slack, Discord, Teams, Zapier, Telegram bots): the
  path after the known prefix goes (``[REDACTED:webhook]``);
* values of credential assignments: ``password=``, ``token:``, ``"api_key": "…"``, ``SECRET_KEY=…``,
  ``"private_key_id": "…"``, ``AccountKey=…``, ``"auth": "…"``, ``--password x``,
  ``Authorization: Bearer …`` / ``Basic …``, ``пароль: …`` (keys listed in :data:`ASSIGNMENT_KEYS`).
  A ``.env`` line (``DB_PASSWORD=Tr0ub4dor&3 # x``) gives the whole rest of the line; quoted values
  run to the closing quote (escaped quotes skipped); ``&`` ends a value only in a URL query;
* passwords on command lines: ``sshpass -p``, ``mysql -pSECRET``, ``curl -u user:pass``,
  ``redis-cli -a`` (``[REDACTED:command-password]``);
* passwords inside URLs (``scheme://user:password@host``);
* secrets given in prose, English or Ukrainian: the first password-like word (see
  :func:`_looks_secret`) among the six after "password", "token", "secret", "api key", "пароль",
  "токен", "ключ", … on the same line: "my password is hunter2Xy!", "пароль від пошти — Kv!t2024Lm"
  (``[REDACTED:prose-secret]``);
* tokens with well-known prefixes (AWS ``AKIA…``, GitHub ``ghp_``/``github_pat_``, GitLab ``glpat-``,
  Slack ``xox?-``, OpenAI/Anthropic ``sk-``, Stripe ``sk_live_``, Google ``AIza``, Hugging Face ``hf_``,
  npm, PyPI, JWTs, …);
* long high-entropy strings: at least 32 characters of ``[A-Za-z0-9+/=_-]`` with letters and digits and
  a Shannon entropy of at least 3.8 bits/char (3.0 for hex), whose character class (lower, upper,
  digit) changes at 35 % of positions or more, which identifiers (``CamelCase``, ``snake_case``)
  do not; ``=`` padding after such a token goes with it. 40- and 64-digit hex strings (git and
  SHA-256 object ids) and UUIDs are kept, because prompts name commits far more often than they
  paste hex secrets (a 40-digit ``private_key_id`` goes through its key instead).

Redaction errs towards over-redaction; it never raises on any ``str`` input.
"""

__all__ = ["ASSIGNMENT_KEYS", "KINDS", "redact"]

KINDS = (
    "private",
    "private-key",
    "webhook",
    "assignment",
    "command-password",
    "prose-secret",
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
    "private_key_id",
    "client_secret",
    "credentials",
    "accountkey",
    "sharedaccesskey",
    "authorization",
    "auth",
    "пароль",
    "токен",
    "секрет",
)

_WEAK_KEYS = frozenset(("auth",))
"""Keys that are common words too: only a whole key (not ``oauth``) with a value of 8+ characters and
no space counts."""

_AUTH_SCHEMES = ("bearer", "basic", "token", "digest", "negotiate", "bot", "apikey")
"""Scheme words after ``Authorization:`` that are skipped to reach the credential."""

_WEBHOOK_PATHS = (
    "hooks.slack.com/services/",
    "hooks.slack.com/workflows/",
    "discord.com/api/webhooks/",
    "discordapp.com/api/webhooks/",
    "webhook.office.com/webhookb2/",
    "outlook.office.com/webhook/",
    "hooks.zapier.com/hooks/catch/",
    "api.telegram.org/bot",
)
"""URL prefixes whose path is itself the credential: everything after them is redacted."""

# (command, flag, how the value follows the flag): "attached" (-pSECRET), "next" (-p SECRET),
# "after-colon" (-u user:SECRET, only the part after the first colon)
_COMMAND_FLAGS = (
    ("sshpass", " -p", "next"),
    ("sshpass", " -p", "attached"),
    ("mysql", " -p", "attached"),
    ("mariadb", " -p", "attached"),
    ("mysqldump", " -p", "attached"),
    ("mysqladmin", " -p", "attached"),
    ("redis-cli", " -a", "next"),
    ("curl", " -u", "after-colon"),
    ("curl", " --user", "after-colon"),
    ("wget", " --http-password", "next"),
    ("htpasswd", " -b", "next-but-one"),
)

_PROSE_KEYS = (
    "password",
    "passwd",
    "passphrase",
    "парол",
    "token",
    "токен",
    "secret",
    "секрет",
    "ключ",
    "api key",
    "apikey",
    "credential",
)
"""Words after which prose may give a secret: "my password is …", "пароль від пошти — …"."""

_PROSE_WINDOW = 6
"""How many words after a prose key are searched for a secret-looking word (same line only)."""

_PROSE_REACH = 200
"""Characters after a prose key that are searched at most (keeps a 1 MB prompt linear)."""

_QUOTED_LIMIT = 4096
"""Longest quoted value looked for, in characters."""

_SECRET_SYMBOLS = frozenset("!@#$%^&*+=?~|<>")

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
_LINE_STOP = "\r\n"
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
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
    low = _lowered(text)
    for rule in _RULES:
        redacted = rule(text, low, counts)
        if redacted is not text:  # lower-case again only after a change (1 MB: ~10 ms each time)
            text, low = redacted, _lowered(redacted)
    return text, counts


def _bump(counts: dict[str, int], kind: str, n: int = 1) -> None:
    counts[kind] = counts.get(kind, 0) + n


def _lowered(text: str) -> str:
    """Lower-case ``text`` keeping every index valid (full ``lower`` can change the length)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


def _drop_private_spans(text: str, low: str, counts: dict[str, int]) -> str:
    if "<" not in text or "<private>" not in low:
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


def _redact_key_blocks(text: str, low: str, counts: dict[str, int]) -> str:
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


def _value_span(text: str, pos: int, stop: str = _VALUE_STOP) -> tuple[int, int]:
    """Span of the value that starts at (or after spaces from) ``pos``; ``(pos, pos)`` when none.

    A quoted value runs to its closing quote on the same line (a quote after a backslash does not
    close it); an unquoted one to the first character of ``stop``.
    """
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos >= n:
        return pos, pos
    quote = text[pos]
    if quote in _QUOTES:
        limit = pos + _QUOTED_LIMIT  # bounded, so many quotes in a 1 MB prompt stay linear
        close = text.find(quote, pos + 1, limit)
        while close > 0 and text[close - 1] == "\\":
            close = text.find(quote, close + 1, limit)
        if close > pos and text.find("\n", pos + 1, close) < 0:
            return pos + 1, close
        pos += 1
    end = pos
    while end < n and text[end] not in stop:
        end += 1
    if stop is _LINE_STOP:
        while end > pos and text[end - 1] in " \t":
            end -= 1
    return pos, end


def _redact_assignments(text: str, low: str, counts: dict[str, int]) -> str:
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
    """Value span of ``key = value`` / ``key: value`` / ``--key value`` at ``low[start:after]``.

    A ``.env`` line (``[export ]SOME_PASSWORD=value`` at the start of a line, no space before ``=``)
    takes the rest of the line, so ``&``, ``#`` and spaces stay inside the value; elsewhere ``&``
    ends the value only in a URL query (``?token=…&page=2``).
    """
    n = len(text)
    # the key must end here: "password_hint" or "tokens" are not credential keys
    if after < n and (low[after].isalnum() or low[after] in "_-"):
        return None
    key = low[start:after]
    token_start = start
    while token_start > 0 and text[token_start - 1] in _IDENT_CHARS:
        token_start -= 1
    before = text[token_start - 1] if token_start > 0 else "\n"
    if key in _WEAK_KEYS and token_start < start:
        return None  # "auth" in "oauth:" is not a credential key
    pos = after
    while pos < n and text[pos] in _QUOTES:
        pos += 1
    while pos < n and text[pos] in " \t":
        pos += 1
    stop = _VALUE_STOP if before in "?&" else _VALUE_STOP.replace("&", "")
    if pos < n and text[pos] in "=:":
        env_line = text[pos] == "=" and pos == after and _starts_line(text, token_start)
        pos += 1
        while pos < n and text[pos] in "=>":
            pos += 1
        if env_line:
            stop = _LINE_STOP
    elif start >= 2 and text[start - 2 : start] == "--":
        pass  # "--password hunter2"
    else:
        return None
    if key == "authorization":
        pos = _skip_auth_scheme(text, low, pos)
    vstart, vend = _value_span(text, pos, stop)
    if vend - vstart < 3:
        return None
    if key in _WEAK_KEYS and not (vend - vstart >= 8 and " " not in text[vstart:vend]):
        return None
    return vstart, vend


def _starts_line(text: str, token_start: int) -> bool:
    """Is ``token_start`` the first word of its line (an optional ``export `` before it allowed)?"""
    low_bound = max(0, token_start - 16)
    newline = text.rfind("\n", low_bound, token_start)
    if newline < 0 and low_bound > 0:
        return False
    head = text[newline + 1 : token_start].strip()
    return head in ("", "export", "set", "$ export")


def _skip_auth_scheme(text: str, low: str, pos: int) -> int:
    """Past ``Bearer ``/``Basic ``… after ``Authorization:``, so the credential itself is the value."""
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    for scheme in _AUTH_SCHEMES:
        end = pos + len(scheme)
        if low.startswith(scheme, pos) and end < n and text[end] == " ":
            return end + 1
    return pos


def _redact_webhooks(text: str, low: str, counts: dict[str, int]) -> str:
    """Webhook URLs whose path is the credential (Slack, Discord, Teams, Zapier, Telegram bots)."""
    if "://" not in text:
        return text
    spans: list[tuple[int, int]] = []
    for prefix in _WEBHOOK_PATHS:
        start = low.find(prefix)
        while start >= 0:
            vstart = start + len(prefix)
            vend = vstart
            while vend < len(text) and text[vend] not in " \t\r\n\"'`<>)]}":
                vend += 1
            if vend - vstart >= 8:
                spans.append((vstart, vend))
            start = low.find(prefix, vend)
    if not spans:
        return text
    return _apply_spans(text, spans, "webhook", counts)


def _redact_command_passwords(text: str, low: str, counts: dict[str, int]) -> str:
    """Passwords given on command lines: ``sshpass -p``, ``mysql -pSECRET``, ``curl -u user:pass``…"""
    spans: list[tuple[int, int]] = []
    for command, flag, mode in _COMMAND_FLAGS:
        start = low.find(command)
        while start >= 0:
            line_end = low.find("\n", start)
            line_end = len(low) if line_end < 0 else line_end
            at = low.find(flag, start + len(command), line_end)
            while at >= 0:
                span = _flag_value(text, at + len(flag), line_end, mode)
                if span is not None:
                    spans.append(span)
                at = low.find(flag, at + len(flag), line_end)
            start = low.find(command, line_end)
    if not spans:
        return text
    return _apply_spans(text, spans, "command-password", counts)


def _flag_value(text: str, pos: int, line_end: int, mode: str) -> tuple[int, int] | None:
    """The secret part of a command-line flag's value at ``text[pos:]``, per ``mode``."""
    if mode == "attached":
        if pos >= line_end or text[pos] in " \t=":
            return None
        vstart, vend = _value_span(text, pos)
        return (vstart, min(vend, line_end)) if vend > vstart else None
    if pos < line_end and text[pos] == "=":
        pos += 1
    elif pos >= line_end or text[pos] not in " \t":
        return None  # "-pfoo" is not "-p foo"; "--username" is not "--user"
    vstart, vend = _value_span(text, pos)
    if mode == "next-but-one":  # htpasswd -b FILE USER PASSWORD
        for _ in range(2):
            vstart, vend = _value_span(text, vend + 1)
    if mode == "after-colon":
        colon = text.find(":", vstart, vend)
        if colon < 0:
            return None
        vstart = colon + 1
    vend = min(vend, line_end)
    return (vstart, vend) if vend > vstart else None


def _redact_prose_secrets(text: str, low: str, counts: dict[str, int]) -> str:
    """A secret-looking word shortly after "password", "пароль", "token", "ключ"… in running text.

    Covers "my password is hunter2Xy!", "the token for prod is …", "пароль від сервера — …",
    "ключ API …": the first word among the next :data:`_PROSE_WINDOW` on the same line that
    :func:`_looks_secret` accepts is redacted.
    """
    spans: list[tuple[int, int]] = []
    for key in _PROSE_KEYS:
        start = low.find(key)
        while start >= 0:
            span = _prose_value(text, start + len(key))
            if span is not None:
                spans.append(span)
            start = low.find(key, start + len(key))
    if not spans:
        return text
    return _apply_spans(text, spans, "prose-secret", counts)


def _prose_value(text: str, pos: int) -> tuple[int, int] | None:
    """Span of the first secret-looking word among the few after a prose key ending at ``pos``."""
    n = len(text)
    while pos < n and not text[pos].isspace() and text[pos] not in ":=":
        pos += 1  # the rest of the key word: "пароля", "tokens"
    if text[pos - 1] == "]":
        return None  # the key is inside a marker: "[REDACTED:url-password]"
    line_end = text.find("\n", pos, pos + _PROSE_REACH)
    segment = text[pos : min(n, pos + _PROSE_REACH) if line_end < 0 else line_end]
    cursor = 0
    for word in segment.split(None, _PROSE_WINDOW)[:_PROSE_WINDOW]:
        at = segment.find(word, cursor)
        cursor = at + len(word)
        lead = len(word) - len(word.lstrip(":=\"'`«(“"))
        if word.startswith("[REDACTED", lead) or word.startswith("[private", lead):
            return None  # already redacted by an earlier rule
        if word.isalpha() or len(word) < 6:
            continue
        lead += word.startswith("[", lead)
        core = word[lead:].rstrip(".,;:\"'`»)”]")
        if _looks_secret(core):
            return pos + at + lead, pos + at + lead + len(core)
    return None


def _looks_secret(word: str) -> bool:
    """A password-like word: 6+ characters mixing at least three of lower, upper, digit, symbol,
    or 10+ characters mixing letters and digits; hex strings (commit ids), UUIDs, paths and URLs
    are not."""
    if len(word) < 6 or "://" in word or word[0] in "/~." or _HEX_CHARS.issuperset(word):
        return False
    lower = upper = digit = symbol = False
    for ch in word:
        if ch.isdigit():
            digit = True
        elif ch.islower():
            lower = True
        elif ch.isupper():
            upper = True
        elif ch in _SECRET_SYMBOLS:
            symbol = True
    if not (lower or upper):
        return False
    classes = lower + upper + digit + symbol
    if classes >= 3:
        return not _looks_like_uuid(word)
    return len(word) >= 10 and digit and _class_changes(word) >= 0.3 * len(word)


def _redact_url_passwords(text: str, low: str, counts: dict[str, int]) -> str:
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


def _redact_tokens(text: str, low: str, counts: dict[str, int]) -> str:
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
        marker = "[REDACTED:" + kind + "]"
        for padded in (word + "==", word + "=", word):  # base64 padding was split off as a delimiter
            n = text.count(padded)
            if n:
                text = text.replace(padded, marker)
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


_RULES = (
    _drop_private_spans,
    _redact_key_blocks,
    _redact_webhooks,
    _redact_assignments,
    _redact_command_passwords,
    _redact_url_passwords,
    _redact_tokens,
    _redact_prose_secrets,
)
"""Applied in this order; each takes ``(text, lower-cased text, counts)`` and returns the new text."""
