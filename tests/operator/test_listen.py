"""`lich-hook listen` while someone runs `doctor` in the card, and when a client hangs up."""

from __future__ import annotations

import queue
import socket
import struct
import subprocess
import threading
from collections.abc import Iterator

import pytest

from tests.operator.conftest import Scratch
from tests.support.runner import LICH_HOOK


class Listen:
    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: queue.Queue[str] = queue.Queue()
        self.exported: dict[str, str] = {}
        assert proc.stdout is not None
        stdout = proc.stdout

        def pump() -> None:
            for line in stdout:
                self.lines.put(line.rstrip("\n"))

        threading.Thread(target=pump, daemon=True).start()
        while True:
            line = self.lines.get(timeout=10)
            if line.startswith("export "):
                key, _, value = line[len("export ") :].partition("=")
                self.exported[key] = value
            if line.startswith("(Ctrl-C"):
                return

    def stop(self) -> str:
        """Stop it; its whole stderr."""
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=10)
        return err


@pytest.fixture
def listen(scratch: Scratch) -> Iterator[Listen]:
    proc = subprocess.Popen(
        [str(LICH_HOOK), "listen"],
        env=scratch.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield Listen(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)


def test_doctor_probes_show_as_probes(scratch: Scratch, listen: Listen) -> None:
    """Before: `POST /session-start -> 400 session_id is required` for every doctor run."""
    env = {**scratch.env, **listen.exported}
    scratch.cli("doctor", env=env)
    line = listen.lines.get(timeout=10)
    assert line == "probe from doctor on /session-start: token accepted (not a report)"
    scratch.cli("doctor", env={**env, "LICH_TOKEN": "stale"})
    assert listen.lines.get(timeout=10).endswith("refused the token (not a report)")
    assert listen.stop() == ""


def test_a_client_that_hangs_up_prints_no_traceback(scratch: Scratch, listen: Listen) -> None:
    """Before: a `ConnectionResetError` traceback on listen's stderr."""
    port = int(listen.exported["LICH_PORT"])
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"POST /session-start HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
            # Linger 0: close() sends a reset instead of a FIN, as a killed client does.
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    # A probe after the resets: its line proves the listener is still serving.
    scratch.cli("doctor", env={**scratch.env, **listen.exported})
    assert listen.lines.get(timeout=10).startswith("probe from doctor")
    assert "Traceback" not in listen.stop()


@pytest.mark.parametrize("length", [b"abc", b"-5", b"1e3", b""])
def test_a_length_that_is_no_number_is_answered_400(
    scratch: Scratch, listen: Listen, length: bytes
) -> None:
    """Before: a ValueError traceback on listen's stderr for `Content-Length: abc`, no answer."""
    port = int(listen.exported["LICH_PORT"])
    token = listen.exported["LICH_TOKEN"].strip("'")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(
            b"POST /session-start?token=" + token.encode() + b" HTTP/1.1\r\n"
            b"Content-Length: " + length + b"\r\n\r\n{}"
        )
        answer = b""
        while chunk := client.recv(4096):  # it answers and closes: nothing marks the body's end
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert answer.endswith(b"invalid Content-Length")
    scratch.cli("doctor", env={**scratch.env, **listen.exported})
    lines = [listen.lines.get(timeout=10), listen.lines.get(timeout=10)]
    assert lines[0].endswith("400 invalid Content-Length"), lines
    assert lines[1].startswith("probe from doctor")
    assert "Traceback" not in listen.stop()
