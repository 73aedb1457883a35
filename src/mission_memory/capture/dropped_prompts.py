"""The dropped-prompt record: a pre-allocated, fixed-size file counting prompts the hook could not store.

When the disk is full the prompt hook can store nothing and its log append fails too, so the loss
would be silent (issue 9 item 6). This module owns ``<data dir>/logs/prompt-hook.dropped``: a file of
exactly :data:`RECORD_SIZE` bytes, created when the hook is installed or on its first successful
run, and afterwards only rewritten in place (``pwrite`` at offset 0), which needs no new disk blocks.
It holds counts and times, never prompt text (docs/adr/0020)::

    mission-memory dropped-prompts v1 storage=<n> input=<n> first_ns=<ns> last_ns=<ns> last_reason=<code> deadline=<n>

padded with spaces to :data:`RECORD_SIZE` bytes and ending in a newline. ``storage`` counts prompts
lost because the data dir could not be written (full disk, permissions); ``input`` counts hook runs
whose stdin held no storable prompt; ``deadline`` counts prompts given up because the capture ran
past its deadline, before Claude Code's timeout would have killed it (docs/adr/0055; a record
written before that field reads it as 0, and older readers ignore it). ``last_reason`` is a short code: an errno name such as
``ENOSPC``, an exception class name, or ``input``.

Stdlib only and builtins only (the hook imports it, on its failure path and once on first run);
:func:`read_record` is what ``mission-memory hook status`` reports.
"""

import time

try:
    import posix as _os
except ImportError:  # pragma: no cover - Windows
    import nt as _os  # type: ignore[import-not-found, no-redef, unused-ignore]

__all__ = ["RECORD_NAME", "RECORD_SIZE", "DroppedPrompts", "ensure_record", "read_record", "record_drop"]

RECORD_NAME = "logs/prompt-hook.dropped"
"""Path of the record relative to the data dir."""

RECORD_SIZE = 192
"""Bytes in the record file; every field fits with room to spare (counts up to 10**12)."""

_MAGIC = "mission-memory dropped-prompts v1"
_FIELDS = ("storage", "input", "first_ns", "last_ns", "deadline")


class DroppedPrompts:
    """What the record says: how many prompts were dropped, when, and why (no prompt text).

    Attributes:
        storage: prompts lost because the data dir could not be written.
        input: hook runs whose stdin held no storable prompt.
        first_ns: time of the first drop, ns since the epoch (0 when none).
        last_ns: time of the latest drop, ns since the epoch (0 when none).
        last_reason: short code of the latest drop (``ENOSPC``, ``input``, ``deadline``...), ``""`` when none.
        deadline: prompts given up at the capture's deadline (a loaded machine, a stalled stdin).
    """

    __slots__ = ("deadline", "first_ns", "input", "last_ns", "last_reason", "storage")

    def __init__(
        self, storage: int = 0, input: int = 0, first_ns: int = 0, last_ns: int = 0, last_reason: str = "",
        deadline: int = 0,
    ) -> None:
        self.storage = storage
        self.input = input
        self.first_ns = first_ns
        self.last_ns = last_ns
        self.last_reason = last_reason
        self.deadline = deadline

    @property
    def total(self) -> int:
        """All drops: ``storage + input + deadline``."""
        return self.storage + self.input + self.deadline

    def encode(self) -> bytes:
        """The record as exactly :data:`RECORD_SIZE` bytes."""
        reason = "".join(ch for ch in self.last_reason if ch.isascii() and (ch.isalnum() or ch in "_-."))[:32]
        line = (
            f"{_MAGIC} storage={self.storage} input={self.input} first_ns={self.first_ns} "
            f"last_ns={self.last_ns} last_reason={reason or '-'} deadline={self.deadline}"
        )
        return (line[: RECORD_SIZE - 1].ljust(RECORD_SIZE - 1) + "\n").encode("ascii")


def _decode(data: bytes) -> DroppedPrompts | None:
    text = data.decode("ascii", "replace")
    if not text.startswith(_MAGIC):
        return None
    values: dict[str, str] = {}
    for part in text[len(_MAGIC) :].split():
        key, _, value = part.partition("=")
        values[key] = value
    try:
        numbers = [int(values.get(name, "0")) for name in _FIELDS]
    except ValueError:
        return None
    reason = values.get("last_reason", "-")
    storage, inputs, first_ns, last_ns, deadline = numbers
    return DroppedPrompts(storage, inputs, first_ns, last_ns, "" if reason == "-" else reason, deadline)


def ensure_record(data_dir: str) -> None:
    """Create the zeroed record under ``data_dir`` unless it exists (its folder too).

    Written under a temporary name and published with ``link``, so parallel first runs and a reader
    never see a short file.

    Raises:
        OSError: the data dir cannot be written.
    """
    path = data_dir.rstrip("/") + "/" + RECORD_NAME
    folder = path.rpartition("/")[0]
    _make_dirs(folder)
    tmp = folder + "/.tmp-dropped-" + str(_os.getpid()) + "-" + str(time.time_ns())
    fd = _os.open(tmp, _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL, 0o600)
    try:
        try:
            _os.write(fd, DroppedPrompts().encode())
        finally:
            _os.close(fd)
        try:  # noqa: SIM105 - contextlib would cost an import in the hook
            _os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        _os.unlink(tmp)


def record_drop(data_dir: str, reason: str, kind: str = "storage", now_ns: int | None = None) -> bool:
    """Count one dropped prompt in the record, in place; never raises.

    Args:
        data_dir: the hook's data dir.
        reason: short code for the cause (``ENOSPC``, ``input``, an exception class name).
        kind: ``"storage"``, ``"input"`` or ``"deadline"``.
        now_ns: time of the drop (default: now), ns since the epoch.

    Returns:
        True when the record was updated; False when it is missing and could not be created, or
        could not be written.
    """
    path = data_dir.rstrip("/") + "/" + RECORD_NAME
    try:
        try:
            fd = _os.open(path, _os.O_RDWR)
        except FileNotFoundError:
            ensure_record(data_dir)  # first run on a disk that still has room for 192 bytes
            fd = _os.open(path, _os.O_RDWR)
        try:
            _os.lockf(fd, _os.F_LOCK, 0)  # parallel hooks: read-modify-write under a lock
            record = _decode(_os.pread(fd, RECORD_SIZE, 0)) or DroppedPrompts()
            now = time.time_ns() if now_ns is None else now_ns
            if kind == "input":
                record.input += 1
            elif kind == "deadline":
                record.deadline += 1
            else:
                record.storage += 1
            record.first_ns = record.first_ns or now
            record.last_ns = now
            record.last_reason = reason
            _os.pwrite(fd, record.encode(), 0)
        finally:
            _os.close(fd)  # closing releases the lock
    except BaseException:  # noqa: BLE001 - the hook fails open; nothing else can be done here
        return False
    return True


def read_record(data_dir: str) -> DroppedPrompts | None:
    """The record under ``data_dir``, or ``None`` when the hook never created one.

    A record that exists but cannot be parsed reads as all zeros with ``last_reason`` ``"unreadable"``.
    """
    path = data_dir.rstrip("/") + "/" + RECORD_NAME
    try:
        fd = _os.open(path, _os.O_RDONLY)
    except OSError:
        return None
    try:
        data = _os.read(fd, RECORD_SIZE)
    finally:
        _os.close(fd)
    return _decode(data) or DroppedPrompts(last_reason="unreadable")


def _make_dirs(path: str) -> None:
    if not path:
        return
    try:
        _os.stat(path)
    except OSError:
        _make_dirs(path.rpartition("/")[0])
        try:  # noqa: SIM105 - contextlib would cost an import in the hook
            _os.mkdir(path, 0o700)  # the mode of loose_objects.FOLDER_MODE (not imported: hook start-up)
        except FileExistsError:
            pass
