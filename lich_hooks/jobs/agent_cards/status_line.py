"""`lich-hook status-line [-- <command…>]`: a Claude Code `statusLine` command.

Prints `lich: N worker(s)` while workers this card opened are still running,
nothing at zero (docs/agent-cards.md). Claude Code runs the status line every few hundred
milliseconds, so the usual run reads one directory and prints; lich's session
list is read at most every CHECK_SECONDS, with the time of the last read kept
next to the record so every run (each its own process) shares it.

`-- <command…>` runs the user's own status line command (argv, no shell) on
the same stdin and prints its output first, so the two compose.
"""

from __future__ import annotations

import os
import sys
import time

from lich_hooks.lichenv import LichEnv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

CHECK_SECONDS = 5.0
USER_COMMAND_SECONDS = 10.0


def main(args: list[str]) -> int:
    environ = os.environ
    command = args[args.index("--") + 1 :] if "--" in args else []
    parts: list[bytes] = []
    if command:
        from lich_hooks.payload import read_stdin

        stdin = read_stdin(0) or b""
        mine = run_user_command(command, stdin)
        if mine:
            parts.append(mine)
    try:
        count = count_workers(environ, time.time())
    except Exception as error:  # a status line must never show a traceback
        count = 0
        _log_crash(environ, error)
    if count > 0:
        from lich_hooks.jobs.agent_cards.text import text

        lang = LichEnv(environ).lang
        key = "workers_one" if count == 1 else "workers_many"
        parts.append(text(lang, key, count=count).encode("utf-8"))
    if parts:
        _write(b"\n".join(parts) + b"\n")
    return 0


def _log_crash(environ: Mapping[str, str], error: Exception) -> None:
    """A crash looks like "no workers" from outside: leave the one trace a hook leaves,
    an `internal-error` line in LICH_HOOK_LOG and on stderr under LICH_HOOK_DEBUG."""
    from lich_hooks.runlog import RunLog

    log = RunLog(environ)
    log.set(
        event="status-line", decision="internal-error", error=f"{type(error).__name__}: {error}"
    )
    log.debug(f"status-line: internal-error ({type(error).__name__})")
    log.write()


def run_user_command(command: list[str], stdin: bytes) -> bytes:
    """The user's status line, byte for byte as it printed it (trailing newlines dropped)."""
    import subprocess

    try:
        proc = subprocess.run(
            command,
            input=stdin,
            stdout=subprocess.PIPE,
            timeout=USER_COMMAND_SECONDS,
            check=False,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return b""
    return proc.stdout.rstrip(b"\r\n")


def count_workers(environ: Mapping[str, str], now: float) -> int:
    """How many recorded workers of this card are still running, reconciled with lich."""
    env = LichEnv(environ)
    if env.card is None:
        return 0
    from lich_hooks.jobs.agent_cards import record

    workers = record.workers(environ, env.card)
    if not workers:
        return 0
    last = record.checked_at(environ, env.card)
    if last is not None and 0 <= now - last < CHECK_SECONDS:
        return len(workers)
    # Claim this period first, so the runs that follow within it use the cache
    # instead of asking lich again while this one waits for it.
    record.mark_checked(environ, env.card, now)
    rows = sessions(env, environ)
    if rows is None:
        return len(workers)  # a list lich cannot give keeps the count
    running = 0
    for worker in workers:
        if finished(worker, rows):
            name = worker.get("name")
            if isinstance(name, str):
                record.remove(environ, env.card, name)
        else:
            running += 1
    return running


def sessions(env: LichEnv, environ: Mapping[str, str]) -> list[dict[str, object]] | None:
    """`$LICH_BIN sessions --json` as rows, or None when lich could not say."""
    if env.bin is None or not env.bin_is_runnable():
        return None
    import json

    from lich_hooks.jobs.agent_cards import lich_process

    ran = lich_process.run_lich(
        env.bin, ["sessions", "--json"], environ, lich_process.SESSIONS_SECONDS
    )
    if ran.code != 0:
        return None
    try:
        value = json.loads(ran.stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if isinstance(value, dict):
        value = value.get("sessions")
    if not isinstance(value, list):
        return None
    return [row for row in value if isinstance(row, dict)]


def finished(worker: dict[str, object], rows: list[dict[str, object]]) -> bool:
    """A shared worker ends when lich drops it; an isolated one also when it is `done`.

    Rows match by roster name, or by session id when the record has one, so a
    worker renamed in lich is still recognised.
    """
    name = worker.get("name")
    ident = worker.get("id")
    listed = [
        row
        for row in rows
        if row.get("name") == name or (isinstance(ident, str) and ident and row.get("id") == ident)
    ]
    if not listed:
        return True
    isolated = isinstance(worker.get("branch"), str) and bool(worker.get("branch"))
    return isolated and any(row.get("state") == "done" for row in listed)


def _write(data: bytes) -> None:
    """Bytes, not text: sys.stdout's encoding (a Windows code page, a C locale)
    must not drop an emoji in the user's line or a translated count."""
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except (OSError, ValueError, AttributeError):
        pass
