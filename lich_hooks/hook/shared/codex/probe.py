"""The I/O half of decide.py: the daemon's clients, over ../proc.py. It runs inside the user's
first turn: its ~1-2 ms cost is in docs/performance.md (Codex)."""

from __future__ import annotations

import os

from lich_hooks.hook import procfs
from lich_hooks.hook.shared import proc as shared_proc
from lich_hooks.hook.shared.codex.decide import Client, is_app_server, is_codex
from lich_hooks.hook.shared.proc import (
    PROC,
    ProbeError,
    TooManyFiles,
    can_list_clients,
    environ_of,
    fd_targets,
    lich_environ,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "PROC",
    "ProbeError",
    "can_list_clients",
    "environ_of",
    "lich_environ",
]


def snapshot(
    daemon: int, proc: str = PROC, ours: Callable[[int], bool] | None = None
) -> tuple[list[Client], int]:
    """The daemon's clients, and how many of its connections no codex client read holds (a peer
    held by anything but a readable codex client, unless `ours` recognises it as a sender's own
    request: nudge.py). ProbeError: cannot tell."""
    try:
        targets = fd_targets(daemon, proc)
    except TooManyFiles as error:
        raise ProbeError(f"it {error}") from None
    if targets is None:
        raise ProbeError(f"cannot read the sockets of codex app-server {daemon}")
    peers = shared_proc.connection_peers(shared_proc.sockets(targets))
    held, left = shared_proc.holders(peers, CODEX_NAMES, (os.getpid(), daemon), proc)
    if ours is not None:
        left = {peer for peer in left if not ours(peer)}
    unaccounted = len(left)
    found: list[Client] = []
    for pid in sorted(held):
        argv = procfs.cmdline(pid, proc)
        if argv is None or not is_codex(argv) or is_app_server(argv):
            unaccounted += len(held[pid])
            continue
        client = Client(pid, argv, procfs.cwd(pid, proc), lich_environ(pid, proc))
        client.started = started_at(pid, proc)
        found.append(client)
    return found, unaccounted


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
