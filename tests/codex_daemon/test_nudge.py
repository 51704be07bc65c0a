"""The sender's own request to Codex's daemon (nudge.py): it makes the daemon's log come past the
moment the rule needs when the daemon would log nothing more, on a connection no other card's
hook counts as an unread client. Real processes, real sockets, the fake daemon's control socket
(a WebSocket, as 0.171.0's) and its write cycle."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.hook import procfs
from lich_hooks.hook.shared.codex import nudge
from lich_hooks.human.standin.server import StandIn
from tests.codex_daemon.fake_codex import FakeCodex
from tests.codex_daemon.test_fake_daemon import HOOK, payload
from tests.support.runner import base_env, wait_for_log

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and sock_diag")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "projA"
    folder.mkdir()
    return folder


def marks(env: dict[str, str]) -> list[str]:
    folder = Path(env["LICH_HOOK_STATE_DIR"]) / nudge.MARKS[0]
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_a_quiet_daemon_is_made_to_write_and_the_card_is_reported(
    fake: FakeCodex, project: Path, tmp_path: Path, lich: StandIn
) -> None:
    """Card A alone; its hook runs as its TUI connects, and the daemon then logs nothing (the
    turn failed at once). The sender waited SETTLE for a daemon row past the TUI's connect +
    REQUEST_AFTER and refused; now its one request, sent once the clock is past that, is
    that row (a second would mean it asked before the moment it needed)."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client = fake.start_client(env, project)
    fake.run_hook(HOOK, payload(project), project, by=client, turn=False)
    [record] = wait_for_log(env, 1, timeout=30)
    assert record["decision"] == "report", record
    assert record["codex_requests"] == 1, record
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-A"
    assert marks(env) == []  # let go of when the sender was done


@pytest.mark.parametrize("marked", [True, False], ids=["marked", "unmarked"])
def test_a_sender_s_open_request_is_no_unread_client_to_another_card_s_hook(
    fake: FakeCodex, project: Path, tmp_path: Path, lich: StandIn, marked: bool
) -> None:
    """While a sender's request is connected, card A's hook probes the daemon: the connection
    is held by a process that is no codex client. Marked as the sender marks it (this test
    process plays the sender), it is recognised and card A is reported; unmarked, it is any
    program's connection, and the hook refuses at once, as before."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client = fake.start_client(env, project)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        if marked:
            nudge.mark(env, sock)
        sock.connect(fake.socket)
        sock.sendall(b"c")
        assert sock.recv(2) == b"hi"  # accepted: the daemon holds its end
        fake.run_hook(HOOK, payload(project), project, by=client)
        [record] = wait_for_log(env, 1)
    if marked:
        assert record["decision"] == "report", record
        assert [r.accepted["session_id"] for r in lich.wait(1) if r.accepted] == ["card-A"]
    else:
        assert record["decision"] == "codex-daemon-peer-unaccounted", record
        assert lich.received == []


@pytest.fixture
def holder() -> Iterator[tuple[int, int]]:
    """(pid, socket inode) of another process that alone holds a connected socket."""
    mine, theirs = socket.socketpair()
    child = subprocess.Popen(
        [sys.executable, "-c", f"import sys; sys.stdin.read()  # holds fd {theirs.fileno()}"],
        stdin=subprocess.PIPE,
        pass_fds=(theirs.fileno(),),
    )
    inode = os.fstat(theirs.fileno()).st_ino
    theirs.close()
    try:
        yield child.pid, inode
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(5)
        mine.close()


def _write_mark(env: dict[str, str], inode: int, text: str) -> None:
    from lich_hooks.hook import state

    state.write(env, nudge.MARKS, str(inode), text.encode())


def test_ours_is_a_mark_of_a_live_process_that_holds_the_socket(
    tmp_path: Path, holder: tuple[int, int]
) -> None:
    """Each condition can fail: no mark, a malformed one, one naming a process that does not
    hold the socket (this one), one naming its holder with another start time (a process
    that is gone, its pid reused)."""
    env = base_env(tmp_path)
    pid, inode = holder
    ticks = procfs.started(pid)
    assert ticks is not None
    ours = nudge.ours(env)
    assert not ours(inode)  # no mark
    _write_mark(env, inode, f"{pid} {ticks}")
    assert ours(inode)
    _write_mark(env, inode, f"{pid}")
    assert not ours(inode)
    _write_mark(env, inode, f"{os.getpid()} {procfs.started(os.getpid())}")
    assert not ours(inode)  # alive, but not its holder
    _write_mark(env, inode, f"{pid} {ticks + 1}")
    assert not ours(inode)  # its holder's pid, another process's start


def test_mark_names_this_process_and_its_socket(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        name = nudge.mark(env, sock)
        assert name == str(os.fstat(sock.fileno()).st_ino)
        assert nudge.ours(env)(int(name))


def _rows(path: Path, since: float) -> list[tuple[float, str, str]]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found = db.execute(
            "SELECT ts + ts_nanos / 1e9, feedback_log_body, process_uuid FROM logs WHERE ts >= ?",
            (int(since),),
        ).fetchall()
    finally:
        db.close()
    return [(float(t), str(b), str(u)) for t, b, u in found if t >= since]


def test_one_request_is_logged_and_written_with_the_daemon_s_next_write(
    fake: FakeCodex, tmp_path: Path
) -> None:
    env = base_env(tmp_path)
    fake.start_daemon(env, tick=0.2)
    assert fake.daemon is not None
    home = Path(env["HOME"]) / ".codex"
    asked = nudge.Nudger(env, str(home), fake.daemon.pid)
    began = time.time()
    assert asked() is None
    assert asked.sent == 1 and len(marks(env)) == 1  # held until the sender is done
    deadline = time.monotonic() + 5
    while not (found := _rows(fake.log_path, began)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [(b, u) for _, b, u in found] == [
        (
            "app-server request: initialize connection_id=ConnectionId(1000) request_id=Integer(1)",
            fake.uuid,
        )
    ]
    asked.close()
    assert marks(env) == [] and asked.held == []


def test_a_socket_the_daemon_does_not_hold_gets_no_request(fake: FakeCodex, tmp_path: Path) -> None:
    """The control socket's path leads to another listener: after the handshake the sender
    sees that the daemon does not hold the other end and sends nothing."""
    env = base_env(tmp_path)
    fake.start_daemon(env)
    assert fake.daemon is not None
    other = tmp_path / "other-home"
    (other / "app-server-control").mkdir(parents=True)
    path = str(tmp_path / "stranger.sock")
    (other / "app-server-control" / "app-server-control.sock").symlink_to(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    heard: list[bytes] = []

    def stranger() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\n\r\n")
            while chunk := conn.recv(4096):
                heard.append(chunk)

    thread = threading.Thread(target=stranger)
    thread.start()
    asked = nudge.Nudger(env, str(other), fake.daemon.pid)
    why = asked()
    asked.close()  # the stranger reads EOF
    thread.join(5)
    listener.close()
    assert why is not None and f"not codex app-server {fake.daemon.pid}'s" in why
    assert heard == [] and asked.sent == 0
