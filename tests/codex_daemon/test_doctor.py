"""doctor names a running Codex daemon and the card it carries; it warns only where the person
loses something, with a fix the person can do (lich's side is in docs/harnesses.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lich_hooks.hook.shared.codex import decide
from lich_hooks.human.commands.doctor import check as doctor
from lich_hooks.human.commands.doctor import codex_daemon as doctor_codex_daemon
from lich_hooks.human.standin.server import StandIn
from tests.codex_daemon.fake_codex import FakeCodex
from tests.support.runner import LICH_HOOK, base_env, wait_for_log

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and sock_diag")


def test_no_daemon_is_ok(tmp_path: Path) -> None:
    env = base_env(tmp_path, CODEX_HOME=str(tmp_path / "codex-home"))
    [row] = doctor_codex_daemon.check(env)
    assert row.status == doctor.OK
    assert "no Codex app-server daemon running for" in row.summary


def test_a_daemon_carrying_another_card_is_reported_without_its_token(
    fake: FakeCodex, tmp_path: Path, lich: StandIn
) -> None:
    """Card B's one Codex window is tied, so its conversations report; the agent's commands
    there still see card A's variables, which the daemon carries: that is the warning."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (tmp_path / "b").mkdir()
    card_a = base_env(tmp_path, CODEX_HOME=str(home), **lich.env("card-A"))
    card_b = base_env(tmp_path, CODEX_HOME=str(home), **lich.env("card-B"))
    fake.start_daemon(card_a)
    client = fake.start_client(card_b, tmp_path / "b")
    fake.log(time.time() + 60, "turn/start", 0, None, body="turn")  # the daemon writes on

    [row] = doctor_codex_daemon.check(card_b)
    assert row.status == doctor.WARN
    assert row.details["carries"] == "card-A"
    assert "LICH_SESSION_ID=card-A" in row.summary
    assert "another card's: this terminal is card-B" in row.summary
    assert "reports nothing" not in row.summary and "refused" not in row.summary
    assert row.fix == doctor_codex_daemon.OWN_DAEMON
    commands = row.details["commands"]
    assert isinstance(commands, list)
    [line] = commands
    assert f"client {client.pid} in {tmp_path / 'b'}: LICH_SESSION_ID=card-B" in line
    assert f"tied to connection {fake.connections[client.pid]}" in line

    # the whole command, as a user runs it from card B's terminal
    ran = subprocess.run(
        [str(LICH_HOOK), "doctor", "--json"], env=card_b, capture_output=True, text=True
    )
    assert lich.token not in ran.stdout
    [daemon] = [c for c in json.loads(ran.stdout)["checks"] if c["name"] == "Codex daemon"]
    assert daemon["status"] == "warn" and "<redacted, " in daemon["summary"]


def test_another_codex_home_s_daemon_is_not_this_one(
    fake: FakeCodex, tmp_path: Path, lich: StandIn
) -> None:
    fake.start_daemon(base_env(tmp_path, CODEX_HOME=str(tmp_path / "other"), **lich.env("x")))
    env = base_env(tmp_path, CODEX_HOME=str(tmp_path / "codex-home"))
    [row] = doctor_codex_daemon.check(env)
    assert row.status == doctor.OK


def test_cards_tied_are_ok_and_windows_started_together_are_named_with_their_fix(
    fake: FakeCodex, tmp_path: Path, lich: StandIn
) -> None:
    """The issue's run: cards in four folders, three of them reporting on their own cards.
    Before, doctor judged by the directory rule and warned that reports from all four folders
    were dropped, with the fix "`codex --no-daemon` in every card but one". It asks the
    hook's own question now: each window tied says so; two windows that each hold the other's
    connection are named, with the cause and the fix, and nothing else is."""
    home = tmp_path / "codex-home"
    home.mkdir()
    envs = {}
    for name in ("A", "B", "C", "D", "E"):
        (tmp_path / name).mkdir()
        envs[name] = base_env(tmp_path, CODEX_HOME=str(home), **lich.env(f"card-{name}"))
    fake.start_daemon(envs["A"])
    clients = {}
    for name in ("A", "B", "C"):
        clients[name] = fake.start_client(envs[name], tmp_path / name)
    fake.log(time.time() + 60, "turn/start", 0, None, body="turn")  # the daemon writes on
    [row] = doctor_codex_daemon.check(envs["A"])
    assert (row.status, row.fix, row.details["commands"]) == (doctor.OK, None, []), row.summary
    assert "each conversation goes to the card whose Codex window started it" in row.summary
    rows = row.details["clients"]
    assert isinstance(rows, list) and all("; tied to connection" in r for r in rows), rows

    # D and E together: each one's connection opens in the other's window
    clients["D"] = fake.start_client(envs["D"], tmp_path / "D", connect=2.0, opens=0.8)
    clients["E"] = fake.start_client(envs["E"], tmp_path / "E", connect=2.0, opens=0.1)
    for here in ("A", "D"):
        [row] = doctor_codex_daemon.check(envs[here])
        assert row.status == doctor.WARN, row.summary
        for name in ("D", "E"):
            said = f"card card-{name}'s Codex window {clients[name].pid} reports nothing: "
            assert said + decide.TOGETHER in row.summary, row.summary
        assert "card-A's" not in row.summary and "card-B's" not in row.summary
        assert row.fix is not None and "start it again on its own" in row.fix
        assert "`codex --no-daemon`" in row.fix and "every card but one" not in row.fix


def test_doctor_names_the_conversations_the_hook_refused_and_why(
    fake: FakeCodex, tmp_path: Path, lich: StandIn
) -> None:
    """A refusal the sender decided after its hook exited is in doctor, with its cause."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    card_a = base_env(tmp_path, CODEX_HOME=str(home), **lich.env("card-A"))
    card_b = base_env(tmp_path, CODEX_HOME=str(home), **lich.env("card-B"))
    fake.start_daemon(card_a)
    fake.start_client(card_a, tmp_path / "a", connect=2.0, opens=0.8)  # together: neither tied
    client_b = fake.start_client(card_b, tmp_path / "b", connect=2.0, opens=0.1)
    hook = "lich-hook SessionStart codex"
    body = {"session_id": "conv-B", "cwd": str(tmp_path / "b"), "source": "startup"}
    fake.run_hook(hook, {**body, "hook_event_name": "SessionStart"}, tmp_path / "b", by=client_b)
    assert [r["decision"] for r in wait_for_log(card_a, 1)] == ["codex-daemon-untied"]
    [row] = doctor_codex_daemon.check(card_b)
    assert row.status == doctor.WARN
    assert "conversations under it were refused" in row.summary
    commands = row.details["commands"]
    assert isinstance(commands, list)
    [refused] = [line for line in commands if "conv-B" in line]
    assert f"in {tmp_path / 'b'}) was not reported: " in refused
    assert decide.TOGETHER in refused and "`codex --no-daemon`" in refused


def test_a_client_doctor_cannot_read_refuses_every_conversation(
    fake: FakeCodex, tmp_path: Path, lich: StandIn
) -> None:
    """As the hook refuses at once: a connection held by a process not named codex."""
    home = tmp_path / "codex-home"
    home.mkdir()
    card_a = base_env(tmp_path, CODEX_HOME=str(home), **lich.env("card-A"))
    fake.start_daemon(card_a)
    fake.start_client(card_a, tmp_path, name="cx")
    [row] = doctor_codex_daemon.check(card_a)
    assert row.status == doctor.WARN
    assert "every conversation under it is refused: a program connected" in row.summary
    assert row.fix is not None and "start Codex in lich cards as `codex`" in row.fix
