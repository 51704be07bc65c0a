"""Reports to lich's loopback listener: docs/transport.md (the request, the one 2 s
deadline, faults) and docs/performance.md (what sending with `requests` or `orjson`
would cost, measured).

`send_detached` forks a sender that drops the harness's pipes at once and has nothing
to import first: the body comes from the C encoder behind `json`, the request is one
HTTP/1.1 POST written whole on a plain loopback socket. Where fork does not exist
(Windows) the same send runs inline, under the same deadline.
"""

from __future__ import annotations

import os
import time

from lich_hooks import PLUGIN_RELEASE, __version__
from lich_hooks.base.lichenv import quote_token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal

    from lich_hooks.base.lichenv import LichEnv
    from lich_hooks.base.runlog import RunLog

HOST = "127.0.0.1"
DEADLINE = 2.0
# lich answers with a status line and a few headers; a head longer than this
# is not lich talking, and reading it would only spend the deadline.
MAX_HEAD = 16 * 1024


def url(port: int, token: str, endpoint: str) -> str:
    return f"http://{HOST}:{port}/{endpoint}?token={quote_token(token)}"


def headers() -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "X-Lich-Plugin": PLUGIN_RELEASE,
        "User-Agent": f"lich-hooks/{__version__}",
    }


def _refuse(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def encode(body: dict[str, object]) -> bytes:
    """`body` as JSON bytes, identical to `orjson.dumps(body)` for our bodies.

    The encoder is the C one `json.dumps` runs, configured the way orjson
    writes: compact separators, non-ASCII as UTF-8, the same escapes (`\\"`,
    `\\\\`, `\\b\\f\\n\\r\\t`, other controls as lower-case `\\u00XX`). Like
    orjson it refuses a lone surrogate (it has no UTF-8 form): UnicodeEncodeError.
    tests/spine/test_transport.py pins the bytes against orjson over any text.
    """
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
    """The whole POST, head and body, to be written in one go.

    One write means one segment on loopback: nothing for Nagle's algorithm to
    hold back while lich delays its ACK. Every value in the head is ours or
    encoded (the token is percent-encoded, the port an int), so no header can
    be injected (`extra`, doctor's probe mark, is a constant of ours too).
    `Connection: close`: one request per connection, as lich expects.
    """
    lines = [f"POST /{endpoint}?token={quote_token(token)} HTTP/1.1", f"Host: {HOST}:{port}"]
    lines += [f"{name}: {value}" for name, value in {**headers(), **(extra or {})}.items()]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("ascii") + body


class BadResponse(ValueError):
    """What came back is not an HTTP/1.x response head."""


def final_status(received: bytes) -> int | None:
    """The status of the first final response in `received`, None while it is incomplete.

    Interim 1xx responses (100 Continue, 102 Processing, 103 Early Hints) are
    skipped as HTTP says; 101 is final (we never ask to switch protocols). A
    final response counts once its whole head has arrived. Raises BadResponse
    for anything that is not HTTP/1.x or a head past MAX_HEAD.
    """
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
    if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise BadResponse("not an HTTP/1.x status line")
    if rest[3:4] not in (b"", b" "):
        raise BadResponse("not an HTTP/1.x status line")
    return int(code)


class Result:
    """How a send ended: an HTTP status, or the name of what went wrong."""

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
        """The log's word: taken (204), refused (any other status), deadline, failed."""
        if self.status is not None:
            return "taken" if self.taken else "refused"
        return "deadline" if self.error == "deadline" else "failed"

    def as_dict(self) -> dict[str, object]:
        return {"status": self.status, "error": self.error, "send_ms": self.ms}


def _left(deadline: float) -> float:
    """Seconds left before `deadline`: every blocking step waits at most this."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def post(
    env: LichEnv, endpoint: str, body: dict[str, object], extra: dict[str, str] | None = None
) -> Result:
    """One POST to lich, never retried, ended by DEADLINE whatever the listener does.

    Errors come back as values: a Result names the status or what went wrong,
    and nothing raises out of here (short of the interpreter dying). doctor's
    probe is this same call, so what doctor proves is what a report does.
    """
    started = time.monotonic()
    deadline = started + DEADLINE
    sock = None
    try:
        assert env.port is not None and env.token is not None
        data = request(env.port, env.token, endpoint, encode(body), extra)
        # _socket is what the `socket` module wraps; the wrapper's imports
        # (selectors, enum…) cost about 4 ms and give this send nothing.
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


def send_detached(
    env: LichEnv,
    endpoint: str,
    body: dict[str, object],
    log: RunLog,
    on_taken: Callable[[], None] | None = None,
    on_end: Callable[[], None] | None = None,
    then: Callable[[], None] | None = None,
) -> None:
    """Send `body` without keeping the harness waiting, then write the run's log line.

    Returns in the hook process at once. The sender process calls `on_taken`
    after a 204 (the "reported successfully" of docs/session-start.md), then
    `on_end` once the send has ended whatever its outcome (a 204, a refusal,
    an error, the deadline), writes the log line, runs `then` (work that
    must not hold the harness: pruning the state) and always exits.
    """
    from lich_hooks.base import detach

    pid = detach.fork()
    if pid > 0:
        return
    if pid < 0 and hasattr(os, "fork"):
        log.debug("fork failed; sending inline")
    detached = pid == 0
    try:
        _send_with_deadline(env, endpoint, body, log, on_taken, on_end)
        if then is not None:
            then()
    finally:
        if detached:
            os._exit(0)


def _send_with_deadline(
    env: LichEnv,
    endpoint: str,
    body: dict[str, object],
    log: RunLog,
    on_taken: Callable[[], None] | None,
    on_end: Callable[[], None] | None = None,
) -> None:
    """The send, then what follows from its outcome, then the run's one log line.

    post() returns within the deadline on every path, so nothing here needs a
    timer to cut it short, and the line is written exactly once, after the
    outcome is recorded.
    """
    result = post(env, endpoint, body)
    if result.taken and on_taken is not None:
        try:
            on_taken()
        except Exception as error:  # the record is best-effort (docs/session-start.md)
            log.set(state_error=type(error).__name__)
    _end(on_end, log)
    log.set(outcome=result.outcome, **result.as_dict())
    log.debug(f"POST /{endpoint}: {result.outcome} ({result.status or result.error})")
    log.write()


def _end(on_end: Callable[[], None] | None, log: RunLog) -> None:
    """The send is over: let the job release what it held for it (best-effort)."""
    if on_end is None:
        return
    try:
        on_end()
    except Exception as error:
        log.set(state_error=type(error).__name__)
