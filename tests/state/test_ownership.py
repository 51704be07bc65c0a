"""Touch nothing that isn't ours: the state directory (docs/troubleshooting.md).

Creating the state directory must never change a directory or file that
already existed (HOME, its parents, a shared sticky directory, a file or
symlink where the directory should be); relative paths in the environment are
ignored, never resolved against the project the harness runs in; planted
symlinks and FIFOs inside it neither block a hook nor lead a write out.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from lich_hooks.base import homes as location
from lich_hooks.hook import state
from lich_hooks.hook.state import session_record
from lich_hooks.human.standin.server import StandIn
from tests.agent_cards.fake_lich import FakeLich, agent_payload, reason, session
from tests.spine.helpers import SID
from tests.support.runner import base_env, run_hook, start_seconds, wait_for_log

CRUSH = "PreToolUse crush"
BODY = {"session_id": SID, "tool_name": "bash"}


def mode(path: Path | str) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def without_state_dir(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in ("LICH_HOOK_STATE_DIR", "XDG_STATE_HOME")}


def crush_twice(env: dict[str, str], cwd: Path | None = None) -> list[str]:
    for n in (1, 2):
        ran = run_hook(CRUSH, BODY, env, cwd=cwd)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
        wait_for_log(env, n)
    return [str(r["decision"]) for r in wait_for_log(env, 2)]


# --- item 1: existing directories keep their mode ---------------------------------------


def test_a_fresh_home_keeps_its_mode(lich: StandIn, tmp_path: Path) -> None:
    env = without_state_dir(base_env(tmp_path, **lich.env()))
    home = Path(env["HOME"])
    os.chmod(home, 0o755)
    assert crush_twice(env) == ["report", "already-reported"]
    assert mode(home) == 0o755
    # The levels it made are its own, and private.
    for made in (".local", ".local/state", ".local/state/lich-hooks"):
        assert mode(home / made) == 0o700, made


def test_doctor_keeps_homes_mode(tmp_path: Path) -> None:
    env = without_state_dir(base_env(tmp_path))
    home = Path(env["HOME"])
    os.chmod(home, 0o755)
    run_hook("doctor", None, env, cwd=tmp_path)
    assert mode(home) == 0o755


@pytest.mark.parametrize("parent_mode", [0o755, 0o1777, 0o775])
def test_an_existing_xdg_state_home_keeps_its_mode(
    parent_mode: int, lich: StandIn, tmp_path: Path
) -> None:
    shared = tmp_path / "xdg"
    shared.mkdir()
    os.chmod(shared, parent_mode)
    env = {**without_state_dir(base_env(tmp_path, **lich.env())), "XDG_STATE_HOME": str(shared)}
    assert crush_twice(env) == ["report", "already-reported"]
    assert mode(shared) == parent_mode
    assert mode(shared / "lich-hooks") == 0o700


def test_state_dir_in_a_shared_sticky_dir_keeps_the_parent(lich: StandIn, tmp_path: Path) -> None:
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    env = base_env(tmp_path, **lich.env(), LICH_HOOK_STATE_DIR=str(sticky / "a" / "b"))
    assert crush_twice(env) == ["report", "already-reported"]
    assert mode(sticky) == 0o1777
    assert mode(sticky / "a") == mode(sticky / "a" / "b") == 0o700


def test_an_existing_state_dir_keeps_its_mode(lich: StandIn, tmp_path: Path) -> None:
    where = tmp_path / "state"
    where.mkdir()
    os.chmod(where, 0o750)
    env = base_env(tmp_path, **lich.env(), LICH_HOOK_STATE_DIR=str(where))
    assert crush_twice(env) == ["report", "already-reported"]
    assert mode(where) == 0o750
    assert mode(where / "reported" / "card-1") == 0o600


def test_a_umask_without_owner_bits_still_makes_usable_dirs(tmp_path: Path) -> None:
    old = os.umask(0o277)
    try:
        state.make_dirs(str(tmp_path / "x" / "y"))
    finally:
        os.umask(old)
    assert mode(tmp_path / "x") == mode(tmp_path / "x" / "y") == 0o700


def _as_nobody(environ: dict[str, str]) -> dict[str, object]:
    """Run the state code in a forked child that became `nobody` (uid 65534).

    The real console script cannot run as nobody here (the interpreter lives
    under root's private home), so the child uses the modules already loaded.
    """
    import hashlib  # noqa: F401 - loaded before the child loses access to the stdlib

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        result: dict[str, object] = {}
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            session_record.remember_reported(environ, "card-1", "crush\nconv")
            result["reported"] = session_record.last_reported(environ, "card-1")
            result["claim"] = session_record.claim(environ, "card-1", "crush\nother", 1.0e9)
        except BaseException as error:
            result["error"] = repr(error)
        os.write(write_fd, json.dumps(result).encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return dict(json.loads(data))


@pytest.mark.skipif(not hasattr(os, "setuid") or os.geteuid() != 0, reason="needs root to su")
def test_state_dir_under_a_root_owned_sticky_dir_works_for_a_user() -> None:
    """As nobody: LICH_HOOK_STATE_DIR=<root's 1777 dir>/new. The old code tried to
    chmod the sticky parent, got EPERM, never made the directory, and every
    Crush call reported."""
    import shutil
    import tempfile

    # pytest's tmp_path sits in root's private directory: nobody needs a way in.
    sticky = Path(tempfile.mkdtemp(prefix="lich-hooks-sticky-", dir="/tmp"))
    try:
        os.chmod(sticky, 0o1777)
        where = sticky / "lich-state-nobody"
        result = _as_nobody({"LICH_HOOK_STATE_DIR": str(where)})
        assert result == {"reported": "crush\nconv", "claim": True}
        assert where.stat().st_uid == 65534 and mode(where) == 0o700
        assert mode(sticky) == 0o1777 and sticky.stat().st_uid == 0
    finally:
        shutil.rmtree(sticky)


# --- LICH_HOOK_STATE_DIR is a file, or a symlink to one ---------------------------------


@pytest.mark.parametrize("how", ["file", "symlink to a file"])
def test_a_file_where_the_state_dir_should_be_is_left_alone(
    how: str, lich: StandIn, tmp_path: Path
) -> None:
    parent = tmp_path / "etc"
    parent.mkdir()
    os.chmod(parent, 0o755)
    victim = parent / "resolv.conf"
    victim.write_text("nameserver 127.0.0.1\n")
    os.chmod(victim, 0o644)
    where = victim
    if how != "file":
        where = tmp_path / "statelink"
        where.symlink_to(victim)
    env = base_env(tmp_path, **lich.env(), LICH_HOOK_STATE_DIR=str(where))
    # Nothing can be remembered: each call reports, and nothing else happens.
    assert crush_twice(env) == ["report", "report"]
    assert (mode(victim), mode(parent)) == (0o644, 0o755)
    assert victim.read_text() == "nameserver 127.0.0.1\n"
    assert sorted(p.name for p in parent.iterdir()) == ["resolv.conf"]


def test_someone_elses_state_dir_is_not_used(tmp_path: Path) -> None:
    where = tmp_path / "theirs"
    where.mkdir()
    os.chmod(where, 0o777)
    env = {"LICH_HOOK_STATE_DIR": str(where)}
    with pytest.raises(OSError):
        session_record.remember_reported(env, "card-1", "crush\nx")
    assert list(where.iterdir()) == []
    assert mode(where) == 0o777


# --- item 2: relative HOME / XDG_STATE_HOME / LICH_HOOK_STATE_DIR ----------------------


@pytest.mark.parametrize(
    "variables",
    [
        {"XDG_STATE_HOME": "state"},
        {"LICH_HOOK_STATE_DIR": "lichstate"},
        {"LICH_HOOK_STATE_DIR": "lichstate", "XDG_STATE_HOME": "state", "HOME": "h"},
        {"HOME": "h"},
        {"LICH_HOOK_STATE_DIR": "", "XDG_STATE_HOME": ""},
    ],
    ids=["xdg", "override", "all three", "home", "empty"],
)
def test_relative_paths_are_ignored_never_resolved_in_the_project(
    variables: dict[str, str], lich: StandIn, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    os.chmod(project, 0o755)
    env = {**without_state_dir(base_env(tmp_path, **lich.env())), **variables}
    decisions = crush_twice(env, cwd=project)
    assert list(project.iterdir()) == []
    assert mode(project) == 0o755
    if "HOME" in variables:  # no absolute place at all: the hook forgets
        assert decisions == ["report", "report"]
    else:  # the absolute HOME's default place is used instead
        assert decisions == ["report", "already-reported"]
        assert (Path(env["HOME"]) / ".local/state/lich-hooks/reported/card-1").is_file()


def test_state_dir_is_a_pure_function_of_absolute_values() -> None:
    def passwd(home: str | None) -> object:
        return lambda: home

    def where(environ: dict[str, str], home: str | None = "/home/u") -> str | None:
        return location.state_dir(environ, account=passwd(home))  # type: ignore[arg-type]

    default = "/home/u/.local/state/lich-hooks"
    assert where({"HOME": "/home/u"}) == default
    assert where({}) == default  # no HOME: the account's home
    assert where({"HOME": ""}) == default  # empty: the account's home, like expanduser
    assert where({"HOME": "rel"}) is None  # relative: invalid
    # `/` as home (containers): no per-user state, never `/.local/...` (which once
    # made the old code chmod `/` to 0700).
    assert where({"HOME": "/"}) is None
    assert where({"HOME": "//"}) is None
    assert where({}, home="/") is None
    assert where({"HOME": ""}, home=None) is None
    assert where({"HOME": "/", "XDG_STATE_HOME": "/var/x"}) == "/var/x/lich-hooks"
    assert where({"HOME": "/", "LICH_HOOK_STATE_DIR": "/s"}) == "/s"
    assert where({"LICH_HOOK_STATE_DIR": "s", "XDG_STATE_HOME": "x"}) == default


def test_home_root_makes_no_directory_and_no_chmod(tmp_path: Path) -> None:
    """The HOME=/ case without touching `/`: a fake root's modes, and proof
    that the state code asks for nothing at all when it has no usable place."""
    calls: list[tuple[str, str]] = []
    real_mkdir, real_chmod = os.mkdir, os.chmod
    env = {"HOME": "/"}
    try:
        os.mkdir = lambda p, *a, **k: calls.append(("mkdir", str(p)))
        os.chmod = lambda p, *a, **k: calls.append(("chmod", str(p)))
        with pytest.raises(OSError):
            session_record.remember_reported(env, "card-1", "crush\nx")
        assert session_record.claim(env, "card-1", "crush\nx", 0.0) is None
    finally:
        os.mkdir, os.chmod = real_mkdir, real_chmod
    assert calls == []
    # And where a home's parents exist, only the missing levels are made.
    fake_root = tmp_path / "root"
    fake_root.mkdir()
    os.chmod(fake_root, 0o755)
    state.make_dirs(str(fake_root / ".local" / "state" / "lich-hooks"))
    assert mode(fake_root) == 0o755


# --- item 3: FIFOs and symlinks inside the state directory ------------------------------


def test_a_fifo_as_the_reported_record_does_not_block(lich: StandIn, tmp_path: Path) -> None:
    env = base_env(tmp_path, **lich.env())
    reported = Path(env["LICH_HOOK_STATE_DIR"]) / "reported"
    reported.mkdir(parents=True, mode=0o700)
    os.mkfifo(reported / "card-1")
    start = start_seconds()
    ran = run_hook(CRUSH, BODY, env, timeout=10)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert ran.seconds - start < 1.5
    assert wait_for_log(env, 1)[0]["decision"] == "report"
    lich.wait(1)


def test_a_fifo_in_the_worker_record_does_not_block_the_status_line(tmp_path: Path) -> None:
    env = base_env(tmp_path, LICH_SESSION_ID="card-1")
    workers = Path(env["LICH_HOOK_STATE_DIR"]) / "workers" / "card-1"
    workers.mkdir(parents=True, mode=0o700)
    os.mkfifo(workers / "evil.json")
    os.mkfifo(workers / ".checked")
    start = start_seconds()
    ran = run_hook("status-line", b"{}", env, timeout=10)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert ran.seconds - start < 1.5


def test_a_symlinked_reported_dir_leads_nothing_out(lich: StandIn, tmp_path: Path) -> None:
    env = base_env(tmp_path, **lich.env())
    where = Path(env["LICH_HOOK_STATE_DIR"])
    where.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.mkdir()
    os.chmod(victim, 0o755)
    (victim / "card-1").write_text("VICTIM\n")
    (where / "reported").symlink_to(victim)
    decisions = crush_twice(env)
    assert decisions == ["report", "report"]  # it forgets rather than write there
    assert mode(victim) == 0o755
    assert sorted(p.name for p in victim.iterdir()) == ["card-1"]
    assert (victim / "card-1").read_text() == "VICTIM\n"


def test_a_symlinked_record_is_replaced_not_written_through(lich: StandIn, tmp_path: Path) -> None:
    env = base_env(tmp_path, **lich.env())
    reported = Path(env["LICH_HOOK_STATE_DIR"]) / "reported"
    reported.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "precious.txt"
    victim.write_text(f"crush\n{SID}")  # even a matching content is not trusted
    os.chmod(victim, 0o644)
    (reported / "card-1").symlink_to(victim)
    assert crush_twice(env) == ["report", "already-reported"]
    assert victim.read_text() == f"crush\n{SID}" and mode(victim) == 0o644
    assert not (reported / "card-1").is_symlink()
    assert mode(reported / "card-1") == 0o600


def test_a_symlinked_workers_card_dir_leads_nothing_out(tmp_path: Path) -> None:
    fake = FakeLich(tmp_path)
    env = base_env(
        tmp_path,
        **fake.env(),
        LICH_SESSION_ID="card-1",
        LICH_SUBAGENT_DEPTH="0",
        CLAUDE_CODE_SESSION_ATTENDED="1",
        CLAUDE_CODE_ENTRYPOINT="cli",
    )
    workers = Path(env["LICH_HOOK_STATE_DIR"]) / "workers"
    workers.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "victim"
    victim.mkdir()
    os.chmod(victim, 0o755)
    (workers / "card-1").symlink_to(victim)
    fake.script(open={"json": session("pending", name="w-1")})
    project = tmp_path / "project"
    project.mkdir()
    ran = run_hook("PreToolUse claude", agent_payload(project), env)
    assert reason(ran.stdout).startswith("Not an error:")
    assert list(victim.iterdir()) == []
    assert mode(victim) == 0o755
    assert wait_for_log(env, 1)[0]["recorded"] is False
