"""Reports to lich's loopback listener (SPEC §2).

The harness must not wait on lich. `send_detached` forks a sender that drops
the harness's stdin/stdout/stderr at once, so the hook process can print its
verdict and exit while the report is still in flight; the sender has an
absolute deadline of DEADLINE seconds, after which it exits whatever the
listener is doing (a listener that trickles bytes costs no more than a silent
one). Where fork does not exist (Windows) the same send runs inline, still
bounded by the deadline.

Only the sender imports requests and orjson; the hook process never does.
"""

from __future__ import annotations

import os
import time

from lich_hooks import PLUGIN_RELEASE, __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from lich_hooks.lichenv import LichEnv
    from lich_hooks.runlog import RunLog

HOST = "127.0.0.1"
CONNECT_TIMEOUT = 1.0
READ_TIMEOUT = 1.0
DEADLINE = 2.0


def url(port: int, token: str, endpoint: str) -> str:
    from urllib.parse import quote

    # surrogateescape: a token of bytes that are not UTF-8 is sent byte for byte
    # (percent-encoded) instead of failing the send.
    token_q = quote(token, safe="", errors="surrogateescape")
    return f"http://{HOST}:{port}/{endpoint}?token={token_q}"


def headers() -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "X-Lich-Plugin": PLUGIN_RELEASE,
        "User-Agent": f"lich-hooks/{__version__}",
    }


def encode(body: dict[str, object]) -> bytes:
    import orjson

    return orjson.dumps(body)


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

    def as_dict(self) -> dict[str, object]:
        return {"status": self.status, "error": self.error, "send_ms": self.ms}


def post(env: LichEnv, endpoint: str, body: dict[str, object]) -> Result:
    """One POST, never retried, errors returned as values.

    Proxies and redirects are ignored on purpose: `trust_env = False` keeps
    HTTP_PROXY, ALL_PROXY and .netrc away from a request that carries the token.
    The caller enforces the absolute deadline.
    """
    started = time.monotonic()
    assert env.port is not None and env.token is not None
    try:
        data = encode(body)
        import requests

        with requests.Session() as session:
            session.trust_env = False
            response = session.post(
                url(env.port, env.token, endpoint),
                data=data,
                headers=headers(),
                timeout=(CONNECT_TIMEOUT, READ_TIMEOUT),
                allow_redirects=False,
            )
            status = response.status_code
            response.close()
        return Result(status, None, _ms(started))
    except Exception as error:
        return Result(None, type(error).__name__, _ms(started))


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


def send_detached(
    env: LichEnv,
    endpoint: str,
    body: dict[str, object],
    log: RunLog,
    on_taken: Callable[[], None] | None = None,
    on_end: Callable[[], None] | None = None,
) -> None:
    """Send `body` without keeping the harness waiting, then write the run's log line.

    Returns in the hook process at once. The sender process calls `on_taken`
    after a 204 (the "reported successfully" of docs/session-start.md), then
    `on_end` once the send has ended whatever its outcome (a 204, a refusal,
    an error, the deadline), and always exits.
    """
    fork = getattr(os, "fork", None)
    pid = -1
    if fork is not None:
        try:
            pid = fork()
        except OSError as error:
            log.debug(f"fork failed ({error.__class__.__name__}); sending inline")
        if pid > 0:
            return
    detached = pid == 0
    try:
        if detached:
            _drop_harness_pipes()
        _send_with_deadline(env, endpoint, body, log, on_taken, on_end)
    finally:
        if detached:
            os._exit(0)


def _drop_harness_pipes() -> None:
    """Leave the harness's session and pipes so it sees the hook finish at once."""
    try:
        os.setsid()
    except OSError:
        pass
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if null > 2:
        os.close(null)


def _send_with_deadline(
    env: LichEnv,
    endpoint: str,
    body: dict[str, object],
    log: RunLog,
    on_taken: Callable[[], None] | None,
    on_end: Callable[[], None] | None = None,
) -> None:
    import threading

    # Whoever takes this first (the deadline or the finished send) writes the
    # one log line; without it a send ending at the deadline wrote two lines,
    # or was killed halfway through recording the id it had just reported.
    finishing = threading.Lock()
    started = time.monotonic()

    def give_up() -> None:
        if not finishing.acquire(blocking=False):
            return
        log.set(outcome="deadline", status=None, error="deadline", send_ms=_ms(started))
        _end(on_end, log)
        log.write()
        os._exit(0)

    timer = threading.Timer(DEADLINE, give_up)
    timer.daemon = True
    timer.start()
    result = post(env, endpoint, body)
    timer.cancel()
    if not finishing.acquire(blocking=False):
        threading.Event().wait()  # the deadline won: it writes the line and exits
    outcome = "taken" if result.taken else ("refused" if result.status else "failed")
    if result.taken and on_taken is not None:
        try:
            on_taken()
        except Exception as error:  # the record is best-effort (SPEC §9)
            log.set(state_error=type(error).__name__)
    _end(on_end, log)
    log.set(outcome=outcome, **result.as_dict())
    log.debug(f"POST /{endpoint}: {outcome} ({result.status or result.error})")
    log.write()


def _end(on_end: Callable[[], None] | None, log: RunLog) -> None:
    """The send is over: let the job release what it held for it (best-effort)."""
    if on_end is None:
        return
    try:
        on_end()
    except Exception as error:
        log.set(state_error=type(error).__name__)
