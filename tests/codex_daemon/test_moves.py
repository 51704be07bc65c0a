"""The record one Codex hook leaves the next: marks and attributions in the state directory."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from lich_hooks.base import procfs
from lich_hooks.hook import state
from lich_hooks.hook.shared.codex import moves


def env_for(tmp_path: Path) -> dict[str, str]:
    return {"LICH_HOOK_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path)}


def me() -> tuple[int, int]:
    started = procfs.started(os.getpid())
    assert started is not None
    return os.getpid(), started


def test_a_mark_names_its_directory_and_client(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    moves.mark(env, "/p/b", [me()])
    record = moves.load(env)
    assert record.usable
    assert record.marked("/p/b") == {me()}
    assert record.marked("/p/a") == set() and record.marked("/p/b/c") == set()
    folder = tmp_path / "state" / "codex-daemon"
    [name] = os.listdir(folder)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(folder / name).st_mode) == 0o600
    assert "/" not in name and len(name) < 100


def test_an_attribution_names_its_session(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    moves.attribute(env, "01a22c98-20ca-7d42-901e-335193cd8a04", me())
    record = moves.load(env)
    assert record.attributed("01a22c98-20ca-7d42-901e-335193cd8a04") == {me()}
    assert record.attributed("01a22c98-20ca-7d42-901e-335193cd8a05") == set()


def test_records_of_processes_that_are_gone_are_pruned_when_one_is_written(
    tmp_path: Path,
) -> None:
    env = env_for(tmp_path)
    pid, started = me()
    gone = [(pid, started + 1), (2**22 + 7, 1)]  # a reused pid, a pid that does not exist
    folder = tmp_path / "state" / "codex-daemon"
    folder.mkdir(parents=True, mode=0o700)
    for gone_pid, gone_start in gone:
        (folder / f"m-{state.file_key('/p/b')}-{gone_pid}-{gone_start}").touch()
    (folder / f"s-s1-{pid}-{started + 1}").touch()
    assert moves.load(env).marked("/p/b") == set(gone)  # reading never prunes
    moves.mark(env, "/p/c", [me()])
    record = moves.load(env)
    assert record.marked("/p/b") == set() and record.attributed("s1") == set()
    assert record.marked("/p/c") == {me()}


def test_too_many_records_count_as_unusable(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    folder = tmp_path / "state" / "codex-daemon"
    folder.mkdir(parents=True, mode=0o700)
    for n in range(moves.MAX_RECORDS + 1):
        (folder / f"s-x{n}-1-1").touch()
    assert not moves.load(env).usable


def test_no_state_directory_is_unusable_and_doctor_only_reads(tmp_path: Path) -> None:
    assert not moves.load({"HOME": "/"}).usable
    env = env_for(tmp_path)
    assert moves.load(env, create=False).usable  # nothing recorded yet
    assert not (tmp_path / "state").exists()


def test_a_planted_symlink_is_never_followed(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "state").mkdir(mode=0o700)
    (tmp_path / "state" / "codex-daemon").symlink_to(elsewhere)
    assert not moves.load(env).usable
    moves.mark(env, "/p/b", [me()])
    assert os.listdir(elsewhere) == []


def test_odd_names_in_the_directory_are_ignored(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    moves.mark(env, "/p/b", [me()])
    folder = tmp_path / "state" / "codex-daemon"
    key = state.file_key("/p/b")
    for odd in (f"m-{key}-x-1", f"m-{key}-1", f"m-{key}-١-1", "junk", ".tmp"):
        (folder / odd).touch()
    assert moves.load(env).marked("/p/b") == {me()}


def test_an_attribution_goes_once_the_daemon_no_longer_holds_its_session(
    tmp_path: Path,
) -> None:
    """If the session is loaded again later, someone resumed it: it must count as nobody's."""
    env = env_for(tmp_path)
    moves.attribute(env, "s1", me(), loaded=[])  # just reported: kept though not held yet
    moves.attribute(env, "s2", me(), loaded=["s1"])
    assert moves.load(env).attributed("s1") == {me()}
    moves.attribute(env, "s3", me(), loaded=["s2"])  # s1 unloaded
    record = moves.load(env)
    assert record.attributed("s1") == set()
    assert record.attributed("s2") == record.attributed("s3") == {me()}
    moves.mark(env, "/p/b", [me()], loaded=[])
    record = moves.load(env)
    assert record.attributed("s2") == set() and record.marked("/p/b") == {me()}
