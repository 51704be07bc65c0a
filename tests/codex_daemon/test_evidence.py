"""Reading the Codex daemon's log (evidence.py): rows as 0.171.0 writes them, read-only,
never through a symlink; a log in another shape refuses."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from lich_hooks.hook.shared.codex import evidence
from lich_hooks.hook.shared.codex.decide import STARTUP
from tests.codex_daemon.fake_codex import SCHEMA, SPAN

UUID = "pid:4242:0b5f6c1e-0000-4000-8000-000000000000"
# two forms of one startup request, as the daemon logged them (0.171.0, threadless first)
THREADLESS = (
    'app-server request: thread/start connection_id=ConnectionId(5) request_id=String("'
    'startup-thread-start-e1c82811-6262-4371-b531-a2db84278bc4")'
)


def log(home: Path, rows: list[tuple[float, str, str | None, str]]) -> None:
    db = sqlite3.connect(home / evidence.LOG_DB)
    db.executescript(SCHEMA)
    db.executemany(
        "INSERT INTO logs (ts, ts_nanos, level, target, feedback_log_body, thread_id, "
        "process_uuid) VALUES (?, ?, 'INFO', 't', ?, ?, ?)",
        [(int(t), int(t % 1 * 1e9), body, thread, who) for t, body, thread, who in rows],
    )
    db.commit()
    db.close()


def test_rows_of_both_forms_are_read(tmp_path: Path) -> None:
    now = time.time()
    span = SPAN.format(method="thread/resume", request="3", connection=6)
    log(
        tmp_path,
        [
            (now - 5, THREADLESS, None, UUID),
            (now - 4, SPAN.format(method="thread/start", request="8", connection=5), "T", UUID),
            (now - 3, span, "T", UUID),
            (now - 2, span, "T", "pid:4243:other"),  # another process's row: not the daemon's
            (now - 1, "turn", None, UUID),
        ],
    )
    db = evidence.open_log(str(tmp_path))
    found = evidence.settle(db, 4242, now - 1.5, time.monotonic())
    assert found is not None and found[0] == UUID and abs(found[1] - (now - 1)) < 0.01
    rows = evidence.thread_rows(db, UUID, "T", now - 60, now)
    assert sorted((m, c) for _, m, c in rows) == [("thread/resume", 6), ("thread/start", 5)]
    assert evidence.settle(db, 4242, now, time.monotonic()) is None  # nothing after: no wait


def _request(method: str, connection: int, request: str) -> str:
    return f"app-server request: {method} connection_id=ConnectionId({connection}) {request}"


def test_connections_are_read_as_0_171_logs_them(tmp_path: Path) -> None:
    """Lines of Codex 0.171.0's daemon (lich restoring two cards at once, a plain TUI, a fork):
    each connection's `initialize`, its first request after it, and what its first
    thread/start|resume|fork asked: a resume's thread from its span's rows, a startup request
    by its id. A probe asks nothing; a row inside a request's span (its MCP server task ending,
    with no thread) is no request; the floor is the oldest row without a thread."""
    now = time.time()
    resume = SPAN.format(method="thread/resume", request="11", connection=21)
    fork = _request("thread/fork", 27, "request_id=Integer(11)")
    log(
        tmp_path,
        [
            (now - 9, "app-server control socket listening", None, UUID),
            (now - 5.0, _request("initialize", 20, 'request_id=String("initialize")'), None, UUID),
            (now - 4.9, _request("initialize", 21, 'request_id=String("initialize")'), None, UUID),
            (now - 4.89, _request("account/read", 21, "request_id=Integer(1)"), None, UUID),
            (now - 4.8, _request("thread/read", 21, "request_id=Integer(10)"), None, UUID),
            (now - 4.7, _request("thread/resume", 21, "request_id=Integer(11)"), None, UUID),
            (now - 4.6, resume + ":thread_spawn", "01a2517e-fcde-7e31-b5f8-4b412be14201", UUID),
            (now - 4.5, resume + ":mcp.request:start_server_task: task cancelled", None, UUID),
            (now - 4.0, _request("initialize", 24, 'request_id=String("initialize")'), None, UUID),
            (now - 3.99, _request("account/read", 24, "request_id=Integer(1)"), None, UUID),
            (now - 3.9, _request("thread/resume", 24, "request_id=Integer(11)"), None, UUID),
            (now - 3.0, _request("initialize", 26, 'request_id=String("initialize")'), None, UUID),
            (now - 2.99, _request("account/read", 26, "request_id=Integer(1)"), None, UUID),
            (now - 2.9, THREADLESS.replace("(5)", "(26)"), None, UUID),
            (now - 2.0, _request("initialize", 27, 'request_id=String("initialize")'), None, UUID),
            (now - 1.99, _request("account/read", 27, "request_id=Integer(1)"), None, UUID),
            (now - 1.9, fork, None, UUID),
            (now - 1.0, _request("initialize", 0, "request_id=Integer(1)"), None, "pid:4243:x"),
        ],
    )
    db = evidence.open_log(str(tmp_path))
    opened, floor = evidence.opened(db, UUID, now - 6, now)
    got = {c: (round(b - now, 2), round(a - now, 2), first) for c, (b, a, first) in opened.items()}
    assert got == {
        20: (-5.0, float("inf"), None),  # a probe
        21: (-4.9, -4.89, "01a2517e-fcde-7e31-b5f8-4b412be14201"),
        24: (-4.0, -3.99, None),  # its resume's thread is not in the log yet
        26: (-3.0, -2.99, STARTUP),
        27: (-2.0, -1.99, ""),
    }
    assert round(floor - now, 2) == -9.0
    assert list(evidence.opened(db, UUID, now - 4.5, now)[0]) == [24, 26, 27]  # from its start


def test_the_log_is_whole_when_its_first_connection_is_kept(tmp_path: Path) -> None:
    """A TUI that started the daemon starts before the daemon's first row: with the daemon's
    first connection's `initialize` kept, nothing of any connection is gone."""
    now = time.time()
    zero = _request("initialize", 0, "request_id=Integer(1)")
    log(tmp_path, [(now - 2, zero, None, UUID), (now - 1, "turn", None, UUID)])
    db = evidence.open_log(str(tmp_path))
    assert evidence.opened(db, UUID, now - 3, now)[1] == float("-inf")
    # read from later on, the floor is the oldest row kept: the window is whole after it
    assert abs(evidence.opened(db, UUID, now - 1.5, now)[1] - (now - 2)) < 0.01


def test_a_title_thread_is_no_begun_request(tmp_path: Path) -> None:
    """Another card's TUI titles each new conversation with a `temporary-structured-` thread
    (Codex 0.171.0): not a request that could start or resume the hook's thread, so it sets
    off no wait past the hook (a real two-card run was refused waiting on a quiet daemon)."""
    now = time.time()
    begun = 'app-server request: thread/{} connection_id=ConnectionId({}) request_id=String("{}")'
    log(
        tmp_path,
        [
            (now - 4, begun.format("start", 9, "temporary-structured-ff81e20c"), None, UUID),
            (now - 3, begun.format("resume", 7, "b3c1"), None, UUID),
            (now - 2, begun.format("start", 8, "startup-thread-start-7e6c8a8c"), None, UUID),
        ],
    )
    db = evidence.open_log(str(tmp_path))
    found = evidence.requests(db, UUID, now - 10, now)
    assert sorted((m, c, r) for _, m, c, r in found) == [
        ("thread/resume", 7, "b3c1"),
        ("thread/start", 8, "startup-thread-start-7e6c8a8c"),
    ]


def test_a_symlinked_or_foreign_log_refuses(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir()
    log(real, [])
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / evidence.LOG_DB).symlink_to(real / evidence.LOG_DB)
    with pytest.raises(evidence.Unreadable):
        evidence.open_log(str(home))
    (tmp_path / "other").mkdir()
    sqlite3.connect(tmp_path / "other" / evidence.LOG_DB).execute("CREATE TABLE x (y)").close()
    db = evidence.open_log(str(tmp_path / "other"))
    with pytest.raises(evidence.Unreadable):
        evidence.settle(db, 4242, 0.0, 0.0)


@pytest.mark.parametrize("name", ["", "-wal", "-shm"])
def test_a_log_file_anyone_can_write_refuses(tmp_path: Path, name: str) -> None:
    """The log and what sqlite reads beside it (its -wal, -shm) are the user's alone, or the
    rows are not read: another user could have written the ones that name a card."""
    log(tmp_path, [])
    path = tmp_path / f"{evidence.LOG_DB}{name}"
    path.touch()
    evidence.open_log(str(tmp_path)).close()
    path.chmod(0o646)
    with pytest.raises(evidence.Untrusted, match="not this user's alone"):
        evidence.open_log(str(tmp_path))
    path.chmod(0o644)
    path.rename(tmp_path / "moved")
    path.symlink_to(tmp_path / "moved")
    with pytest.raises(evidence.Untrusted, match="not a regular file"):
        evidence.open_log(str(tmp_path))


class Daemon:
    """What the sender's request does to the log: a row of the daemon's, stamped when asked
    (written at once here: the write cycle is the real daemon's business)."""

    def __init__(self, home: Path, answers: bool = True) -> None:
        self.home = home
        self.answers = answers
        self.asked: list[float] = []

    def __call__(self) -> str | None:
        when = time.time()
        self.asked.append(when)
        if not self.answers:
            return "refused"
        db = sqlite3.connect(self.home / evidence.LOG_DB)
        db.execute(
            "INSERT INTO logs (ts, ts_nanos, level, target, feedback_log_body, process_uuid) "
            "VALUES (?, ?, 'INFO', 't', 'app-server request: initialize', ?)",
            (int(when), int(when % 1 * 1e9), UUID),
        )
        db.commit()
        db.close()
        return None


def test_settle_asks_once_the_clock_is_past_the_moment_it_needs(tmp_path: Path) -> None:
    """A request sent before `after` would be logged before it and settle nothing: the sender
    waits for the clock to pass `after`, asks once, and that row settles it."""
    log(tmp_path, [])
    daemon = Daemon(tmp_path)
    after = time.time() + 0.3
    db = evidence.open_log(str(tmp_path))
    found = evidence.settle(db, 4242, after, time.monotonic() + 5, daemon)
    assert len(daemon.asked) == 1 and daemon.asked[0] > after
    assert found is not None and found[0] == UUID and abs(found[1] - daemon.asked[0]) < 1e-3


def test_settle_asks_no_sooner_than_told(tmp_path: Path) -> None:
    """`nudge_after`: the first request waits past the hook's REQUEST_AFTER, so that one
    request settles the window of every TUI connected before the hook."""
    log(tmp_path, [])
    daemon = Daemon(tmp_path)
    now = time.time()
    db = evidence.open_log(str(tmp_path))
    found = evidence.settle(db, 4242, now - 5, time.monotonic() + 5, daemon, now + 0.3)
    assert len(daemon.asked) == 1 and daemon.asked[0] > now + 0.3
    assert found is not None


def test_settle_asks_once_even_when_refused(tmp_path: Path) -> None:
    """A request the daemon did not take leaves the wait as it was without one: no second
    connection each poll."""
    log(tmp_path, [])
    daemon = Daemon(tmp_path, answers=False)
    db = evidence.open_log(str(tmp_path))
    assert evidence.settle(db, 4242, time.time() - 1, time.monotonic() + 1.2, daemon) is None
    assert len(daemon.asked) == 1


def test_settle_does_not_ask_when_the_row_is_there(tmp_path: Path) -> None:
    now = time.time()
    log(tmp_path, [(now - 1, "turn", None, UUID)])
    daemon = Daemon(tmp_path)
    db = evidence.open_log(str(tmp_path))
    assert evidence.settle(db, 4242, now - 2, time.monotonic() + 5, daemon) is not None
    assert daemon.asked == []
