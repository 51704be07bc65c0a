"""Reports to lich's loopback listener: the request, deadline and faults are docs/transport.md's;
why not `requests` or `orjson`, docs/performance.md's."""

from __future__ import annotations

import time

from lich_hooks import PLUGIN_RELEASE, __version__
from lich_hooks.base.lichenv import quote_token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from lich_hooks.base.lichenv import LichEnv

HOST = "127.0.0.1"
DEADLINE = 2.0
MAX_HEAD = 16 * 1024  # a longer head is not lich talking: reading it would spend the deadline


HEADERS = {
    "Content-Type": "application/json",
    "X-Lich-Plugin": PLUGIN_RELEASE,
    "User-Agent": f"lich-hooks/{__version__}",
}


def _refuse(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def encode(body: dict[str, object]) -> bytes:
    """The bytes `orjson.dumps(body)` gives (pinned by tests/spine/test_transport.py), a lone
    surrogate raising UnicodeEncodeError as there, from the C encoder behind `json`."""
    try:
        from _json import encode_basestring, make_encoder
    except ImportError:  # an interpreter without the C accelerator: same bytes, slower
        import json

        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")
    encoder = make_encoder(None, _refuse, encode_basestring, None, ":", ",", False, False, False)
    return "".join(encoder(body, 0)).encode("utf-8")


def request(
    port: int, token: str, endpoint: str, body: bytes, extra: dict[str, str] | None = None
) -> bytes:
    """The whole POST in one write, nothing for Nagle to hold back; every value in the head is ours
    or encoded: nothing can be injected."""
    lines = [f"POST /{endpoint}?token={quote_token(token)} HTTP/1.1", f"Host: {HOST}:{port}"]
    lines += [f"{name}: {value}" for name, value in {**HEADERS, **(extra or {})}.items()]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("ascii") + body


class BadResponse(ValueError):
    """What came back is not an HTTP/1.x response head."""


def final_status(received: bytes) -> int | None:
    """The first final status (1xx but 101 skipped), None until its head is whole."""
    start = 0
    while True:
        end = received.find(b"\r\n\r\n", start)
        if end < 0:
            if len(received) > MAX_HEAD:
                raise BadResponse("response head too long")
            line_end = received.find(b"\r\n", start)
            if line_end >= 0:
                _status_of(received[start:line_end])  # a garbage answer fails now
            elif len(received) - start >= 12 and not received.startswith(b"HTTP/1.", start):
                raise BadResponse("not HTTP/1.x")
            return None
        status = _status_of(received[start : received.find(b"\r\n", start)])
        if 100 <= status < 200 and status != 101:
            start = end + 4
            continue
        return status


def _status_of(line: bytes) -> int:
    version, _, rest = line.partition(b" ")
    code = rest[:3]
    good = version.startswith(b"HTTP/1.") and len(code) == 3 and code.isdigit()
    if not good or rest[3:4] not in (b"", b" "):
        raise BadResponse("not an HTTP/1.x status line")
    return int(code)


class Result:
    __slots__ = ("error", "ms", "status")

    def __init__(self, status: int | None, error: str | None, ms: float) -> None:
        self.status = status
        self.error = error
        self.ms = ms

    @property
    def taken(self) -> bool:
        return self.status == 204

    @property
    def outcome(self) -> Literal["taken", "refused", "deadline", "failed"]:
        if self.status is not None:
            return "taken" if self.taken else "refused"
        return "deadline" if self.error == "deadline" else "failed"


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def post(
    env: LichEnv,
    endpoint: str,
    body: dict[str, object],
    extra: dict[str, str] | None = None,
    seconds: float = DEADLINE,
) -> Result:
    """One POST, never retried, within `seconds` (at most DEADLINE); doctor's probe is this call,
    so what doctor proves is what a report does."""
    started = time.monotonic()
    deadline = started + min(seconds, DEADLINE)
    sock = None
    try:
        assert env.port is not None and env.token is not None
        data = request(env.port, env.token, endpoint, encode(body), extra)
        # the `socket` wrapper's imports (selectors, enum…) cost ~4 ms and give this send nothing
        import _socket

        sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        sock.settimeout(_left(deadline))
        sock.connect((HOST, env.port))
        view = memoryview(data)
        while view:
            sock.settimeout(_left(deadline))
            view = view[sock.send(view) :]
        received = b""
        while (status := final_status(received)) is None:
            sock.settimeout(_left(deadline))
            chunk = sock.recv(4096)
            if not chunk:
                return Result(None, "closed-without-answer", _ms(started))
            received += chunk
        return Result(status, None, _ms(started))
    except TimeoutError:
        return Result(None, "deadline", _ms(started))
    except BadResponse:
        return Result(None, "bad-response", _ms(started))
    except Exception as error:
        return Result(None, type(error).__name__, _ms(started))
    finally:
        if sock is not None:
            sock.close()


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
