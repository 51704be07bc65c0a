"""What the Crush attribution reads: the server's API on its socket (docs/harnesses.md, Crush),
and its clients."""

from __future__ import annotations

import os

from lich_hooks.hook import procfs
from lich_hooks.hook.shared.core import LICH_KEYS, Client
from lich_hooks.hook.shared.crush import decide
from lich_hooks.hook.shared.crush.decide import Workspace, host_flag, is_server
from lich_hooks.hook.shared.proc import (
    PROC,
    ProbeError,
    can_list_clients,
    connection_peers,
    environ_of,
    holders,
    lich_environ,
    socket_inodes,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_SOCKET_PATH = 104  # Crush's maxUnixSocketPathLen
FALLBACK_DIR = "/tmp"  # noqa: S108 - where Crush itself puts the socket: read, never written
API_SECONDS = 1.0  # the whole exchange with the server, per request
# A workspace is ~108 KB and ~9,100 values (Crush v0.90, seven providers): the caps hold ~27 of
# them and bound any parse to a few hundred ms, under 64 MiB (benchmarks/crush_server.py).
MAX_RESPONSE = 8 * 1024 * 1024
HEAD_LIMIT = 16 * 1024  # the status line and headers
SESSION_LIMIT = 1 << 20  # one session's summary: its title, counts and costs
MAX_WIDE_RESPONSE = 4 * 1024 * 1024  # beyond ASCII: decoded text may take 4 bytes a character
MAX_VALUES = 250_000  # commas, colons and openers: every value the parse would build

__all__ = ["PROC", "ProbeError", "can_list_clients", "environ_of", "lich_environ"]


def socket_path(server_argv: list[str] | None, environ: Mapping[str, str]) -> str:
    """Crush's DefaultHost, or its `--host`."""
    host = host_flag(server_argv or [])
    if host is not None:
        scheme, _, address = host.partition("://")
        if scheme != "unix" or not address:
            raise ProbeError(f"the crush server listens on {host!r}, not a Unix socket")
        return address
    base = environ.get("XDG_RUNTIME_DIR") or environ.get("TMPDIR") or FALLBACK_DIR
    name = f"crush-{os.getuid()}.sock" if hasattr(os, "getuid") else "crush.sock"
    path = os.path.join(base, name)
    return path if len(path) <= MAX_SOCKET_PATH else os.path.join(FALLBACK_DIR, name)


def get(socket: str, target: str) -> tuple[int, bytes]:
    """(status, body) within API_SECONDS; HTTP/1.0, so no chunks and the server closes."""
    import _socket
    import time

    deadline = time.monotonic() + API_SECONDS
    try:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except (OSError, AttributeError) as error:
        raise ProbeError(f"no Unix socket ({error})") from None
    buffer = bytearray()
    try:
        sock.settimeout(API_SECONDS)
        sock.connect(socket)
        sock.sendall(f"GET {target} HTTP/1.0\r\nHost: crush\r\n\r\n".encode())
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProbeError(f"the crush server did not answer {target} in {API_SECONDS}s")
            sock.settimeout(remaining)
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            buffer += chunk
            if len(buffer) > MAX_RESPONSE + HEAD_LIMIT:
                raise ProbeError(f"the crush server's answer to {target} is over {MAX_RESPONSE}")
    except OSError as error:
        raise ProbeError(f"crush server at {socket}: {error.strerror or error}") from None
    finally:
        sock.close()
    end = buffer.find(b"\r\n\r\n", 0, HEAD_LIMIT)
    if end < 0:
        raise ProbeError(f"the crush server's answer to {target} is not HTTP")
    head = bytes(buffer[:end])
    with memoryview(buffer) as view:
        body = bytes(view[end + 4 :])
    del buffer  # grown in place: a list of chunks joined would hold the answer twice
    if len(body) > MAX_RESPONSE:
        raise ProbeError(f"the crush server's answer to {target} is over {MAX_RESPONSE}")
    parts = head.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise ProbeError(f"the crush server's answer to {target} is not HTTP")
    return int(parts[1]), body


def workspaces(socket: str) -> list[Workspace]:
    from lich_hooks.hook.payload import loads_array

    status, body = get(socket, "/v1/workspaces")
    if status != 200:
        raise ProbeError(f"the crush server answered /v1/workspaces with {status}")
    bounded(body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ProbeError("the crush server's /v1/workspaces is not UTF-8") from None
    del body  # the text alone while the parse builds its values
    listed = loads_array(text)
    del text
    if listed is None:
        raise ProbeError("the crush server's /v1/workspaces is not a JSON list")
    found = []
    for item in listed:
        if not isinstance(item, dict):
            continue
        ident, path, env = item.get("id"), item.get("path"), item.get("env")
        if isinstance(ident, str) and isinstance(path, str):
            found.append(Workspace(ident, path, _lich_of(env)))
    return found


def bounded(body: bytes) -> None:
    """Refuse an answer whose parse could cost more than a real list's, counted before parsing."""
    if not body.isascii() and len(body) > MAX_WIDE_RESPONSE:
        raise ProbeError(f"the crush server's workspace list is over {MAX_WIDE_RESPONSE} bytes")
    values = body.count(b",") + body.count(b":") + body.count(b"[") + body.count(b"{")
    if values > MAX_VALUES:
        raise ProbeError(f"the crush server's workspace list holds over {MAX_VALUES} values")


def _lich_of(env: object) -> dict[str, str] | None:
    if env is None:
        return {}  # a client that sent no environment: outside lich
    if not isinstance(env, list):
        return None
    found = {}
    for item in env:
        if isinstance(item, str):
            key, sep, value = item.partition("=")
            if sep and key in LICH_KEYS:
                found[key] = value
    return found


def session_viewers(socket: str, workspace: str, session: str) -> int | None:
    """Its `attached_clients` (a `crush run` shows none); None: not the workspace's session."""
    from urllib.parse import quote

    from lich_hooks.hook.payload import loads_object

    status, body = get(
        socket, f"/v1/workspaces/{quote(workspace, safe='')}/sessions/{quote(session, safe='')}"
    )
    if status == 404:
        return None
    if status != 200:
        raise ProbeError(f"the crush server answered a session lookup with {status}")
    found = loads_object(body) if len(body) <= SESSION_LIMIT else None
    viewers = None if found is None else found.get("attached_clients")
    # absent (a Crush that does not say): counted as none, so only a `crush run` reports
    return viewers if isinstance(viewers, int) and not isinstance(viewers, bool) else 0


def clients(server: int, proc: str = PROC) -> list[Client] | decide.Attribution:
    """The holder of each connection the server accepted, or why one cannot be (decide.account)."""
    mine = socket_inodes(server, proc)
    if mine is None:
        raise ProbeError(f"cannot read the sockets of crush server {server}")
    peers = connection_peers(mine)
    held, _ = holders(peers, (b"crush", b"crush.exe"), (server, os.getpid()), proc)
    found = [_holder(pid, inodes, proc) for pid, inodes in held.items()]
    return decide.account(peers, found, _uid(server, proc))


def _holder(pid: int, held: set[int], proc: str) -> Client:
    argv = procfs.cmdline(pid, proc)
    found = Client(pid, argv or [], procfs.cwd(pid, proc), lich_environ(pid, proc))
    found.held = held
    found.uid = _uid(pid, proc)
    return found


def _uid(pid: int, proc: str) -> int | None:
    """The owner of /proc/<pid>: its effective user, or root when it is not dumpable."""
    try:
        return os.stat(f"{proc}/{pid}").st_uid
    except OSError:
        return None


def servers(proc: str = PROC) -> list[tuple[int, list[str]]]:
    return procfs.processes((b"crush", b"crush.exe"), is_server, proc)
