"""doctor's Codex row: this CODEX_HOME's app-server daemon, the card it carries, and the hook's
own question asked of it now (_judged; docs/troubleshooting.md, Codex daemon)."""

from __future__ import annotations

import os
import sys

from lich_hooks.base import homes
from lich_hooks.base.safefile import read_regular, same_file
from lich_hooks.hook.shared import codex
from lich_hooks.hook.shared.codex import decide, probe
from lich_hooks.human.commands.doctor.check import FAIL, OK, Check, describe, shared_process
from lich_hooks.human.settings.folders import codex_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


NAME = "Codex daemon"
REFUSED = "conversations under it were refused (below)"
OWN_DAEMON = (
    "in this card, quit Codex and start it as `codex --no-daemon` (resume: `codex resume "
    "--no-daemon <id>`): it then runs its hooks and commands with this card's variables"
)


def _serves(pid: int, argv: list[str], home: str) -> bool:
    """Whether this managed app-server daemon serves `home` (Linux: its argv or environment)."""
    if "--managed-daemon" not in argv:
        return False
    if argv[0].startswith(os.path.join(home, "packages") + os.sep):
        return True
    env = probe.environ_of(pid, ("CODEX_HOME", "HOME")) or {}
    # Derived from the daemon's own variables; a daemon without HOME never names ours.
    theirs = codex_home({"HOME": "/nonexistent", **{k: v for k, v in env.items() if v}})
    return same_file(theirs, home)


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


def check(environ: Mapping[str, str]) -> list[Check]:
    home = codex_home(environ)
    listing = probe.can_list_clients()
    pid = None if listing else _pid_file_daemon(home)  # where /proc is missing
    if pid is not None:
        why = f"Codex app-server daemon {pid} runs this CODEX_HOME's hooks ({home}); on this "
        why += "system lich-hook cannot tell which card a hook runs for, so it reports nothing"
        return [Check(NAME, FAIL, why, OWN_DAEMON)]
    servers = probe.app_servers() if listing else []
    daemons = [pid for pid, argv in servers if _serves(pid, argv, home)]
    if not daemons:
        return [Check(NAME, OK, f"no Codex app-server daemon running for {home}")]
    checks = []
    for pid in daemons:
        env = probe.environ_of(pid, ("CODEX_HOME", "HOME"))  # the hook's, under it
        rows, lost, fix = _judged(environ, pid, homes.codex_home(env) if env else home)
        summary = f"Codex app-server daemon {pid} runs the interactive Codex hooks for {home}"
        fine = "; each conversation goes to the card whose Codex window started it"
        checks.append(
            shared_process(
                NAME, summary, environ, lost, (fix, OWN_DAEMON), fine, rows, "daemon", pid
            )
        )
    return checks


def _judged(
    environ: Mapping[str, str], daemon: int, home: str | None
) -> tuple[list[str], str | None, str]:
    """Its clients as rows, what the hook loses under it now (None: nothing) and the fix: the
    hook's own question (codex.find_card's gate: the refusals that need no log; the log's trust;
    codex.ties on the log as it is now, no wait: whether it ties each lich card's Codex window)
    and the conversations its sender refused (refused.py)."""
    from lich_hooks.hook.shared.codex import evidence, nudge, refused

    try:  # a sender's own open request is not a client, as the hook judges it
        clients, unaccounted = probe.snapshot(daemon, ours=nudge.ours(environ))
    except probe.ProbeError as error:
        lost = f"every conversation under it is refused: its connections cannot be read ({error})"
        return [], lost, codex.TOLD[codex.PROBE_FAILED][1]
    life = codex.identity(daemon)
    found = decide.gate(clients, unaccounted)
    where = codex.log_home({"CODEX_HOME": home} if home else {}) if found is None else None
    held: dict[int, decide.Tie] = {}
    mine = environ.get("LICH_SESSION_ID")
    rows, losses = [], []
    if isinstance(where, str):
        starts = {c.pid: c.started for c in clients if c.started is not None}
        since = probe.started_at(daemon) or 0.0
        try:  # the log as it is: "past the hook" is past the daemon's start
            _, seen, since, connects, _, opened, floor = evidence.gather(
                where, daemon, "", since, starts, wait=0
            )
            log = (seen, since, connects, opened, floor)
            held = codex.ties(environ, life, clients, log)
        except evidence.Unreadable as error:
            rows.append(f"its log cannot tell yet: {error}")
    found = where if isinstance(where, decide.Attribution) else found
    if found is not None and found.decision in codex.TOLD:
        said, fix = codex.TOLD[found.decision]
        said += f" ({found.cause})" if found.cause else ""
        losses.append((False, f"every conversation under it is refused: {said}", fix))
    for c in clients:
        tie, card = held.get(c.pid), (c.lich or {}).get("LICH_SESSION_ID")
        rows.append(f"client {c.pid} in {c.cwd or '(gone)'}: {describe(c.lich)}")
        if c.lich and tie is not None:
            rows[-1] += (
                f"; tied to connection {tie}" if isinstance(tie, int) else f"; not tied: {tie}"
            )
        if c.lich and isinstance(tie, str) and tie != decide.NOT_YET:
            lost = f"card {card}'s Codex window {c.pid} reports nothing: {tie}"
            losses.append((card == mine, lost, codex.AGAIN))
    if unaccounted:
        rows.append(
            f"{unaccounted} connection(s) held by no codex client doctor can read "
            "(another program's, another user's or an unreadable process)"
        )
    for record, _ in refused.recent(environ, life) if life else []:
        started, said = codex.recorded(record)
        rows.append(f"conversation {record.get('thread')} ({started}) was not reported: {said}")
        losses += [] if losses and losses[-1][2] == "" else [(False, REFUSED, "")]
    losses.sort(key=lambda loss: not loss[0])  # this card's first
    fix = next((f for _, _, f in losses if f), codex.NO_DAEMON)
    return rows, "; ".join(lost for _, lost, _ in losses) or None, fix
