"""Loopback listeners that misbehave the ways a real lich (or a stranger) can.

docs/transport.md promises that no listener can hold a hook past its budget or change its
verdict: one that accepts and never answers, one that trickles bytes, one that
resets the connection, one that answers an error status. docs/transport.md also promises
the token never travels through a proxy, so there is a capturing "proxy" that
records every connection it gets. Each listener runs on 127.0.0.1 with a free
port, is a context manager, and records what it saw so tests can wait on it.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TypeVar

# What a Scripted listener answers: a fresh iterable of pieces per connection.
Script = Callable[[], Iterable[bytes]]
L = TypeVar("L", bound="Listener")


class Listener:
    """A TCP listener on 127.0.0.1 that hands each connection to `serve`."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port: int = self._sock.getsockname()[1]
        self.requests: list[bytes] = []
        self.connections = 0
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)

    def env(self, token: str = "tok", card: str = "card-1") -> dict[str, str]:
        return {"LICH_PORT": str(self.port), "LICH_TOKEN": token, "LICH_SESSION_ID": card}

    def __enter__(self: L) -> L:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._sock.close()
        for conn in self._open:
            try:
                conn.close()
            except OSError:
                pass

    def wait(self, count: int = 1, timeout: float = 5.0) -> int:
        """Block until `count` connections arrived; returns how many did."""
        with self._changed:
            self._changed.wait_for(lambda: self.connections >= count, timeout)
            return self.connections

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._open.append(conn)
            with self._changed:
                self.connections += 1
                self._changed.notify_all()
            threading.Thread(target=self._guarded, args=(conn,), daemon=True).start()

    def _guarded(self, conn: socket.socket) -> None:
        try:
            self.serve(conn)
        except OSError:
            pass

    def read_request(self, conn: socket.socket, timeout: float = 3.0) -> bytes:
        """Headers and a Content-Length body, as far as the client sends them."""
        conn.settimeout(timeout)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip() or 0)
            while len(body) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                body += chunk
                data += chunk
        except (OSError, ValueError):
            pass
        with self._changed:
            self.requests.append(data)
            self._changed.notify_all()
        return data

    def serve(self, conn: socket.socket) -> None:
        raise NotImplementedError


class Hanging(Listener):
    """Accepts, reads the request, never answers: the lich that froze."""

    def serve(self, conn: socket.socket) -> None:
        self.read_request(conn)
        self._stop.wait()


class Silent(Listener):
    """Accepts and reads nothing at all, with a tiny receive buffer: a big body
    cannot all go out, so the client's send blocks."""

    def __init__(self) -> None:
        super().__init__()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)

    def serve(self, conn: socket.socket) -> None:
        self._stop.wait()


class Trickle(Listener):
    """Answers one byte at a time, slower than any read timeout notices.

    Each byte arrives well inside any per-read timeout a client might use, so
    only an absolute deadline stops it from waiting for the whole response.
    """

    def __init__(self, interval: float = 0.2) -> None:
        super().__init__()
        self.interval = interval

    def serve(self, conn: socket.socket) -> None:
        self.read_request(conn)
        response = b"HTTP/1.1 204 No Content\r\nX-Slow: " + b"a" * 10_000 + b"\r\n\r\n"
        for byte in response:
            if self._stop.wait(self.interval):
                return
            conn.sendall(bytes([byte]))


class Reset(Listener):
    """Reads the request, then resets the connection (RST, not FIN)."""

    def serve(self, conn: socket.socket) -> None:
        self.read_request(conn)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()


class Status(Listener):
    """Answers every request with a fixed status, like a lich that refuses."""

    def __init__(self, status: int, reason: bytes = b"refused") -> None:
        super().__init__()
        self.status = status
        self.reason = reason

    def serve(self, conn: socket.socket) -> None:
        self.read_request(conn)
        conn.sendall(
            b"HTTP/1.1 %d X\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
            % (self.status, len(self.reason), self.reason)
        )
        conn.close()


class Scripted(Listener):
    """Reads the request, then sends `script()`'s pieces `interval` seconds apart.

    After the last piece it holds the connection open until the client closes
    it, so a client that waits for the server to close is caught waiting. An
    endless script (a generator) runs until the client goes away. `closed_at`
    keeps when (time.monotonic()) each client was seen gone: a write that
    failed, or end of file.
    """

    def __init__(self, script: Script, interval: float = 0.0) -> None:
        super().__init__()
        self.script = script
        self.interval = interval
        self.closed_at: list[float] = []

    def serve(self, conn: socket.socket) -> None:
        self.read_request(conn)
        try:
            for piece in self.script():
                if self.interval and self._stop.wait(self.interval):
                    return
                if self._stop.is_set():
                    return
                conn.sendall(piece)
            conn.settimeout(None)
            while conn.recv(65536):
                pass
        except OSError:
            pass
        with self._changed:
            self.closed_at.append(time.monotonic())
            self._changed.notify_all()

    def wait_closed(self, count: int = 1, timeout: float = 10.0) -> list[float]:
        with self._changed:
            self._changed.wait_for(lambda: len(self.closed_at) >= count, timeout)
            return list(self.closed_at)


class CapturingProxy(Listener):
    """Records whatever reaches it; a client honouring HTTP_PROXY would land here."""

    def serve(self, conn: socket.socket) -> None:
        self.read_request(conn, timeout=1.0)
        conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        conn.close()


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll `condition` until it holds or `timeout` passes (a condition, not a sleep)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
