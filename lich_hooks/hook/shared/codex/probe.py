"""What the Codex attribution reads from the system: the hook's ancestry, the daemon's clients.

This is the I/O half of `decide.py`; it only records, decide.py judges. The
readers Crush's probe shares (ancestry, sockets, environment, sock_diag) are in
../proc.py; this adds the daemon's clients and the sessions it holds. Linux
reads /proc and asks the kernel for Unix-socket peers over NETLINK_SOCK_DIAG;
other systems with a `ps` (macOS, the BSDs) can see the
ancestry but not the daemon's clients, so there a daemon-run hook is refused.

Cost matters: this runs on Codex's SessionStart, inside the user's first turn.
Measured on Linux with a daemon and two clients: about 1-2 ms for the whole
probe (benchmarks/codex_daemon.py, which also measures a daemon holding 1,000
sockets). Choices that keep it there:
- `_socket` and `_struct`, not `socket` and `struct`: `import socket` builds
  its enums and pulls in `selectors` (~9 ms here), the C modules cost <1 ms.
- one netlink message per daemon socket (UDIAG_SHOW_PEER, exact inode) for
  a daemon with up to PEER_BATCH sockets, all in one send, instead of dumping
  every Unix socket on the machine; a busier daemon gets one dump, read until
  NLMSG_DONE (all its lookups in one send overflowed the netlink socket's
  receive queue at ~256 sockets, and each exact lookup walks every socket in
  the kernel). /proc/net/unix cannot do this job at all: it lists sockets
  without peers.
- the whole-/proc scan reads only `comm` (16 bytes) per process; fds are read
  for processes named codex only, argv, cwd and environment for those holding
  a peer. Any peer left unaccounted refuses (a process of another name or
  user, an unreadable one), so the names choose whom to read, not who counts.
- a process's open files are read one `readlink` each (~5 us): a process
  holding more than MAX_FDS of them is not read at all (its size in /proc says
  how many it holds), so a leaking daemon costs a refusal, not 150 ms of the
  user's turn.
psutil was not used: it is not in the standard library (the hook path is
stdlib only), costs more to import than this whole probe, and has no way to
name a Unix socket's peer on Linux (it reads /proc/net/unix too).
"""

from __future__ import annotations

import os

from lich_hooks.hook import procfs
from lich_hooks.hook.shared import proc as shared_proc
from lich_hooks.hook.shared.codex.decide import Client, is_app_server, is_codex, switcher
from lich_hooks.hook.shared.proc import (
    PEER_BATCH,
    PROC,
    ProbeError,
    TooManyFiles,
    can_list_clients,
    environ_of,
    fd_targets,
    lich_environ,
    socket_inodes,
    unix_peers,
)

__all__ = [
    "PEER_BATCH",
    "PROC",
    "ProbeError",
    "TooManyFiles",
    "can_list_clients",
    "environ_of",
    "fd_targets",
    "lich_environ",
    "socket_inodes",
    "unix_peers",
]

SESSION_META_LIMIT = 1 << 20  # a rollout's first line (session_meta) is a few kB


def ancestors(start: int, proc: str = PROC) -> list[tuple[int, list[str]]] | None:
    """(pid, argv) from `start` upwards, up to and including the nearest codex."""
    return shared_proc.ancestors(start, proc, is_codex)


def parse_ps(out: str, start: int) -> list[tuple[int, list[str]]] | None:
    """The same from `ps -A -o pid=,ppid=,command=` output."""
    return shared_proc.parse_ps(out, start, is_codex)


class Snapshot:
    """What the probe saw of one daemon: its clients, the sessions it holds open, and
    how many of its connections no client read here accounts for.

    `loaded` maps each session id whose rollout file the daemon holds open
    (Codex keeps a loaded session's rollout open) to that file's path.
    `unaccounted` counts the peers of the daemon's connections held by no
    codex process this hook could read (docs/harnesses.md: then no card).
    """

    __slots__ = ("clients", "loaded", "unaccounted")

    def __init__(self, clients: list[Client], loaded: dict[str, str], unaccounted: int = 0) -> None:
        self.clients = clients
        self.loaded = loaded
        self.unaccounted = unaccounted


def clients(daemon: int, proc: str = PROC) -> list[Client]:
    """Every codex process holding the other end of one of the daemon's connections.

    Raises ProbeError when the daemon's sockets or their peers cannot be read
    (then nobody can be named, and the caller refuses). doctor and other
    shared-process probes use this listing as it is.
    """
    return snapshot(daemon, proc).clients


def snapshot(daemon: int, proc: str = PROC) -> Snapshot:
    """The daemon's clients, its loaded sessions, and its unaccounted peers (ProbeError:
    cannot tell). A peer held by a process not named codex, an app-server, another
    user's or an unreadable process is counted, never skipped (shared/proc.py, holders)."""
    try:
        targets = fd_targets(daemon, proc)
    except TooManyFiles as error:
        raise ProbeError(f"it {error}") from None
    if targets is None:
        raise ProbeError(f"cannot read the sockets of codex app-server {daemon}")
    peers = shared_proc.connection_peers(shared_proc.sockets(targets))
    held, left = shared_proc.holders(peers, CODEX_NAMES, (os.getpid(), daemon), proc)
    rollouts = _rollouts(targets)
    unaccounted = len(left)
    found: list[Client] = []
    for pid in sorted(held):
        argv = procfs.cmdline(pid, proc)
        if argv is None or not is_codex(argv) or is_app_server(argv):
            unaccounted += len(held[pid])
            continue
        resumed_dir = None
        switched = switcher(argv)
        if switched is not None and switched[1] is not None and switched[1] in rollouts:
            resumed_dir = session_cwd(rollouts[switched[1]])
        client = Client(pid, argv, _cwd(pid, proc), lich_environ(pid, proc), resumed_dir)
        client.started = procfs.started(pid, proc)
        found.append(client)
    return Snapshot(found, rollouts, unaccounted)


def _rollouts(targets: list[str]) -> dict[str, str]:
    """Session id -> rollout file, for the sessions the daemon has open (`rollout-…-<id>.jsonl`)."""
    found = {}
    for path in targets:
        name = path.rsplit("/", 1)[-1]
        if name.startswith("rollout-") and name.endswith(".jsonl") and len(name) > 42:
            found[name[-42:-6]] = path
    return found


def session_cwd(path: str | None) -> str | None:
    """The `cwd` a Codex rollout recorded its session in (its first line, `session_meta`).

    The path may come from a payload: read through lich_hooks/base/safefile.py
    (a regular file, not through a final symlink, never blocking on a FIFO),
    and only its first line, bounded.
    """
    return meta_cwd(rollout_head(path))


def rollout_head(path: str | None) -> bytes | None:
    """A rollout's first line, as far as it is written (no newline yet: being created);
    None when it is no readable regular file, or its first line is over the limit."""
    if not path or not path.startswith("/"):
        return None
    from lich_hooks.base import safefile

    try:
        head = safefile.read_regular(path, SESSION_META_LIMIT, stop=b"\n")
    except (OSError, ValueError):
        return None
    return head.split(b"\n", 1)[0] + b"\n" if b"\n" in head else head


def meta_cwd(head: bytes | None) -> str | None:
    """The cwd in a rollout's first line, if it is a session_meta naming an absolute one."""
    if not head:
        return None
    from lich_hooks.hook.payload import loads_object

    record = loads_object(head.rstrip(b"\n"))
    meta = record.get("payload") if record and record.get("type") == "session_meta" else None
    cwd = meta.get("cwd") if isinstance(meta, dict) else None
    return cwd if isinstance(cwd, str) and cwd.startswith("/") else None


def app_servers(proc: str = PROC) -> list[tuple[int, list[str]]]:
    """(pid, argv) of every running `codex app-server` (for doctor; not on the hook path)."""
    return procfs.processes(CODEX_NAMES, is_app_server, proc)


CODEX_NAMES = (b"codex", b"codex.exe")


def _cwd(pid: int, proc: str) -> str | None:
    return procfs.cwd(pid, proc)
