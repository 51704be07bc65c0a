"""doctor asks Codex's running app-server for its hooks' trust (`hooks/list` on the control
socket) and computes the trust hash only where nothing answers, saying which it used. Here:
the fallback, and that the question is bounded; tests/real_clients/test_codex_trust.py asks
the real Codex 0.171.0."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.base.codexcontrol import CONTROL
from lich_hooks.human.settings import codex_state
from tests.operator.conftest import Scratch
from tests.operator.test_doctor import checks, in_lich, lich  # fixtures, shared

__all__ = ["in_lich", "lich"]

COMPUTED = "(computed: no Codex app-server running to ask)"


def control_socket(scratch: Scratch, far: bool = False) -> Path:
    """Where Codex keeps it: a symlink in CODEX_HOME to a socket in a short temporary path;
    `far`: a path longer than a socket address holds (107 bytes)."""
    link = scratch.home / ".codex" / Path(*CONTROL)
    link.parent.mkdir(parents=True, exist_ok=True)
    target = Path(tempfile.mkdtemp(dir="/tmp")) / "s"
    if far:
        target = scratch.tmp / ("far" * 40) / "s"
        target.parent.mkdir()
    link.symlink_to(target)
    return target


def listen(target: Path) -> socket.socket:
    """A listening socket at `target`, bound through its folder's descriptor (however long)."""
    server = socket.socket(socket.AF_UNIX)
    folder = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        server.bind(f"/proc/self/fd/{folder}/{target.name}")
    finally:
        os.close(folder)
    server.listen(4)
    return server


def codex_row(scratch: Scratch, env: dict[str, str]) -> tuple[str, float]:
    started = time.monotonic()
    ran = scratch.cli("doctor", "--json", env=env)
    took = time.monotonic() - started
    return str(checks(json.loads(ran.stdout))["Codex user settings"]["details"]), took


def test_without_an_app_server_the_hash_is_computed_and_doctor_says_so(
    scratch: Scratch, in_lich: dict[str, str]
) -> None:
    assert scratch.cli("install", "codex").returncode == 0
    details, _ = codex_row(scratch, in_lich)
    assert "not trusted yet" in details and COMPUTED in details


def test_a_stale_socket_is_no_answer(scratch: Scratch, in_lich: dict[str, str]) -> None:
    """A daemon that died left its socket: nothing listens, nothing is started."""
    assert scratch.cli("install", "codex").returncode == 0
    target = control_socket(scratch)
    with socket.socket(socket.AF_UNIX) as dead:
        dead.bind(str(target))
    details, _ = codex_row(scratch, in_lich)
    assert COMPUTED in details
    with socket.socket(socket.AF_UNIX) as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(str(target))  # and still nothing listens: doctor started nothing


@pytest.fixture
def silent(scratch: Scratch) -> Iterator[None]:
    """A control socket that accepts and never answers (a hung daemon)."""
    server = listen(control_socket(scratch))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_a_daemon_that_never_answers_costs_at_most_the_bound(
    scratch: Scratch, in_lich: dict[str, str], silent: None
) -> None:
    assert scratch.cli("install", "codex").returncode == 0
    details, hung = codex_row(scratch, in_lich)
    assert COMPUTED in details
    os.unlink(os.path.realpath(scratch.home / ".codex" / Path(*CONTROL)))
    _, alone = codex_row(scratch, in_lich)
    # the same doctor run with and without the silent socket: the difference is the wait
    assert hung - alone < codex_state.ASK_SECONDS + 2.0


def _answer_hooks_list(conn: socket.socket, listed: list[dict[str, object]]) -> None:
    """Play Codex's control socket for one client: the WebSocket upgrade, then answer
    `initialize` and `hooks/list` (the shapes measured on Codex 0.171.0)."""
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(4096)
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
    while True:
        size = conn.recv(2, socket.MSG_WAITALL)[1] & 0x7F
        if size >= 126:
            size = int.from_bytes(conn.recv(2 if size == 126 else 8, socket.MSG_WAITALL), "big")
        mask = conn.recv(4, socket.MSG_WAITALL)
        masked = conn.recv(size, socket.MSG_WAITALL)
        message = json.loads(bytes(b ^ mask[i % 4] for i, b in enumerate(masked)))
        result: object = None
        if message.get("method") == "initialize":
            result = {"userAgent": "codex"}
        elif message.get("method") == "hooks/list":
            result = {"data": [{"cwd": "/", "hooks": listed, "warnings": [], "errors": []}]}
        if result is not None:
            data = json.dumps({"id": message["id"], "result": result}).encode()
            head = bytes([0x81, 126]) + len(data).to_bytes(2, "big")
            conn.sendall(head + data)
            if message.get("method") == "hooks/list":
                return


@pytest.mark.parametrize("far", [False, True], ids=["near", "far"])
def test_codex_s_answer_wins_over_the_computed_hash(
    scratch: Scratch, in_lich: dict[str, str], far: bool
) -> None:
    """config.toml holds no trust, the app-server says trusted: doctor reports Codex's. Where
    the socket lies too far for a socket address (`far`), doctor reaches it all the same."""
    assert scratch.cli("install", "codex").returncode == 0
    key = f"{scratch.home / '.codex' / 'hooks.json'}:session_start:0:0"
    listed = [{"key": key, "trustStatus": "trusted", "enabled": True, "currentHash": "sha256:x"}]
    with listen(control_socket(scratch, far)) as server:

        def serve() -> None:
            conn, _ = server.accept()
            with conn:
                _answer_hooks_list(conn, listed)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        ran = scratch.cli("doctor", env=in_lich)
        thread.join(10)
    assert "SessionStart codex: trusted (Codex's running app-server says so)" in ran.stdout
