"""The console script under a daemon-shaped process tree: real /proc, real socket peers.

The daemon's own environment names card A (it was started from card A's
terminal, or from none); every hook it runs must report the card of the client
TUI the daemon's log ties to the conversation's connection, or nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.hook.shared.codex.decide import GONE, TOGETHER
from lich_hooks.hook.shared.codex.probe import started_at
from lich_hooks.human.standin.server import StandIn
from tests.codex_daemon.fake_codex import FakeCodex
from tests.support.contract_check import assert_client_body
from tests.support.runner import base_env, log_records, wait_for_log

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and sock_diag")

HOOK = "lich-hook SessionStart codex"
SID = "01a22c85-4633-7dc1-8f42-04a93a0ae90f"


@pytest.fixture
def projects(tmp_path: Path) -> dict[str, Path]:
    dirs = {"a": tmp_path / "projA", "b": tmp_path / "projB"}
    for folder in dirs.values():
        folder.mkdir()
    return dirs


@pytest.fixture
def lich_b() -> Iterator[StandIn]:
    with StandIn() as standin:
        yield standin


def payload(cwd: Path, sid: str = SID, source: str = "startup") -> dict[str, object]:
    return {
        "session_id": sid,
        "transcript_path": f"/x/rollout-{sid}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "model": "scripted-model",
        "permission_mode": "default",
        "source": source,
    }


def test_each_card_alone_on_the_daemon_reports_its_own(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)  # the daemon carries card A: stale for card B
    client_b = fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])

    ran = fake.run_hook(HOOK, payload(projects["b"], "conv-B"), projects["b"], by=client_b)
    assert ran == {"rc": 0, "stdout": "", "stderr": ""}
    [got] = lich_b.wait(1)
    assert got.accepted == {
        "session_id": "card-B",
        "provider_session_id": "conv-B",
        "provider": "codex",
    }
    assert got.status == 204
    assert_client_body("session-start", got.body)
    fake.stop(client_b)
    client_a = fake.start_client(env, projects["a"])
    fake.run_hook(HOOK, payload(projects["a"], "conv-A"), projects["a"], by=client_a)
    [got_a] = lich.wait(1)
    assert got_a.accepted is not None and got_a.accepted["session_id"] == "card-A"
    assert [r.accepted["session_id"] for r in lich_b.received if r.accepted] == ["card-B"]
    records = wait_for_log(env, 2)
    assert [r["decision"] for r in records] == ["report", "report"]
    assert "codex app-server" in str(records[0]["codex_runner"])
    assert lich.token not in (tmp_path / "hook.log").read_text()
    assert lich_b.token not in (tmp_path / "hook.log").read_text()


def together(
    fake: FakeCodex, env_a: dict[str, str], env_b: dict[str, str], projects: dict[str, Path]
) -> tuple[subprocess.Popen[str], subprocess.Popen[str]]:
    """Cards A's and B's TUIs started so that each one's session connection opens inside the
    other's window (its start to its connect, 2 s here): both plain, nothing tells them apart."""
    client_a = fake.start_client(env_a, projects["a"], connect=2.0, opens=0.8)
    client_b = fake.start_client(env_b, projects["b"], connect=2.0, opens=0.1)
    return client_a, client_b


def test_two_cards_started_together_name_neither(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Either TUI's window holds both connections, each with a startup request: neither is
    tied."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    env_b = base_env(tmp_path, **lich_b.env("card-B"))
    client_a, client_b = together(fake, env, env_b, projects)
    fake.run_hook(HOOK, payload(projects["b"], "conv-B"), projects["b"], by=client_b)
    fake.run_hook(HOOK, payload(projects["a"], "conv-A"), projects["a"], by=client_a)
    records = wait_for_log(env, 2)
    assert [str(r["decision"]) for r in records] == ["codex-daemon-untied"] * 2
    assert lich.wait(1, timeout=0.5) == [] and lich_b.received == []
    assert not (tmp_path / "state" / "codex-ties").exists()  # nothing proven, nothing kept


def test_a_daemon_started_outside_lich_still_reports_the_client_s_card(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path)
    fake.start_daemon(env)
    client = fake.start_client(base_env(tmp_path, **lich.env("card-B")), projects["b"])
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"], by=client)
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-B"


def test_two_cards_in_one_dir_are_told_apart_by_connection(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """The directory no longer decides: card B's connection started the thread."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client_a = fake.start_client(env, projects["a"])
    client_b = fake.start_client(base_env(tmp_path, **lich.env("card-B")), projects["a"])
    ran = fake.run_hook(HOOK, payload(projects["a"]), projects["a"], by=client_b)
    assert ran == {"rc": 0, "stdout": "", "stderr": ""}  # decided after the hook exited
    fake.run_hook(HOOK, payload(projects["a"], "conv-A"), projects["a"], by=client_a)
    assert [str(r["decision"]) for r in wait_for_log(env, 2)] == ["report", "report"]
    lich.wait(2)
    assert sorted(str(r.accepted["session_id"]) for r in lich.received if r.accepted) == [
        "card-A",
        "card-B",
    ]


def test_a_refusal_outside_lich_prints_nothing(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path
) -> None:
    """No card anywhere (the daemon's or a client's): the person is not in lich, silence."""
    env = base_env(tmp_path)
    fake.start_daemon(env)
    fake.start_client(env, projects["a"])
    fake.start_client(env, projects["a"], name="cx")
    ran = fake.run_hook(HOOK, payload(projects["a"]), projects["a"])
    assert ran == {"rc": 0, "stdout": "", "stderr": ""}


def test_a_client_gone_sends_nothing(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    fake.stop(fake.start_client(env, projects["a"]))
    fake.run_hook(HOOK, payload(projects["a"]), projects["a"])
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-no-client"
    assert lich.wait(1, timeout=0.5) == []


# A sitecustomize for the hooks the daemon runs: every fork fails, as past the user's limit.
FORK_FAILS = """import errno
import os


def fork():
    raise BlockingIOError(errno.EAGAIN, "no more processes")


os.fork = fork
"""


def test_with_fork_failing_the_hook_never_waits_for_the_log(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """A fork that fails (no process left under the user's limit) leaves no sender to wait in:
    the card the log shows comes seconds later, so the hook drops the report rather than keep
    Codex waiting (docs/transport.md). Inline, it would have waited and reported."""
    site = tmp_path / "fork-fails"
    site.mkdir()
    (site / "sitecustomize.py").write_text(FORK_FAILS)
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon({**env, "PYTHONPATH": str(site)})  # the hooks it runs inherit it
    client = fake.start_client(env, projects["a"])
    ran = fake.run_hook(HOOK, payload(projects["a"], "conv-A"), projects["a"], by=client)
    assert ran == {"rc": 0, "stdout": "", "stderr": ""}
    [record] = log_records(env)  # written before the hook exited: no sender
    assert record["decision"] == "no-fork-to-wait"
    assert lich.received == []


def test_a_plain_terminal_in_the_dir_sends_nothing(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    fake.start_client(base_env(tmp_path), projects["a"])  # a codex outside lich
    fake.run_hook(HOOK, payload(projects["a"]), projects["a"])
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-client-outside-lich"
    assert lich.wait(1, timeout=0.5) == []


def test_an_invalid_port_in_the_client_sends_nothing(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client = fake.start_client(
        base_env(tmp_path, **{**lich.env("card-B"), "LICH_PORT": "80; x"}), projects["b"]
    )
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"], by=client)
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-client-invalid"
    assert lich.wait(1, timeout=0.5) == []


def test_a_cd_flag_changes_nothing_the_connection_decides(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client = fake.start_client(
        base_env(tmp_path, **lich.env("card-B")), projects["a"], "--cd", "../projB"
    )
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"], by=client)
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-B"


def test_bad_payload_under_the_daemon_is_bad_input(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    fake.start_client(env, projects["a"])
    assert fake.daemon is not None and fake.daemon.stdin and fake.daemon.stdout
    ran = fake.run_hook(HOOK, {"cwd": str(projects["a"])}, projects["a"])
    assert ran["stdout"] == ""
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "no-session-id"
    assert not log_records(env)[0].get("error")


def test_a_restored_card_s_resumed_session_is_that_card_s(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Card B ran `codex resume <S1>` (S1 recorded in projA, where card A works; lich restores
    its cards so). Its command line names S1 and its connection alone resumed S1 after it
    started: S1 is card B's wherever it runs, and card A's own new conversation is A's.
    Before: a `codex resume` TUI sends no startup request and was never tied."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client_a = fake.start_client(env, projects["a"])
    env_b = base_env(tmp_path, **lich_b.env("card-B"))
    fake.start_client(env_b, projects["b"], "resume", SID)  # logs its thread/resume of S1
    fake.run_hook(HOOK, payload(projects["a"], SID, "resume"), projects["a"])
    fake.run_hook(HOOK, payload(projects["a"], "conv-A2"), projects["a"], by=client_a)
    records = wait_for_log(env, 2)
    assert [str(r["decision"]) for r in records] == ["report", "report"], records
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["provider_session_id"] == "conv-A2"
    [got_b] = lich_b.wait(1)
    assert got_b.accepted == {
        "session_id": "card-B",
        "provider_session_id": SID,
        "provider": "codex",
    }


def test_a_session_resumed_into_the_current_dir_is_that_card_s(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """ "Use current directory": the resumed session runs in projB, where card B works."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client_b = fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])
    fake.started_by(client_b, SID, "thread/resume")  # `/resume`
    fake.run_hook(HOOK, payload(projects["b"], SID, "resume"), projects["b"])
    [got] = lich_b.wait(1)
    assert got.accepted == {"session_id": "card-B", "provider_session_id": SID, "provider": "codex"}
    assert lich.received == []


def test_a_conversation_is_the_card_s_whose_connection_started_it(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Card A's TUI `/resume`d S (recorded in projB, where card B works) and `/new`ed: the
    daemon's log names A's connection on the new thread, so card A gets it, in projB; card
    B's own conversation there is B's. (B starts after A's window, so each is tied.)
    """
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client_a = fake.start_client(env, projects["a"])
    client_b = fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])
    fake.run_hook(HOOK, payload(projects["b"], "conv-A2"), projects["b"], by=client_a)
    fake.run_hook(HOOK, payload(projects["b"], "conv-B2"), projects["b"], by=client_b)
    [got_a], [got_b] = lich.wait(1), lich_b.wait(1)
    assert got_a.accepted == {
        "session_id": "card-A",
        "provider_session_id": "conv-A2",
        "provider": "codex",
    }
    assert got_b.accepted == {
        "session_id": "card-B",
        "provider_session_id": "conv-B2",
        "provider": "codex",
    }

    # a client that left before the hook names no card: `codex queue --resume` (a connection
    # with no startup request) resumed card A's thread; a TUI started and quit
    fake.started_by(client_a, SID)
    fake.log(time.time(), "thread/resume", 97, SID)
    fake.run_hook(HOOK, payload(projects["a"], SID, "resume"), projects["a"])
    fake.log(time.time(), "thread/start", 98, "conv-X")
    fake.run_hook(HOOK, payload(projects["a"], "conv-X"), projects["a"])
    decisions = [r["decision"] for r in wait_for_log(env, 4)]
    assert decisions == ["report", "report", "codex-daemon-thread-shared", "codex-daemon-untied"]
    assert len(lich.wait(2, timeout=0.5)) == 1 and len(lich_b.received) == 1


def test_a_busy_daemon_s_clients_are_still_found(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """1,200 more Unix sockets in the daemon: one netlink batch of them overflowed the
    receive queue (nothing was reported, after a 1 s timeout)."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    fake.hold_sockets(600)
    client = fake.start_client(base_env(tmp_path, **lich.env("card-B")), projects["b"])
    assert fake.daemon is not None
    assert len(os.listdir(f"/proc/{fake.daemon.pid}/fd")) > 1200
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"], by=client)
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-B"
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "report", record


def test_a_daemon_holding_too_many_files_refuses_fast(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """A leaking daemon (9,000 sockets here, 19,000 files seen in the wild) is not read
    one file at a time on the user's turn: refused, in a few ms (beyond what the same
    daemon's attribution costs before its leak, the reference on this machine now)."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client = fake.start_client(base_env(tmp_path, **lich.env("card-B")), projects["b"])
    fake.run_hook(HOOK, payload(projects["b"], "conv-before"), projects["b"], by=client)
    fake.hold_sockets(4500)
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"])
    runs = {str(r["decision"]): r for r in wait_for_log(env, 2)}
    assert runs.keys() == {"report", "codex-daemon-probe-failed"}, runs
    before, record = runs["report"], runs["codex-daemon-probe-failed"]
    assert "open files" in str(record["attribution"])
    reference = float(str(before["attribution_ms"]))
    assert float(str(record["attribution_ms"])) < reference + 100
    assert len(lich.wait(2, timeout=0.5)) == 1


def test_a_client_holding_too_many_files_is_a_peer_unaccounted_for(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """A client holding 4,200 files is not read: its connection is nobody's, so no card."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    spare = "2100"
    fake.start_client(
        base_env(tmp_path, **lich.env("card-B"), FAKE_CODEX_SPARE=spare), projects["b"]
    )
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"])
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-peer-unaccounted", record
    assert lich.wait(1, timeout=0.5) == []


def test_a_client_under_another_name_is_counted(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Card B's TUI started through a symlink `cx`, in card A's folder: its process is not
    named codex. Before: it was not counted, and card B's conversation went to card A."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    fake.start_client(env, projects["a"])
    fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["a"], name="cx")
    ran = fake.run_hook(HOOK, payload(projects["a"]), projects["a"])
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-peer-unaccounted", record
    assert lich.wait(1, timeout=0.5) == [] and lich_b.received == []
    # the person is told the true cause and the fix, at once
    told = json.loads(str(ran["stdout"]))["systemMessage"]
    assert "another name" in told and "`codex --no-daemon`" in told, told
    assert "several cards" not in told, told


def test_a_peer_within_the_daemon_or_elsewhere_is_no_client(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """Socket pairs inside the daemon are not connections to its listener: not counted."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    fake.hold_sockets(3)
    client = fake.start_client(env, projects["a"])
    fake.run_hook(HOOK, payload(projects["a"]), projects["a"], by=client)
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-A"


def test_exact_lookups_and_the_dump_name_the_same_peers() -> None:
    """The two ways the probe asks sock_diag, against socket pairs whose peers are known."""
    import socket

    from lich_hooks.hook.shared import proc as probe

    def peers(inodes: list[int], batch: int = probe.PEER_BATCH) -> set[int]:
        return {peer for _, _, peer in probe.unix_sockets(inodes, batch).values() if peer}

    pairs = [socket.socketpair() for _ in range(300)]
    try:
        ino = {s.fileno(): os.fstat(s.fileno()).st_ino for pair in pairs for s in pair}
        mine = [ino[a.fileno()] for a, _ in pairs]
        theirs = {ino[b.fileno()] for _, b in pairs}
        assert peers(mine) == theirs  # 300 > PEER_BATCH: the dump
        few = mine[: probe.PEER_BATCH]
        assert peers(few) == {ino[b.fileno()] for _, b in pairs[: len(few)]}
        # the old way, every lookup in one send: the replies overflow the receive queue
        everyone = sorted(ino.values())
        with pytest.raises(probe.ProbeError, match="No buffer space"):
            peers(everyone, batch=len(everyone))
    finally:
        for a, b in pairs:
            a.close()
            b.close()


def _mirror_proc(root: Path, pids: list[int], unreadable: int) -> str:
    """A copy of /proc for `pids` as a hook would read it, where `unreadable`'s open files
    cannot be listed: another user's or a non-dumpable process. (These tests run as root,
    who reads every /proc entry, so the refusal the kernel gives others is simulated: its
    `fd` is no directory.) The sockets are the real ones, so sock_diag answers for them."""
    proc = root / "proc"
    (proc / "self" / "fd").mkdir(parents=True)
    for pid in pids:
        real, mine = Path(f"/proc/{pid}"), proc / str(pid)
        (mine / "fd").mkdir(parents=True)
        for name in ("comm", "cmdline", "stat", "environ"):
            (mine / name).write_bytes((real / name).read_bytes())
        (mine / "cwd").symlink_to(os.readlink(real / "cwd"))
        if pid == unreadable:
            (mine / "fd").rmdir()
            (mine / "fd").write_text("")
            continue
        for fd in os.listdir(real / "fd"):
            try:
                (mine / "fd" / fd).symlink_to(os.readlink(real / "fd" / fd))
            except OSError:
                continue
    return str(proc)


def test_a_client_whose_files_cannot_be_read_is_counted(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Card B's TUI, in card A's folder, run as another user (`sudo -E codex`) or made
    non-dumpable: its fds cannot be read. Before: skipped as "not connected", and card B's
    conversation went to card A, the one client seen there."""
    from lich_hooks.hook.shared import codex

    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    assert fake.daemon is not None
    a = fake.start_client(env, projects["a"])
    b = fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["a"])
    readable = _mirror_proc(tmp_path, [fake.daemon.pid, a.pid, b.pid], unreadable=0)
    assert codex.find_card(fake.daemon.pid, proc=readable) is None  # the log decides
    proc = _mirror_proc(tmp_path / "b", [fake.daemon.pid, a.pid, b.pid], unreadable=b.pid)
    found = codex.find_card(fake.daemon.pid, proc=proc)
    assert found is not None and found.decision == "codex-daemon-peer-unaccounted", found


@pytest.mark.parametrize("how", ["mode 0666", "another owner", "group-writable home"])
def test_a_log_another_user_can_write_names_no_card(
    how: str, fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """A `logs_2.sqlite` (or its CODEX_HOME) another user can write could name any connection
    for any thread: the rows are not read, and the run log says why. Before: card B's
    conversation, tied by rows anyone could have written, was reported."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client = fake.start_client(base_env(tmp_path, **lich.env("card-B")), projects["b"])
    if how == "mode 0666":
        fake.log_path.chmod(0o666)
    elif how == "another owner":
        os.chown(fake.log_path, 65534, 65534)  # these tests run as root (see _mirror_proc)
    else:
        fake.log_path.parent.chmod(0o775)
    ran = fake.run_hook(HOOK, payload(projects["b"]), projects["b"], by=client)
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-log-untrusted", record
    assert "is not this user's alone" in str(record["attribution"])
    assert lich.wait(1, timeout=0.5) == []
    told = json.loads(str(ran["stdout"]))["systemMessage"]  # checked before the hook exits
    assert "log cannot be trusted" in told and "only you can write" in told, told


def test_a_relative_codex_home_names_no_card(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """CODEX_HOME=.codex is read from the conversation's folder, where a repository could ship
    the log the hook reads: refused. Before: the shipped rows were read, and named card B."""
    env = base_env(tmp_path, **lich.env("card-A"), CODEX_HOME=".codex")
    fake.start_daemon(env, home=projects["b"] / ".codex")
    client = fake.start_client(base_env(tmp_path, **lich.env("card-B")), projects["b"])
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"], by=client)
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-log-untrusted", record
    assert "not an absolute path" in str(record["attribution"])
    assert lich.wait(1, timeout=0.5) == []


def test_a_late_startup_request_beside_another_s_names_each_own_card(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Card A's TUI logs its startup request 2.5 s after its connect (a stalled TUI, a daemon
    busy with another's thread/start); card B's, started just after, logs its own first.
    Before the windows: the one request in A's stretch was B's, so A was tied to B's
    connection (or, with B started within a second, neither was tied). Now each is tied to the
    connection it opened in its own window, whatever its requests' timing: B's is B's."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    fake.start_client(env, projects["a"], request=2.5)
    client_b = fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])
    fake.run_hook(HOOK, payload(projects["b"], "conv-B"), projects["b"], by=client_b)
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "report", record
    [got] = lich_b.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-B"
    assert lich.wait(1, timeout=0.5) == []


def test_a_tie_outlives_the_rows_that_proved_it(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Codex keeps only the daemon's newest 1,000 rows without a thread: card B's window goes
    with them. Its first conversation's sender proved its tie and kept it in the state
    directory (codex-ties/), so its next conversation is still B's; with the record gone too,
    nothing proves it: no card, and the cause said."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client_b = fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])
    fake.run_hook(HOOK, payload(projects["b"], "conv-B"), projects["b"], by=client_b)
    assert [r["decision"] for r in wait_for_log(env, 1)] == ["report"]
    assert len(list((tmp_path / "state" / "codex-ties").iterdir())) == 1
    fake.prune()  # Codex drops the window's rows
    fake.run_hook(HOOK, payload(projects["b"], "conv-B2"), projects["b"], by=client_b)
    assert [r["decision"] for r in wait_for_log(env, 2)][1] == "report"
    shutil.rmtree(tmp_path / "state" / "codex-ties")
    fake.run_hook(HOOK, payload(projects["b"], "conv-B3"), projects["b"], by=client_b)
    record = wait_for_log(env, 3)[2]
    assert record["decision"] == "codex-daemon-untied", record
    assert GONE in str(record["attribution"])
    assert [r.accepted["provider_session_id"] for r in lich_b.wait(2) if r.accepted] == [
        "conv-B",
        "conv-B2",
    ]
    assert lich.received == []


def test_a_refusal_decided_after_the_hook_is_told_once_at_the_next(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Cards A and B started together: neither TUI is tied, which the sender finds in the log
    after the hook has exited, when nothing can print. The next hook under the daemon says it,
    with the cause and the fix, once; the one after says only what was refused since."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client_a, client_b = together(fake, env, base_env(tmp_path, **lich_b.env("card-B")), projects)
    first = fake.run_hook(HOOK, payload(projects["b"], "conv-B"), projects["b"], by=client_b)
    assert first["stdout"] == ""  # decided later
    wait_for_log(env, 1)
    second = fake.run_hook(HOOK, payload(projects["a"], "conv-A"), projects["a"], by=client_a)
    told = json.loads(str(second["stdout"]))["systemMessage"]
    assert told.startswith("lich: an earlier Codex conversation (started "), told
    assert f"in {projects['b']})" in told and str(projects["a"]) not in told, told
    assert TOGETHER in told and "`codex --no-daemon`" in told, told
    wait_for_log(env, 2)
    third = fake.run_hook(HOOK, payload(projects["a"], "conv-A2"), projects["a"], by=client_a)
    told = json.loads(str(third["stdout"]))["systemMessage"]
    assert f"in {projects['a']})" in told and str(projects["b"]) not in told, told
    assert [r["decision"] for r in wait_for_log(env, 3)] == ["codex-daemon-untied"] * 3
    assert lich.received == [] and lich_b.received == []


def test_an_earlier_tui_s_thread_unloading_leaves_the_next_card_tied(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    """An earlier TUI (connection 2) started its thread; card A's TUI starts; the earlier
    TUI's startup thread unloads in card A's window, and Codex 0.171.0 logs that in its old
    startup span, stamped then (`serve_inner: task cancelled`): no request line, so no window
    counts it. Card A's conversation is card A's (under the tie by startup requests the row
    read as a second request in A's stretch: half of a plain series of cards was refused)."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    old = "startup-thread-start-0b5f6c1e-0000-4000-8000-000000000000"
    fake.log(time.time() - 30, "thread/start", 2, None, old)  # the earlier TUI's, as it started
    fake.accepted = 3  # its three connections: card A's TUI gets 3, 4 and 5
    client = fake.start_client(env, projects["a"], connect=0.5)
    began = started_at(client.pid)
    assert began is not None
    fake.log(began + 0.25, "thread/start", 2, None, old)  # unloading, in card A's window
    fake.run_hook(HOOK, payload(projects["a"]), projects["a"], by=client)
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "report", record
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-A"
