"""Raw-socket HTTP servers on loopback that misbehave slowly, for the deadline tests (ADR 0019).

pytest-httpserver answers at once, so it cannot play a server that trickles. Two behaviours:

* ``trickle``: reads the request, sends a 200 status line and headers at once, then the body one byte
  every ``interval`` seconds (the per-read timeout of httpx restarts on every byte);
* ``hang``: accepts the connection, reads the request, never answers.

Each connection is served by its own thread; :meth:`SlowHttpServer.close` wakes them all, closes every
socket and joins the threads, so a test leaves nothing behind.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

__all__ = ["SlowHttpServer", "slow_http_server"]

Mode = Literal["trickle", "hang"]


class SlowHttpServer:
    """A loopback HTTP server that trickles its body or never answers.

    Args:
        mode: ``"trickle"`` or ``"hang"``.
        body: the body a trickling server sends (``Content-Length`` is its full length).
        interval: seconds between two body bytes.
    """

    def __init__(self, mode: Mode, body: bytes = b"{}", interval: float = 0.05) -> None:
        self.mode = mode
        self.body = body
        self.interval = interval
        self.requests = 0
        self._stop = threading.Event()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._listener.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        """``http://127.0.0.1:<port>``."""
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self._acceptor.start()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            with self._lock:
                self.requests += 1
                self._threads.append(worker)
            worker.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(1.0)
            try:
                self._read_request(conn)
                if self.mode == "hang":
                    self._stop.wait()
                    return
                head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(self.body)}\r\n\r\n"
                conn.sendall(head.encode("ascii"))
                for i in range(len(self.body)):
                    if self._stop.wait(self.interval):
                        return
                    conn.sendall(self.body[i : i + 1])
            except OSError:  # the client gave up and closed: that is the point of the test
                return

    @staticmethod
    def _read_request(conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return
            rest += chunk

    def close(self) -> None:
        """Stop serving: wake every connection, close every socket, join every thread."""
        self._stop.set()
        self._acceptor.join()
        self._listener.close()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join()


@contextmanager
def slow_http_server(mode: Mode, body: bytes = b"{}", interval: float = 0.05) -> Iterator[SlowHttpServer]:
    """A :class:`SlowHttpServer` closed when the block ends."""
    server = SlowHttpServer(mode, body, interval)
    try:
        yield server
    finally:
        server.close()
