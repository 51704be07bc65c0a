"""The console script under a daemon-shaped process tree: real /proc, real socket peers.

The daemon's own environment names card A (it was started from card A's
terminal, or from none); every hook it runs must report the card of the client
TUI working in the payload's cwd, or nothing.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.hook.shared.codex.decide import REQUEST_AFTER
from lich_hooks.human.standin.server import StandIn
from tests.codex_daemon.fake_codex import FakeCodex
from tests.support.contract_check import assert_client_body
from tests.support.runner import base_env, log_records, wait_for_log

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and sock_diag")

HOOK = "lich-hook SessionStart codex"
SID = "01a22c85-4633-7dc1-8f42-04a93a0ae90f"


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeCodex]:
    codex = FakeCodex(tmp_path / "fake")
    try:
        yield codex
    finally:
        codex.close()


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


def payload(
    cwd: Path, sid: str = SID, source: str = "startup", transcript: str | None = None
) -> dict[str, object]:
    return {
        "session_id": sid,
        "transcript_path": transcript or f"/x/rollout-{sid}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "model": "scripted-model",
        "permission_mode": "default",
        "source": source,
    }


def rollout(folder: Path, sid: str, cwd: Path) -> Path:
    """A session's rollout file as Codex 0.171.0 writes it: session_meta first, with its cwd."""
    path = folder / f"rollout-2026-11-30T13-15-24-{sid}.jsonl"
    meta = {"type": "session_meta", "payload": {"id": sid, "cwd": str(cwd), "source": "vscode"}}
    path.write_text(json.dumps(meta) + "\n" + json.dumps({"type": "turn_context"}) + "\n")
    return path


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


def test_two_cards_started_together_name_only_the_later(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Card B's TUI starts within REQUEST_AFTER of card A's connect: B's startup request falls
    in A's window, so A's connection is never tied; B's window holds B's alone."""
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    client_a = fake.start_client(env, projects["a"])
    client_b = fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])
    fake.run_hook(HOOK, payload(projects["b"], "conv-B"), projects["b"], by=client_b)
    fake.run_hook(HOOK, payload(projects["a"], "conv-A"), projects["a"], by=client_a)
    records = wait_for_log(env, 2)
    assert sorted(str(r["decision"]) for r in records) == ["codex-daemon-untied", "report"]
    assert lich.wait(1, timeout=0.5) == []
    assert next(r.accepted for r in lich_b.received) == {
        "session_id": "card-B",
        "provider_session_id": "conv-B",
        "provider": "codex",
    }
    assert not (tmp_path / "state" / "codex-daemon").exists()  # no memory needed


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
    assert sorted(str(r["decision"]) for r in wait_for_log(env, 2)) == [
        "codex-daemon-untied",
        "report",
    ]
    assert [r.accepted["session_id"] for r in lich.received if r.accepted] == ["card-B"]


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


def test_the_cd_flag_moves_the_client_s_conversation(
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


def test_a_session_resumed_into_another_card_s_dir_names_no_card(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """Card B ran `codex resume <S1>`; S1 was recorded in projA, where card A works. Codex asks
    "session directory or current directory?" and the first is the default: B may be in projA.
    """
    env = base_env(tmp_path, **lich.env("card-A"))
    s1 = rollout(tmp_path, SID, projects["a"])
    fake.start_daemon(env)
    fake.hold_open(s1)
    client_a = fake.start_client(env, projects["a"])
    env_b = base_env(tmp_path, **lich_b.env("card-B"))
    client_b = fake.start_client(env_b, projects["b"], "resume", SID)
    # B's resumed session (it chose "session directory"), and a new one A starts in projA
    fake.started_by(client_b, SID, "thread/resume")
    fake.run_hook(HOOK, payload(projects["a"], SID, "resume", str(s1)), projects["a"])
    fake.run_hook(HOOK, payload(projects["a"], "conv-A2"), projects["a"], by=client_a)
    # `codex resume` sends no startup request: its connection is never tied
    records = wait_for_log(env, 2)
    assert sorted(str(r["decision"]) for r in records) == ["codex-daemon-untied", "report"]
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["provider_session_id"] == "conv-A2"
    assert lich_b.received == []


def test_a_session_resumed_into_the_current_dir_is_that_card_s(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """ "Use current directory": the resumed session runs in projB, where card B works."""
    env = base_env(tmp_path, **lich.env("card-A"))
    s1 = rollout(tmp_path, SID, projects["a"])
    fake.start_daemon(env)
    client_b = fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])
    fake.started_by(client_b, SID, "thread/resume")  # `/resume`
    fake.run_hook(HOOK, payload(projects["b"], SID, "resume", str(s1)), projects["b"])
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
    time.sleep(REQUEST_AFTER + 0.2)  # a person starting the second card later: no sync
    client_b = fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])
    fake.hold_open(rollout(tmp_path, SID, projects["b"]))  # card A's resume loaded S
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
    fake.run_hook(HOOK, payload(projects["a"]), projects["a"])
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-peer-unaccounted", record
    assert lich.wait(1, timeout=0.5) == [] and lich_b.received == []


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

    from lich_hooks.hook.shared.codex import probe

    pairs = [socket.socketpair() for _ in range(300)]
    try:
        ino = {s.fileno(): os.fstat(s.fileno()).st_ino for pair in pairs for s in pair}
        mine = [ino[a.fileno()] for a, _ in pairs]
        theirs = {ino[b.fileno()] for _, b in pairs}
        assert probe.unix_peers(mine) == theirs  # 300 > PEER_BATCH: the dump
        few = mine[: probe.PEER_BATCH]
        assert probe.unix_peers(few) == {ino[b.fileno()] for _, b in pairs[: len(few)]}
        # the old way, every lookup in one send: the replies overflow the receive queue
        everyone = sorted(ino.values())
        with pytest.raises(probe.ProbeError, match="No buffer space"):
            probe.unix_peers(everyone, batch=len(everyone))
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
    assert codex.find_card(fake.daemon.pid, str(projects["a"]), proc=readable).lich is None
    proc = _mirror_proc(tmp_path / "b", [fake.daemon.pid, a.pid, b.pid], unreadable=b.pid)
    found = codex.find_card(fake.daemon.pid, str(projects["a"]), proc=proc)
    assert (found.decision, found.lich) == ("codex-daemon-peer-unaccounted", None), found
