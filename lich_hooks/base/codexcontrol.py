"""A client of Codex's daemon control socket (`CODEX_HOME/app-server-control/…`, 0.171.0):
JSON-RPC in WebSocket frames (RFC 6455: ours masked, the daemon's not). The detached sender's
request that makes the daemon log (hook/shared/codex/nudge.py) and doctor's `hooks/list`
(human/settings/codex_state.py) both speak through it, so a daemon that hangs or floods costs
either one deadline and one byte bound for the connection's whole life. Nothing is imported
before a call: nudge.py's module is on the hook path."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket

CONTROL = ("app-server-control", "app-server-control.sock")  # in CODEX_HOME, as 0.171.0 makes it


class Unanswered(OSError):
    """The other end did not answer as Codex's daemon does."""


class Connection:
    """One connection on `sock`: every step within `seconds` of its making, at most `limit`
    bytes read from the daemon."""

    def __init__(self, sock: socket.socket, seconds: float, limit: int) -> None:
        self.sock, self.limit, self.deadline = sock, limit, time.monotonic() + seconds
        self.buffer, self.read = b"", 0

    def connect(self, codex_home: str) -> None:
        """Through the folder's descriptor where /proc offers it: a socket's path is at most 107
        bytes, a CODEX_HOME (or where its link leads) may be longer. Elsewhere the link's target,
        which Codex keeps short in TMPDIR. Connecting starts nothing: no daemon, no answer."""
        folder, name = CONTROL
        fd = os.open(os.path.join(codex_home, folder), os.O_RDONLY | os.O_DIRECTORY)
        try:
            self._step()
            here = f"/proc/self/fd/{fd}/{name}"
            if not os.path.isdir("/proc/self/fd"):
                here = os.path.realpath(os.path.join(codex_home, folder, name))
            self.sock.connect(here)
        finally:
            os.close(fd)

    def upgrade(self) -> None:
        """The WebSocket handshake."""
        import base64

        key = base64.b64encode(os.urandom(16)).decode()
        self._step()
        self.sock.sendall(
            "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        while b"\r\n\r\n" not in self.buffer:
            self._more("the WebSocket handshake")
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        if not status.startswith((b"HTTP/1.1 101", b"HTTP/1.0 101")):
            raise Unanswered(f"the daemon refused the handshake ({status!r})")

    def request(self, number: int, method: str, params: object) -> dict[str, object]:
        """The answer to request `number` (its result or its error): the daemon has taken the
        request by then. Notifications and frames that are no JSON object before it are skipped."""
        import json

        self.notify(method, params, number)
        while True:
            opcode, payload = self._frame(method)
            if opcode == 8:
                raise Unanswered(f"the daemon closed the connection before answering {method}")
            try:
                message = json.loads(payload) if opcode == 1 else None
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == number:
                return message

    def notify(self, method: str, params: object = None, number: int | None = None) -> None:
        """A notification; with `number` a request, whose answer request() reads."""
        import json

        message = {"id": number, "method": method, "params": params}
        self._send(json.dumps({k: v for k, v in message.items() if v is not None}).encode())

    def close(self) -> None:
        """A close frame (1000), then everything to the daemon's EOF: Codex's daemon closes its
        end before that EOF, so the daemon no longer holds it once this returns."""
        self._send(b"\x03\xe8", opcode=8)
        while self._more("the close", closing=True):
            self.buffer = b""

    def _send(self, data: bytes, opcode: int = 1) -> None:
        """One masked frame, as a client must send."""
        mask, size = os.urandom(4), len(data)
        if size < 126:
            head = bytes([0x80 | opcode, 0x80 | size])
        else:
            wide = size >= 1 << 16
            head = bytes([0x80 | opcode, 0xFF if wide else 0xFE])
            head += size.to_bytes(8 if wide else 2, "big")
        self._step()
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _frame(self, awaited: str) -> tuple[int, bytes]:
        """(opcode, payload) of the daemon's next frame."""
        first, second = self._take(2, awaited)
        size = second & 0x7F
        if size >= 126:
            size = int.from_bytes(self._take(2 if size == 126 else 8, awaited), "big")
        return first & 0x0F, self._take(size, awaited)

    def _take(self, size: int, awaited: str) -> bytes:
        while len(self.buffer) < size:
            self._more(awaited)
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def _more(self, awaited: str, closing: bool = False) -> bool:
        """Reads on; False at the daemon's EOF, which only the closing awaits."""
        if self.read >= self.limit:
            raise Unanswered(f"no answer to {awaited} within {self.limit} bytes")
        self._step()
        data = self.sock.recv(min(1 << 16, self.limit - self.read))
        if not data and not closing:
            raise Unanswered(f"the daemon closed the connection before answering {awaited}")
        self.read += len(data)
        self.buffer += data
        return bool(data)

    def _step(self) -> None:
        """The socket's next step gets what is left of the deadline."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        self.sock.settimeout(left)
