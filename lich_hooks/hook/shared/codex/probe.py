"""The I/O half of decide.py: the daemon's clients and the sessions it holds, over ../proc.py.
It runs inside the user's first turn: its ~1-2 ms cost is in docs/performance.md (Codex)."""

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
    unix_peers,
)

__all__ = [
    "PEER_BATCH",
    "PROC",
    "ProbeError",
    "can_list_clients",
    "environ_of",
    "lich_environ",
    "unix_peers",
]

SESSION_META_LIMIT = 1 << 20  # a rollout's first line (session_meta) is a few kB


def ancestors(start: int, proc: str = PROC) -> list[tuple[int, list[str]]] | None:
    return shared_proc.ancestors(start, proc, is_codex)


def parse_ps(out: str, start: int) -> list[tuple[int, list[str]]] | None:
    return shared_proc.parse_ps(out, start, is_codex)


class Snapshot:
    """`loaded`: session id -> the rollout file the daemon holds open."""

    __slots__ = ("clients", "loaded", "unaccounted")

    def __init__(self, clients: list[Client], loaded: dict[str, str], unaccounted: int = 0) -> None:
        self.clients = clients
        self.loaded = loaded
        self.unaccounted = unaccounted


def clients(daemon: int, proc: str = PROC) -> list[Client]:
    return snapshot(daemon, proc).clients


def snapshot(daemon: int, proc: str = PROC) -> Snapshot:
    """ProbeError: cannot tell. A peer held by anything but a readable codex client is counted."""
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
        client = Client(pid, argv, procfs.cwd(pid, proc), lich_environ(pid, proc), resumed_dir)
        client.started = started_at(pid, proc)
        found.append(client)
    return Snapshot(found, rollouts, unaccounted)


def _rollouts(targets: list[str]) -> dict[str, str]:
    """Session id -> `rollout-…-<id>.jsonl` file."""
    found = {}
    for path in targets:
        name = path.rsplit("/", 1)[-1]
        if name.startswith("rollout-") and name.endswith(".jsonl") and len(name) > 42:
            found[name[-42:-6]] = path
    return found


def session_cwd(path: str | None) -> str | None:
    """The absolute `cwd` in a rollout's first line (`session_meta`), read bounded: the path may
    come from a payload."""
    if not path or not path.startswith("/"):
        return None
    from lich_hooks.base import safefile
    from lich_hooks.hook.payload import loads_object

    try:
        head = safefile.read_regular(path, SESSION_META_LIMIT, stop=b"\n")
    except (OSError, ValueError):
        return None
    record = loads_object(head.split(b"\n", 1)[0])
    meta = record.get("payload") if record and record.get("type") == "session_meta" else None
    cwd = meta.get("cwd") if isinstance(meta, dict) else None
    return cwd if isinstance(cwd, str) and cwd.startswith("/") else None


def app_servers(proc: str = PROC) -> list[tuple[int, list[str]]]:
    return procfs.processes(CODEX_NAMES, is_app_server, proc)


CODEX_NAMES = (b"codex", b"codex.exe")


def started_at(pid: int, proc: str = PROC) -> float | None:
    """Wall-clock seconds from /proc's boot-relative ticks."""
    import time

    ticks = procfs.started(pid, proc)
    if ticks is None:
        return None
    boot = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    return boot + ticks / os.sysconf("SC_CLK_TCK")
