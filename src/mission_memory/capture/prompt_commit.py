"""One operator prompt -> one orphan commit in the prompt repository (stdlib only, fail open).

This is the body of the ``UserPromptSubmit`` hook; :mod:`prompt_capture` is the tiny entry script
Claude Code runs by path, kept small because a script run by path is compiled on every run while
this module is loaded from its cached bytecode (docs/adr/0011).

:func:`capture` parses the hook JSON (``session_id``, ``transcript_path``, ``cwd``,
``permission_mode``, ``hook_event_name``, ``prompt``), redacts secrets (:mod:`redaction`), and writes
one commit whose tree holds ``prompt.json`` into ``<data dir>/prompts.git`` under
``refs/prompts/<session>/<time_ns>-<pid>`` (docs/design.md §8, issue #3; docs/adr/0010, 0012). The
document's fields are listed in :func:`build_document`. :func:`main` never prints, always returns 0
and logs problems to ``<data dir>/logs/prompt-hook.log``.

Only builtin modules plus ``_json`` and ``_sha1`` are imported (``zlib`` only for objects over
4 KB, ``math`` only for long candidate tokens): :mod:`os`, :mod:`json` and :mod:`re` would cost more
start-up time than the capture itself.

Data dir: ``--data-dir`` > ``MISSION_MEMORY_DATA_DIR`` > the platformdirs default for
``user_data_dir("mission-memory", appauthor=False)``, computed here without platformdirs.
"""

import sys
import time

TYPE_CHECKING = False  # mypy treats this name as True; at run time it spares importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

try:
    import posix as _os
except ImportError:  # pragma: no cover - Windows
    import nt as _os  # type: ignore[import-not-found, no-redef, unused-ignore]

_IMPORT_ERROR: BaseException | None = None
try:
    if __package__:
        from mission_memory.capture import redaction
        from mission_memory.capture.loose_objects import BareRepository, make_dirs
    else:  # run by path: sys.path[0] is this folder
        import redaction  # type: ignore[import-not-found, no-redef]
        from loose_objects import BareRepository, make_dirs  # type: ignore[import-not-found, no-redef]
    from _json import encode_basestring as _encode_string
except BaseException as _exc:  # noqa: BLE001 - fail open: main() logs it and exits 0
    _IMPORT_ERROR = _exc

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "GIVE_UP_SHARE",
    "MAX_INPUT_BYTES",
    "SCHEMA_VERSION",
    "HookDeadline",
    "InputProblem",
    "arm_deadline",
    "build_document",
    "capture",
    "command_option",
    "default_data_dir",
    "main",
    "parse_input",
    "process_age_s",
    "resolve_checkout",
    "session_slug",
]

SCHEMA_VERSION = 1
REPO_NAME = "prompts.git"
LOG_NAME = "logs/prompt-hook.log"
FILE_NAME = "prompt.json"
SUBJECT_CHARS = 72
MAX_INPUT_BYTES = 16 * 1024 * 1024
"""Largest stdin the hook reads (bytes); a larger payload is logged and dropped, never half-stored."""
DROP_RECORD_NAME = "logs/prompt-hook.dropped"
"""Same as ``dropped_prompts.RECORD_NAME``, repeated so a normal run does not import that module."""
DEFAULT_TIMEOUT_S = 5
"""The hook's timeout in Claude Code's settings when the command names none (``--timeout-s``); the
installer writes this value into the settings and into the command."""
GIVE_UP_SHARE = 0.7
"""The capture gives up this share of the timeout after its process started (3.5 s of 5 s): the rest
is left for counting the dropped prompt and exiting before Claude Code kills the hook (docs/adr/0055)."""


class HookDeadline(BaseException):
    """The capture ran past its deadline (raised by the interval timer); the prompt is counted as dropped."""


_deadline_armed = False


class InputProblem(ValueError):
    """The hook's stdin holds no storable prompt; the message says what is wrong with it."""


# -- data dir ------------------------------------------------------------------------------------
def _env(name: str) -> str | None:
    """An environment variable read from ``posix.environ`` (bytes keys on POSIX, str on Windows)."""
    if sys.platform == "win32":  # pragma: no cover
        raw = _os.environ.get(name)  # type: ignore[call-overload]
        return raw if isinstance(raw, str) else None
    value = _os.environ.get(name.encode())
    return None if value is None else value.decode("utf-8", "surrogateescape")


def _expand_home(path: str) -> str:
    if path == "~" or path.startswith("~/"):
        home = _env("HOME") or _env("USERPROFILE") or ""
        return home + path[1:]
    return path


def default_data_dir() -> str:
    """The data dir ``mission_memory.config`` would use, computed with the standard library only.

    ``MISSION_MEMORY_DATA_DIR`` (``~`` expanded) wins; otherwise the platformdirs default for
    ``user_data_dir("mission-memory", appauthor=False)``: ``$XDG_DATA_HOME/mission-memory`` or
    ``~/.local/share/mission-memory`` on Linux, ``~/Library/Application Support/mission-memory`` on
    macOS, ``%LOCALAPPDATA%\\mission-memory`` on Windows.
    """
    explicit = _env("MISSION_MEMORY_DATA_DIR")
    if explicit:
        return _expand_home(explicit)
    if sys.platform == "darwin":
        return _expand_home("~/Library/Application Support/mission-memory")
    if sys.platform == "win32":
        base = _env("LOCALAPPDATA") or _expand_home("~/AppData/Local")
        return base + "\\mission-memory"
    xdg = (_env("XDG_DATA_HOME") or "").strip()
    return (xdg or _expand_home("~/.local/share")) + "/mission-memory"


# -- the checkout the prompt was typed in -----------------------------------------------------------
def _read_text(path: str, limit: int = 4096) -> str | None:
    try:
        fd = _os.open(path, _os.O_RDONLY)
    except OSError:
        return None
    try:
        return _os.read(fd, limit).decode("utf-8", "replace")
    finally:
        _os.close(fd)


def _is_dir(path: str) -> bool | None:
    """True for a folder, False for another file, None when ``path`` does not exist."""
    try:
        mode = _os.stat(path).st_mode
    except OSError:
        return None
    return (mode & 0o170000) == 0o040000


def resolve_checkout(cwd: str) -> tuple[str, str | None, str | None]:
    """Find the git top-level of ``cwd`` and its current branch without spawning git.

    Walks up from ``cwd`` to the first folder holding ``.git``. A ``.git`` *file* (worktrees,
    submodules) holds ``gitdir: <path>``; its HEAD is the worktree's own HEAD.

    Returns:
        ``(repository, branch, head)``: the top-level folder (``cwd`` itself when it is not inside a
        repository), the branch name (``None`` when detached or unknown) and, when detached, the
        commit id HEAD points at.
    """
    path = cwd.rstrip("/") or "/"
    while True:
        dot_git = path.rstrip("/") + "/.git"
        kind = _is_dir(dot_git)
        if kind is not None:
            gitdir: str | None = dot_git
            if kind is False:
                text = _read_text(dot_git) or ""
                gitdir = None
                if text.startswith("gitdir:"):
                    target = text[7:].strip()
                    gitdir = target if target.startswith("/") else path.rstrip("/") + "/" + target
            head = _read_text(gitdir + "/HEAD", 512) if gitdir else None
            if head is None:
                return path, None, None
            head = head.strip()
            if head.startswith("ref:"):
                ref = head[4:].strip()
                return path, (ref.removeprefix("refs/heads/")), None
            return path, None, head or None
        parent = path.rpartition("/")[0] or "/"
        if parent == path:
            return cwd, None, None
        path = parent


def _git_dir(repository: str) -> str | None:
    """The git directory holding ``repository``'s config (a worktree's common dir), or None."""
    dot_git = repository.rstrip("/") + "/.git"
    kind = _is_dir(dot_git)
    if kind is None:
        return None
    gitdir = dot_git
    if kind is False:
        text = (_read_text(dot_git) or "").strip()
        if not text.startswith("gitdir:"):
            return None
        target = text[7:].strip()
        gitdir = target if target.startswith("/") else repository.rstrip("/") + "/" + target
    common = (_read_text(gitdir + "/commondir", 1024) or "").strip()
    if common:
        gitdir = common if common.startswith("/") else gitdir.rstrip("/") + "/" + common
    return gitdir


def _config_email(path: str) -> str | None:
    """The last ``user.email`` in one git config file, read by hand (no git process: the hook's budget)."""
    text = _read_text(path, 65536)
    if not text:
        return None
    section = ""
    email: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            end = line.find("]")
            section = line[1:end].strip().lower() if end > 0 else ""
            continue
        key, sep, value = line.partition("=")
        if section != "user" or not sep or key.strip().lower() != "email":
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        else:
            for mark in (" #", " ;", "\t#", "\t;"):
                value = value.split(mark, 1)[0]
        email = value.strip() or email
    return email


def resolve_operator(repository: str, env: "Callable[[str], str | None] | None" = None) -> str | None:
    """Who is prompting or asking: the one operator rule of the hook and the store.

    ``$MISSION_MEMORY_OPERATOR``; else ``user.email`` of the repository's git config, then of the
    user's global config (``$XDG_CONFIG_HOME/git/config``, ``~/.gitconfig``); else the OS user
    (``$USER``, ``$LOGNAME``, ``$USERNAME``, then the password database). ``include`` directives
    are not followed. Retrieval events use this same function
    (:func:`mission_memory.retrieval_events.resolve_operator`), so a prompt and the query after it
    are attributed to the same operator.

    Args:
        repository: the checkout's top-level folder (see :func:`resolve_checkout`).
        env: reads an environment variable; default ``posix.environ`` (the hook's process, where
            :mod:`os` is not imported). A long-lived process passes ``os.environ.get``.
    """
    read = env or _env
    explicit = (read("MISSION_MEMORY_OPERATOR") or "").strip()
    if explicit:
        return explicit
    configs = []
    gitdir = _git_dir(repository)
    if gitdir:
        configs.append(gitdir + "/config")
    xdg = (read("XDG_CONFIG_HOME") or "").strip()
    home = read("HOME") or read("USERPROFILE") or ""
    configs.append((xdg.rstrip("/") if xdg else home + "/.config") + "/git/config")
    configs.append(home + "/.gitconfig")
    for path in configs:  # the repository's own config first: it overrides the global ones
        email = _config_email(path)
        if email:
            return email
    user = read("USER") or read("LOGNAME") or read("USERNAME")
    if user:
        return user
    try:
        import pwd

        return pwd.getpwuid(_os.getuid()).pw_name or None
    except (ImportError, KeyError, OSError):
        return None


# -- the document --------------------------------------------------------------------------------
def _as_text(value: object) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def build_document(payload: dict[str, object], now_ns: int) -> tuple[dict[str, object], str]:
    """Turn the hook payload into the stored document and its commit subject.

    Document fields (``schema`` 1): ``schema``, ``prompt_id`` (``<session>/<time_ns>-<pid>``),
    ``prompt`` (redacted), ``redactions`` (kind -> count), ``timestamp`` (UTC, ISO 8601 with
    microseconds and ``Z``), ``time_ns``, ``session_id``, ``repository``, ``branch``, ``head``
    (detached HEAD only), ``cwd``, ``permission_mode``, ``hook_event_name``, ``transcript_path``,
    ``operator`` (see :func:`resolve_operator`).
    """
    raw_prompt = payload.get("prompt")
    prompt = raw_prompt if isinstance(raw_prompt, str) else ("" if raw_prompt is None else str(raw_prompt))
    prompt, counts = redaction.redact(prompt)
    cwd = _as_text(payload.get("cwd")) or _os.getcwd()
    repository, branch, head = resolve_checkout(cwd)
    session = _as_text(payload.get("session_id"))
    prompt_id = session_slug(session) + "/" + str(now_ns) + "-" + str(_os.getpid())
    seconds, nanos = divmod(now_ns, 1_000_000_000)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanos // 1000:06d}Z"
    document: dict[str, object] = {
        "schema": SCHEMA_VERSION,
        "prompt_id": prompt_id,
        "timestamp": stamp,
        "time_ns": now_ns,
        "session_id": session,
        "repository": repository,
        "branch": branch,
        "head": head,
        "cwd": cwd,
        "permission_mode": _as_text(payload.get("permission_mode")),
        "hook_event_name": _as_text(payload.get("hook_event_name")),
        "transcript_path": _as_text(payload.get("transcript_path")),
        "operator": resolve_operator(repository),
        "redactions": counts,
        "prompt": prompt,
    }
    first_line = prompt.strip().split("\n", 1)[0].strip()
    if len(first_line) > SUBJECT_CHARS:
        cut = first_line.rfind(" ", 0, SUBJECT_CHARS)
        first_line = first_line[: cut if cut > SUBJECT_CHARS // 2 else SUBJECT_CHARS] + " …"
    subject = "".join(ch if ch >= " " else " " for ch in first_line).strip() or "(empty prompt)"
    return document, subject


def session_slug(session: str | None) -> str:
    """A ref-name-safe form of the session id: ``[A-Za-z0-9_-]``, at most 100 characters."""
    if not session:
        return "unknown-session"
    slug = "".join(ch if (ch.isascii() and (ch.isalnum() or ch in "_-")) else "-" for ch in session[:100])
    return slug.strip("-") or "unknown-session"


def _encode_json(value: object) -> str:
    """JSON for the flat document (str, int, None, dict[str, int]); non-ASCII kept as UTF-8."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return (
            "{" + ", ".join(_encode_string(str(k)) + ": " + _encode_json(v) for k, v in value.items()) + "}"
        )
    return _encode_string(str(value))


def _parse_json(text: str) -> object:
    """Parse the hook JSON with the C scanner; on any failure, say what is wrong via :mod:`json`.

    Raises:
        InputProblem: ``text`` is not one JSON value (message with line and column).
    """
    text = text.strip()
    try:
        from _json import make_scanner

        class _Context:
            strict = False
            object_hook = None
            object_pairs_hook = None
            parse_float = float
            parse_int = int
            parse_constant = float

        scanner = make_scanner(_Context())  # type: ignore[arg-type]  # the C scanner only reads these attributes
        value, end = scanner(text, 0)
        if end == len(text):
            return value
    except (StopIteration, SystemError, ValueError, ImportError, RecursionError):
        pass  # the C scanner's errors carry no message (StopIteration: 0, SystemError: ... NULL)
    import json  # failure path only: the pure-Python parser explains what is wrong

    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        raise InputProblem(
            "stdin is not JSON: " + exc.msg + " at line " + str(exc.lineno) + " column " + str(exc.colno)
        ) from None
    except RecursionError:
        raise InputProblem("stdin is not JSON the hook can read: nested too deeply") from None


_JSON_KINDS = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


def parse_input(raw: bytes) -> dict[str, object]:
    """Check and parse the hook's stdin; every way it can be unusable raises with a plain message.

    Args:
        raw: stdin as read, at most :data:`MAX_INPUT_BYTES` plus one byte.

    Returns:
        The hook payload, a JSON object with a ``prompt`` field.

    Raises:
        InputProblem: stdin is empty or blank, larger than :data:`MAX_INPUT_BYTES`, holds a NUL byte,
            is not UTF-8, is not JSON (with line and column), is JSON but not an object, or has no
            ``prompt`` field.
    """
    if not raw:
        raise InputProblem("stdin is empty")
    if len(raw) > MAX_INPUT_BYTES:
        raise InputProblem("stdin larger than " + str(MAX_INPUT_BYTES) + " bytes")
    if not raw.strip():
        raise InputProblem("stdin is blank (" + str(len(raw)) + " bytes of whitespace)")
    nul = raw.find(b"\0")
    if nul >= 0:
        raise InputProblem("stdin holds a NUL byte at offset " + str(nul) + " (JSON never does)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start : exc.start + 1].hex()
        raise InputProblem(
            f"stdin is not UTF-8: byte 0x{byte} at offset {exc.start} ({exc.reason})"
        ) from None
    payload = _parse_json(text)
    if not isinstance(payload, dict):
        kind = "null" if payload is None else _JSON_KINDS.get(type(payload), type(payload).__name__)
        raise InputProblem("stdin JSON is " + kind + ", not an object")
    if "prompt" not in payload:
        keys = ", ".join(str(k)[:40] for k in list(payload)[:10])
        raise InputProblem("stdin JSON has no prompt field (fields: " + (keys or "none") + ")")
    return payload


# -- entry point ---------------------------------------------------------------------------------
def capture(raw: bytes, data_dir: str, now_ns: int | None = None) -> str:
    """Store one prompt from the raw hook input; return the ref written.

    Raises:
        InputProblem: ``raw`` holds no storable prompt (see :func:`parse_input`).
        OSError: the data dir or the repository cannot be written.
    """
    payload = parse_input(raw)
    now = time.time_ns() if now_ns is None else now_ns
    document, subject = build_document(payload, now)
    body = "{\n" + ",\n".join("  " + _encode_string(k) + ": " + _encode_json(v) for k, v in document.items())
    blob_bytes = (body + "\n}\n").encode("utf-8", "replace")
    repo = BareRepository(data_dir.rstrip("/") + "/" + REPO_NAME)
    repo.ensure()
    blob = repo.write_blob(blob_bytes)
    tree = repo.write_tree([(FILE_NAME, blob)])
    operator = "".join(ch for ch in str(document["operator"] or "") if ch not in "<>\n").strip() or "operator"
    message = subject + "\n\nprompt-id: " + str(document["prompt_id"])
    commit = repo.write_commit(
        tree, operator + " <prompt-hook@mission-memory.invalid>", now // 10**9, message
    )
    _disarm()  # from here on the prompt is stored by one rename: never count it as dropped
    ref = repo.create_ref("refs/prompts/" + str(document["prompt_id"]), commit)
    _ensure_drop_record(data_dir)
    return ref


# -- the deadline --------------------------------------------------------------------------------
def process_age_s() -> float:
    """Seconds since this process started, from ``/proc/self/stat`` (Linux; clock-tick resolution),
    so the time the interpreter took to start under load counts too; 0.0 where it cannot be read
    (the deadline then runs from the capture's start)."""
    try:
        text = _read_text("/proc/self/stat", 2048) or ""
        fields = text[text.rindex(")") + 2 :].split()
        started = int(fields[19]) / _os.sysconf("SC_CLK_TCK")
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (ValueError, IndexError, OSError, AttributeError):
        return 0.0


def _on_deadline(signum: int, frame: object) -> None:
    if _deadline_armed:
        raise HookDeadline("the capture ran past its deadline")


def arm_deadline(timeout_s: float) -> float:
    """Raise :class:`HookDeadline` in this process :data:`GIVE_UP_SHARE` of ``timeout_s`` after it started.

    Uses ``setitimer`` (``_signal``, built into the interpreter: no import cost). Returns the seconds
    left (0 or less: the deadline has passed already, nothing is armed).
    """
    global _deadline_armed
    left = timeout_s * GIVE_UP_SHARE - process_age_s()
    if left <= 0:
        return left
    try:
        import _signal  # type: ignore[import-not-found, unused-ignore]  # builtin; signal.py would import enum

        _signal.signal(_signal.SIGALRM, _on_deadline)
        _signal.setitimer(_signal.ITIMER_REAL, left)
        _deadline_armed = True
    except (ImportError, AttributeError, OSError, ValueError):  # no interval timers here: run unbounded
        pass
    return left


def _disarm() -> None:
    global _deadline_armed
    if not _deadline_armed:
        return
    _deadline_armed = False
    try:
        import _signal  # type: ignore[import-not-found, unused-ignore]  # builtin; signal.py would import enum

        _signal.setitimer(_signal.ITIMER_REAL, 0)
    except (ImportError, AttributeError, OSError, ValueError):
        pass


def _ensure_drop_record(data_dir: str) -> None:
    """Pre-allocate the dropped-prompt record on the first run that has disk space (one ``stat`` after that)."""
    try:
        _os.stat(data_dir.rstrip("/") + "/" + DROP_RECORD_NAME)
    except OSError:
        try:  # noqa: SIM105 - contextlib would cost an import in the hook
            _dropped_prompts().ensure_record(data_dir)
        except BaseException:  # noqa: BLE001, S110 - the prompt is stored; the record is retried next run
            pass


def _dropped_prompts() -> "ModuleType":
    """The :mod:`dropped_prompts` module, imported only when it is needed (first run, failures)."""
    if __package__:
        from mission_memory.capture import dropped_prompts
    else:  # run by path: sys.path[0] is this folder
        import dropped_prompts  # type: ignore[import-not-found, no-redef]
    return dropped_prompts


def _log(data_dir: str | None, message: str) -> None:
    """Append one line to the hook log; never raises."""
    try:
        base = (data_dir or default_data_dir()).rstrip("/")
        make_dirs(base + "/logs")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = (stamp + " pid=" + str(_os.getpid()) + " " + message.replace("\n", " | ") + "\n").encode(
            "utf-8", "replace"
        )
        fd = _os.open(base + "/" + LOG_NAME, _os.O_WRONLY | _os.O_CREAT | _os.O_APPEND, 0o600)
        try:
            _os.write(fd, line[:4096])
        finally:
            _os.close(fd)
    except BaseException:  # noqa: BLE001, S110 - the log is best effort; the hook must exit 0
        pass


def command_option(argv: list[str], name: str) -> str | None:
    """The value of ``name`` in a hook's command line (``--name VALUE`` or ``--name=VALUE``), or None."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg[len(name) + 1 :]
    return None


def _data_dir_from_argv(argv: list[str]) -> str | None:
    value = command_option(argv, "--data-dir")
    return None if value is None else _expand_home(value)


def _timeout_from_argv(argv: list[str]) -> float:
    """``--timeout-s``: the timeout the installer wrote into Claude Code's settings (default 5)."""
    try:
        value = float(command_option(argv, "--timeout-s") or DEFAULT_TIMEOUT_S)
    except ValueError:
        return float(DEFAULT_TIMEOUT_S)
    return value if value > 0 else float(DEFAULT_TIMEOUT_S)


def _read_stdin() -> bytes:
    """Stdin, at most :data:`MAX_INPUT_BYTES` + 1 bytes; the rest is read and discarded."""
    if sys.stdin is None:
        return b""
    stream = sys.stdin.buffer
    raw: bytes = stream.read(MAX_INPUT_BYTES + 1)
    if len(raw) > MAX_INPUT_BYTES:
        while stream.read(1 << 20):  # drain, so the writer never sees a broken pipe
            pass
    return raw


def _drop(data_dir: str | None, kind: str, reason: str) -> None:
    """Count a prompt that was not stored in the pre-allocated record; never raises."""
    try:  # noqa: SIM105 - contextlib would cost an import in the hook
        _dropped_prompts().record_drop(data_dir or default_data_dir(), reason, kind)
    except BaseException:  # noqa: BLE001, S110 - fail open
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the hook: read stdin, capture, log any problem. Always returns 0 and prints nothing.

    A prompt that is not stored is counted in the dropped-prompt record (:mod:`dropped_prompts`)
    before the log line is attempted, because on a full disk only the record's in-place update can
    still succeed.

    The capture has a deadline of :data:`GIVE_UP_SHARE` of the hook's timeout (``--timeout-s``, the
    value the installer wrote into the settings), counted from the process's start: past it (a
    loaded machine, a stalled stdin or disk) it gives up and counts a ``deadline`` drop while there
    is still time, instead of being killed by Claude Code with nothing counted (docs/adr/0055).
    """
    data_dir: str | None = None
    args = sys.argv[1:] if argv is None else argv
    try:
        data_dir = _data_dir_from_argv(args) or default_data_dir()
        if _IMPORT_ERROR is not None:
            raise _IMPORT_ERROR
        if arm_deadline(_timeout_from_argv(args)) <= 0:
            raise HookDeadline("the process started too late to capture within its timeout")
        capture(_read_stdin(), data_dir)
    except HookDeadline as exc:
        _disarm()
        _drop(data_dir, "deadline", "deadline")
        _log(data_dir, "prompt dropped: " + str(exc))
    except InputProblem as exc:
        _disarm()
        _drop(data_dir, "input", "input")
        _log(data_dir, "nothing captured: " + str(exc)[:500])
    except BaseException as exc:  # noqa: BLE001 - fail open: log and exit 0 whatever happened
        _disarm()
        reason = type(exc).__name__
        if isinstance(exc, OSError) and exc.errno is not None:
            import errno  # built into the interpreter; failure path only

            reason = errno.errorcode.get(exc.errno, reason)
        _drop(data_dir, "storage", reason)
        _log(data_dir, "capture failed, prompt dropped: " + type(exc).__name__ + ": " + str(exc)[:500])
    _disarm()
    return 0
