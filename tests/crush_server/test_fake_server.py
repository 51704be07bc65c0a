"""The console script under a `crush server`-shaped process tree: real /proc, socket peers, API.

The server's own environment names card A (its first client's); a hook it
runs must report the card whose workspace and clients own the conversation,
or nothing. The real Crush does the same in tests/real_clients/test_crush_server.py.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.crush_server.fake_crush import FakeCrush
from tests.support.contract_check import assert_client_body
from tests.support.runner import base_env, log_records, wait_for_log

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and sock_diag")

HOOK = "lich-hook PreToolUse crush"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeCrush]:
    with tempfile.TemporaryDirectory(prefix="lf-", dir="/tmp") as run_dir:  # a short socket path
        crush = FakeCrush(tmp_path / "fake", Path(run_dir))
        try:
            yield crush
        finally:
            crush.close()


@pytest.fixture
def projects(tmp_path: Path) -> dict[str, Path]:
    dirs = {"a": tmp_path / "projA", "b": tmp_path / "projB"}
    for folder in dirs.values():
        folder.mkdir()
    return dirs


def payload(cwd: Path, sid: str) -> dict[str, object]:
    return {"event": "PreToolUse", "session_id": sid, "cwd": str(cwd), "tool_name": "ls",
            "tool_input": {"path": "."}}  # fmt: skip


def test_each_workspace_s_hook_reports_its_own_card(
    fake: FakeCrush, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    with StandIn() as lich_b:
        env_a = base_env(tmp_path, **lich.env("card-A"))
        env_b = {**env_a, **lich_b.env("card-B")}
        fake.start_server(env_a)  # card A's terminal started it
        fake.workspace("ws-a", projects["a"], env_a, "sess-a")
        fake.workspace("ws-b", projects["b"], env_b, "sess-b")
        fake.start_client(env_a, projects["a"])
        fake.start_client(env_b, projects["b"])
        for where, sid in (("b", "sess-b"), ("a", "sess-a"), ("b", "sess-b")):
            ran = fake.run_hook(HOOK, payload(projects[where], sid), projects[where])
            assert ran == {"rc": 0, "stdout": "", "stderr": ""}
        records = wait_for_log(env_a, 3)
        lich_b.wait(1)
        lich.wait(1)
        decisions = sorted(str(r["decision"]) for r in records)  # logged as each run ends
        assert decisions == ["already-reported", "report", "report"]
        assert [assert_client_body("session-start", r.body) for r in lich_b.received] == [
            {"session_id": "card-B", "provider_session_id": "sess-b", "provider": "crush"}
        ]
        assert [r.accepted for r in lich.received] == [
            {"session_id": "card-A", "provider_session_id": "sess-a", "provider": "crush"}
        ]
        assert all("crush server" in str(r["crush_runner"]) for r in records)
        # the conversation already reported was deduped before the server was asked anything
        assert fake.asked().count("/v1/workspaces") == 2
        [again] = [r for r in records if r["decision"] == "already-reported"]
        assert "already reported for card card-B" in str(again["attribution"])


def test_two_cards_in_one_workspace_send_nothing(
    fake: FakeCrush, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env_a = base_env(tmp_path, **lich.env("card-A"))
    env_b = {**env_a, "LICH_SESSION_ID": "card-B"}
    fake.start_server(env_a)
    fake.workspace("ws-a", projects["a"], env_a, "sess-1")
    fake.start_client(env_a, projects["a"])
    fake.start_client(env_b, projects["a"])  # joined: its environment was dropped
    fake.run_hook(HOOK, payload(projects["a"], "sess-1"), projects["a"])
    [record] = wait_for_log(env_a, 1)
    assert record["decision"] == "crush-server-several-cards"
    assert lich.received == []


@pytest.mark.parametrize(
    ("case", "decision"),
    [
        ("no-workspace", "crush-server-no-workspace"),
        ("other-session", "crush-server-session-elsewhere"),
        ("no-client", "crush-server-no-client"),
        ("client-outside-lich", "crush-server-client-outside-lich"),
        ("server-outside-lich", "crush-server-client-outside-lich"),
    ],
)
def test_refusals_send_nothing(
    fake: FakeCrush,
    projects: dict[str, Path],
    tmp_path: Path,
    lich: StandIn,
    case: str,
    decision: str,
) -> None:
    env_a = base_env(tmp_path, **lich.env("card-A"))
    outside = base_env(tmp_path)
    fake.start_server(outside if case == "server-outside-lich" else env_a)
    if case != "no-workspace":
        creator = outside if case == "server-outside-lich" else env_a
        fake.workspace("ws-a", projects["a"], creator, "sess-1")
    if case != "no-client":
        fake.start_client(outside if case == "client-outside-lich" else env_a, projects["a"])
    sid = "sess-2" if case == "other-session" else "sess-1"
    fake.run_hook(HOOK, payload(projects["a"], sid), projects["a"])
    records = log_records(outside if case == "server-outside-lich" else env_a)
    if not records:
        records = wait_for_log(outside if case == "server-outside-lich" else env_a, 1)
    assert [r["decision"] for r in records] == [decision]
    assert lich.received == []


def test_no_server_at_the_socket_is_a_probe_failure(
    fake: FakeCrush, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env_a = base_env(tmp_path, **lich.env("card-A"))
    # the hook's environment names another runtime dir: no server answers there
    fake.start_server(env_a)
    hook = f"XDG_RUNTIME_DIR={tmp_path} {HOOK}"
    fake.run_hook(hook, payload(projects["a"], "sess-1"), projects["a"])
    [record] = wait_for_log(env_a, 1)
    assert record["decision"] == "crush-server-probe-failed"
    assert lich.received == []


def test_doctor_names_the_server_its_card_and_a_shared_dir(
    fake: FakeCrush, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    from lich_hooks.human.commands.doctor import check as doctor
    from lich_hooks.human.commands.doctor import crush_server as doctor_crush_server

    env_a = base_env(tmp_path, **lich.env("card-A"), XDG_RUNTIME_DIR=str(fake.run_dir))
    env_b = {**env_a, "LICH_SESSION_ID": "card-B"}
    [none] = doctor_crush_server.check(env_a)
    assert none.status == doctor.OK and "no crush server" in none.summary
    fake.start_server(env_a)
    fake.workspace("ws-a", projects["a"], env_a, "sess-1")
    fake.start_client(env_a, projects["a"])
    [alone] = doctor_crush_server.check(env_a)  # card A's reports get through: nothing to do
    assert (alone.status, alone.fix, alone.details["commands"]) == (doctor.OK, None, [])
    fake.start_client(env_b, projects["a"])
    [row] = doctor_crush_server.check(env_b)
    assert row.status == doctor.WARN and row.details["carries"] == "card-A"
    assert "LICH_SESSION_ID=card-A" in row.summary and lich.token not in row.summary
    assert "another card's: this terminal is card-B" in row.summary
    assert (
        f"reports are dropped in {projects['a']}" in row.summary
        and "2 different cards" in row.summary
    )
    assert row.fix is not None and "unset CRUSH_CLIENT_SERVER" in row.fix
    assert "lich should" not in row.summary + row.fix  # a fix the person can do
    commands = row.details["commands"]
    assert isinstance(commands, list) and len(commands) == 3
    [own] = doctor_crush_server.check(env_a)  # card A's own server, but a shared directory
    assert own.status == doctor.WARN


def test_a_hostile_workspace_list_is_refused_in_bounded_time(
    fake: FakeCrush, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """15 MiB of small nested containers (a repository's crush.json can put anything in a
    workspace's config): refused on its size, long before the 5 s registration timeout."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_server(env)
    fake.workspace("ws-a", projects["a"], env, "sess-a")
    fake.start_client(env, projects["a"])
    hostile = tmp_path / "hostile.json"
    filler = b"[" + b",".join([b'{"a":[[],{}]}'] * (15 * 1024 * 1024 // 14)) + b"]"
    hostile.write_bytes(filler)
    fake.answer_workspaces_with(hostile)
    started = time.monotonic()
    fake.run_hook(HOOK, payload(projects["a"], "sess-a"), projects["a"])
    [record] = wait_for_log(env, 1)
    assert time.monotonic() - started < 3.0
    assert record["decision"] == "crush-server-probe-failed", record
    assert "over" in str(record["attribution"])
    assert lich.wait(1, timeout=0.3) == []


def test_a_turn_no_tui_shows_names_no_card(
    fake: FakeCrush, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """Found by the model (tests/shared_process/test_crush_model.py): card A's client joined
    the workspace card C created, started a turn and quit; Crush runs the turn on while card
    C's client keeps the workspace. Before, card C, the one card there, got card A's session.
    No TUI shows it (`attached_clients` 0, as for any `crush run`): nothing is sent."""
    env_c = base_env(tmp_path, **lich.env("card-C"))
    fake.start_server(env_c)
    fake.workspace("ws-a", projects["a"], env_c, "sess-of-a:0", "sess-of-c")
    fake.start_client(env_c, projects["a"])
    fake.run_hook(HOOK, payload(projects["a"], "sess-of-a"), projects["a"])
    [record] = wait_for_log(env_c, 1)
    assert record["decision"] == "crush-server-no-client", record
    assert "no crush TUI shows session sess-of-a" in str(record["attribution"])
    fake.run_hook(HOOK, payload(projects["a"], "sess-of-c"), projects["a"])  # card C's own
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["provider_session_id"] == "sess-of-c"


@pytest.mark.parametrize("name", ["cx", "crush-x86_64-linux-musl"])
def test_a_client_under_another_name_is_counted_and_names_no_card(
    fake: FakeCrush, projects: dict[str, Path], tmp_path: Path, lich: StandIn, name: str
) -> None:
    """Issue 31: card B's Crush started through a symlink (`cx`) or under a download's name
    joined card A's workspace. Before, only processes named crush were clients: B's
    conversation was reported on card A. Its connection is counted, whatever its name."""
    with StandIn() as lich_b:
        env_a = base_env(tmp_path, **lich.env("card-A"))
        env_b = {**env_a, **lich_b.env("card-B")}
        fake.start_server(env_a)
        fake.workspace("ws-a", projects["a"], env_a, "sess-a", "sess-b")
        fake.start_client(env_a, projects["a"])
        fake.start_client(env_b, projects["a"], name=name)
        fake.run_hook(HOOK, payload(projects["a"], "sess-b"), projects["a"])
        [record] = wait_for_log(env_a, 1)
        assert record["decision"] == "crush-server-client-unreadable", record
        assert "held by no crush process this hook can read" in str(record["attribution"])
        assert lich.wait(1, timeout=0.3) == [] and lich_b.received == []


@pytest.mark.parametrize("how", ["non-dumpable", "another user"])
def test_a_client_the_hook_cannot_read_names_no_card(
    projects: dict[str, Path], lich: StandIn, how: str
) -> None:
    """Issue 31: card B's Crush in card A's folder, as another user or made non-dumpable
    (prctl): its /proc/<pid>/fd is unreadable to the hook. Before, it was skipped as not
    connected and B's conversation was reported on card A. The server, its clients and
    the hook run as `nobody` (root reads every process; not root: as this user), on the
    system's Python where this one is root's own."""
    root = os.geteuid() == 0
    if how == "another user" and not root:
        pytest.skip("a client of another user needs root to start")
    user = 65534 if root else None
    python = "/usr/bin/python3" if root else sys.executable
    if not os.path.exists(python):
        pytest.skip(f"no {python} for another user to run")
    hook = f"PYTHONPATH={REPO} {python} -m lich_hooks PreToolUse crush"
    world = Path(tempfile.mkdtemp(prefix="lf-", dir="/tmp"))
    world.chmod(0o755)  # the other user's client reaches its program and the socket
    try:
        (world / "run").mkdir()
        folder = world / "projA"
        folder.mkdir()
        env_a = base_env(world, **lich.env("card-A"))
        env_b = {**env_a, "LICH_SESSION_ID": "card-B"}
        fake = FakeCrush(world / "fake", world / "run", user=user, python=python)
        if user is not None:
            for path in [world, *world.rglob("*")]:
                os.chown(path, user, user, follow_symlinks=False)
        try:
            fake.start_server(env_a)
            fake.workspace("ws-a", folder, env_a, "sess-a", "sess-b")
            fake.start_client(env_a, folder)
            other = 65533 if how == "another user" else None
            fake.start_client(env_b, folder, user=other, dumpable=how != "non-dumpable")
            fake.run_hook(hook, payload(folder, "sess-b"), folder)
            [record] = wait_for_log(env_a, 1)
        finally:
            fake.close()
        assert record["decision"] == "crush-server-client-unreadable", record
        assert "held by no crush process this hook can read" in str(record["attribution"])
        assert lich.wait(1, timeout=0.3) == []
    finally:
        shutil.rmtree(world, ignore_errors=True)


def test_a_refused_conversation_s_later_calls_cost_what_a_deduped_one_costs(
    fake: FakeCrush, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """Issue 31: each call of a refused conversation paid the attribution again (89 ms a
    call against 33 ms). The refusal is remembered for 30 s, then judged again: a refusal
    of the moment (card B's client in card A's folder, since gone) delays the report."""
    env_a = base_env(tmp_path, **lich.env("card-A"))
    env_b = {**env_a, "LICH_SESSION_ID": "card-B"}
    fake.start_server(env_a)
    fake.workspace("ws-a", projects["a"], env_a, "sess-1")
    fake.start_client(env_a, projects["a"])
    other = fake.start_client(env_b, projects["a"])
    for _ in range(3):
        fake.run_hook(HOOK, payload(projects["a"], "sess-1"), projects["a"])
    records = wait_for_log(env_a, 3)
    assert [r["decision"] for r in records] == ["crush-server-several-cards"] * 3
    assert fake.asked().count("/v1/workspaces") == 1  # the later calls asked nothing
    assert "within 30 s" in str(records[-1]["attribution"])
    assert other.stdin is not None
    other.stdin.close()  # card B's client leaves
    other.wait(5)
    [memo] = (Path(env_a["LICH_HOOK_STATE_DIR"]) / "served").iterdir()
    old = time.time() - 31
    os.utime(memo, (old, old))
    fake.run_hook(HOOK, payload(projects["a"], "sess-1"), projects["a"])
    assert wait_for_log(env_a, 4)[-1]["decision"] == "report"
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-A"
