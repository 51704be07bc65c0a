"""doctor's Codex row: this CODEX_HOME's app-server daemon and whose card it carries, a warning
only where the person loses something and can act (docs/troubleshooting.md, Codex daemon)."""

from __future__ import annotations

import os
import sys

from lich_hooks.base.safefile import read_regular, same_file
from lich_hooks.hook.shared.codex import decide, probe
from lich_hooks.human.commands.doctor.check import (
    FAIL,
    OK,
    Check,
    carries,
    describe,
    shared_process,
)
from lich_hooks.human.settings.folders import codex_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


NAME = "Codex daemon"
OWN_DAEMON = (
    "in this card, quit Codex and start it as `codex --no-daemon` (resume: `codex resume "
    "--no-daemon <id>`): it then runs its hooks and commands with this card's variables"
)
SEVERAL_CARDS = (
    "start Codex as `codex --no-daemon` in every card but one: while several cards' Codex "
    "TUIs share the daemon, none of them can be told apart, so none reports"
)


def daemons_for(home: str, proc: str = probe.PROC) -> list[tuple[int, list[str]]]:
    """The managed app-server daemons serving `home` (Linux: their argv or environment say so)."""
    found = []
    for pid, argv in probe.app_servers(proc):
        if "--managed-daemon" not in argv:
            continue
        if argv[0].startswith(os.path.join(home, "packages") + os.sep):
            found.append((pid, argv))
            continue
        env = probe.environ_of(pid, ("CODEX_HOME", "HOME"), proc) or {}
        # Derived from the daemon's own variables; a daemon without HOME never names ours.
        theirs = codex_home({"HOME": "/nonexistent", **{k: v for k, v in env.items() if v}})
        if same_file(theirs, home):
            found.append((pid, argv))
    return found


def _pid_file_daemon(home: str) -> int | None:
    """Where /proc is missing: the daemon's pid file, if that process is alive."""
    import json

    try:
        raw = read_regular(os.path.join(home, "app-server-daemon", "daemon.pid"), 4096)
        pid = int(json.loads(raw)["pid"])
        if sys.platform == "win32":
            # os.kill(pid, 0) there is CTRL_C_EVENT to a process group, not a liveness check
            from lich_hooks.base import winproc

            running = winproc.processes(decide.CODEX_NAMES, decide.is_app_server)
            return pid if any(found == pid for found, _ in running) else None
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid


def check(environ: Mapping[str, str], proc: str = probe.PROC) -> list[Check]:
    home = codex_home(environ)
    listing = probe.can_list_clients(proc)
    pid = None if listing else _pid_file_daemon(home)  # where /proc is missing
    if pid is not None:
        why = f"Codex app-server daemon {pid} runs this CODEX_HOME's hooks ({home}); on this "
        why += "system lich-hook cannot tell which card a hook runs for, so it reports nothing"
        return [Check(NAME, FAIL, why, OWN_DAEMON)]
    daemons = daemons_for(home, proc) if listing else []
    if not daemons:
        return [Check(NAME, OK, f"no Codex app-server daemon running for {home}")]
    checks = []
    mine = environ.get("LICH_SESSION_ID")
    for pid, _argv in daemons:
        card, whose = carries(probe.lich_environ(pid, proc), mine)
        unaccounted = 0
        try:
            seen = probe.snapshot(pid, proc)
            clients, unaccounted = seen.clients, seen.unaccounted
        except probe.ProbeError as error:
            clients = []
            whose += f"; its clients cannot be listed ({error})"
        rows = [
            f"client {c.pid} in {decide.conversation_dir(c) or '(gone)'}: {describe(c.lich)}"
            for c in clients
        ]
        if unaccounted:
            rows.append(
                f"{unaccounted} connection(s) held by no codex client doctor can read "
                "(another program's, another user's or an unreadable process): no report"
            )
        shared = ", ".join(_shared_dirs(clients, unaccounted))
        summary = f"Codex app-server daemon {pid} runs the interactive Codex hooks for {home}"
        several = "several cards' Codex TUIs (or clients it cannot read) are connected"
        lost = f"; {several}, so reports from {shared} are dropped (it {whose})" if shared else None
        checks.append(
            shared_process(
                NAME,
                summary,
                shared=lost,
                carried=(card, whose),
                here=mine,
                fixes=(SEVERAL_CARDS, OWN_DAEMON),
                mine="; each report goes to the one card whose Codex TUIs are connected",
                rows=rows,
                daemon=pid,
                carries=card,
            )
        )
    return checks


def _shared_dirs(clients: list[decide.Client], unaccounted: int = 0) -> list[str]:
    """The directories whose reports the hook drops for several cards (decide.attribute's say)."""
    places = sorted({where for c in clients if (where := decide.conversation_dir(c)) is not None})
    return [
        where
        for where in places
        if decide.attribute(clients, where, decide.FRESH_SOURCES[0], None, unaccounted).decision
        in (decide.SEVERAL, decide.MOVED, decide.UNACCOUNTED)
    ]
