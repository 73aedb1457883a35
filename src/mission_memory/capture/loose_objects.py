"""Write git objects and refs into a bare repository by hand: zlib + SHA-1, no git subprocess.

The prompt hook stores each prompt as one orphan commit (blob -> tree -> commit) plus one ref, and
must do it in a few milliseconds (issue #3 item 3; docs/adr/0010). Four ``git`` subprocesses cost
25-30 ms and dulwich/pygit2 64-80 ms, so this module writes the loose-object format directly:
``zlib(b"<kind> <size>\\0" + body)`` at ``objects/<sha[:2]>/<sha[2:]>`` (see :func:`zlib_stream`). The result is an ordinary
repository that ``git fsck --strict``, ``git log`` and ``git gc`` accept.

Concurrency: every file is written under a unique temporary name and published with ``link`` (fails
if the target exists; a racing writer of the same object wrote identical bytes) or ``rename``, so a
reader or a parallel writer never sees a partial file. Refs are one file per prompt
(docs/adr/0012), so no two writers ever update the same ref. Only the built-in ``posix`` module
(``nt`` on Windows) is used because importing :mod:`os` costs a millisecond of start-up.
"""

try:
    import posix as _os  # built into the interpreter: no import cost
except ImportError:  # pragma: no cover - Windows
    import nt as _os  # type: ignore[import-not-found, no-redef, unused-ignore]

try:
    from _sha1 import sha1 as _sha1  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - interpreters without the builtin module
    from hashlib import sha1 as _sha1

__all__ = ["BareRepository", "make_dirs", "zlib_stream"]

STORED_LIMIT = 4_096
"""Objects up to this size are written as one stored (uncompressed) deflate block, see :func:`zlib_stream`."""

_O_CREATE = _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL | getattr(_os, "O_BINARY", 0)
_HEAD = b"ref: refs/heads/main\n"
_CONFIG = b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n\tsharedRepository = 0600\n"
"""``sharedRepository = 0600``: git itself (``prompts forget``, ``gc``) keeps the files it writes 0600, folders 0700."""
FILE_MODE = 0o600
"""Every file the hook writes: the prompts are the operator's own (folders: :data:`FOLDER_MODE`)."""
FOLDER_MODE = 0o700
"""Every folder the hook creates, ancestors of the data dir too (the XDG base directory rule)."""
_DESCRIPTION = b"mission-memory prompt corpus: one orphan commit per operator prompt\n"


class BareRepository:
    """A bare git repository that objects and refs are written into directly.

    Args:
        path: the repository folder (``<data dir>/prompts.git``); created by :meth:`ensure` if missing.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._tmp_counter = 0
        self._pid = _os.getpid()

    # -- repository ------------------------------------------------------------------------------
    def ensure(self) -> None:
        """Create the repository skeleton if it does not exist yet (safe against parallel callers).

        The skeleton is built in a private temporary folder and renamed into place, so a concurrent
        caller either sees no repository or a complete one.

        Raises:
            OSError: the parent folder cannot be created or written.
        """
        if _exists(self.path + "/objects") and _exists(self.path + "/HEAD"):
            return
        parent = self.path.rpartition("/")[0] or "."
        make_dirs(parent)
        tmp = self._tmp_name(self.path)
        _os.mkdir(tmp, FOLDER_MODE)
        for sub in ("objects", "objects/info", "objects/pack", "refs", "refs/heads", "refs/tags", "info"):
            _os.mkdir(tmp + "/" + sub, FOLDER_MODE)
        _write_new(tmp + "/HEAD", _HEAD)
        _write_new(tmp + "/config", _CONFIG)
        _write_new(tmp + "/description", _DESCRIPTION)
        try:
            _os.rename(tmp, self.path)
        except OSError:
            created_by_another = _exists(self.path + "/HEAD")
            try:
                _remove_tree(tmp)
            except OSError:
                if not created_by_another:
                    raise
            if not created_by_another:
                raise

    # -- objects ---------------------------------------------------------------------------------
    def write_object(self, kind: bytes, body: bytes) -> str:
        """Store one object and return its 40-hex SHA-1.

        Args:
            kind: ``b"blob"``, ``b"tree"`` or ``b"commit"``.
            body: the object's content without the header.
        """
        data = kind + b" " + str(len(body)).encode() + b"\0" + body
        sha: str = _sha1(data).hexdigest()
        folder = self.path + "/objects/" + sha[:2]
        target = folder + "/" + sha[2:]
        if _exists(target):
            return sha
        try:  # noqa: SIM105 - contextlib would cost an import in the hook
            _os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:
            pass
        self._publish(target, zlib_stream(data), replace=False)
        return sha

    def write_blob(self, content: bytes) -> str:
        """Store ``content`` as a blob; return its SHA-1."""
        return self.write_object(b"blob", content)

    def write_tree(self, entries: list[tuple[str, str]]) -> str:
        """Store a tree of regular files; ``entries`` are ``(file name, blob sha)``. Return its SHA-1."""
        body = b"".join(
            b"100644 " + name.encode() + b"\0" + bytes.fromhex(sha) for name, sha in sorted(entries)
        )
        return self.write_object(b"tree", body)

    def write_commit(self, tree: str, ident: str, seconds: int, message: str) -> str:
        """Store a parentless commit; return its SHA-1.

        Args:
            tree: SHA-1 of the commit's tree.
            ident: ``"Name <email>"`` used as author and committer.
            seconds: commit time, seconds since the epoch (written as UTC, ``+0000``).
            message: commit message; a trailing newline is added.
        """
        stamp = ident + " " + str(seconds) + " +0000"
        text = "tree " + tree + "\nauthor " + stamp + "\ncommitter " + stamp + "\n\n" + message + "\n"
        return self.write_object(b"commit", text.encode("utf-8", "replace"))

    # -- refs ------------------------------------------------------------------------------------
    def create_ref(self, name: str, sha: str) -> str:
        """Create the new ref ``name`` (e.g. ``refs/prompts/<session>/<id>``) pointing at ``sha``.

        Never overwrites: if ``name`` exists, ``-1``, ``-2``, ... is appended. Returns the ref written.
        """
        path = self.path + "/" + name
        make_dirs(path.rpartition("/")[0])
        candidate, n = name, 0
        while True:
            try:
                self._publish(self.path + "/" + candidate, sha.encode() + b"\n", replace=False, strict=True)
                return candidate
            except FileExistsError:
                n += 1
                candidate = name + "-" + str(n)

    # -- files -----------------------------------------------------------------------------------
    def _tmp_name(self, target: str) -> str:
        self._tmp_counter += 1
        folder, _, base = target.rpartition("/")
        return folder + "/.tmp-" + base[:16] + "-" + str(self._pid) + "-" + str(self._tmp_counter)

    def _publish(self, target: str, data: bytes, *, replace: bool, strict: bool = False) -> None:
        """Write ``data`` to a temporary file and move it to ``target`` atomically.

        With ``strict``, an existing ``target`` raises :class:`FileExistsError`; otherwise an existing
        target is kept (objects are content-addressed, so it holds the same bytes).
        """
        tmp = self._tmp_name(target)
        _write_new(tmp, data)
        try:
            if replace:
                _os.replace(tmp, target)
                return
            try:
                _os.link(tmp, target)
            except FileExistsError:
                if strict:
                    raise
            except OSError:  # file systems without hard links
                if strict and _exists(target):
                    raise FileExistsError(target) from None
                _os.rename(tmp, target)
                return
        finally:
            if _exists(tmp):
                _os.unlink(tmp)


def zlib_stream(data: bytes) -> bytes:
    """``data`` as a zlib stream, the encoding of a git loose object.

    Small objects (up to :data:`STORED_LIMIT` bytes: the tree, the commit and the blob of a typical
    prompt) become one *stored* deflate block with the Adler-32 checksum computed here, because
    loading the ``zlib`` extension costs ~0.4 ms of the hook's start-up, about what the pure-Python
    checksum of 4 KB costs. Larger ones go through ``zlib.compress``. Both are valid zlib streams that git (and ``zlib.decompress``) read alike.
    """
    size = len(data)
    if size > STORED_LIMIT:
        import zlib

        return zlib.compress(data, 1)
    from _operator import mul  # built into the interpreter

    a = (1 + sum(data)) % 65521
    b: int = (size + sum(map(mul, range(size, 0, -1), data))) % 65521
    header = b"\x78\x01\x01" + size.to_bytes(2, "little") + (size ^ 0xFFFF).to_bytes(2, "little")
    return header + data + ((b << 16) | a).to_bytes(4, "big")


def _exists(path: str) -> bool:
    try:
        _os.stat(path)
    except OSError:
        return False
    return True


def _write_new(path: str, data: bytes) -> None:
    """Create ``path`` with ``data``; a partly written file (full disk) is removed before raising."""
    fd = _os.open(path, _O_CREATE, FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            written = _os.write(fd, view)
            view = view[written:]
    except BaseException:
        _os.close(fd)
        try:  # noqa: SIM105 - contextlib would cost an import in the hook
            _os.unlink(path)
        except OSError:
            pass
        raise
    _os.close(fd)


def make_dirs(path: str) -> None:
    """``os.makedirs(path, FOLDER_MODE, exist_ok=True)`` without importing :mod:`os`."""
    if not path or _exists(path):
        return
    make_dirs(path.rpartition("/")[0])
    try:  # noqa: SIM105 - contextlib would cost an import in the hook
        _os.mkdir(path, FOLDER_MODE)
    except FileExistsError:
        pass


def _remove_tree(path: str) -> None:
    for entry in _os.listdir(path):
        full = path + "/" + entry
        try:
            _os.rmdir(full)
        except OSError:
            try:
                _os.unlink(full)
            except OSError:
                _remove_tree(full)  # removes ``full`` itself too
    _os.rmdir(path)
