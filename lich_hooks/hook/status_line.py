"""`lich-hook status-line [-- <command…>]`, run every few hundred ms: it usually reads one
directory; lich's list is read at most every CHECK_SECONDS, shared by every run
(docs/agent-cards.md)."""

from __future__ import annotations

import os
import sys
import time

from lich_hooks.base.lichenv import LichEnv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from subprocess import Popen

    from lich_hooks.hook.jobs.agent_cards.record import Worker

CHECK_SECONDS = 5.0
USER_COMMAND_SECONDS = 10.0
OUTPUT_LIMIT = 64 * 1024  # a status line is a few lines; the rest is cut


def main(args: list[str]) -> int:
    environ = os.environ
    command = args[args.index("--") + 1 :] if "--" in args else []
    parts: list[bytes] = []
    if command:
        from lich_hooks.hook.payload import read_stdin

        stdin = read_stdin(0) or b""
        mine = run_user_command(command, stdin)
        if mine:
            parts.append(mine)
    try:
        count, whole = count_workers(environ, time.time())
    except Exception as error:  # a status line must never show a traceback
        count, whole = 0, True
        _log_crash(environ, error)
    if count > 0 or not whole:
        from lich_hooks.hook.jobs.agent_cards.text import text

        lang = LichEnv(environ).lang
        key = "workers_one" if count == 1 and whole else "workers_many"
        shown = f"{count}" if whole else f"{count}+"  # more records than one run reads
        parts.append(text(lang, key, count=shown).encode("utf-8"))
    if parts:
        _write(b"\n".join(parts) + b"\n")
    state = sys.modules.get("lich_hooks.hook.state")  # loaded only by a run that had a card
    if state is not None and (state.WRITTEN or not whole):
        from lich_hooks.hook.state import prune

        # after the line is out: detached; a folder past the bound is pruned back under it
        prune.after_run(environ, time.time(), wanted=not whole)
    return 0


def _log_crash(environ: Mapping[str, str], error: Exception) -> None:
    """A crash looks like "no workers": leave a hook's one trace, an `internal-error` line."""
    from lich_hooks.base.runlog import RunLog

    log = RunLog(environ)
    log.set(
        event="status-line", decision="internal-error", error=f"{type(error).__name__}: {error}"
    )
    log.debug(f"status-line: internal-error ({type(error).__name__})")
    log.write()


def run_user_command(command: list[str], stdin: bytes) -> bytes:
    """The user's line, its group killed at OUTPUT_LIMIT or USER_COMMAND_SECONDS; its stderr is
    dropped: a child holding ours would stall Claude Code."""
    import subprocess

    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return b""
    out, whole = b"", False
    try:
        out, whole = _collect(proc, stdin, time.monotonic() + USER_COMMAND_SECONDS)
    except (OSError, ValueError):
        pass
    finally:
        _end(proc, cut=not whole)
    if not whole:
        cut = out.rfind(b"\n", 0, OUTPUT_LIMIT)
        out = out[:cut] if cut > 0 else out[:OUTPUT_LIMIT]
    return out.rstrip(b"\r\n")


def _collect(proc: Popen[bytes], stdin: bytes, deadline: float) -> tuple[bytes, bool]:
    """What it prints until it closes its output, exits, or a limit cuts it (False); after its exit
    only what is in the pipe is read: a background child cannot hold us. Threads, as select() takes
    only sockets on Windows; raw reads and writes (each through fileno(), which fails once the pipe
    is closed), so closing the pipes never waits on them."""
    import threading

    assert proc.stdin is not None and proc.stdout is not None
    writer, reader = proc.stdin, proc.stdout
    chunks: list[bytes] = []
    ended = threading.Event()

    def feed() -> None:
        try:
            pending = memoryview(stdin)
            while pending:
                pending = pending[os.write(writer.fileno(), pending) :]
            writer.close()
        except (OSError, ValueError):  # it stopped reading its stdin: fine
            pass

    def drain() -> None:
        total = 0
        try:
            while total <= OUTPUT_LIMIT:
                chunk = os.read(reader.fileno(), 65536)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        except (OSError, ValueError):
            pass
        ended.set()

    for target in (feed, drain):
        threading.Thread(target=target, daemon=True).start()
    while not ended.wait(0.02):
        if time.monotonic() >= deadline:
            return b"".join(chunks), False
        if proc.poll() is not None:
            ended.wait(0.1)  # what is already in the pipe
            break
    out = b"".join(chunks)
    return out, len(out) <= OUTPUT_LIMIT


def _end(proc: Popen[bytes], cut: bool) -> None:
    """Kill the whole group, then close our pipes: closing first would let SIGPIPE end the shell
    while its background children live on."""
    import signal

    if cut or proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its session's group: start_new_session
        except (OSError, AttributeError):
            try:
                proc.kill()
            except OSError:
                pass
    for pipe in (proc.stdin, proc.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
    try:
        proc.wait(1.0)
    except Exception:  # noqa: S110 - a status line must never show a traceback
        pass


def count_workers(environ: Mapping[str, str], now: float) -> tuple[int, bool]:
    """This card's running workers, reconciled with lich, and whether that is all of them."""
    env = LichEnv(environ)
    if env.card is None:
        return 0, True
    from lich_hooks.hook.jobs.agent_cards import record

    workers, whole = record.workers(environ, env.card, now)
    if not workers:
        return 0, whole
    last = record.checked_at(environ, env.card)
    if last is not None and 0 <= now - last < CHECK_SECONDS:
        return len(workers), whole
    # Claim this period first: the runs that follow use the cache while this one asks lich.
    record.mark_checked(environ, env.card, now)
    rows = sessions(env, environ)
    if rows is None:
        return len(workers), whole  # a list lich cannot give keeps the count
    done = [worker["name"] for worker in workers if finished(worker, rows)]
    if done:
        record.remove(environ, env.card, *done)
    return len(workers) - len(done), whole


def sessions(env: LichEnv, environ: Mapping[str, str]) -> list[dict[str, object]] | None:
    if env.bin is None or not env.bin_is_runnable():
        return None
    import json

    from lich_hooks.hook.jobs.agent_cards import lich_process

    ran = lich_process.run([env.bin, "sessions", "--json"], environ, lich_process.SESSIONS_SECONDS)
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


def finished(worker: Worker, rows: list[dict[str, object]]) -> bool:
    """A shared worker ends when lich drops it, an isolated one also when `done`; matched by name
    or id, so a worker renamed in lich still counts."""
    name = worker["name"]
    ident = worker.get("id")
    listed = [row for row in rows if row.get("name") == name or (ident and row.get("id") == ident)]
    if not listed:
        return True
    return bool(worker.get("branch")) and any(row.get("state") == "done" for row in listed)


def _write(data: bytes) -> None:
    """Bytes: sys.stdout's encoding (a code page, a C locale) must not drop an emoji."""
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except (OSError, ValueError, AttributeError):
        pass
