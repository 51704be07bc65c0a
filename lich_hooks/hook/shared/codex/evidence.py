"""The I/O half of decide.from_evidence, read only in the detached sender: the daemon writes its
log in ~10 s batches, so the sender waits up to SETTLE for a row written after the hook began.
Read-only, bounded, indexed queries, never through a symlink (docs/harnesses.md, Codex)."""

from __future__ import annotations

import os
import re
import time

from lich_hooks.hook.shared.codex.decide import (
    AFTER_HOOK,
    CONNECT_WITHIN,
    REQUEST_AFTER,
    REQUEST_SPAN,
    Row,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

LOG_DB = "logs_2.sqlite"
Seen = tuple[str, float]
SETTLE = 15.0  # seconds the sender waits for the daemon's next write
POLL = 0.5
MAX_ROWS = 2000  # Codex keeps at most 1,000 rows per thread
REQUEST = re.compile(
    r'rpc\.method="(thread/(?:start|resume|fork))"[^}]*?rpc\.request_id=(\S+) '
    r"app_server\.connection_id=(\d+)"
)


class Unreadable(Exception):
    """The log cannot be read as 0.171.0 writes it: the caller refuses."""


def open_log(codex_home: str) -> sqlite3.Connection:
    import sqlite3
    import stat
    from urllib.parse import quote

    path = os.path.join(codex_home, LOG_DB)
    try:
        before = os.lstat(path)
        if not stat.S_ISREG(before.st_mode):
            raise Unreadable(f"{path} is not a regular file")
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


def settle(db: sqlite3.Connection, daemon: int, after: float, deadline: float) -> Seen | None:
    """(process_uuid, time) of a row the daemon wrote after `after`: every earlier row is then in
    the file (one writer, rows in time order: measured)."""
    prefix = f"pid:{daemon}:"
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
    return [r for r in (_row(*row) for row in rows) if r is not None and since <= r[0] <= until]


def _spanned(
    db: sqlite3.Connection, uuid: str, start: float, end: float, like: str, pattern: re.Pattern[str]
) -> list[tuple[float, re.Match[str]]]:
    """The daemon's rows in [start, end] whose body is LIKE `like` and `pattern` finds."""
    rows = _query(
        db,
        "SELECT ts, ts_nanos, feedback_log_body FROM logs WHERE ts >= ? AND ts <= ? "
        "AND process_uuid = ? AND feedback_log_body LIKE ? LIMIT ?",
        (int(start), int(end) + 1, uuid, like, MAX_ROWS * 5),
    )
    found = [(_when(ts, nanos), pattern.search(str(body))) for ts, nanos, body in rows]
    return [(when, match) for when, match in found if match and start <= when <= end]


def requests(db: sqlite3.Connection, uuid: str, start: float, end: float) -> list[Row]:
    spanned = _spanned(db, uuid, start, end, "app-server request: thread/%", BEGUN)
    return [(when, f"thread/{m.group(1)}", int(m.group(2))) for when, m in spanned]


# A TUI's `temporary-structured-` thread/start (its title, at each first prompt) makes a new,
# ephemeral thread whose rows carry no thread id: it cannot be, or have resumed, the hook's.
BEGUN = re.compile(
    r"\Aapp-server request: thread/(start|resume|fork) connection_id=ConnectionId\((\d+)\)"
    r'(?! request_id=String\("temporary-structured-)'
)


def startup_rows(db: sqlite3.Connection, uuid: str, start: float, end: float) -> list[Row]:
    spanned = _spanned(db, uuid, start, end, "%startup-thread-start-%", STARTUP)
    return [(when, "thread/start", int(m.group(1) or m.group(2))) for when, m in spanned]


STARTUP = re.compile(
    r"app-server request: thread/start connection_id=ConnectionId\((\d+)\) "
    r'request_id=String\("startup-thread-start-|rpc\.method="thread/start"[^}]*?'
    r"rpc\.request_id=startup-thread-start-\S+ app_server\.connection_id=(\d+)"
)


def connected(db: sqlite3.Connection, pid: int, start: float) -> list[float]:
    rows = _query(
        db,
        "SELECT ts, ts_nanos, process_uuid FROM logs WHERE ts >= ? AND ts <= ? "
        "AND feedback_log_body LIKE 'connected app-server platform%' LIMIT 200",
        (int(start), int(start + CONNECT_WITHIN) + 1),
    )
    return [_when(ts, n) for ts, n, u in rows if str(u).startswith(f"pid:{pid}:")]


def _row(ts: object, nanos: object, body: object) -> Row | None:
    match = REQUEST.search(str(body))
    return None if match is None else (_when(ts, nanos), match.group(1), int(match.group(3)))


def _when(ts: object, nanos: object) -> float:
    return int(str(ts)) + int(str(nanos)) / 1e9


def gather(
    codex_home: str, daemon: int, thread: str, hook_started: float, starts: dict[int, float]
) -> tuple[list[Row], list[Row], float, float, dict[int, list[float]], list[Row]]:
    """decide.from_evidence's rows, once the daemon has written past the hook (AFTER_HOOK past it
    if another connection began a request) and, within SETTLE, past each TUI's startup request."""
    from lich_hooks.hook.shared.codex.probe import started_at

    since = started_at(daemon)
    if since is None:
        raise Unreadable(f"codex app-server {daemon} is gone")
    deadline = time.monotonic() + SETTLE
    db = open_log(codex_home)
    try:
        found = settle(db, daemon, hook_started, deadline)
        if found is None:
            raise Unreadable(f"codex app-server {daemon} wrote nothing in {SETTLE:.0f} s")
        uuid, seen = found
        while True:  # each TUI writes its own rows in its own batches
            own = {pid: connected(db, pid, start) for pid, start in starts.items()}
            if all(own.values()) or time.monotonic() >= deadline:
                break
            time.sleep(POLL)
        begun = requests(db, uuid, hook_started - REQUEST_SPAN, hook_started)
        mine = {c for _, _, c in thread_rows(db, uuid, thread, since, seen)}
        after = hook_started + (AFTER_HOOK if {c for _, _, c in begun} - mine else 0.0)
        want = max([after, *[min(t) + REQUEST_AFTER for t in own.values() if t]])
        later = settle(db, daemon, want, deadline + want - hook_started) if seen <= want else None
        seen = seen if later is None else later[1]
        rows = thread_rows(db, uuid, thread, since, seen)
        low = min([hook_started, *starts.values()])
        return rows, startup_rows(db, uuid, low, seen), seen, since, own, begun
    finally:
        db.close()
