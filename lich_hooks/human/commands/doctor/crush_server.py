"""doctor: is a `crush server` running for this terminal's socket, and whose card does it carry? A
warning only where the person loses something and can act (docs/harnesses.md, Crush)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from lich_hooks.hook.shared.crush import decide, probe, resolved_dir
from lich_hooks.human.commands.doctor.check import FAIL, OK, Check, describe, shared_process

NAME = "Crush server"
ADVICE = (
    "in this card, quit Crush, `unset CRUSH_CLIENT_SERVER` and start it again (Crush's "
    "default, local mode): it then runs its hooks and commands with this card's variables"
)
PLACES = ("XDG_RUNTIME_DIR", "TMPDIR")


def check(environ: Mapping[str, str]) -> list[Check]:
    if sys.platform == "win32":
        return _windows()
    socket = probe.socket_path(None, environ)
    if not probe.can_list_clients():
        if not os.path.exists(socket):
            return [Check(NAME, OK, f"no crush server at {socket}")]
        why = f"a crush server listens at {socket}; on this system lich-hook cannot tell which "
        why += "card a hook it runs is for, so Crush cards in client/server mode report nothing"
        return [Check(NAME, FAIL, why, ADVICE)]
    running = [pid for pid, argv in probe.servers() if _serves(pid, argv, socket)]
    if not running:
        return [Check(NAME, OK, f"no crush server running for {socket}")]
    checks = []
    for pid in running:
        rows, dropped = _dropped(pid, socket)
        lost = f"reports are dropped {'; '.join(dropped)}" if dropped else None
        summary = f"crush server {pid} runs every hook of the Crush clients started with "
        summary += "CRUSH_CLIENT_SERVER=1"
        fine = "; each report goes to the card whose workspace holds the conversation"
        checks.append(
            shared_process(
                NAME, summary, environ, lost, (ADVICE, ADVICE), fine, rows, "server", pid
            )
        )
    return checks


def _serves(pid: int, argv: list[str], socket: str) -> bool:
    """Whether this running `crush server` listens on `socket` (by its argv and environment)."""
    try:
        return probe.socket_path(argv, probe.environ_of(pid, PLACES) or {}) == socket
    except probe.ProbeError:
        return False


def _dropped(pid: int, socket: str) -> tuple[list[str], list[str]]:
    """The server's workspaces and clients as rows, and where and why the hook drops reports,
    asked of the hook's own rules (decide.choose) so doctor says what the hook does."""
    rows: list[str] = []
    try:
        spaces = probe.workspaces(socket)
        listed = probe.clients(pid)
    except probe.ProbeError as error:
        return rows, [f"everywhere: it cannot be asked ({error})"]
    for space in spaces:
        rows.append(f"workspace {space.id} in {space.path}: {describe(space.lich)}")
    if isinstance(listed, decide.Attribution):
        return rows, [f"everywhere: {listed.why}"]
    rows += [f"client {c.pid} in {c.cwd or '(gone)'}: {describe(c.lich)}" for c in listed]
    dropped = []
    for space in spaces:
        where = decide.Workspace(space.id, os.path.realpath(space.path), space.lich)
        found = decide.choose(where, "?", True, listed, resolved_dir, 1)
        if found.lich is None:
            dropped.append(f"in {space.path}: {found.why}")
    return rows, dropped


def _windows() -> list[Check]:
    """On Windows the server listens on a named pipe: look for its process instead."""
    from lich_hooks.base import winproc

    running = winproc.processes(decide.CRUSH_NAMES, decide.is_server)
    if not running:
        return [Check(NAME, OK, "no crush server running")]
    pids = ", ".join(str(pid) for pid, _ in running)
    why = f"crush server {pids} runs; on Windows lich-hook cannot tell which card a hook it "
    why += "runs is for, so Crush cards in client/server mode report nothing"
    return [Check(NAME, FAIL, why, ADVICE)]
