"""What both shared-process probes read (the I/O half of core.py): the hook's ancestry, a
process's sockets and environment, Unix-socket peers. Only Linux names a socket's peer
(sock_diag), elsewhere a shared-process hook is refused; costs: docs/performance.md."""

from __future__ import annotations

import os
import sys

from lich_hooks.hook import procfs
from lich_hooks.hook.shared.core import LICH_KEYS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

PROC = "/proc"
MAX_ANCESTORS = 32
PS_TIMEOUT = 2.0
# Open files read per process (a TUI holds ~30, a daemon ~40 + 2 per client); 4,096 cost ~20 ms.
MAX_FDS = 4096
# Exact lookups in one send; each reply takes ~1 KiB of the 208 KiB receive queue (256 did not
# fit). More: one dump, read until done.
PEER_BATCH = 64

# linux/netlink.h, linux/sock_diag.h, linux/unix_diag.h
NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300  # NLM_F_ROOT | NLM_F_MATCH
ALL_STATES = 0xFFFFFFFF
NLMSG_ERROR = 2
NLMSG_DONE = 3
UDIAG_SHOW_NAME = 0x1
UDIAG_SHOW_PEER = 0x4
UNIX_DIAG_NAME = 0
UNIX_DIAG_PEER = 2
UNIX_LISTEN = 10  # TCP_LISTEN, the state sock_diag reports for a listening Unix socket
NO_COOKIE = 0xFFFFFFFF


class ProbeError(Exception):
    """The system would not tell us what the attribution needs (reported as a refusal)."""


# --- the hook's ancestry ------------------------------------------------------------------


def ancestors(
    start: int, proc: str, stop: Callable[[Sequence[str]], bool]
) -> list[tuple[int, list[str]]] | None:
    """(pid, argv) from `start` up to the nearest `stop` process; None: unreadable. The platform
    decides what to read, not a /proc's presence (Wine sees Linux's /proc)."""
    if sys.platform == "win32":
        from lich_hooks.base import winproc

        return winproc.ancestors(start, stop, MAX_ANCESTORS)
    if not os.path.isdir(proc):
        return _ps_ancestors(start, stop)
    chain: list[tuple[int, list[str]]] = []
    pid = start
    for _ in range(MAX_ANCESTORS):
        if pid < 1:
            break
        argv = procfs.cmdline(pid, proc)
        if argv is None:
            break
        chain.append((pid, argv))
        if stop(argv) or pid == 1:  # PID 1 can be the harness itself, in a container
            break
        parent = procfs.parent(pid, proc)
        if parent is None or parent == pid:
            break
        pid = parent
    return chain


def _ps_ancestors(
    start: int, stop: Callable[[Sequence[str]], bool]
) -> list[tuple[int, list[str]]] | None:
    """One `ps` call where there is no /proc (macOS); argv split on spaces is enough to see
    `codex app-server` or `crush server`."""
    import shutil
    import subprocess

    ps = shutil.which("ps")
    if ps is None:
        return None
    try:
        out = subprocess.run(
            [ps, "-A", "-o", "pid=,ppid=,command="],
            capture_output=True,
            timeout=PS_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        ).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_ps(out, start, stop)


def parse_ps(
    out: str, start: int, stop: Callable[[Sequence[str]], bool]
) -> list[tuple[int, list[str]]] | None:
    table: dict[int, tuple[int, list[str]]] = {}
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) < 3 or not (parts[0].isdigit() and parts[1].isdigit()):
            continue
        table[int(parts[0])] = (int(parts[1]), parts[2].split())
    if start not in table:
        return None
    chain: list[tuple[int, list[str]]] = []
    pid = start
    for _ in range(MAX_ANCESTORS):
        if pid <= 1 or pid not in table:
            break
        parent, argv = table[pid]
        chain.append((pid, argv))
        if stop(argv):
            break
        pid = parent
    return chain


def can_list_clients(proc: str = PROC) -> bool:
    """Only Linux can name the clients (fd links, sock_diag); platform first, as in ancestors()."""
    return sys.platform == "linux" and os.path.isdir(f"{proc}/self/fd")


class TooManyFiles(ProbeError):
    """More open files than a hook's path reads."""


def fd_targets(pid: int, proc: str = PROC) -> list[str] | None:
    """What a process's open fds point at; None: unreadable. TooManyFiles past MAX_FDS,
    counted before any is read (the fd directory's size on Linux 6.2+)."""
    base = f"{proc}/{pid}/fd"
    try:
        size = os.stat(base).st_size
        if size > MAX_FDS:
            raise TooManyFiles(f"holds {size} open files (more than the {MAX_FDS} read)")
        fds = os.listdir(base)
    except OSError:
        return None
    if len(fds) > MAX_FDS:
        raise TooManyFiles(f"holds {len(fds)} open files (more than the {MAX_FDS} read)")
    found = []
    for fd in fds:
        try:
            found.append(os.readlink(f"{base}/{fd}"))
        except OSError:
            continue
    return found


def socket_inodes(pid: int, proc: str = PROC) -> set[int] | None:
    targets = fd_targets(pid, proc)
    return None if targets is None else sockets(targets)


def sockets(targets: list[str]) -> set[int]:
    found = set()
    for link in targets:
        if link.startswith("socket:[") and link.endswith("]"):
            try:
                found.add(int(link[8:-1]))
            except ValueError:
                continue
    return found


def lich_environ(pid: int, proc: str = PROC) -> dict[str, str] | None:
    return environ_of(pid, LICH_KEYS, proc)


def environ_of(pid: int, keys: Sequence[str], proc: str = PROC) -> dict[str, str] | None:
    """Those of `keys` a process started with, decoded as os.environ does (non-UTF-8 bytes are
    sent byte for byte); None if unreadable."""
    try:
        with open(f"{proc}/{pid}/environ", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    wanted = {key.encode(): key for key in keys}
    found: dict[str, str] = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep and key in wanted:
            found[wanted[key]] = os.fsdecode(value)
    return found


def unix_sockets(
    inodes: Sequence[int], batch: int = PEER_BATCH
) -> dict[int, tuple[int, bytes | None, int]]:
    """inode -> (state, bound name or None, peer inode or 0); past `batch` one dump, as each
    exact lookup walks every kernel Unix socket."""
    if not inodes:
        return {}
    import _socket

    try:
        sock = _socket.socket(_socket.AF_NETLINK, _socket.SOCK_RAW, NETLINK_SOCK_DIAG)
    except OSError as error:
        raise ProbeError(f"no NETLINK_SOCK_DIAG ({error.strerror or error})") from None
    try:
        sock.settimeout(1.0)
        found: dict[int, tuple[int, bytes | None, int]] = {}
        if len(inodes) > batch:
            sock.send(_request(0, NLM_F_REQUEST | NLM_F_DUMP, 1, ALL_STATES))
            wanted = set(inodes)
            while not _parse_replies(sock.recv(1 << 16), found, wanted)[0]:
                pass
            return found
        sock.send(
            b"".join(_request(inode, NLM_F_REQUEST, seq) for seq, inode in enumerate(inodes, 1))
        )
        answered = 0
        while answered < len(inodes):
            data = sock.recv(1 << 16)
            if not data:
                raise ProbeError("sock_diag closed before answering")
            answered += _parse_replies(data, found, None)[1]
        return found
    except OSError as error:
        raise ProbeError(f"sock_diag failed ({error.strerror or error})") from None
    finally:
        sock.close()


def connection_peers(inodes: set[int]) -> set[int]:
    """Peers of a server's accepted connections: sockets named like one of its listeners (an
    accepted socket carries its listener's name), not its own pairs."""
    known = unix_sockets(sorted(inodes))
    listening = {name for state, name, _ in known.values() if state == UNIX_LISTEN and name}
    return {
        peer
        for state, name, peer in known.values()
        if state != UNIX_LISTEN and name in listening and peer and peer not in inodes
    }


def holders(
    peers: set[int], names: Sequence[bytes], skip: Sequence[int] = (), proc: str = PROC
) -> tuple[dict[int, set[int]], set[int]]:
    """({pid: peers it holds}, peers left over). `names` choose whom to read, not who counts:
    any peer left over means no card (docs/harnesses.md, "every peer accounted for")."""
    found: dict[int, set[int]] = {}
    left = set(peers)
    if not left:
        return found, left
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        pid = int(name)
        if pid in skip or procfs.comm(pid, proc) not in names:
            continue
        try:
            held = socket_inodes(pid, proc)
        except TooManyFiles:
            continue  # unread: whatever it holds stays unaccounted
        mine = set() if held is None else held & peers
        if mine:
            found[pid] = mine
            left -= mine
    return found, left


def _request(inode: int, flags: int, seq: int, states: int = ALL_STATES) -> bytes:
    import _socket
    import _struct

    req = _struct.pack(
        "=BBHIIIII",
        _socket.AF_UNIX,
        0,
        0,
        states,
        inode,
        UDIAG_SHOW_NAME | UDIAG_SHOW_PEER,
        NO_COOKIE,
        NO_COOKIE,
    )
    return _struct.pack("=IHHII", 16 + len(req), SOCK_DIAG_BY_FAMILY, flags, seq, 0) + req


def _parse_replies(
    data: bytes, found: dict[int, tuple[int, bytes | None, int]], wanted: set[int] | None
) -> tuple[bool, int]:
    """Add each reply's socket (if `wanted`) to `found`: (the answer ended, replies in this recv);
    one lookup's error: that socket is gone."""
    import _struct

    replies = 0
    if not data:
        return True, replies
    offset = 0
    while offset + 16 <= len(data):
        length, kind, _flags, _seq, _port = _struct.unpack_from("=IHHII", data, offset)
        if length < 16:
            break
        if kind in (SOCK_DIAG_BY_FAMILY, NLMSG_ERROR, NLMSG_DONE):
            replies += 1
        if kind == NLMSG_DONE:
            return True, replies
        if kind == NLMSG_ERROR and wanted is not None:
            raise ProbeError("sock_diag refused to list the Unix sockets")
        if kind == SOCK_DIAG_BY_FAMILY and length >= 32:
            # unix_diag_msg: family, type, state, pad (4 bytes), ino, cookie[2] = 16 bytes
            state = data[offset + 18]
            (inode,) = _struct.unpack_from("=I", data, offset + 20)
            if wanted is None or inode in wanted:
                found[inode] = (state, *_attributes(data, offset + 32, offset + length))
        offset += (length + 3) & ~3
    return False, replies


def _attributes(data: bytes, attr: int, end: int) -> tuple[bytes | None, int]:
    import _struct

    name, peer = None, 0
    while attr + 4 <= end:
        attr_len, attr_type = _struct.unpack_from("=HH", data, attr)
        if attr_len < 4:
            break
        if attr_type == UNIX_DIAG_NAME and attr_len > 4:
            name = data[attr + 4 : attr + attr_len]
        elif attr_type == UNIX_DIAG_PEER and attr_len >= 8:
            (peer,) = _struct.unpack_from("=I", data, attr + 4)
        attr += (attr_len + 3) & ~3
    return name, peer
