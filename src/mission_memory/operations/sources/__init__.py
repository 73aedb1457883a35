"""Event sources: one module per sender of events, each holding its parser and its route.

Every module of this package (``alertmanager``, ``grafana``, ``pagerduty``, ``opsgenie``, ``events`` …)
defines ``SOURCE``, a :class:`Source`: its name, the HTTP path and methods it is served on, the media
types it accepts, how a body becomes :class:`~mission_memory.operations.domain_events.DomainEvent` s,
and, where the sender signs its requests, how a signature is checked. :func:`sources` finds them all,
so a new receiver is one new module here; the HTTP server (``mcp/event_receiver.py``) serves each
one the same way and names none. Settings a source reads (its sector labels, its secrets) are looked
up by its name: :func:`sector_labels`, :func:`receiver_auth`, checked by :func:`auth_problem`.

Everything a sender posts is untrusted: parsers store it as data, and errors are
:class:`~mission_memory.errors.InputError` naming the field.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from mission_memory.errors import ConfigError, InputError
from mission_memory.fence import terminal_safe
from mission_memory.operations.domain_events import DomainEvent, load_json

if TYPE_CHECKING:
    from mission_memory.config import ReceiverAuth, Settings

__all__ = [
    "JSON_MEDIA_TYPES",
    "PRIORITY_CRITICALITY",
    "Source",
    "auth_problem",
    "basic_auth_problem",
    "body_json",
    "check_source_settings",
    "first_label",
    "one_line",
    "receiver_auth",
    "sector_labels",
    "source_named",
    "sources",
]

JSON_MEDIA_TYPES = ("application/json", "application/x-ndjson", "application/jsonl", "application/x-jsonlines")
"""Media types a JSON source accepts (parameters such as ``charset`` aside). None is a type a web page
may POST cross-site without the browser asking first (a CORS "simple request"; ADR 0054)."""

PRIORITY_CRITICALITY: Mapping[str, float] = {"p1": 0.95, "p2": 0.9, "p3": 0.7, "p4": 0.5, "p5": 0.3}
"""Incident priority (``P1`` … ``P5``, as incident-management services name it) -> criticality: P1 and P2
are pages an on-call engineer must not miss (≥ 0.8)."""

Parser = Callable[[bytes, "Settings"], list[DomainEvent]]
"""A source's parser: the raw body and the settings -> its events (raises InputError naming the field)."""

Verifier = Callable[[Mapping[str, str], bytes, "ReceiverAuth"], "str | None"]
"""A source's own signature check: request headers (lower-case names), the raw body and its configured
auth -> ``None`` when the request is authentic, else why not (the answer is 401, nothing stored)."""


@dataclass(frozen=True)
class Source:
    """One sender of events and how it is received.

    Attributes:
        name: the source's name (``alertmanager``): the key of its settings (sector labels, auth).
        path: the HTTP path it is served on (``/alerts/alertmanager``).
        parse: the raw body (bytes) and the settings -> events; raises InputError naming the field.
        methods: the HTTP methods accepted.
        media_types: the declared Content-Types accepted; any other is ``415``.
        sector_labels: the labels tried in order for an event's sector, unless the setting
            ``MISSION_MEMORY_SECTOR_LABELS`` names others for this source.
        verify: the sender's own signature check, run when its auth setting holds signing secrets.
        title: what it is, for the documentation and error messages (``alertmanager webhook``).
        record_noun: what the source calls the record its event ids carry (``PagerDuty incident``): its
            events' ids are ``<name>:<its own id>``, and an incident one of them opens keeps that id, the
            ``incident`` label's number and the page (""; the source's ids are not its own records).
    """

    name: str
    path: str
    parse: Parser
    methods: tuple[str, ...] = ("POST",)
    media_types: tuple[str, ...] = JSON_MEDIA_TYPES
    sector_labels: tuple[str, ...] = ()
    verify: Verifier | None = None
    title: str = ""
    record_noun: str = ""

    @property
    def label(self) -> str:
        """How messages name the source (its title, else its name)."""
        return self.title or self.name


@cache
def sources() -> tuple[Source, ...]:
    """Every source of this package, by name: the ``SOURCE`` of each of its modules.

    Raises:
        TypeError: a module without a :class:`Source` named ``SOURCE``.
        ValueError: two sources with one name or one path.
    """
    found = []
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        source = getattr(importlib.import_module(f"{__name__}.{module}"), "SOURCE", None)
        if not isinstance(source, Source):
            raise TypeError(f"{__name__}.{module} defines no SOURCE (a Source)")
        found.append(source)
    for key in ("name", "path"):
        values = [getattr(s, key) for s in found]
        if len(set(values)) != len(values):
            raise ValueError(f"two event sources share one {key}: {sorted(values)}")
    return tuple(sorted(found, key=lambda s: s.name))


def source_named(name: str) -> Source:
    """The source called ``name``.

    Raises:
        InputError: no source has that name (the message lists the known ones).
    """
    for source in sources():
        if source.name == name:
            return source
    raise InputError(f"no event source is called {name!r} (known: {', '.join(s.name for s in sources())})")


def check_source_settings(settings: Settings) -> None:
    """Check the settings keyed by source name against the registry (run when the HTTP server starts).

    Raises:
        ConfigError: ``MISSION_MEMORY_SECTOR_LABELS`` or ``MISSION_MEMORY_RECEIVER_AUTH`` names no source
            (``"*"`` aside), or gives signing secrets to a source that signs nothing; the message names
            the setting and the key, never a secret.
    """
    known = [s.name for s in sources()]
    for variable, keys in (("MISSION_MEMORY_SECTOR_LABELS", list(settings.sector_labels)),
                           ("MISSION_MEMORY_RECEIVER_AUTH", [k for k in settings.receiver_auth if k != "*"])):
        unknown = [k for k in keys if k not in known]
        if unknown:
            raise ConfigError(f"{variable} names no event source {unknown[0]!r} (known: {', '.join(known)})")
    for name, auth in settings.receiver_auth.items():
        if auth.signing_secrets and (name == "*" or source_named(name).verify is None):
            signing = ", ".join(s.name for s in sources() if s.verify is not None)
            raise ConfigError(f"MISSION_MEMORY_RECEIVER_AUTH[{name!r}]: signing_secrets are only for a source that "
                              f"signs its requests ({signing}); use basic_auth")


def sector_labels(settings: Settings, source: Source) -> tuple[str, ...]:
    """The labels tried in order for ``source``'s sector: ``MISSION_MEMORY_SECTOR_LABELS[source.name]``
    when the setting names the source, else the source's own default."""
    configured = settings.sector_labels.get(source.name)
    return tuple(configured) if configured is not None else source.sector_labels


def receiver_auth(settings: Settings, source: Source) -> ReceiverAuth | None:
    """The auth configured for ``source`` (``MISSION_MEMORY_RECEIVER_AUTH[name]``, else its ``"*"``), or None."""
    auth = settings.receiver_auth
    return auth.get(source.name) or auth.get("*")



def auth_problem(source: Source, auth: ReceiverAuth | None, headers: Mapping[str, str], body: bytes) -> str | None:
    """Why a request to ``source`` is not authentic under ``auth`` (its configured auth), or None when it is.

    With ``basic_auth``, the request's HTTP basic credentials must equal it (:func:`basic_auth_problem`);
    with ``signing_secrets``, the source's own check must pass (``source.verify``). No auth: None.
    Messages never repeat a credential, a signature or a secret.
    """
    if auth is None:
        return None
    if auth.basic_auth is not None:
        problem = basic_auth_problem(headers, auth.basic_auth.get_secret_value())
        if problem is not None:
            return problem
    if auth.signing_secrets and source.verify is not None:
        return source.verify(headers, body, auth)
    return None


def basic_auth_problem(headers: Mapping[str, str], expected: str) -> str | None:
    """Why a request's HTTP basic credentials are not ``expected`` (``user:password``), or None when they are.

    The comparison runs in constant time over the bytes (:func:`hmac.compare_digest`); the message
    never repeats what was sent.
    """
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic" or not value.strip():
        return "HTTP basic credentials are required"
    try:
        sent = base64.b64decode(value.strip(), validate=True)
    except (binascii.Error, ValueError):
        return "the HTTP basic credentials are not base64"
    if not hmac.compare_digest(sent, expected.encode("utf-8")):
        return "the HTTP basic credentials are wrong"
    return None


def body_json(body: bytes, where: str) -> Any:
    """A request body decoded as UTF-8 JSON (nesting bounded by :func:`~mission_memory.operations.domain_events.load_json`).

    Raises:
        InputError: ``<where>: the body is not valid JSON (…)`` or nested too deep.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: the body is not valid JSON ({exc})") from None
    return load_json(text, f"{where}: the body")


def first_label(labels: Mapping[str, Any], names: Sequence[str], default: str = "unknown") -> str:
    """The value of the first of ``names`` present (non-empty) in ``labels`` as :func:`one_line` gives it, else ``default``."""
    return next((one_line(labels[k]) for k in names if labels.get(k) not in (None, "")), default)


def one_line(value: Any) -> str:
    """``value`` as text with every whitespace run (newlines too) collapsed to one space, and every character
    a terminal would act on written as its visible escape (:func:`~mission_memory.fence.terminal_safe`:
    ESC -> ``\\u001b``); ``""`` for None. Idempotent.

    How a source makes the names and labels of what a machine sent (an alert name, a service label):
    a name with a control character would be refused by the name rule, and the sender cannot fix it
    in time, so the alert would be lost; escaped, it is stored and shown as a terminal shows it."""
    return terminal_safe(" ".join(str(value).split())) if value is not None else ""
