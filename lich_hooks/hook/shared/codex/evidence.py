"""The I/O half of decide.from_evidence, read only in the detached sender: the daemon writes what
it logged every 10 s, so the sender waits up to SETTLE for a row it wrote after the moment the rule
needs, and makes one come with a request of its own (nudge.py) where the daemon would log nothing.
Read-only, bounded, indexed queries, never through a symlink (docs/harnesses.md, Codex)."""

from __future__ import annotations

import os
import re
import time

from lich_hooks.hook.shared.codex.decide import (
    CONNECT_WITHIN,
    REQUEST_SPAN,
    STARTUP,
    Connect,
    Opened,
    Row,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    Nudge = Callable[[], str | None]  # nudge.Nudger: None once the daemon logged a request

LOG_DB = "logs_2.sqlite"
Seen = tuple[str, float]
# Seconds the sender waits for the rows it needs: two of the daemon's 10 s write cycles (a request
# of its own at the hook, another if a TUI connected later or a begun request shows no thread
# yet) and a margin. Past it the sender refuses: a bound on waiting, never on what it decides.
SETTLE = 25.0
POLL = 0.5
MAX_ROWS = 2000  # Codex keeps at most 1,000 rows per thread, and per process without a thread
# How long past a TUI's connect the sender waits for its first thread request, where windows
# overlap (decide.tie): a wait for evidence, never a bound the rule rests on (0.01-0.26 s seen)
REQUEST_AFTER = 1.0
REQUEST = re.compile(
    r'rpc\.method="(thread/(?:start|resume|fork))"[^}]*?rpc\.request_id=(\S+) '
    r"app_server\.connection_id=(\d+)"
)


class Unreadable(Exception):
    """The log cannot be read as 0.171.0 writes it: the caller refuses."""


class Untrusted(Unreadable):
    """The log is not the user's alone (trusted()): the caller refuses."""


LOG_FILES = (LOG_DB, f"{LOG_DB}-wal", f"{LOG_DB}-shm")  # what sqlite reads of the log
UNSAFE_MODE = 0o022  # writable by group or others: not the user's alone


def trusted(codex_home: str) -> None:
    """Unreadable unless the log is the user's alone, as the hook's own state directory must be:
    CODEX_HOME absolute, a directory (not a symlink) and each of LOG_FILES present a regular file
    (not a symlink), all owned by this user and writable by nobody else. A log another user can
    write could name any connection for any thread; a relative CODEX_HOME is read from the
    conversation's folder, where a repository could ship one. Same-user forgery stays assumed
    (docs/harnesses.md, Codex)."""
    import stat

    if not os.path.isabs(codex_home):
        raise Untrusted(f"CODEX_HOME {codex_home!r} is not an absolute path")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(codex_home, flags | getattr(os, "O_DIRECTORY", 0))
    except OSError as error:
        raise Untrusted(f"CODEX_HOME {codex_home}: {error.strerror or error}") from None
    try:
        _private(codex_home, os.fstat(fd), stat.S_ISDIR, "a directory")
        for name in LOG_FILES:
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if name == LOG_DB:
                    raise Untrusted(f"{codex_home}/{name} does not exist") from None
                continue  # sqlite makes it only in this directory, which is the user's alone
            except OSError as error:
                raise Untrusted(f"{codex_home}/{name}: {error.strerror or error}") from None
            _private(f"{codex_home}/{name}", info, stat.S_ISREG, "a regular file")
    finally:
        os.close(fd)


def _private(path: str, info: os.stat_result, kind: Callable[[int], bool], what: str) -> None:
    if not kind(info.st_mode):
        raise Untrusted(f"{path} is not {what}")
    if info.st_uid != os.geteuid() or info.st_mode & UNSAFE_MODE:
        raise Untrusted(
            f"{path} is not this user's alone (owner uid {info.st_uid}, mode "
            f"{info.st_mode & 0o7777:o}): another user could write the rows that name a card"
        )


def open_log(codex_home: str) -> sqlite3.Connection:
    import sqlite3
    from urllib.parse import quote

    trusted(codex_home)
    path = os.path.join(codex_home, LOG_DB)
    try:
        before = os.lstat(path)
        db = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=2.0)
        after = os.lstat(path)
    except (OSError, sqlite3.Error) as error:
        raise Unreadable(f"{path}: {error}") from None
    if (before.st_dev, before.st_ino) != (after.st_dev, after.st_ino):
        db.close()
        raise Unreadable(f"{path} was replaced while opened")
    return db


def _query(db: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
    import sqlite3

    try:
        return db.execute(sql, args).fetchall()
    except sqlite3.Error as error:
        raise Unreadable(f"the log's format is not the one known ({error})") from None


def settle(
    db: sqlite3.Connection,
    daemon: int,
    after: float,
    deadline: float,
    nudge: Nudge | None = None,
    nudge_after: float = 0.0,
) -> Seen | None:
    """(process_uuid, time) of a row the daemon wrote after `after`: every earlier row is then in
    the file (one writer, rows in time order: measured). Once the clock is past `after` (and
    `nudge_after`) with no such row readable, `nudge` makes the daemon log one, once: a row
    stamped when the daemon takes the request, after `after`, written with its next batch."""
    prefix = f"pid:{daemon}:"
    nudged = nudge is None
    while True:
        rows = _query(
            db,
            "SELECT process_uuid, ts, ts_nanos FROM logs WHERE ts >= ? "
            "ORDER BY ts DESC, ts_nanos DESC LIMIT 200",
            (int(after),),
        )
        mine = [(str(u), _when(ts, n)) for u, ts, n in rows if str(u).startswith(prefix)]
        if len({u for u, _ in mine}) > 1:
            raise Unreadable(f"rows of two processes {daemon}")
        if mine and mine[0][1] > after:
            return mine[0]
        if time.monotonic() >= deadline:
            return None
        if not nudged and time.time() > max(after, nudge_after):
            assert nudge is not None
            nudged = True  # once: one that failed leaves the wait as it was without it
            nudge()
        time.sleep(POLL)


def thread_rows(
    db: sqlite3.Connection, uuid: str, thread: str, since: float, until: float
) -> list[Row]:
    rows = _query(
        db,
        "SELECT ts, ts_nanos, feedback_log_body FROM logs WHERE thread_id = ? AND ts >= ? "
        "AND ts <= ? AND process_uuid = ? AND feedback_log_body LIKE 'app_server.request{%' "
        "LIMIT ?",
        (thread, int(since), int(until) + 1, uuid, MAX_ROWS),
    )
    found = [(_when(ts, n), REQUEST.search(str(body))) for ts, n, body in rows]
    return [(t, m.group(1), int(m.group(3))) for t, m in found if m and since <= t <= until]


Begun = tuple[float, str, int, str]  # (time, rpc method, connection id, request id)
THREAD = ("thread/start", "thread/resume", "thread/fork")


def lines(db: sqlite3.Connection, uuid: str, start: float, end: float) -> list[Begun]:
    """The daemon's `app-server request:` lines in [start, end], logged as it takes each
    request (no thread id), in time order."""
    rows = _query(
        db,
        "SELECT ts, ts_nanos, feedback_log_body FROM logs WHERE ts >= ? AND ts <= ? "
        "AND process_uuid = ? AND thread_id IS NULL AND feedback_log_body LIKE ? "
        "ORDER BY ts, ts_nanos, id LIMIT ?",
        (int(start), int(end) + 1, uuid, "app-server request: %", MAX_ROWS * 5),
    )
    found = [(_when(ts, n), LINE.match(str(body))) for ts, n, body in rows]
    return [
        (when, m.group(1), int(m.group(2)), m.group(3) or m.group(4) or "")
        for when, m in found
        if m and start <= when <= end
    ]


LINE = re.compile(
    r"\Aapp-server request: (\S+) connection_id=ConnectionId\((\d+)\) "
    r'request_id=(?:Integer\((\d+)\)|String\("([^"]*)"\))'
)


def requests(db: sqlite3.Connection, uuid: str, start: float, end: float) -> list[Begun]:
    """Thread requests begun in [start, end], but a TUI's `temporary-structured-` thread/start
    (titling a conversation): its ephemeral thread's rows carry no thread id, so not the hook's."""
    return [
        b
        for b in lines(db, uuid, start, end)
        if b[1] in THREAD and not b[3].startswith("temporary-structured-")
    ]


def thread_of(db: sqlite3.Connection, uuid: str, begun: Begun, end: float) -> str | None:
    """The thread the begun request started or resumed, once its own rows that carry a thread
    id (its span: same connection and request id) are in the log by `end`."""
    when, _, connection, request = begun
    text = request.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    found = _query(
        db,
        "SELECT ts, ts_nanos, thread_id FROM logs WHERE ts >= ? AND ts <= ? AND process_uuid = ? "
        "AND thread_id IS NOT NULL AND feedback_log_body LIKE ? ESCAPE '\\' LIMIT 50",
        (
            int(when),
            int(end) + 1,
            uuid,
            f"%rpc.request_id={text} app_server.connection_id={connection} %",
        ),
    )
    return next((str(t) for ts, n, t in found if when <= _when(ts, n) <= end), None)


def opened(
    db: sqlite3.Connection, uuid: str, start: float, end: float
) -> tuple[dict[int, Opened], float]:
    """Each connection the daemon initialized in [start, end] (decide.Opened), and the floor:
    Codex keeps a process's newest 1,000 rows without a thread, dropping the oldest (its source),
    so none after the oldest kept is gone, none at all while ConnectionId(0)'s `initialize` is."""
    found: dict[int, tuple[float, float, Begun | None]] = {}
    for begun in lines(db, uuid, start, end):
        when, method, connection, _ = begun
        if method == "initialize":
            found[connection] = (when, float("inf"), None)
        elif connection in found:
            born, asked, first = found[connection]
            first = begun if first is None and method in THREAD else first
            found[connection] = (born, min(asked, when), first)
    oldest = _query(
        db,
        "SELECT ts, ts_nanos FROM logs WHERE process_uuid = ? AND thread_id IS NULL "
        "ORDER BY ts, ts_nanos LIMIT 1",
        (uuid,),
    )
    floor = float("-inf") if 0 in found else _when(*oldest[0]) if oldest else float("inf")
    return {c: (b, a, _kind(db, uuid, f, end)) for c, (b, a, f) in found.items()}, floor


def _kind(db: sqlite3.Connection, uuid: str, first: Begun | None, end: float) -> str | None:
    if first is None:
        return None
    if first[1] == "thread/resume":
        return thread_of(db, uuid, first, end)
    startup = first[1] == "thread/start" and first[3].startswith("startup-thread-start-")
    return STARTUP if startup else ""


def connected(db: sqlite3.Connection, start: float, end: float) -> list[Connect]:
    """Every TUI's `connected app-server platform` row in [start, end], under its own pid."""
    rows = _query(
        db,
        "SELECT ts, ts_nanos, process_uuid FROM logs WHERE ts >= ? AND ts <= ? "
        "AND feedback_log_body LIKE 'connected app-server platform%' LIMIT 501",
        (int(start), int(end) + 1),
    )
    if len(rows) > 500:  # more than it reads: the one a TUI needs may be past the limit
        raise Unreadable("more than 500 Codex windows connected within the time it reads")
    found = []
    for ts, n, u in rows:
        parts = str(u).split(":")
        if len(parts) >= 2 and parts[0] == "pid" and parts[1].isdigit():
            if start <= (when := _when(ts, n)) <= end:
                found.append((when, int(parts[1])))
    return found


def _when(ts: object, nanos: object) -> float:
    return int(str(ts)) + int(str(nanos)) / 1e9


Evidence = tuple[list[Row], float, float, list[Connect], list[Row], dict[int, Opened], float]


def gather(
    codex_home: str,
    daemon: int,
    thread: str,
    hook_started: float,
    starts: dict[int, float],
    wait: float = SETTLE,
    nudge: Nudge | None = None,
) -> Evidence:
    """(the thread's rows, seen, since, connects, pending, opened, floor), once (within `wait`)
    the daemon has written past the hook and past each client's window, and each request
    another connection began shortly before the hook shows its thread. `starts`: pid -> start
    of each client; `nudge` makes the daemon log a request (settle). Doctor reads the log as it
    is (`wait` 0)."""
    from lich_hooks.hook.shared.codex.probe import started_at

    since = started_at(daemon)
    if since is None:
        raise Unreadable(f"codex app-server {daemon} is gone")
    deadline = time.monotonic() + wait
    db = open_log(codex_home)
    try:
        # a request REQUEST_AFTER past the hook: past the first thread request of each TUI before it
        found = settle(db, daemon, hook_started, deadline, nudge, hook_started + REQUEST_AFTER)
        if found is None:
            raise Unreadable(f"codex app-server {daemon} wrote nothing in {wait:.0f} s")
        uuid, seen = found
        low = min([hook_started, *starts.values()])
        # a TUI's connect row, if it is still kept, is written by now unless it started lately
        recent = {p for p, start in starts.items() if start >= hook_started - 2 * CONNECT_WITHIN}
        while True:  # each TUI writes its own rows in its own batches
            connects = connected(db, low, max(seen, low + CONNECT_WITHIN))
            if recent <= {pid for _, pid in connects} or time.monotonic() >= deadline:
                break
            time.sleep(POLL)
        begun = requests(db, uuid, hook_started - 2 * REQUEST_SPAN, hook_started)
        own = [t + REQUEST_AFTER for t, p in connects if p in starts and t >= starts[p]]
        want = max([hook_started, *own])
        while True:
            pending = [b for b in begun if thread_of(db, uuid, b, seen) is None]
            if seen > want and not pending:
                break
            later = settle(db, daemon, max(seen, want), deadline, nudge)
            if later is None:
                break
            seen = later[1]
        rows = thread_rows(db, uuid, thread, since, seen)
        waiting = [b[:3] for b in pending if b[2] not in {c for _, _, c in rows}]
        return rows, seen, since, connects, waiting, *opened(db, uuid, low, seen)
    finally:
        db.close()
