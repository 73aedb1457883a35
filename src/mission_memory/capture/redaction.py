"""Secret redaction for everything stored: builtins only (no ``re``; ``math`` only for long tokens).

One rule set for every intake that stores text (docs/adr/0053): the prompt hook runs it on every
operator prompt before anything touches disk, inside a latency budget of a few milliseconds (issue #3
item 4), and :meth:`mission_memory.records.Record.build` runs it on every record's title, text and
attributes before the content-derived id is computed. Importing :mod:`re` alone costs ~6 ms of
interpreter start-up on the reference machine, so detection is done with ``str`` methods that run
in C (``find``, ``split``, ``translate``) and a short Python loop over candidate tokens only
(docs/adr/0011).

What is redacted (each replaced by ``[REDACTED:<kind>]``, kinds listed in :data:`KINDS`):

* ``<private>…</private>`` spans are dropped whole (an unclosed tag drops to the end) -> ``[private]``;
* private-key blocks: PEM/OpenSSH/PGP armour whatever its spacing and case (``----- BEGIN RSA
  PRIVATE KEY -----``), JSON-escaped keys, a block whose ``END`` is missing (its base64 lines), PuTTY
  ``Private-Lines``;
* webhook URLs whose path is the credential (Slack, Discord, Teams, Zapier, Telegram bots): the
  path after the known prefix goes (``[REDACTED:webhook]``);
* JSON Web Tokens, also wrapped over two lines (``[REDACTED:jwt]``);
* values of credential assignments: ``password=``, ``token:``, ``"api_key": "…"``, ``SECRET_KEY=…``,
  ``"private_key_id": "…"``, ``AccountKey=…``, ``"auth": "…"``, ``--password x``, ``-storepass x``,
  ``Authorization: Bearer …`` / ``Basic …``, ``PrivateKey = …``, ``пароль: …``, ``Passwort: …``,
  session cookies (``sessionid=``, ``PHPSESSID=``, ``connect.sid=``, ``_gitlab_session=``), URL
  query credentials (``?sig=``, ``X-Amz-Signature=``, ``X-Amz-Credential=``, ``&key=``) (keys
  listed in :data:`ASSIGNMENT_KEYS`). A ``.env`` line (``DB_PASSWORD=Tr0ub4dor&3 # x``) gives the
  whole rest of the line; quoted values run to the closing quote (escaped quotes skipped); ``&``
  ends a value only in a URL query;
* passwords on command lines (:data:`_COMMAND_FLAGS`): ``sshpass -p``, ``mysql -pSECRET``, ``curl -u
  user:pass``, ``redis-cli -a``, ``docker login -p``, ``az login -p``, ``sqlcmd -P``, ``ldapsearch
  -w``, ``smbclient -U user%pass``, ``openssl -passout pass:…``, ``sqlplus user/pass@db``, ``keytool
  -storepass``, ``xfreerdp /p:``, ``net use … /user:X pass``… (``[REDACTED:command-password]``);
* passwords inside URLs (``scheme://user:password@host``, ``/`` or ``@`` inside the password too)
  and keys given as a URL's user (Sentry DSNs) (``[REDACTED:url-password]``);
* passwords of connection strings without a scheme: Go MySQL DSNs ``user:pass@tcp(host)/db`` and
  ``.pgpass`` lines ``host:port:db:user:password`` (``[REDACTED:dsn-password]``);
* BIP-39 seed phrases: 12 or more words of the BIP-39 list in a row, numbered lists too
  (``[REDACTED:seed-phrase]``; the list is loaded only when 12 short lower-case words follow each other);
* secrets given in prose, in English, Ukrainian, Russian, German or Polish: the first password-like
  word (see :func:`_looks_secret`) among the six after "password", "token", "secret", "api key",
  "pass", "TOTP seed", "пароль", "гасло", "токен", "ключ", "код доступу", "Passwort", "Kennwort",
  "hasło", … on the same line: "my password is hunter2Xy!", "Гасло: Kv!t2024Lm", "Das Passwort
  lautet …" (``[REDACTED:prose-secret]``);
* tokens with well-known prefixes (AWS ``AKIA…``, GitHub ``ghp_``/``github_pat_``, GitLab ``glpat-``/
  ``glrt-``/``glptt-``, Slack ``xox?-``, OpenAI/Anthropic ``sk-``, Stripe ``sk_live_``, Google ``AIza``/
  ``GOCSPX-``, Vault ``hvs.``, Docker ``dckr_pat_``, Doppler ``dp.st.``, Atlassian ``ATATT``, age
  ``AGE-SECRET-KEY-1``, Hugging Face ``hf_``, npm, PyPI, Discord bot tokens, …);
* long high-entropy strings: at least 32 characters of ``[A-Za-z0-9+/=_-]`` with letters and digits and
  a Shannon entropy of at least 3.8 bits/char (3.0 for hex), whose character class (lower, upper,
  digit) changes at 35 % of positions or more, which identifiers (``CamelCase``, ``snake_case``)
  do not; ``=`` padding after such a token goes with it. 40- and 64-digit hex strings (git and
  SHA-256 object ids) and UUIDs are kept, because prompts name commits far more often than they
  paste hex secrets (a 40-digit ``private_key_id`` goes through its key instead).

Since issue 35 the rules generalise beyond named formats (measured on outside-sourced sets,
benchmarks/data/redaction/: 711 of 716 secrets in 239 formats caught, 0 of 675 ordinary lines altered):

* values of any name holding a credential part as a component (``db_pass``, ``herokuToken``,
  ``SNYK_API_KEY``, ``password_super_secure``) in any config or programming syntax
  (:func:`_redact_keyed_values`), Kubernetes ``kind: Secret`` data, Bundler ``BUNDLE_*__*`` credentials;
* stored password hashes (crypt, htpasswd, bcrypt, argon2, PBKDF2, SCRAM, LDAP ``{SSHA}``) (``[REDACTED:password-hash]``);
* precision by construction: template and environment references (``${DB_PASSWORD}``,
  ``${{ secrets.X }}``, ``os.environ[…]``), names and calls in code, content hashes named by their
  algorithm (``h1:``, ``sha512-``, ``@sha256:``), OpenSSH public keys and hex digests of MD5/SHA
  lengths are not secrets; prose keys inside file names, paths, code names and markers are not keys.

Redaction is idempotent (``redact(redact(t)[0])[0] == redact(t)[0]``): the rules run to a fixed
point, so text redacted once (a record re-built from stored text, a record imported from an export,
the store's last guard) keeps its id.

Redaction errs towards over-redaction; it never raises on any ``str`` input.
"""

TYPE_CHECKING = False  # mypy treats this name as True; at run time the hook spares importing typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ASSIGNMENT_KEYS", "KINDS", "redact", "redact_text", "redact_value", "redacted_cut"]

KINDS = (
    "private",
    "private-key",
    "webhook",
    "assignment",
    "password-hash",
    "command-password",
    "prose-secret",
    "url-password",
    "dsn-password",
    "query-credential",
    "cookie",
    "seed-phrase",
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
    "privatekey",
    "client-key-data",
    "signature",
    "credential",
    "storepass",
    "keypass",
    "routing_key",
    "passwort",
    "kennwort",
    "пароль",
    "гасло",
    "токен",
    "секрет",
    "sig",
    "key",
    "session",
    "sessionid",
    "session_id",
    "sessid",
    "phpsessid",
    "jsessionid",
    "sid",
)

_WEAK_KEYS = frozenset(("auth",))
"""Keys that are common words too: only a whole key (not ``oauth``) with a value of 8+ characters and
no space counts."""

_QUERY_KEYS = frozenset(("sig", "key"))
"""Keys that count only as a URL query parameter (``?sig=…``, ``&key=…``): Azure SAS signatures,
API keys in query strings."""

_COOKIE_KEYS = frozenset(("session", "sessionid", "session_id", "sessid", "phpsessid", "jsessionid", "sid"))
"""Session-cookie names, also as the end of a longer name (``_gitlab_session``, ``PHPSESSID``,
``connect.sid``): only a value of 16+ characters with no space counts."""

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
# "after-colon" (-u user:SECRET, only the part after the first colon), "after-percent"
# (-U user%SECRET), "second-word" / "third-word" (that word after the flag), "attached-then-next"
# (/user:NAME SECRET). The command must start a word; the flag is looked for on the same line.
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
    ("htpasswd", " -b", "third-word"),
    ("docker login", " -p", "next"),
    ("podman login", " -p", "next"),
    ("nerdctl login", " -p", "next"),
    ("oras login", " -p", "next"),
    ("registry login", " -p", "next"),
    ("az login", " -p", "next"),
    ("sqlcmd", " -p", "next"),
    ("bcp", " -p", "next"),
    ("ldap", " -w", "next"),
    ("vsql", " -w", "next"),
    ("smbclient", " -u", "after-percent"),
    ("smbclient", " --user", "after-percent"),
    ("rpcclient", " -u", "after-percent"),
    ("smbcacls", " -u", "after-percent"),
    ("openssl", " -passout pass:", "attached"),
    ("openssl", " -passin pass:", "attached"),
    ("openssl", " -pass pass:", "attached"),
    ("openssl", " -password pass:", "attached"),
    ("cqlsh", " -p", "next"),
    ("mongo", " -p", "next"),
    ("keytool", " -storepass", "next"),
    ("keytool", " -keypass", "next"),
    ("keytool", " -srcstorepass", "next"),
    ("keytool", " -deststorepass", "next"),
    ("xfreerdp", " /p:", "attached"),
    ("rdesktop", " -p", "next"),
    ("ssh-keygen", " -n", "next"),
    ("rabbitmqctl", " change_password", "second-word"),
    ("rabbitmqctl", " add_user", "second-word"),
    ("net use", " /user:", "attached-then-next"),
    ("twine", " -p", "next"),
    ("7z", " -p", "attached"),
    ("zip", " -p", "next"),
)

_FLAGS_OF_COMMAND: dict[str, list[tuple[str, str]]] = {}
for _command, _flag, _mode in _COMMAND_FLAGS:
    _FLAGS_OF_COMMAND.setdefault(_command, []).append((_flag, _mode))

_COMMAND_START = frozenset(" \t\n\r/`\"'(;|&$")
"""Characters after which a command name starts a word (``/usr/bin/mysql``, ``$(sqlcmd …)``)."""

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
    "гасло",
    "passwort",
    "kennwort",
    "hasło",
    "haslo",
    "contraseña",
    "mot de passe",
    "passcode",
    "код доступ",
    "access code",
    "пін-код",
    "пин-код",
    "pin code",
    "секретне слово",
    "секретное слово",
)
"""Words after which prose may give a secret: "my password is …", "пароль від пошти — …",
"Das Passwort lautet …", "Hasło: …"."""

_PROSE_WORD_KEYS = ("pass", "pw", "pwd", "otp", "totp", "2fa", "mfa", "seed", "pin", "creds")

_NUMERIC_KEYS = ("pin", "пін", "пин", "passcode", "код", "code", "otp")
"""Prose keys after which a number of 4 to 8 digits is the secret ("PIN-код … 582910", "passcode … 884213")."""

_COPULAS = frozenset(("is", "was", "are", "now", "to", "as", "be", "remains", "still", ":", "—", "–", "-", "=", "це",
                      "є", "тепер", "буде", "это", "сейчас", "теперь", "будет", "ist", "lautet", "to:", "is:"))
"""Words after which, in prose about a secret, the next word is the value ("the password is now …")."""
"""Short prose keys that count only as whole words ("pass: …", "TOTP seed …"; not "compass")."""

_PROSE_WINDOW = 10
"""How many words after a prose key are searched for a secret-looking word (same line only)."""

_PROSE_REACH = 200
"""Characters after a prose key that are searched at most (keeps a 1 MB prompt linear)."""

_QUOTED_LIMIT = 4096
"""Longest quoted value looked for, in characters."""

_SECRET_SYMBOLS = frozenset("!@#$%^&*+=?~|<>")
_BASE32_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

_AWS_PREFIXES = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "ABIA", "ACCA")

# (prefix, minimum total token length)
_TOKEN_PREFIXES = (
    ("github_pat_", 30),
    ("ABSK", 100),
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
    ("shpss_", 30),
    ("dop_v1_", 40),
    ("SG.", 40),
    ("hvb.", 24),
    ("hvr.", 24),
    ("glrt-", 20),
    ("glptt-", 30),
    ("glcbt-", 20),
    ("gloas-", 20),
    ("glsoat-", 20),
    ("glsa_", 30),
    ("glc_", 30),
    ("GOCSPX-", 30),
    ("dckr_pat_", 30),
    ("bkua_", 40),
    ("sqp_", 40),
    ("sqa_", 40),
    ("squ_", 40),
    ("syt_", 30),
    ("dp.st.", 40),
    ("dp.ct.", 40),
    ("dp.pt.", 40),
    ("dp.sa.", 40),
    ("ATATT", 60),
    ("xoxe.", 30),
    ("xoxe-", 30),
    ("xoxo-", 30),
    ("glft-", 24),
    ("glimt-", 25),
    ("glffct-", 25),
    ("glagent-", 30),
    ("glcbt-", 20),
    ("GR1348941", 29),
    ("api_org_", 38),
    ("sm_pat_", 20),
    ("sm_aat_", 20),
    ("sm_sat_", 20),
    ("A3-", 30),
    ("v1.0-", 100),
    ("sha256~", 40),
    ("EAAA", 28),
    ("API-", 28),
    ("s.", 26),
    ("pat", 70),
    ("ops_eyJ", 40),
    ("PMAK-", 50),
    ("pscale_tkn_", 40),
    ("pscale_pw_", 40),
    ("pnu_", 40),
    ("rdme_", 50),
    ("shippo_live_", 40),
    ("shippo_test_", 40),
    ("sk_prod_", 20),
    ("rk_test_", 20),
    ("rk_prod_", 20),
    ("FLWSECK_TEST-", 40),
    ("FLWSECK-", 40),
    ("FLWPUBK_TEST-", 40),
    ("dapi", 36),
    ("EZAK", 50),
    ("EZTK", 50),
    ("CFPAT-", 45),
    ("duffel_live_", 50),
    ("duffel_test_", 50),
    ("dt0c01.", 60),
    ("oy2", 46),
    ("PLAID", 40),
    ("access-sandbox-", 40),
    ("access-production-", 40),
    ("access-development-", 40),
    ("SK", 34),
    ("AC", 34),
    ("fm1", 60),
    ("fm2_", 60),
    ("hvs.", 24),
    ("nfp_", 40),
    ("sq0atp-", 28),
    ("sq0csp-", 50),
    ("EAAB", 28),
    ("tfp_", 40),
    ("pul-", 44),
    ("CLOJARS_", 60),
    ("xkeysib-", 60),
    ("scalr.", 40),
    ("frio_", 40),
    ("sntryu_", 40),
    ("ghp_", 30),
    ("AGE-SECRET-KEY-1", 60),
    ("lin_api_", 40),
    ("rubygems_", 40),
    ("ntn_", 40),
    ("figd_", 40),
    ("sntrys_", 40),
)

_ALL_PREFIXES = tuple(prefix for prefix, _ in _TOKEN_PREFIXES)
"""Every prefix at once, for one ``str.startswith`` call before the loop."""

_TOKEN_INFIXES = (".atlasv1.",)
"""Pieces inside a token that mark it as one (Terraform Cloud ``….atlasv1.…``)."""

_DELIMITERS = "\"'`()[]{}<>,;=|\\:@!?*"
_SPLIT_TABLE = {ord(ch): " " for ch in _DELIMITERS}
_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_HEX_CHARS = frozenset("0123456789abcdefABCDEF")
_VALUE_STOP = " \t\r\n,;}&)]>\"'`"
_LINE_STOP = "\r\n"
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_QUOTES = "\"'`"
_JWT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
_SEED_WORDS = 12
"""Shortest BIP-39 phrase (12 words; 15, 18, 21 and 24 are the others)."""
_SEED_MIN_CHARS = _SEED_WORDS * 4 - 1
"""Fewest characters 12 BIP-39 words take (3 letters each, one space between)."""
_SEED_SHAPE = b"".join((
    b"x" * 9, b"  xx ", b"x" * 18, b" x xxxx x xx x x", b" " * 12, b"x" * 37, b"a" * 26, b"x" * 133,
))
"""Byte table for the seed-phrase pass: lower-case letters -> ``a``, spaces, digits and list
punctuation -> space, anything else -> ``x``."""
_SEED_SHAPES = frozenset(b"a" * n for n in range(3, 9))
_SEED_MEMBERS: frozenset[str] | None = None
"""Shapes of a word that may be a BIP-39 word (3 to 8 lower-case letters)."""


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
    for _ in range(_MAX_PASSES):
        before = text
        low = _lowered(text)
        for rule in _RULES:
            redacted = rule(text, low, counts)
            if redacted is not text:  # lower-case again only after a change (1 MB: ~10 ms each time)
                text, low = redacted, _lowered(redacted)
        if text is before or text == before:
            break  # a fixed point: one more pass changes nothing, so redaction is idempotent
    return text, counts


_MAX_PASSES = 8
"""Passes of the rules at most; a text with nothing to redact takes one, a redacted one two (the
second finds nothing). A text that still changed after this many passes is returned as it is then."""


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
    """Private-key blocks, whatever the spacing and case of their armour lines.

    ``-----BEGIN RSA PRIVATE KEY-----``, ``----- BEGIN  PRIVATE KEY -----``, ``-----begin openssh
    private key-----``, PGP ``PRIVATE KEY BLOCK``s and JSON-escaped keys (``\\n`` line ends) go up
    to their ``END`` line; a block whose ``END`` is missing goes as far as its base64 lines run.
    PuTTY key files lose their ``Private-Lines``.
    """
    if "-----" not in text and "private-lines:" not in low:
        return text
    spans: list[tuple[int, int]] = []
    n = len(text)
    pos = text.find("-----")
    while 0 <= pos < n:
        head = pos + 5
        while head < n and text[head] in "- \t":
            head += 1
        if not low.startswith("begin", head):
            pos = text.find("-----", head)
            continue
        header_end = text.find("-----", head + 5, head + 80)
        header = " ".join(low[head + 5 : header_end].split()) if header_end >= 0 else ""
        if not header.endswith(("private key", "private key block")):
            pos = text.find("-----", head)
            continue
        end = _armour_end(text, low, header_end + 5)
        spans.append((pos, end))
        pos = text.find("-----", end)
    lines_at = low.find("private-lines:")
    while lines_at >= 0:
        line_end = low.find("\n", lines_at)
        count = low[lines_at + 14 : line_end if line_end >= 0 else n].strip()
        if line_end >= 0 and count.isdigit() and not text.startswith("[REDACTED:", line_end + 1):
            stop = line_end
            for _ in range(min(int(count), 200)):
                following = text.find("\n", stop + 1)
                stop = n if following < 0 else following
            spans.append((line_end + 1, stop))
        lines_at = low.find("private-lines:", lines_at + 14)
    if not spans:
        return text
    return _apply_spans(text, spans, "private-key", counts)


def _armour_end(text: str, low: str, pos: int) -> int:
    """Where the key block whose ``BEGIN`` line ends at ``pos`` ends: after its ``END`` line, or
    after the last base64 line when there is none."""
    n = len(text)
    at = text.find("-----", pos)
    while at >= 0:
        tail = at + 5
        while tail < n and text[tail] in "- \t":
            tail += 1
        if low.startswith("end", tail):
            close = text.find("-----", tail + 3, tail + 80)
            if close < 0:
                return min(n, tail + 3)
            close += 5
            while close < n and text[close] == "-":
                close += 1
            if text.startswith("\\n", close):
                close += 2  # the escaped line end of a JSON-embedded key goes with it
            return close
        at = text.find("-----", tail)
    end = pos
    while end < n:  # no END line: the base64 lines that follow
        line_end = text.find("\n", end + 1)
        line_end = n if line_end < 0 else line_end
        line = text[end:line_end].strip()
        if line and not _B64_CHARS.issuperset(line.replace(" ", "")):
            start = end + (text[end] == "\n")
            stop = start
            while stop < line_end and text[stop] in _B64_CHARS:
                stop += 1
            return stop if stop - start >= 16 else end  # the key's last line, with prose after it
        end = line_end
    return end


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
        query_only = key in _QUERY_KEYS
        while start >= 0:
            after = start + len(key)
            if not query_only or (start > 0 and low[start - 1] in "?&;"):
                span = _assignment_value(text, low, start, after)
                if span is not None:
                    spans.append(span)
            start = low.find(key, after)
    start = low.find("bearer ")
    while start >= 0:
        vstart, vend = _value_span(text, start + 7)
        if vend - vstart >= 8 and not _not_a_secret_value(text[vstart:vend], False):
            spans.append((vstart, vend))
        start = low.find("bearer ", start + 7)
    if not spans:
        return text
    return _apply_spans(text, spans, "assignment", counts)


def _assignment_value(text: str, low: str, start: int, after: int) -> tuple[int, int] | None:
    """Value span of ``key = value`` / ``key: value`` / ``--key value`` at ``low[start:after]``.

    A ``.env`` line (``[export ]SOME_PASSWORD=value`` at the start of a line, no space before ``=``)
    takes the rest of the line, so ``&``, ``#`` and spaces stay inside the value; elsewhere ``&``
    ends the value only in a URL query (``?token=…&page=2``). A key of :data:`_QUERY_KEYS` counts
    only in a URL query, one of :data:`_COOKIE_KEYS` only with a long value.
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
    if key in _QUERY_KEYS and not (token_start == start and before in "?&;"):
        return None
    if key in _COOKIE_KEYS and token_start < start and text[start - 1] not in "_.":
        return None  # "PHPSESSID", "connect.sid", "_gitlab_session"; not "consid"
    if key == "sid" and (start == 0 or text[start - 1] != "."):
        return None  # "connect.sid"; not an IAM policy's "Sid"
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
    elif text[token_start] == "-" and pos > after:
        pass  # "--password hunter2", "-storepass x", "--access-key-secret y"
    else:
        return None
    if key == "authorization":
        pos = _skip_auth_scheme(text, low, pos)
    vstart, vend = _value_span(text, pos, stop)
    if vend - vstart < 3:
        return None
    quoted = vstart > 0 and text[vstart - 1] in _QUOTES
    if _not_a_secret_value(text[vstart:vend], quoted):
        return None
    if key in _WEAK_KEYS and not (vend - vstart >= 8 and " " not in text[vstart:vend]):
        return None
    if key in _COOKIE_KEYS and not (vend - vstart >= 16 and " " not in text[vstart:vend]):
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
    """Webhook URLs whose path is the credential (Slack, Discord, Teams, Zapier, Telegram bots, and
    ``/hooks/<key>`` of Mattermost-style servers)."""
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
    start = low.find("/hooks/")
    while start >= 0:  # Mattermost, Gitea, Rocket.Chat: /hooks/<the key>
        vstart = vend = start + 7
        while vend < len(text) and text[vend].isalnum():
            vend += 1
        word = text[vstart:vend]
        if vend - vstart >= 20 and any(ch.isdigit() for ch in word) and not word.isdigit():
            spans.append((vstart, vend))
        start = low.find("/hooks/", vend)
    if not spans:
        return text
    return _apply_spans(text, spans, "webhook", counts)


def _redact_command_passwords(text: str, low: str, counts: dict[str, int]) -> str:
    """Passwords given on command lines: ``sshpass -p``, ``docker login -p``, ``sqlcmd -P``,
    ``ldapsearch -w``, ``smbclient -U user%pass``, ``openssl -passout pass:…`` (see
    :data:`_COMMAND_FLAGS`)."""
    spans: list[tuple[int, int]] = []
    if " -" not in low and " /" not in low and "rabbitmqctl" not in low and "sqlplus" not in low:
        return text  # every flag starts " -" or " /" but rabbitmqctl's
    for command, flags in _FLAGS_OF_COMMAND.items():
        start = low.find(command)
        while start >= 0:
            line_end = low.find("\n", start)
            while line_end > 0 and text[line_end - 1] == "\\":  # a command continued on the next line
                following = low.find("\n", line_end + 1)
                line_end = len(low) if following < 0 else following
            line_end = len(low) if line_end < 0 else line_end
            if start == 0 or text[start - 1] in _COMMAND_START:
                for flag, mode in flags:
                    at = low.find(flag, start + len(command), line_end)
                    while at >= 0:
                        span = _flag_value(text, at + len(flag), line_end, mode)
                        if span is not None:
                            spans.append(span)
                        at = low.find(flag, at + len(flag), line_end)
            start = low.find(command, start + len(command))
    if "sqlplus" in low:
        spans.extend(_sqlplus_passwords(text, low))
    if not spans:
        return text
    return _apply_spans(text, spans, "command-password", counts)


def _sqlplus_passwords(text: str, low: str) -> list[tuple[int, int]]:
    """``sqlplus user/password@service``: the part between the first ``/`` and the ``@``."""
    spans = []
    start = low.find("sqlplus ")
    while start >= 0:
        vstart, vend = _value_span(text, start + 8, " \t\r\n\"'`")
        word = text[vstart:vend]
        slash = word.find("/")
        if slash > 0 and not word.startswith("-"):
            at = word.find("@", slash)
            stop = at if at > slash else len(word)
            if stop - slash > 1:
                spans.append((vstart + slash + 1, vstart + stop))
        start = low.find("sqlplus ", start + 8)
    return spans


def _flag_value(text: str, pos: int, line_end: int, mode: str) -> tuple[int, int] | None:
    """The secret part of a command-line flag's value at ``text[pos:]``, per ``mode``."""
    if mode in ("attached", "attached-then-next"):
        if pos >= line_end or text[pos] in " \t=":
            return None
        vstart, vend = _value_span(text, pos)
        if mode == "attached-then-next":
            vstart, vend = _value_span(text, vend + 1)
        vend = min(vend, line_end)
        return (vstart, vend) if vend > vstart else None
    if pos < line_end and text[pos] == "=":
        pos += 1
    elif pos >= line_end or text[pos] not in " \t":
        return None  # "-pfoo" is not "-p foo"; "--username" is not "--user"
    vstart, vend = _value_span(text, pos)
    if mode in ("second-word", "third-word"):  # rabbitmqctl add_user USER PASSWORD; htpasswd -b FILE USER PASSWORD
        for _ in range(1 if mode == "second-word" else 2):
            vstart, vend = _value_span(text, vend + 1)
    if mode in ("after-colon", "after-percent"):
        mark = text.find(":" if mode == "after-colon" else "%", vstart, vend)
        if mark < 0:
            return None
        vstart = mark + 1
        if vstart < len(text) and text[vstart] in _QUOTES:  # --user kevin:'pRf7…'
            vstart, vend = _value_span(text, vstart)
    vend = min(vend, line_end)
    if vend <= vstart or text[vstart] == "-":
        return None  # "-p -" or the next flag
    return vstart, vend


def _redact_prose_secrets(text: str, low: str, counts: dict[str, int]) -> str:
    """A secret-looking word shortly after "password", "пароль", "гасло", "Passwort", "hasło"… in running text.

    Covers "my password is hunter2Xy!", "the token for prod is …", "пароль від сервера — …",
    "Гасло: …", "Das Passwort lautet …", "hasło do bazy to …", "TOTP seed …": the first word among
    the next :data:`_PROSE_WINDOW` on the same line that :func:`_looks_secret` accepts is redacted.
    """
    spans: list[tuple[int, int]] = []
    marked = "[REDACTED:" in text
    for key in _PROSE_KEYS:
        start = low.find(key)
        while start >= 0:
            if not _key_in_name(text, start, marked):
                span = _prose_value(text, start + len(key), key)
                if span is not None:
                    spans.append(span)
            start = low.find(key, start + len(key))
    for key in _PROSE_WORD_KEYS:
        start = low.find(key)
        while start >= 0:
            end = start + len(key)
            whole = (start == 0 or not low[start - 1].isalnum()) and (end == len(low) or not low[end].isalnum())
            if whole and not _key_in_name(text, start, marked):
                span = _prose_value(text, end, key)
                if span is not None:
                    spans.append(span)
            start = low.find(key, end)
    if not spans:
        return text
    return _apply_spans(text, spans, "prose-secret", counts)


def _key_in_name(text: str, start: int, marked: bool) -> bool:
    """Is the prose key at ``text[start]`` part of a name rather than a word of prose?

    A file name or path (``docs/adr/ADR003-AWS-credentials.md``, ``token_store.py``) and a
    ``[REDACTED:prose-secret]`` marker hold the key without stating a secret after it.
    """
    if marked and _inside_marker(text, start):
        return True
    if start > 1 and text[start - 1] in "-_" and text[start - 2].isalnum():
        return True  # a compound name: detect-secrets, AWS-credentials
    begin = start
    while begin > 0 and not text[begin - 1].isspace():
        begin -= 1
    end = start
    n = len(text)
    while end < n and not text[end].isspace():
        end += 1
    word = text[begin:end].strip(".,;:!?\"'`()[]{}<>«»“”*&")
    if _looks_like_path(word):
        return True
    # a name in code: tokenConnector, api_token_url, cfg.Token, getPassword(
    core = word.split("(")[0]
    return "_" in core or "." in core or any(core[i].islower() and core[i + 1].isupper() for i in range(len(core) - 1))


def _looks_like_path(word: str) -> bool:
    """A path or a file name: ``a/b/c``, ``docs/x-y.md``, ``ADR003-AWS-credentials.md``, ``C:\\x\\y``.

    Words of letters, digits, ``-``, ``_`` and ``.`` joined by ``/`` (or ``\\``) with two separators
    or more, or ending in an extension of one to five letters after a name.
    """
    if not word or not _PATH_CHARS.issuperset(word):
        return False
    dot = word.rfind(".")
    ext = word[dot + 1 :] if dot > 0 else ""
    if ext and len(ext) <= 5 and ext.isalpha() and ext.islower() and word[dot - 1] not in "./\\":
        return True
    return word.count("/") + word.count("\\") >= 2 and "//" not in word


_PATH_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/\\")


def _prose_value(text: str, pos: int, key: str = "") -> tuple[int, int] | None:
    """Span of the first secret-looking word among the few after a prose key ending at ``pos``.

    Besides a word :func:`_looks_secret` accepts: a quoted phrase ("passphrase 'orbit Mango 55'"),
    letters with digits right after a copula or colon ("the password is sunflower2024"), a number of
    4 to 8 digits after a PIN or passcode key, and a short run of lower-case words ending the line
    after a colon ("Password for the VPN: correct horse battery staple").
    """
    n = len(text)
    numeric = any(k in key for k in _NUMERIC_KEYS) or "код" in text[pos : pos + 8].lower()
    key_end = pos
    while pos < n and not text[pos].isspace() and text[pos] not in ":=":
        pos += 1  # the rest of the key word: "пароля", "tokens"
    rest = text[key_end:pos].rstrip(".,;:!?)»”")
    if len(rest) > 3 and not rest.startswith("-"):
        return None  # another word: "tokenizer", "secretariat"
    quoted_word = text[key_end:pos].rstrip(",;:)")
    if (rest and rest[0] in _QUOTES) or quoted_word[-1:] in ("\"", "'", "`"):
        return None  # the word quoted: ("tokens", "…")
    if text[pos - 1] == "]":
        return None  # the key is inside a marker: "[REDACTED:url-password]"
    if pos < n and text[pos] in ",)":
        return None  # an argument in code: f(ctx, password, …)
    line_end = text.find("\n", pos, pos + _PROSE_REACH)
    segment = text[pos : min(n, pos + _PROSE_REACH) if line_end < 0 else line_end]
    cursor = 0
    previous = ""
    colon = -1
    for word in segment.split(None, _PROSE_WINDOW)[:_PROSE_WINDOW]:
        at = segment.find(word, cursor)
        cursor = at + len(word)
        lead = len(word) - len(word.lstrip(":=\"'`«(“"))
        if word.startswith("[REDACTED", lead) or word.startswith("[private", lead):
            return None  # already redacted by an earlier rule
        first = not previous
        if word[:1] in "'\"«“" and len(word) > 1 and (first or previous.lower() in _COPULAS or previous.endswith(":")):
            close = {"«": "»", "“": "”"}.get(word[0], word[0])
            end = segment.find(close, at + 1)
            phrase = segment[at + 1 : end]
            if end > at + 1 and end - at <= 80 and len(phrase) >= 6 and not all(
                    ch.isalpha() or ch in "_-." for ch in phrase):
                return pos + at + 1, pos + end  # a quoted phrase: "passphrase 'orbit Mango 55 velvet'"
        strong = previous.lower().strip(",") in _COPULAS or previous.endswith(":")
        if colon < 0 and (previous.endswith(":") or previous in ("—", "–", "-", "=")):
            colon = at
        previous = word
        core = word[lead:].rstrip(".,;:\"'`»)”]")
        if numeric and core.isdigit() and 4 <= len(core) <= 8:
            return pos + at + lead, pos + at + lead + len(core)
        if word.isalpha() or len(word) < 6:
            continue
        lead += word.startswith("[", lead)
        core = word[lead:].rstrip(".,;:\"'`»)”]")
        if _looks_secret(core) or (strong and _letters_and_digits(core)):
            return pos + at + lead, pos + at + lead + len(core)
    if colon >= 0:
        rest = segment[colon:].strip()
        words = rest.split()
        if 3 <= len(words) <= 6 and all(w.isalpha() and w.islower() and w not in _FUNCTION_WORDS for w in words):
            return pos + colon, pos + colon + len(rest)  # a passphrase of words: "…: correct horse battery staple"
    return None


_FUNCTION_WORDS = frozenset((
    "a", "an", "the", "it", "is", "are", "was", "be", "to", "of", "from", "for", "in", "on", "and", "or", "with",
    "by", "not", "no", "we", "you", "they", "this", "that", "as", "at", "if", "see", "use", "ask", "comes",
    "і", "та", "в", "у", "на", "з", "не", "це", "и", "в", "на", "с", "не", "это",
))
"""Words of running text: a run holding one is a sentence, not a passphrase of random words."""


def _letters_and_digits(word: str) -> bool:
    """8+ characters with letters and digits (``sunflower2024``, ``kvitka-rika-51``), not a path, URL or version."""
    if len(word) < 8 or "/" in word or word[0].isdigit() or word.count(".") > 1:
        return False
    return any(ch.isdigit() for ch in word) and sum(ch.isalpha() for ch in word) >= 3


def _looks_secret(word: str) -> bool:
    """A password-like word: 6+ characters mixing at least three of lower, upper, digit, symbol
    (``-``, ``_`` and ``.`` are not symbols here: identifiers use them), 10+ characters mixing letters
    and digits, or a base32 seed of 16+ characters; hex strings (commit ids), UUIDs, paths and URLs
    are not."""
    if len(word) < 6 or "://" in word or word[0] in "/~." or _looks_like_path(word) or word.endswith(("()", "(")):
        return False
    if _HEX_CHARS.issuperset(word):  # a commit or object id is not; a hex key after "token" is
        return len(word) >= 16 and len(word) not in (40, 64) and _classes(word) >= 2
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
    if len(word) >= 16 and digit and _BASE32_CHARS.issuperset(word):
        return True  # a TOTP seed
    classes = lower + upper + digit + symbol
    if classes >= 3:
        return not _looks_like_uuid(word)
    return len(word) >= 10 and digit and _class_changes(word) >= 0.3 * len(word)


def _redact_url_passwords(text: str, low: str, counts: dict[str, int]) -> str:
    """The password of ``scheme://user:password@host`` (``/`` and ``@`` inside it too), and a
    user part that is itself a key (Sentry's ``https://<key>@o1.ingest.sentry.io/2``)."""
    if "://" not in text:
        return text
    spans: list[tuple[int, int]] = []
    pos = text.find("://")
    n = len(text)
    while pos >= 0:
        begin = pos + 3
        end = begin
        while end < n and text[end] not in " \t\r\n\"'`<>":
            end += 1
        span = _userinfo_secret(text, begin, end)
        if span is not None:
            spans.append(span)
        pos = text.find("://", begin)
    if not spans:
        return text
    return _apply_spans(text, spans, "url-password", counts)


def _userinfo_secret(text: str, begin: int, end: int) -> tuple[int, int] | None:
    """The secret in the user part of the URL whose authority starts at ``begin`` (token ends at ``end``)."""
    first_at = text.find("@", begin, end)
    if first_at < 0:
        return None
    colon = text.find(":", begin, first_at)
    if colon < 0:
        user = text[begin:first_at]
        if (len(user) >= 20 and "/" not in user and _token_kind(user) is not None) or (
            len(user) == 32 and _HEX_CHARS.issuperset(user)
        ):
            return begin, first_at  # a key as the user name
        return None
    if "/" in text[begin:colon] or "?" in text[begin:colon]:
        return None  # the colon is in a path or query, not in a user part
    # the password ends at the last "@" of the URL: it may hold "/", "@", "?" or "#" (a password
    # with URL-special characters left unescaped)
    at = text.rfind("@", colon, end)
    if at <= colon + 1 or at + 1 >= end or not (text[at + 1].isalnum() or text[at + 1] == "["):
        return None
    secret = text[colon + 1 : at]
    slash = secret.find("/")
    if slash >= 0 and secret[:slash].isdigit():
        return None  # "host:8080/path?x=a@b": a port and a path
    return colon + 1, at


def _redact_dsn_passwords(text: str, low: str, counts: dict[str, int]) -> str:
    """Passwords in connection strings without a scheme: Go MySQL DSNs (``user:pass@tcp(host)/db``)
    and ``.pgpass`` lines (``host:port:database:user:password``)."""
    spans: list[tuple[int, int]] = []
    for marker in ("@tcp(", "@unix(", "@udp("):
        at = low.find(marker)
        while at >= 0:
            start = at
            while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "\"'`=":
                start -= 1
            colon = text.find(":", start, at)
            if colon >= 0 and at - colon > 1:
                spans.append((colon + 1, at))
            at = low.find(marker, at + len(marker))
    if text.count(":") >= 4:
        for line in text.split("\n"):
            if line.count(":") < 4:
                continue
            for word in line.split():
                if word.count(":") >= 4:
                    span = _pgpass_password(text, word, line)
                    if span is not None:
                        spans.append(span)
    if not spans:
        return text
    return _apply_spans(text, spans, "dsn-password", counts)


def _pgpass_password(text: str, word: str, line: str) -> tuple[int, int] | None:
    """Span in ``text`` of the password of a ``.pgpass`` entry ``word`` (found on ``line``), or None."""
    fields = word.split(":")
    if len(fields) < 5 or not (fields[1].isdigit() or fields[1] == "*") or not fields[0]:
        return None
    if "/" in fields[0] or "=" in word[: len(fields[0])]:
        return None  # a URL or an assignment, not a .pgpass line
    password = ":".join(fields[4:]).rstrip(".,;)")
    if len(password) < 3 or not all(f for f in fields[2:4]):
        return None
    at = text.find(line)
    start = text.find(word, at) + len(word) - len(":".join(fields[4:]))
    return start, start + len(password)


def _redact_seed_phrases(text: str, low: str, counts: dict[str, int]) -> str:
    """Runs of 12 or more BIP-39 words (a wallet's recovery phrase), numbered lists included.

    A byte-level pass over the UTF-8 text (C speed: ``translate``, ``split``, ``map``) first looks for
    12 words in a row of 3 to 8 lower-case ASCII letters (list numbers skipped); only then is the
    word list loaded and each word looked up.
    """
    if len(text) < _SEED_MIN_CHARS:
        return text
    raw = text.encode("utf-8", "replace")
    if not _seed_shaped(raw, _SEED_SHAPE) and not (
        len(raw) - len(raw.translate(None, _ASCII_UPPER)) >= _SEED_WORDS * 3 and _seed_shaped(raw, _SEED_SHAPE_UPPER)
    ):  # the second test: an upper-case phrase, only where upper-case letters are that many
        return text
    try:
        from mission_memory.capture.bip39_words import WORDS
    except ImportError:  # run by path from the hook: sys.path[0] is this folder
        from bip39_words import WORDS  # type: ignore[import-not-found, no-redef]
    spans = _seed_runs(low, WORDS)
    if not spans:
        return text
    return _apply_spans(text, spans, "seed-phrase", counts)


def _seed_shaped(raw: bytes, shape: bytes) -> bool:
    """Does ``raw`` (UTF-8) hold 12 words in a row of 3 to 8 letters of the case ``shape`` maps to ``a``?"""
    return b"\x01" * _SEED_WORDS in bytes(map(_SEED_SHAPES.__contains__, raw.translate(shape).split()))


_ASCII_UPPER = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SEED_SHAPE_UPPER = _SEED_SHAPE[:65] + b"a" * 26 + _SEED_SHAPE[91:97] + b"x" * 26 + _SEED_SHAPE[123:]
""":data:`_SEED_SHAPE` with the cases swapped: upper-case letters -> ``a``, lower-case -> ``x``."""


def _seed_runs(low: str, words: frozenset[str]) -> list[tuple[int, int]]:
    """Spans of runs of :data:`_SEED_WORDS`+ list words in ``low`` (list numbers inside a run skipped).

    Membership is tested for every word at once (``map`` over the words); positions are looked up
    only for a run that is found.
    """
    tokens = low.split()
    cores = [token.strip(".,\"'():;[]{}") for token in tokens]
    member = bytes(map(_seed_member(words).__contains__, cores))
    spans: list[tuple[int, int]] = []
    at = member.find(b"\x01" * _SEED_WORDS)
    pos = located = 0
    while at >= 0:
        end = at
        while end < len(member) and member[end]:
            end += 1
        if sum(1 for core in cores[at:end] if not core.isdigit()) >= _SEED_WORDS:
            for k in range(located, at):
                pos = low.find(tokens[k], pos) + len(tokens[k])
            first = low.find(cores[at], low.find(tokens[at], pos))
            for k in range(at, end):
                pos = low.find(tokens[k], pos) + len(tokens[k])
            last = low.rfind(cores[end - 1], 0, pos) + len(cores[end - 1])
            located = end
            spans.append((first, last))
        at = member.find(b"\x01" * _SEED_WORDS, end)
    return spans


def _seed_member(words: frozenset[str]) -> frozenset[str]:
    """The word list with the list numbers ``1`` to ``24`` (cached on the module after the first call)."""
    global _SEED_MEMBERS
    if _SEED_MEMBERS is None:
        _SEED_MEMBERS = words | {str(i) for i in range(1, 25)}
    return _SEED_MEMBERS


def _redact_wrapped_jwts(text: str, low: str, counts: dict[str, int]) -> str:
    """JSON Web Tokens, also when wrapped over two lines (``eyJ…`` at a line end, the rest below)."""
    if "eyJ" not in text:
        return text
    spans: list[tuple[int, int]] = []
    n = len(text)
    start = text.find("eyJ")
    while start >= 0:
        end = start
        while end < n and text[end] in _JWT_CHARS:
            end += 1
        if end < n and text[end] in "\r\n":
            follow = end + 1 if text[end] == "\n" else end + 2 if text.startswith("\r\n", end) else end + 1
            tail = follow
            while tail < n and text[tail] in _JWT_CHARS:
                tail += 1
            if tail - follow >= 8 and "." in text[start:tail] and not (tail < n and text[tail] in ":="):
                end = tail
        token = text[start:end].replace("\r", "").replace("\n", "")
        if len(token) >= 30 and "." in token and (start == 0 or text[start - 1] not in _JWT_CHARS):
            spans.append((start, end))
        start = text.find("eyJ", max(end, start + 3))
    if not spans:
        return text
    return _apply_spans(text, spans, "jwt", counts)


def _apply_spans(text: str, spans: list[tuple[int, int]], kind: str, counts: dict[str, int]) -> str:
    """``text`` with each span replaced by ``[REDACTED:kind]``; a span that starts inside an earlier
    rule's marker is skipped, so redacting redacted text changes nothing."""
    spans.sort()
    marked = "[REDACTED:" in text or "[private]" in text
    out: list[str] = []
    pos = 0
    for start, end in spans:
        start = max(start, pos)  # a span overlapping the previous one starts where that ended
        if end <= start or (marked and _inside_marker(text, start)):
            continue
        out.append(text[pos:start])
        out.append("[REDACTED:" + kind + "]")
        _bump(counts, kind)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _inside_marker(text: str, at: int) -> bool:
    """Does ``text[at]`` belong to a ``[REDACTED:…]`` or ``[private]`` marker?"""
    for marker in ("[REDACTED:", "[private]"):
        begin = text.rfind(marker, max(0, at - 40), at + len(marker))
        if begin >= 0 and text.find("]", begin) >= at:
            return True
    return False


def _redact_tokens(text: str, low: str, counts: dict[str, int]) -> str:
    found: dict[str, str] = {}
    chunks = text.split()
    public = "aaaa" in low and any(kind in low for kind in _PUBLIC_KEY_TYPES)
    for i, chunk in enumerate(chunks):
        if len(chunk) < 20:  # a chunk this short cannot hold a 20-character token
            continue
        if public and i > 0 and chunk.startswith("AAAA") and chunks[i - 1].strip("\"'`").lower() in _PUBLIC_KEY_TYPES:
            continue  # an OpenSSH public key
        bar = chunk.find("|")
        if bar > 0:  # an app access token: <app id>|<key> (Facebook)
            left, right = chunk[:bar].lstrip("\"'`([{"), chunk[bar + 1 :].rstrip("\"'`)]},;.")
            if left.isdigit() and 13 <= len(left) <= 17 and len(right) >= 20 and _B64_CHARS.issuperset(right):
                found[left + "|" + right] = "token"
                continue
        for word in chunk.translate(_SPLIT_TABLE).split():
            if len(word) < 20:
                continue
            word = word.strip(".")
            if word in found or word.startswith("[REDACTED"):
                continue
            kind = _token_kind(word)
            if kind is not None and _named_digest(chunk, word):
                continue  # a content hash named by its algorithm (go.sum h1:, lockfile sha512-, image@sha256:)
            if kind is None and len(word) == 32 and _HEX_CHARS.issuperset(word) and "=" + word in chunk:
                kind = "high-entropy"  # a 32-digit hex value given to a name (?appid=…, JSESSIONID=…): a key, not an ETag
            if kind is not None:
                found[word] = kind
                after = chunk.find(word + "=")
                if after >= 0:  # a checksum after "=" (Atlassian's …=C63992E6) goes with the token
                    tail = chunk[after + len(word) + 1 :]
                    stop = 0
                    while stop < len(tail) and tail[stop] in _HEX_CHARS:
                        stop += 1
                    if 6 <= stop <= 8 and (stop == len(tail) or not tail[stop].isalnum()):
                        found[word + "=" + tail[:stop]] = kind
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
    for prefix, min_len in _TOKEN_PREFIXES if word.startswith(_ALL_PREFIXES) else ():
        if word.startswith(prefix) and len(word) >= min_len:
            rest = word[len(prefix) :]
            plain = rest.replace("-", "")
            if prefix in _SHORT_PREFIXES and not (plain.isalnum() and _class_changes(plain) >= 0.35 * len(plain)):
                continue  # a short prefix ("s.", "SK") counts only before a random-looking rest
            if sum(ch.isdigit() for ch in rest) >= 2 or len(rest) >= 32 or (
                len(rest) >= 16 and _classes(rest) >= 2 and _class_changes(rest) >= 0.25 * len(rest)
            ):
                return "token"
    if word[4:6] == "Q~" and word[3].isdigit() and 36 <= len(word) <= 42:
        return "token"  # an Azure AD client secret: ``xxx8Q~…``
    if word.startswith("eyJ") and "." in word and len(word) >= 30:
        return "jwt"
    if len(word) == 36 and word.startswith("key-") and _HEX_CHARS.issuperset(word[4:]):
        return "token"  # Mailgun
    if word.startswith("LTAI") and 16 <= len(word) <= 30 and word.isalnum() and not word[4:].isupper():
        return "token"  # an Alibaba Cloud AccessKey id
    if any(infix in word for infix in _TOKEN_INFIXES) or _looks_like_discord_token(word):
        return "token"
    if len(word) < 32 or "." in word or word[0] == "/":
        return None
    if not _B64_CHARS.issuperset(word):
        return None
    if _HEX_CHARS.issuperset(word):
        if len(word) in _DIGEST_LENGTHS:
            return None  # a digest (MD5 ETag, git and SHA object ids), not a key
        return "high-entropy" if _entropy(word) >= 3.0 else None
    if _looks_like_uuid(word):
        return None
    has_digit = any(ch.isdigit() for ch in word)
    has_alpha = any(ch.isalpha() for ch in word)
    if not (has_digit and has_alpha) or _class_changes(word) < 0.35 * len(word):
        return None
    return "high-entropy" if _entropy(word) >= 3.8 else None


def _named_digest(chunk: str, word: str) -> bool:
    """Is ``word`` of ``chunk`` a digest its algorithm names (``h1:…``, ``sha512-…``, ``…@sha256:…``, ``#sha1``)?"""
    lowered = chunk.lower()
    if "#sha" in lowered or "integrity=" in lowered or lowered.lstrip("\"'`([{=").startswith(_HASH_PREFIXES):
        return True
    word = word.lower()
    return any(prefix + word in lowered for prefix in _HASH_PREFIXES)


def _classes(word: str) -> int:
    """How many of lower case, upper case and digits ``word`` holds."""
    return any(ch.islower() for ch in word) + any(ch.isupper() for ch in word) + any(ch.isdigit() for ch in word)


def _looks_like_discord_token(word: str) -> bool:
    """``<base64 of a user id>.<6 characters>.<27+ characters>``: a Discord bot token."""
    parts = word.split(".")
    if len(parts) != 3 or word[0] not in "MNO":
        return False
    first, second, third = parts
    return (
        23 <= len(first) <= 28 and len(second) == 6 and 27 <= len(third) <= 40
        and first.isalnum() and _JWT_CHARS.issuperset(second + third)
        and _class_changes(first) >= 0.35 * len(first)
    )


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


_SHORT_PREFIXES = frozenset(("s.", "SK", "AC", "pat", "oy2", "fm1", "EAAA", "EAAB", "API-", "dapi", "PLAID"))
"""Token prefixes short or common enough that the rest must look random (class changes at 35 % of
positions, as :func:`_token_kind`'s high-entropy test asks)."""

_DIGEST_LENGTHS = frozenset((32, 40, 56, 64, 96, 128))
"""Hex lengths of MD5, SHA-1, SHA-224, SHA-256, SHA-384 and SHA-512 digests."""

_HASH_PREFIXES = ("h1:", "sha1-", "sha256-", "sha384-", "sha512-", "sha1:", "sha256:", "sha384:", "sha512:", "md5-", "md5:", "sha256=", "sha1=")
"""Prefixes naming a content hash (go.sum ``h1:``, Subresource Integrity and lockfile ``sha512-``,
image digests ``sha256:``): the value after them is a digest, not a secret."""

_PUBLIC_KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ssh-dss", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
                     "ecdsa-sha2-nistp521", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com")
"""OpenSSH public-key types: the base64 blob after one is a public key."""


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


_CRED_PARTS = ("password", "passwd", "passphrase", "pass", "pwd", "secret", "secrete", "token", "apikey",
               "api_key", "api-key", "private_key", "private-key", "privatekey", "secret_key", "access_key",
               "signing_key", "encryption_key", "master_key", "credential", "credentials", "creds", "psk", "auth",
               "key", "accessid", "access_id", "login")
"""Parts of a name that make its value a credential (``db_pass``, ``herokuToken``, ``password_super_secure``,
``SNYK_API_KEY``, ``sumologic.accessId``), matched as a component of the name: between separators
(``_``, ``-``, ``.``) or at a change to upper case, so ``passenger``, ``tokens`` and ``bypass`` are not."""

_CRED_STEMS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "psk", "login", "access", "bundle_")
"""Every part of :data:`_CRED_PARTS` holds one of these: a text with none of them has no keyed value."""

_WEAK_PARTS = frozenset(("key", "auth", "login", "accessid", "access_id"))
"""Name parts that are common words too: they count only at the end of the name, before a value that
looks random (12+ characters, two character classes or more, no space)."""

_NAME_TAILS = frozenset((
    "type", "types", "name", "names", "path", "file", "files", "url", "uri", "length", "len", "size", "count", "dir",
    "env", "ref", "field", "header", "prefix", "suffix", "format", "version", "hint", "label", "policy", "regex",
    "pattern", "store", "manager", "provider", "source", "mode", "kind", "class", "method", "scope", "ttl", "expiry",
    "expires", "expiration", "arn", "tag", "tags", "connector", "client", "endpoint", "hash", "hashed", "rotation",
    "required", "enabled", "description", "desc", "id", "ids", "user", "username", "email", "fingerprint",
))
"""Last components that make a credential name a name of something else (``secret_type``, ``token_url``,
``password_hash``, ``api_key_name``, ``tokenConnector``): their values are not credentials."""

_OPERATORS = (":::=", "::=", "===", "!==", ":=", "?=", "=>", "==", "!=", "+=", ".=", "=", ":", "->")
"""Assignment and comparison operators of config and programming syntaxes, longest first."""

_CONFIG_WORDS = frozenset((
    "true", "false", "null", "none", "nil", "yes", "no", "on", "off", "required", "optional", "write", "read",
    "string", "str", "bytes", "int", "bool", "boolean", "any", "object", "secret", "token", "password", "redacted",
    "changeme", "example", "placeholder", "undefined", "empty", "value", "default", "xxx", "xxxx", "***", "****",
))
"""Values that are types, switches or placeholders (``secret: str``, ``id-token: write``), not credentials."""

_REFERENCE_STARTS = ("${", "$(", "{{", "%(", "<%", "#{", "@{", "$env", "env.", "env[", "process.env", "os.environ",
                     "os.getenv", "getenv(", "secrets.", "vars.", "!ref", "!sub", "!getatt", "lookup(", "var.",
                     "self.", "this.", "cred.", "config.", "settings.", "params.", "args.", "ctx.", "<no value>",
                     "$__", "%env", "[redacted", "[private")
"""How template, environment and code references start (``${{ secrets.TOKEN }}``, ``os.environ["X"]``)."""


def _not_a_secret_value(value: str, quoted: bool) -> bool:
    """Is ``value`` (after a credential key) a reference, a name or a placeholder rather than a secret?

    Template and environment references (``${DB_PASSWORD}``, ``${{ secrets.X }}``, ``$TOKEN``,
    ``os.environ["X"]``), an unquoted name or expression in code (``apiKey``, ``s.token``,
    ``cred.BasicAuth.Password``, ``get_token()``), types and switches (:data:`_CONFIG_WORDS`),
    values without a letter or digit, and values with ``fake`` in them (test fixtures) are not.
    """
    v = value.strip()
    lowered = v.lower()
    if not v or not any(ch.isalnum() for ch in v) or lowered in _CONFIG_WORDS or "fake" in lowered:
        return True
    if lowered.startswith(_REFERENCE_STARTS) or lowered.startswith(('"+', "+", "+ ")):
        return True
    if v[0] == "$" and len(v) > 1 and (v[1:].replace("_", "").isalnum() and v[1:].upper() == v[1:]):
        return True  # $DB_PASSWORD
    if quoted:
        return False
    call = v.rstrip(",;")
    callee = call.split("(", 1)[0]
    if call.endswith(")") and "(" in call and callee[:1].isalpha() and callee.replace(".", "").replace("_", "").isalnum():
        return True  # a call: get_token(), os.Getenv("X")
    body = v.rstrip(",;)}]\"'`")
    return all(ch.isalpha() or ch in "_." for ch in body)  # a name: apiKey, s.token, cred.Oauth.RefreshToken, str


def _part_at(ident: str, low_ident: str, at: int, part: str) -> bool:
    """Is ``part`` at ``at`` of the name ``ident`` one of its components (see :data:`_CRED_PARTS`)?"""
    end = at + len(part)
    before_ok = at == 0 or ident[at - 1] in "_-.$@" or (ident[at].isupper() and ident[at - 1].islower()) or (
        ident[at - 1].isdigit())
    if not before_ok and not (ident[at].isupper() and ident[at - 1].isupper() and ident.isupper()):
        return False
    if ident[at - 1:at].isupper() and ident.isupper() is False and at > 0 and ident[at].islower():
        return False
    if end == len(ident):
        return True
    nxt = ident[end]
    if part in _WEAK_PARTS:
        return False
    return nxt in "_-.[" or (nxt.isupper() and ident[end - 1].islower()) or nxt.isdigit()


def _named_thing(ident: str) -> bool:
    """Does the name end in a component of :data:`_NAME_TAILS` (``secret_type``, ``tokenUrl``)?"""
    tail = ident
    for sep in "_-.":
        tail = tail.rsplit(sep, 1)[-1]
    for i in range(len(tail) - 1, 0, -1):  # camelCase: the last capitalised word
        if tail[i].isupper() and tail[i - 1].islower():
            tail = tail[i:]
            break
    return tail.lower() in _NAME_TAILS and tail.lower() != ident.lower()


def _redact_keyed_values(text: str, low: str, counts: dict[str, int]) -> str:
    """Values of names holding a credential part, in any config or programming syntax.

    ``db_pass: x``, ``password_super_secure = "x"``, ``herokuToken := `x```, ``SNYK_TOKEN ?= "x"``,
    ``String apiToken = "x";``, ``$mailToken .= "x"``, ``System.setProperty("X_TOKEN", "x")``,
    ``"xToken" => "x"``, ``char secrete[25] = "x";``, ``std::string secret("x");``,
    ``if ("x" == password)``, ``<alibabaToken>x</alibabaToken>``, ``<add key="ClearTextPassword"
    value="x" />``. Precision by construction: references, names and placeholders are not secrets
    (:func:`_not_a_secret_value`); a weak part (``key``, ``auth``, ``login``) needs a random-looking value.
    """
    stems = [stem for stem in _CRED_STEMS if stem in low]
    if not stems:
        return text  # the usual prompt: no credential word at all (about 1 µs)
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()
    n = len(text)
    for stem in stems:  # one scan per stem; each name is judged once, by its first matching part
        at = low.find(stem)
        while at >= 0:
            start = at
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-."):
                start -= 1
            stop = at + len(stem)
            while stop < n and (text[stop].isalnum() or text[stop] in "_-."):
                stop += 1
            if start not in seen:
                seen.add(start)
                span = _name_value(text, low, start, stop)
                if span is not None:
                    spans.append(span)
            at = low.find(stem, stop)
    if not spans:
        return text
    return _apply_spans(text, spans, "assignment", counts)


_AFTER_NAME = frozenset("=:!?(,.+-[>;")
"""What may follow a credential name before its value (operators, a call, an element's end, a C array,
``password "x";`` where a quote came first and was skipped)."""


def _name_value(text: str, low: str, start: int, stop: int) -> tuple[int, int] | None:
    """The value span of the name at ``text[start:stop]`` when it is a credential name, else None."""
    ident = text[start:stop].rstrip(".-")
    if not ident:
        return None
    end = start + len(ident)
    nxt = end
    while nxt < len(text) and text[nxt] in " \t\"'`":
        nxt += 1
    before = text[:start].rstrip(" \t\"'`")[-1:]
    if (nxt >= len(text) or text[nxt] not in _AFTER_NAME) and before not in ("=", "<"):
        return None  # no operator, call, element or comparison around the name: a word of prose
    low_ident = low[start:end]
    if ident.startswith("BUNDLE_") and "__" in ident:  # Bundler credentials: BUNDLE_GEMS__EXAMPLE__COM=user:pass
        return _keyed_value(text, start, start + len(ident), False)
    for part in _CRED_PARTS:
        if part not in low_ident:
            continue
        at = low_ident.find(part)
        while at >= 0:
            if _part_at(ident, low_ident, at, part) and (low_ident.endswith(part) or not _named_thing(ident)):
                return _keyed_value(text, start, start + len(ident), part in _WEAK_PARTS)
            at = low_ident.find(part, at + 1)
    return None


def _keyed_value(text: str, start: int, end: int, weak: bool) -> tuple[int, int] | None:
    """Span of the value given to the name at ``text[start:end]``, or None."""
    n = len(text)
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = n if line_end < 0 else line_end
    # a reversed comparison: "value" == name
    head = text[line_start:start].rstrip()
    for op in ("===", "!==", "==", "!="):
        if head.endswith(op):
            left = head[: -len(op)].rstrip()
            if left and left[-1] in _QUOTES:
                q = left[-1]
                open_at = left.rfind(q, 0, len(left) - 1)
                if open_at >= 0:
                    return _checked(text, line_start + open_at + 1, line_start + len(left) - 1, True, weak)
            return None
    # an XML element: <nameToken>value</nameToken>
    if start > 0 and text[start - 1] == "<" and end < n and text[end] == ">":
        close = text.find("</" + text[start:end] + ">", end)
        if close > 0 and close - end < _QUOTED_LIMIT:
            vstart, vend = end + 1, close
            while vstart < vend and text[vstart].isspace():
                vstart += 1
            while vend > vstart and text[vend - 1].isspace():
                vend -= 1
            return _checked(text, vstart, vend, True, weak) if "<" not in text[vstart:vend] else None
        return None
    pos = end
    quoted_key = pos < n and text[pos] in _QUOTES
    while pos < n and text[pos] in _QUOTES:
        pos += 1
    if pos < n and text[pos] == "[":  # char secrete[25] = "…"
        close = text.find("]", pos, pos + 12)
        if close < 0:
            return None
        pos = close + 1
    while pos < n and text[pos] in " \t":
        pos += 1
    op = next((o for o in _OPERATORS if text.startswith(o, pos)), "")
    if quoted_key and not op and text.startswith(",", pos) and text[end] in "\"'":
        op = ","  # System.setProperty("X_TOKEN", "value")
    if not op and text.startswith("value=", pos):
        op = "value="  # <add key="ClearTextPassword" value="…" />
    if not op and pos == end and text.startswith("(", pos):
        op = "("  # std::string secret("…")
    if not op and text.startswith(".assign(", pos):
        op = ".assign("
    if op in ("==", "!=", "===", "!==", "->"):
        pass
    pos += len(op)
    while pos < n and text[pos] in " \t@":
        pos += 1
    if pos >= line_end:
        if op in (":", "=") and not weak:  # a YAML block or an XML element on the next line
            return None
        return None
    quoted = text[pos] in _QUOTES
    if not op and not (text[pos] in "\"'" and text.find(text[pos] + ";", pos + 1, line_end) > 0):
        return None  # password "x"; needs the quotes and the semicolon
    if op in (",", "(", ".assign(", "value=") and text[pos] not in "\"'":
        return None
    if quoted:
        vstart, vend = _value_span(text, pos, _VALUE_STOP)
        if vend > line_end or vstart == vend:
            return None
    elif (op == ":" or (op == "=" and text[end] == "=")) and (
            _starts_line(text, start) or text[line_start:start].strip() in ("-", "*", "#", "//")):
        vstart, vend = pos, line_end  # a config line (YAML, INI, .env): the value is the rest of the line
        while vend > vstart and text[vend - 1] in " \t\r,;'\"`":
            vend -= 1
    else:  # inside a line: one word (a URL query's "&" ends it too)
        vstart = vend = pos
        query = start > 0 and text[start - 1] in "?&;"
        while vend < line_end and not text[vend].isspace() and not (query and text[vend] == "&"):
            vend += 1
        while vend > vstart and text[vend - 1] in ",;'\"`)":
            vend -= 1
    return _checked(text, vstart, vend, quoted and text[vstart - 1] != "`", weak)  # a `code span` is not a quote


def _checked(text: str, vstart: int, vend: int, quoted: bool, weak: bool) -> tuple[int, int] | None:
    value = text[vstart:vend]
    if not value or _not_a_secret_value(value, quoted) or value.startswith("[REDACTED"):
        return None
    if len(value) >= 20 and " " not in value and _token_kind(value) not in (None, "high-entropy"):
        return None  # a token the token rule names (kept for its kind)
    symbols = any(not ch.isalnum() and ch not in "_-." for ch in value)
    if weak and not (len(value) >= 12 and " " not in value and (_classes(value) >= 2 or symbols)):
        return None
    if not quoted and " " in value.strip() and len(value.split()) > 6:
        return None  # a sentence, not a value
    return vstart, vend


def _redact_secret_manifests(text: str, low: str, counts: dict[str, int]) -> str:
    """The values under ``data:`` / ``stringData:`` of a Kubernetes ``kind: Secret`` manifest."""
    if "secret" not in low or "data:" not in low or "kind:" not in low:
        return text
    squeezed = low.replace('"', "").replace("'", "")
    if "kind: secret" not in squeezed:
        return text
    spans: list[tuple[int, int]] = []
    pos = 0
    lines = text.split("\n")
    inside = -1
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if stripped.lower() in ("data:", "stringdata:"):
            inside = indent
        elif inside >= 0 and stripped and indent > inside and ":" in stripped and not stripped.startswith("#"):
            colon = line.find(":")
            vstart = colon + 1
            while vstart < len(line) and line[vstart] in " \t\"'":
                vstart += 1
            vend = len(line.rstrip().rstrip("\"'"))
            if vend - vstart >= 4:
                spans.append((pos + vstart, pos + vend))
        elif stripped:
            inside = -1
        pos += len(line) + 1
    if not spans:
        return text
    return _apply_spans(text, spans, "assignment", counts)


_HASH_MARKS = ("$1$", "$2a$", "$2b$", "$2x$", "$2y$", "$5$", "$6$", "$7$", "$y$", "$gy$", "$apr1$", "$argon2",
               "$scrypt$", "$pbkdf2", "$sha1$", "$md5", "pbkdf2_sha", "bcrypt_sha", "argon2$", "scram-sha-",
               "{ssha}", "{sha}", "{ssha256}", "{ssha512}", "{crypt}", "{pbkdf2")
"""How a stored password hash starts (crypt(3), htpasswd, Django, PostgreSQL SCRAM, LDAP)."""


def _redact_password_hashes(text: str, low: str, counts: dict[str, int]) -> str:
    """Stored password hashes: ``$6$…``, ``$apr1$…``, ``$2y$…``, ``$argon2id$…``, ``pbkdf2_sha256$…``,
    ``SCRAM-SHA-256$…``, ``{SSHA}…``, PgBouncer ``md5`` + 32 hex digits, MySQL ``*`` + 40 hex digits."""
    if "$" not in text and "{" not in text and "md5" not in low and "*" not in text:
        return text
    spans: list[tuple[int, int]] = []
    n = len(text)
    for mark in _HASH_MARKS:
        at = low.find(mark)
        while at >= 0:
            if at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "$"):
                end = at
                shadow = mark.startswith("$")
                while end < n and not text[end].isspace() and text[end] not in "\"'`<>" and not (
                    shadow and text[end] == ":"):
                    end += 1
                if end - at >= len(mark) + 12:
                    spans.append((at, end))
            at = low.find(mark, at + len(mark))
    for mark, digits in (("md5", 32), ("'*", 40), ('"*', 40)):
        at = low.find(mark)
        while at >= 0:
            tail = at + len(mark)
            word = low[tail : tail + digits]
            after = low[tail + digits : tail + digits + 1]
            if (len(word) == digits and _HEX_CHARS.issuperset(word) and not after.isalnum()
                    and (at == 0 or not low[at - 1].isalnum())):
                spans.append((at, tail + digits))
            at = low.find(mark, tail)
    if not spans:
        return text
    return _apply_spans(text, spans, "password-hash", counts)


_RULES = (
    _drop_private_spans,
    _redact_key_blocks,
    _redact_webhooks,
    _redact_wrapped_jwts,
    _redact_password_hashes,
    _redact_secret_manifests,
    _redact_keyed_values,
    _redact_assignments,
    _redact_command_passwords,
    _redact_url_passwords,
    _redact_dsn_passwords,
    _redact_tokens,
    _redact_seed_phrases,
    _redact_prose_secrets,
)
"""Applied in this order; each takes ``(text, lower-cased text, counts)`` and returns the new text."""


# -- the intake pass: every stored text goes through these (docs/adr/0053) --

_HEX = frozenset("0123456789abcdef")
_ID_LENGTHS = frozenset((32, 40, 64))


def redact_text(text: str) -> str:
    """``text`` with every secret the rules find replaced by ``[REDACTED:<kind>]``.

    Args:
        text: any text, any length (about 0.1-0.3 s per MB on the reference machine under load).

    Returns:
        The redacted text; ``text`` itself when nothing was found.
    """
    if not text:
        return text
    redacted, counts = redact(text)
    return redacted if counts else text


def redacted_cut(text: str, limit: int, ellipsis: str = "…") -> str:
    """``text`` redacted, then cut to at most ``limit`` characters (``ellipsis`` marks a cut).

    Every derived field that is cut (a handover note's title, a comment's title, a capped text) is
    cut after redaction, never before: a secret the cut would split is no longer recognisable, so
    its head would be stored (issue 35 item 3). The cut never splits a ``[REDACTED:…]`` or
    ``[private]`` marker (it moves back to the marker's start). Idempotent:
    ``redacted_cut(redacted_cut(t, n), n) == redacted_cut(t, n)``.

    Args:
        text: any text.
        limit: the longest result, in characters (at least ``len(ellipsis)``).
        ellipsis: appended when something was cut.
    """
    red = redact_text(text)
    if len(red) <= limit:
        return red
    cut = max(0, limit - len(ellipsis))
    for marker in ("[REDACTED:", "[private]"):
        begin = red.rfind(marker, max(0, cut - 48), cut)
        if begin >= 0 and red.find("]", begin) >= cut:
            cut = begin
    shown = redact_text(red[:cut].rstrip() + ellipsis)  # a head that reads as a secret on its own goes too
    return shown if len(shown) <= limit else redacted_cut(shown, limit, ellipsis)


def redact_value(value: "Any") -> "Any":
    """``value`` (a JSON-ready attribute: str, list, tuple, dict, number, None) with its strings redacted.

    Dictionary keys are kept; a string that is exactly a record id, a git object id or a SHA-256
    (32, 40 or 64 lower-case hex digits) is kept whole, since attributes cite records and commits
    by id. The same object is returned when nothing changed.
    """
    if isinstance(value, str):
        if len(value) in _ID_LENGTHS and _HEX.issuperset(value):
            return value
        return redact_text(value)
    if isinstance(value, dict):
        changed = {key: redact_value(item) for key, item in value.items()}
        return value if all(changed[k] is value[k] for k in value) else changed
    if isinstance(value, list | tuple):
        items = [redact_value(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    return value
