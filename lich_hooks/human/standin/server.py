"""A loopback lich: token (401), endpoint (404), body (400, lich's reason) or 204, and every request
kept; doctor's probe (`X-Lich-Hook-Probe`) gets lich's usual answer."""

from __future__ import annotations

import secrets
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from lich_hooks.human.standin import PROBE_HEADER
from lich_hooks.human.standin.contracts import MAX_BODY, Reply, validate


@dataclass(frozen=True, eq=False)  # compared as before: by identity
class Received:
    """One request as lich saw it."""

    path: str
    endpoint: str
    token: str | None
    headers: dict[str, str]
    body: bytes
    status: int
    accepted: dict[str, object] | None
    reason: str | None

    @property
    def probe(self) -> str | None:
        """Who probed (`doctor`), when this request is a probe rather than a report."""
        return self.headers.get(PROBE_HEADER.lower()) or None

    def summary(self) -> str:
        if self.probe is not None:
            verdict = "refused the token" if self.status == 401 else "token accepted"
            return f"probe from {self.probe} on /{self.endpoint}: {verdict} (not a report)"
        what = self.accepted if self.accepted is not None else self.reason
        return f"POST /{self.endpoint} -> {self.status} {what}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: object
    ) -> None:
        """A client that hangs up (reset, broken pipe) is not our error: stay quiet."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class StandIn:
    """Run with `with StandIn() as lich:`; `lich.port`, `lich.token`, `lich.wait(n)`."""

    def __init__(
        self,
        port: int = 0,
        token: str | None = None,
        on_request: Callable[[Received], None] | None = None,
    ) -> None:
        self.token = token or secrets.token_urlsafe(16)
        self.received: list[Received] = []
        self._changed = threading.Condition()
        self._on_request = on_request
        self._server = _Server(("127.0.0.1", port), self._handler())
        # accept() may find the queue empty after select() saw a connection (a client that
        # hung up at once): a timeout returns it to serve_forever, so exiting never hangs.
        self._server.socket.settimeout(1.0)
        self.port: int = self._server.server_address[1]
        # A short poll interval: exiting (every test, every demo) waits one interval.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def env(self, card: str = "card-1") -> dict[str, str]:
        """The variables lich would export into a card's terminal."""
        return {"LICH_PORT": str(self.port), "LICH_TOKEN": self.token, "LICH_SESSION_ID": card}

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait(self, count: int = 1, timeout: float = 5.0) -> list[Received]:
        """Block until `count` requests arrived (or `timeout`); returns all so far."""
        with self._changed:
            self._changed.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)

    def _record(self, received: Received) -> None:
        with self._changed:
            self.received.append(received)
            self._changed.notify_all()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                parts = urlsplit(self.path)
                endpoint = parts.path.lstrip("/")
                tokens = parse_qs(parts.query).get("token")
                token = tokens[0] if tokens else None
                length = _content_length(self.headers.get("Content-Length"))
                body = self.rfile.read(min(length, MAX_BODY + 1)) if length else b""
                if length is None:
                    # Nothing tells where the body ends: answer, and read no further.
                    reply = Reply(400, None, "invalid Content-Length")
                    self.close_connection = True
                elif token != standin.token:
                    reply = Reply(401, None, "bad token")
                else:
                    reply = validate(endpoint, body)
                # recorded before answering: a client that has its answer must find it here
                headers = {k.lower(): v for k, v in self.headers.items()}
                received = Received(self.path, endpoint, token, headers, body, *reply)
                standin._record(received)
                self.send_response(reply.status)
                answer = (reply.reason or "").encode()
                if reply.status != 204:
                    self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                if reply.status != 204:
                    self.wfile.write(answer)
                self.wfile.flush()
                # shown after answering: a slow or broken printer must not hold the request
                if standin._on_request is not None:
                    standin._on_request(received)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def _content_length(value: str | None) -> int | None:
    """The header's length (0 when absent); None when it is no decimal length at all."""
    if value is None:
        return 0
    value = value.strip()
    return int(value) if value.isascii() and value.isdigit() else None
