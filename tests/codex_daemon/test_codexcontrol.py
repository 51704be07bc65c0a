"""The control socket's client (base/codexcontrol.py) against daemons that misbehave: whatever
one sends, it costs the caller at most the connection's byte bound and its deadline (the sender's
request and doctor's `hooks/list` both stop there). Real sockets, a thread playing the daemon."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lich_hooks.base.codexcontrol import CONTROL, Connection, Unanswered

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="binds through /proc/self/fd")

Daemon = Callable[[socket.socket], None]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / CONTROL[0]).mkdir()
    return tmp_path


@pytest.fixture
def daemon(home: Path) -> Iterator[Callable[[Daemon], None]]:
    """Plays the daemon for one connection with `serve`, which stops when the client has gone."""
    server = socket.socket(socket.AF_UNIX)
    folder = os.open(home / CONTROL[0], os.O_RDONLY | os.O_DIRECTORY)
    try:  # tmp_path may be longer than a socket address holds
        server.bind(f"/proc/self/fd/{folder}/{CONTROL[1]}")
    finally:
        os.close(folder)
    server.listen(1)
    threads: list[threading.Thread] = []

    def play(serve: Daemon) -> None:
        def run() -> None:
            conn, _ = server.accept()
            with conn:
                try:
                    serve(conn)
                except OSError:
                    pass  # the client has gone

        threads.append(threading.Thread(target=run, daemon=True))
        threads[-1].start()

    yield play
    for thread in threads:
        thread.join(10)
    server.close()


def handshake(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(4096)
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")


def test_a_flooding_daemon_costs_at_most_the_byte_bound(
    home: Path, daemon: Callable[[Daemon], None]
) -> None:
    """Notifications without end and never the answer: the client stops at `limit` bytes read,
    long before its deadline."""

    def flood(conn: socket.socket) -> None:
        handshake(conn)
        note = b'{"method":"thread/status"}'
        while True:
            conn.sendall(bytes([0x81, len(note)]) + note)

    daemon(flood)
    with socket.socket(socket.AF_UNIX) as sock:
        client = Connection(sock, 30.0, 4096)
        started = time.monotonic()
        client.connect(str(home))
        client.upgrade()
        with pytest.raises(Unanswered, match="within 4096 bytes"):
            client.request(1, "initialize", {})
        assert client.read == 4096
        assert time.monotonic() - started < 5


def test_a_trickling_daemon_costs_at_most_the_deadline(
    home: Path, daemon: Callable[[Daemon], None]
) -> None:
    """A byte now and then, each well within any one read's patience, and the handshake never
    whole: the deadline is the connection's, not each read's."""
    gone = threading.Event()

    def trickle(conn: socket.socket) -> None:
        conn.recv(4096)
        for _ in range(60):  # 3 s at most, then EOF
            conn.sendall(b"H")
            if gone.wait(0.05):
                return

    daemon(trickle)
    with socket.socket(socket.AF_UNIX) as sock:
        client = Connection(sock, 0.5, 1 << 16)
        started = time.monotonic()
        client.connect(str(home))
        with pytest.raises(TimeoutError):
            client.upgrade()
        took = time.monotonic() - started
    gone.set()
    assert 0.4 < took < 2.0
