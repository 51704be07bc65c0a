"""docs/transport.md: a missing, unwritable or corrupt state directory makes a hook
forget, never fail. The report is still sent; only the dedupe memory is lost."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from lich_hooks.hook import state
from lich_hooks.hook.state import prune, session_record
from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID
from tests.support.runner import base_env, run_hook, wait_for_log

CRUSH = "PreToolUse crush"
BODY = {"session_id": SID, "tool_name": "bash"}


def _run_twice(env: dict[str, str], lich: StandIn) -> list[dict[str, object]]:
    for n in (1, 2):
        ran = run_hook(CRUSH, BODY, env)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
        wait_for_log(env, n)
    return wait_for_log(env, 2)


def test_missing_state_dir_is_created_private(lich: StandIn, tmp_path: Path) -> None:
    where = tmp_path / "deep" / "er" / "state"
    env = base_env(tmp_path, **lich.env(), LICH_HOOK_STATE_DIR=str(where))
    records = _run_twice(env, lich)
    assert [r["decision"] for r in records] == ["report", "already-reported"]
    assert stat.S_IMODE(where.stat().st_mode) == 0o700
    files = list(where.rglob("*"))
    reported = [f for f in files if f.is_file() and f.name != prune.PRUNE_MARKER]
    assert len(reported) == 1, files  # no temporary files left behind, no claim either
    assert stat.S_IMODE(reported[0].stat().st_mode) == 0o600
    assert reported[0].read_text() == f"crush\n{SID}"


def test_an_existing_state_dir_is_never_chmod_ed(lich: StandIn, tmp_path: Path) -> None:
    """It existed before us: its mode is the user's (the files in it are 0600)."""
    where = tmp_path / "state"
    where.mkdir(mode=0o755)
    os.chmod(where, 0o755)
    env = base_env(tmp_path, **lich.env(), LICH_HOOK_STATE_DIR=str(where))
    _run_twice(env, lich)
    assert stat.S_IMODE(where.stat().st_mode) == 0o755


def test_a_read_only_state_dir_stays_read_only(tmp_path: Path) -> None:
    where = tmp_path / "state"
    where.mkdir()
    os.chmod(where, 0o500)
    state.make_dirs(str(where))
    session_record.forget_reported({"LICH_HOOK_STATE_DIR": str(where)}, "card-1")
    assert stat.S_IMODE(where.stat().st_mode) == 0o500
    os.chmod(where, 0o700)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through 0500 anyway")
def test_read_only_state_dir_still_reports(lich: StandIn, tmp_path: Path) -> None:
    where = tmp_path / "state"
    where.mkdir()
    os.chmod(where, 0o500)
    try:
        env = base_env(tmp_path, **lich.env(), LICH_HOOK_STATE_DIR=str(where))
        records = _run_twice(env, lich)
    finally:
        os.chmod(where, 0o700)
    assert [r["decision"] for r in records] == ["report", "report"]
    assert len(lich.received) == 2


def _unwritable_places(tmp_path: Path) -> list[str]:
    """Places no one (root included) can create a directory in."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    places = [str(a_file), str(a_file / "state"), "/proc/lich-hooks-state"]
    return places


@pytest.mark.parametrize("which", [0, 1, 2], ids=["a file", "under a file", "in /proc"])
def test_unwritable_state_dir_still_reports(which: int, lich: StandIn, tmp_path: Path) -> None:
    where = _unwritable_places(tmp_path)[which]
    env = base_env(tmp_path, **lich.env(), LICH_HOOK_STATE_DIR=where)
    records = _run_twice(env, lich)
    # Nothing can be remembered, so each call reports: late duplicates, never a failure.
    assert [r["decision"] for r in records] == ["report", "report"]
    assert all(r["outcome"] == "taken" and "state_error" in r for r in records)
    assert [r.status for r in lich.received] == [204, 204]


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe garbage", b"", b"crush\n", b"x" * (70 * 1024), b"crush\nsomeone-else"],
    ids=["not utf-8", "empty", "no id", "oversized", "another id"],
)
def test_corrupt_reported_file_reports_then_heals(
    content: bytes, lich: StandIn, lich_env: dict[str, str]
) -> None:
    reported = Path(lich_env["LICH_HOOK_STATE_DIR"]) / "reported"
    reported.mkdir(parents=True)
    (reported / "card-1").write_bytes(content)
    records = _run_twice(lich_env, lich)
    assert [r["decision"] for r in records] == ["report", "already-reported"]
    assert (reported / "card-1").read_text() == f"crush\n{SID}"


def test_a_directory_where_the_reported_file_should_be(
    lich: StandIn, lich_env: dict[str, str]
) -> None:
    (Path(lich_env["LICH_HOOK_STATE_DIR"]) / "reported" / "card-1").mkdir(parents=True)
    records = _run_twice(lich_env, lich)
    assert [r["decision"] for r in records] == ["report", "report"]
    assert "state_error" in records[0]


def test_parallel_calls_leave_a_valid_record(lich: StandIn, lich_env: dict[str, str]) -> None:
    """Crush runs hooks in parallel; concurrent writers must not corrupt the file."""
    procs = [
        subprocess.Popen(
            ["/bin/sh", "-c", f"lich-hook {CRUSH}"], stdin=subprocess.PIPE, env=lich_env
        )
        for _ in range(6)
    ]
    for proc in procs:
        proc.communicate(b'{"session_id": "%s"}' % SID.encode(), timeout=10)
        assert proc.returncode == 0
    records = wait_for_log(lich_env, 6)
    assert len(records) == 6
    # One report is in flight at a time (tests/session_start/test_in_flight.py).
    assert [r.status for r in lich.received] == [204]
    reported = Path(lich_env["LICH_HOOK_STATE_DIR"]) / "reported"
    assert [p.name for p in reported.iterdir()] == ["card-1"]
    assert (reported / "card-1").read_text() == f"crush\n{SID}"
    run_hook(CRUSH, {"session_id": SID}, lich_env)
    assert wait_for_log(lich_env, 7)[-1]["decision"] == "already-reported"


def test_card_ids_cannot_escape_the_state_dir(lich: StandIn, tmp_path: Path) -> None:
    for card in ("../../escape", "/abs/path", "a/b", ".", "..", "x" * 300, "ü"):
        env = base_env(tmp_path, **lich.env(card))
        ran = run_hook(CRUSH, BODY, env)
        assert ran.returncode == 0
    wait_for_log(env, 7)
    inside = {p.resolve() for p in (tmp_path / "state").rglob("*")}
    assert all(str(p).startswith(str((tmp_path / "state").resolve())) for p in inside)
    assert not (tmp_path.parent / "escape").exists()
    assert {r.accepted["session_id"] for r in lich.received if r.accepted} == {
        "../../escape",
        "/abs/path",
        "a/b",
        ".",
        "..",
        "x" * 300,
        "ü",
    }
