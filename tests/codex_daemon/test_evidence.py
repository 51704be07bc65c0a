"""Reading the Codex daemon's log (evidence.py): rows as 0.171.0 writes them, read-only,
never through a symlink; a log in another shape refuses."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from lich_hooks.hook.shared.codex import evidence
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
    assert [c for _, _, c in evidence.startup_rows(db, UUID, now - 60, now)] == [5]
    assert evidence.settle(db, 4242, now, time.monotonic()) is None  # nothing after: no wait


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
    assert sorted((m, c) for _, m, c in found) == [("thread/resume", 7), ("thread/start", 8)]


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
