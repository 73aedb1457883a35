"""Operator tokens of a team server: issued once, stored hashed, mapped to an access context (ADR 0046).

A token file (TOML) lists one ``[[tokens]]`` table per issued token::

    [[tokens]]
    id = "t-5f0c2a9e"                       # names the token in `team token list` / `revoke`
    operator = "alice@example.org"
    clearance = "restricted"                # public | internal | restricted | secret
    role = "lead"                           # operator | lead
    missions = ["tdr-docs"]                 # optional: workflow views scoped to these missions
    expires = "2027-01-31T00:00:00+00:00"   # optional, ISO 8601 (UTC when naive)
    sha256 = "9c1e…"                        # SHA-256 of the token, hex; the token itself is never stored
    created = "2026-12-01T10:00:00+00:00"

The same entries can come from the environment instead, as a JSON list in
``MISSION_MEMORY_TEAM_TOKENS`` (for containers whose file system is read-only).

Tokens are 256 random bits (``mmt_`` + 43 URL-safe characters, :func:`secrets.token_urlsafe`), so a
single unsalted SHA-256 is enough to make a stolen token file useless (no dictionary to try, RFC 6750
bearer tokens; the reasoning is in ADR 0046). The file is written whole to a temporary file and
renamed over the old one (mode 0600), under a lock, so concurrent ``token add`` runs lose nothing
and a reader never sees half a file. :class:`OperatorTokenVerifier` is the MCP SDK's
:class:`~mcp.server.auth.provider.TokenVerifier`: it re-reads the file when it changes, so adding or
revoking a token needs no restart.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import tempfile
import threading
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp.server.auth.provider import AccessToken
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mission_memory.config import Settings
from mission_memory.errors import ConfigError, InputError
from mission_memory.records import AccessLevel
from mission_memory.stores.private_files import DATA_FILE_MODE, make_data_folder
from mission_memory.teams.access_control import AccessContext, Role
from mission_memory.utc import as_utc

__all__ = [
    "TOKEN_PREFIX",
    "IssuedToken",
    "OperatorAccessToken",
    "OperatorTokenVerifier",
    "TokenEntry",
    "TokenSource",
    "add_token",
    "check_token_settings",
    "hash_token",
    "read_token_file",
    "revoke_token",
    "token_file_to_read",
]

TOKEN_PREFIX = "mmt_"


def hash_token(token: str) -> str:
    """The stored form of a token: SHA-256 of its UTF-8 bytes, 64 hex digits."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenEntry(BaseModel):
    """One issued token as the token file holds it (never the token itself).

    Attributes:
        id: short name of the token (``t-`` and 8 hex digits).
        operator: the operator requests with this token run as.
        clearance: the highest access level they may read.
        role: ``operator`` or ``lead``.
        missions: missions their workflow views are scoped to; empty: all.
        expires: when the token stops working (UTC); None: never.
        sha256: :func:`hash_token` of the token.
        created: when it was issued.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    operator: str = Field(min_length=1)
    clearance: AccessLevel
    role: Role = Role.OPERATOR
    missions: tuple[str, ...] = ()
    expires: datetime | None = None
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    created: datetime | None = None

    @field_validator("expires", "created")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return as_utc(value) if value is not None else None

    def expired(self, now: datetime) -> bool:
        """True once ``now`` is at or past :attr:`expires`."""
        return self.expires is not None and now >= self.expires

    def access(self) -> AccessContext:
        """The access context requests with this token run in."""
        return AccessContext(self.operator, self.clearance, self.role, frozenset(self.missions))


class _TokenFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens: list[TokenEntry] = []


def _where(loc: tuple[int | str, ...], data: Any) -> str:
    """``tokens.1.clearance`` as ``token 2 (id 't-…') clearance``: the entry a person can find in the file."""
    if len(loc) >= 2 and loc[0] == "tokens" and isinstance(loc[1], int):
        raw = data.get("tokens") if isinstance(data, dict) else None
        entry = raw[loc[1]] if isinstance(raw, list) and loc[1] < len(raw) else None
        named = f" (id {entry['id']!r})" if isinstance(entry, dict) and isinstance(entry.get("id"), str) else ""
        field_path = ".".join(str(p) for p in loc[2:]) or "entry"
        return f"token {loc[1] + 1}{named} {field_path}"
    return ".".join(str(p) for p in loc) or "file"


def _entries(data: Any, source: str) -> list[TokenEntry]:
    try:
        entries = _TokenFile.model_validate(data).tokens
    except ValidationError as exc:
        problems = "; ".join(f"{_where(tuple(e['loc']), data)}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{source} is not a valid token list ({problems})") from None
    ids = [e.id for e in entries]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"{source}: token id {', '.join(duplicates)} appears more than once")
    return entries


def token_file_to_read(settings: Settings) -> Path | None:
    """The token file a reader (the server, ``team token list`` and ``revoke``) reads: the one
    ``MISSION_MEMORY_TEAM_TOKEN_FILE`` names, else ``<data dir>/team-tokens.toml``; None when that
    default file does not exist (no tokens issued yet).

    Raises:
        ConfigError: ``MISSION_MEMORY_TEAM_TOKEN_FILE`` names a file that does not exist (a typo there
            would otherwise start a server without authentication, or list no tokens); ``team token add``
            creates it.
    """
    path = settings.token_file_path
    if path.exists():
        return path
    if settings.team_token_file is not None:
        raise ConfigError(
            f"MISSION_MEMORY_TEAM_TOKEN_FILE names {path}, which does not exist: issue a token with "
            "`mission-memory team token add` (it creates the file), or unset the variable"
        )
    return None


def check_token_settings(settings: Settings) -> None:
    """Check ``MISSION_MEMORY_TEAM_TOKENS`` whole (JSON, every entry), as the server reads it; run by
    every command before it starts (:func:`mission_memory.cli.app.main`), so a bad value is reported
    wherever it is set, not only by ``serve``.

    Raises:
        ConfigError: not JSON, or an invalid entry (the message names the variable).
    """
    if settings.team_tokens:
        TokenSource.from_environment_text(settings.team_tokens)


def read_token_file(path: Path) -> list[TokenEntry]:
    """The entries of a token file (none when it does not exist).

    Raises:
        ConfigError: the file is not TOML, an entry is invalid (the message names the file, the
            entry's position and id, and the field), or the file is writable by group or others
            (anyone who can write it can give themselves any clearance).
    """
    try:
        text = path.read_text(encoding="utf-8")
        mode = path.stat().st_mode
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"token file {path} cannot be read ({exc.strerror})") from None
    if mode & 0o022:
        writers = " and ".join(who for who, bit in (("group", 0o020), ("others", 0o002)) if mode & bit)
        raise ConfigError(
            f"token file {path} is writable by {writers} (mode {mode & 0o777:o}): whoever can write it can "
            f"issue themselves a token; run `chmod 600 {path}`"
        )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"token file {path} is not valid TOML ({exc})") from None
    return _entries(data, f"token file {path}")


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, datetime):
        return json.dumps(value.isoformat())
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _render(entries: Sequence[TokenEntry]) -> str:
    lines = [
        "# mission-memory team server tokens (ADR 0046): SHA-256 hashes only, never the tokens.",
        "# Add with `mission-memory team token add`, remove with `mission-memory team token revoke ID`.",
    ]
    for e in entries:
        lines.append("")
        lines.append("[[tokens]]")
        for key, value in e.model_dump(exclude_none=True).items():
            if key == "missions" and not value:
                continue
            lines.append(f"{key} = {_toml_value(value.value if hasattr(value, 'value') else value)}")
    return "\n".join(lines) + "\n"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    make_data_folder(path.parent)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, DATA_FILE_MODE)
    with os.fdopen(fd, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write(path: Path, entries: Sequence[TokenEntry]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(_render(entries))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class IssuedToken:
    """A token just issued: the token (shown once) and its stored entry."""

    token: str
    entry: TokenEntry


def add_token(
    path: Path, *, operator: str, clearance: str, role: str = "operator",
    missions: Sequence[str] = (), expires: datetime | None = None, now: datetime | None = None,
) -> IssuedToken:
    """Issue a token and append its hash to the token file (created, mode 0600, if missing).

    Raises:
        InputError: an empty operator, an unknown clearance or role, an expiry in the past;
            nothing is written then.
        ConfigError: the existing file is invalid (it is left as it is).
    """
    moment = now or datetime.now(UTC)
    if not operator.strip():
        raise InputError("--operator is empty: name the operator the token belongs to")
    from mission_memory.fence import check_name

    check_name(operator.strip(), "--operator")  # the name every request of the token is attributed to
    try:
        level = AccessLevel(clearance.strip().lower())
    except ValueError:
        raise InputError(
            f"clearance {clearance!r} is not one of: {', '.join(a.value for a in AccessLevel)}"
        ) from None
    try:
        rank = Role(role.strip().lower())
    except ValueError:
        raise InputError(f"role {role!r} is not one of: {', '.join(r.value for r in Role)}") from None
    if expires is not None and as_utc(expires) <= moment:
        raise InputError(f"expires {as_utc(expires).isoformat()} is not in the future")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    entry = TokenEntry(
        id=f"t-{secrets.token_hex(4)}", operator=operator.strip(), clearance=level, role=rank,
        missions=tuple(m.strip() for m in missions if m.strip()), expires=expires, sha256=hash_token(token),
        created=moment,
    )
    with _locked(path):
        _write(path, [*read_token_file(path), entry])
    return IssuedToken(token, entry)


def revoke_token(path: Path, token_id: str) -> TokenEntry:
    """Remove the token ``token_id`` from the token file.

    Raises:
        InputError: no token has that id (the message lists the ids).
    """
    with _locked(path):
        entries = read_token_file(path)
        kept = [e for e in entries if e.id != token_id]
        if len(kept) == len(entries):
            known = ", ".join(e.id for e in entries) or "none"
            raise InputError(f"no token with id {token_id!r} in {path} (ids: {known})")
        _write(path, kept)
    return next(e for e in entries if e.id == token_id)


class OperatorAccessToken(AccessToken):
    """The SDK's :class:`~mcp.server.auth.provider.AccessToken` carrying the operator's entry.

    ``client_id`` is the token id (the SDK binds an MCP session to it), ``subject`` the operator.
    """

    entry: TokenEntry


class TokenSource:
    """Where a server's token entries come from: a token file (re-read when it changes) or a fixed list.

    Args:
        path: the token file; None with ``entries``.
        entries: entries from the environment (``MISSION_MEMORY_TEAM_TOKENS``).
    """

    def __init__(self, path: Path | None = None, entries: Sequence[TokenEntry] = ()) -> None:
        self.path = path
        self._fixed = {e.sha256: e for e in entries}
        self._by_hash: dict[str, TokenEntry] = {}
        self._stamp: tuple[int, int] | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_environment_text(cls, text: str) -> TokenSource:
        """A source from the JSON list in ``MISSION_MEMORY_TEAM_TOKENS``.

        Raises:
            ConfigError: not JSON, or an invalid entry (the message names the setting).
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"MISSION_MEMORY_TEAM_TOKENS is not JSON ({exc})") from None
        return cls(entries=_entries({"tokens": data}, "MISSION_MEMORY_TEAM_TOKENS"))

    def entries(self) -> dict[str, TokenEntry]:
        """Entries by token hash (the file is re-read when its size or change time differ).

        Raises:
            ConfigError: the file became invalid; the last valid entries stay in use then
                only if the file was valid before (else the error propagates).
        """
        if self.path is None:
            return self._fixed
        with self._lock:
            try:
                st = self.path.stat()
                stamp = (st.st_mtime_ns, st.st_size)
            except FileNotFoundError:
                stamp = (0, 0)
            if stamp != self._stamp:
                try:
                    self._by_hash = {e.sha256: e for e in read_token_file(self.path)}
                except ConfigError:
                    if self._stamp is None:
                        raise
                    return self._by_hash  # a half-edited file keeps the last good entries
                self._stamp = stamp
            return self._by_hash

    def lookup(self, token: str, now: datetime | None = None) -> TokenEntry | None:
        """The entry of a presented token, or None if it is unknown or expired."""
        entry = self.entries().get(hash_token(token))
        if entry is None or entry.expired(now or datetime.now(UTC)):
            return None
        return entry


class OperatorTokenVerifier:
    """The MCP SDK's ``TokenVerifier`` over a :class:`TokenSource` (``mcp.server.auth.provider``).

    The SDK's bearer middleware answers 401 when this returns None, and again once
    ``expires_at`` passes during a session.
    """

    def __init__(self, source: TokenSource) -> None:
        self.source = source

    async def verify_token(self, token: str) -> OperatorAccessToken | None:
        """The access token of a valid, unexpired token; None otherwise."""
        entry = self.source.lookup(token)
        if entry is None:
            return None
        return OperatorAccessToken(
            token=token, client_id=entry.id, scopes=[], subject=entry.operator,
            expires_at=int(entry.expires.timestamp()) if entry.expires else None, entry=entry,
        )
