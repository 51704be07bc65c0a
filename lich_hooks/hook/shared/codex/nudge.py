"""The detached sender's own request to Codex's daemon (a WebSocket `initialize` as `lich-hook`
on its control socket), so that its log gets a row past the moment the sender needs
(evidence.settle) even when nothing else happens: the daemon writes nothing when it logged nothing
(docs/harnesses.md, Codex, "Making the evidence come"). While it is open another card's hook would
count it among the daemon's peers no codex client holds, and refuse: so its socket's inode is
marked in MARKS first, and the mark outlives every moment a probe can see the connection."""

from __future__ import annotations

import os

from lich_hooks.base.codexcontrol import CONTROL, Connection
from lich_hooks.hook.shared.proc import PROC

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Mapping

MARKS = ("codex-nudges",)  # state directory: <socket inode> -> "<pid> <start ticks>"
MARK_LIMIT = 64
TIMEOUT = 1.0  # seconds for one request, from connecting to the daemon's EOF
ANSWER_LIMIT = 1 << 16  # bytes read from the daemon in one request
CLIENT = "lich-hook"


class Refused(Exception):
    """No request went out (or none was answered): the sender waits as it did without one."""


class Nudger:
    """Requests of one sender; each one's socket and mark are held until close()."""

    def __init__(self, environ: Mapping[str, str], codex_home: str, daemon: int) -> None:
        self.environ = environ
        self.home = codex_home
        self.path = os.path.join(codex_home, *CONTROL)
        self.daemon = daemon
        self.held: list[tuple[socket.socket, str]] = []
        self.sent = 0
        self.failed: str | None = None  # why the last one that failed did

    def __call__(self) -> str | None:
        """None once the daemon has answered (its row is logged), else why not."""
        try:
            self._ask()
        except Refused as why:
            self.failed = str(why)
            return self.failed
        except Exception as error:  # the sender then waits as it did without a request
            self.failed = f"{type(error).__name__}: {error}"
            return self.failed
        self.sent += 1
        return None

    def _ask(self) -> None:
        import socket

        from lich_hooks import __version__

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            name = mark(self.environ, sock)  # first: no moment a probe sees the peer unmarked
        except Refused:
            sock.close()
            raise
        self.held.append((sock, name))  # from here close() lets go of both, the mark first
        daemon = Connection(sock, TIMEOUT, ANSWER_LIMIT)
        try:
            daemon.connect(self.home)
            daemon.upgrade()
            self._check_peer(sock)
            client = {"name": CLIENT, "version": __version__}
            daemon.request(1, "initialize", {"clientInfo": client})
            daemon.close()  # at the EOF it reads, the daemon no longer holds its end
        except OSError as error:
            raise Refused(f"{self.path}: {error.strerror or error}") from None

    def _check_peer(self, sock: socket.socket) -> None:
        """The socket's other end is one the daemon holds: anyone else gets the handshake and
        nothing more."""
        from lich_hooks.hook.shared.proc import ProbeError, socket_inodes, unix_sockets

        inode = os.fstat(sock.fileno()).st_ino
        try:
            peer = unix_sockets([inode]).get(inode, (0, None, 0))[2]
            theirs = socket_inodes(self.daemon)
        except ProbeError as error:
            raise Refused(f"cannot check who answers ({error})") from None
        if not peer or theirs is None or peer not in theirs:
            raise Refused(f"{self.path} is not codex app-server {self.daemon}'s")

    def close(self) -> None:
        """Each mark goes once the daemon has let go of its end, then the socket: while a mark
        stands, its inode is ours. A request that failed half way is ended here (our end shut
        for writing, read to the daemon's EOF within TIMEOUT) before its mark goes."""
        import socket

        from lich_hooks.hook import state

        while self.held:
            sock, name = self.held.pop()
            try:
                sock.shutdown(socket.SHUT_WR)
                sock.settimeout(TIMEOUT)
                left = ANSWER_LIMIT
                while left > 0 and (chunk := sock.recv(min(left, 4096))):
                    left -= len(chunk)
            except OSError:
                pass  # never connected, or gone: nothing holds its other end
            state.remove(self.environ, MARKS, name)
            sock.close()


def mark(environ: Mapping[str, str], sock: socket.socket) -> str:
    """Name `sock` (its inode) in MARKS as this process's (pid, start ticks); the mark's name."""
    from lich_hooks.hook import procfs, state

    name = str(os.fstat(sock.fileno()).st_ino)
    ticks = procfs.started(os.getpid())
    if ticks is None:
        raise Refused("cannot read this process's start time")
    try:
        state.write(environ, MARKS, name, f"{os.getpid()} {ticks}".encode())
    except OSError as error:
        raise Refused(f"no mark in the state directory ({error})") from None
    return name


def ours(environ: Mapping[str, str], proc: str = PROC) -> Callable[[int], bool]:
    """Whether a peer of the daemon's sockets is a sender's request: its inode is marked by a
    live process (pid and start time) that holds it. Any other peer stays unaccounted."""

    def check(inode: int) -> bool:
        from lich_hooks.hook import procfs, state
        from lich_hooks.hook.shared.proc import ProbeError, socket_inodes

        data = state.read(environ, MARKS, str(inode), MARK_LIMIT)
        parts = [] if data is None else data.split()
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            return False
        pid, ticks = int(parts[0]), int(parts[1])
        if procfs.started(pid, proc) != ticks:
            return False
        try:
            held = socket_inodes(pid, proc)
        except ProbeError:
            return False
        return held is not None and inode in held

    return check
