"""doctor names a running Codex daemon and the card it carries; it warns only where the person
loses something, with a fix the person can do (lich's side is in docs/harnesses.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.human.commands.doctor import check as doctor
from lich_hooks.human.commands.doctor import codex_daemon as doctor_codex_daemon
from lich_hooks.human.standin.server import StandIn
from tests.codex_daemon.fake_codex import FakeCodex
from tests.support.runner import LICH_HOOK, base_env

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and sock_diag")


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeCodex]:
    codex = FakeCodex(tmp_path / "fake")
    try:
        yield codex
    finally:
        codex.close()


def test_no_daemon_is_ok(tmp_path: Path) -> None:
    env = base_env(tmp_path, CODEX_HOME=str(tmp_path / "codex-home"))
    [row] = doctor_codex_daemon.check(env)
    assert row.status == doctor.OK
    assert "no Codex app-server daemon running for" in row.summary


def test_a_daemon_carrying_another_card_is_reported_without_its_token(
    fake: FakeCodex, tmp_path: Path, lich: StandIn
) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    card_a = base_env(tmp_path, CODEX_HOME=str(home), **lich.env("card-A"))
    card_b = base_env(tmp_path, CODEX_HOME=str(home), **lich.env("card-B"))
    fake.start_daemon(card_a)
    fake.start_client(card_a, tmp_path / "a")
    fake.start_client(card_b, tmp_path / "b")
    fake.start_client(card_b, tmp_path / "a")  # card B's second TUI shares card A's dir

    [row] = doctor_codex_daemon.check(card_b)
    assert row.status == doctor.WARN
    assert row.details["carries"] == "card-A"
    assert "LICH_SESSION_ID=card-A" in row.summary
    assert "another card's: this terminal is card-B" in row.summary
    assert f"reports from {tmp_path / 'a'}, {tmp_path / 'b'} are dropped" in row.summary
    assert row.fix == doctor_codex_daemon.SEVERAL_CARDS
    assert "lich should" not in str(row.summary) + str(row.fix)
    commands = row.details["commands"]
    assert isinstance(commands, list) and len(commands) == 3
    assert any(f"in {tmp_path / 'b'}: LICH_SESSION_ID=card-B" in line for line in commands)

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


def test_one_card_alone_is_ok_and_a_second_card_s_tui_drops_every_directory(
    fake: FakeCodex, tmp_path: Path, lich: StandIn
) -> None:
    """Card A started the daemon and is alone on it: nothing to do. Once card B's TUI
    connects, either may have moved into the other's directory unseen (docs/harnesses.md,
    Codex): both directories' reports drop, and the fix is `codex --no-daemon`."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    card_a = base_env(tmp_path, CODEX_HOME=str(home), **lich.env("card-A"))
    card_b = base_env(tmp_path, CODEX_HOME=str(home), **lich.env("card-B"))
    fake.start_daemon(card_a)
    fake.start_client(card_a, tmp_path / "a")
    [row] = doctor_codex_daemon.check(card_a)
    assert (row.status, row.fix, row.details["commands"]) == (doctor.OK, None, [])
    assert "each report goes to the one card whose Codex TUIs are connected" in row.summary
    fake.start_client(card_b, tmp_path / "b")
    for env in (card_a, card_b):
        [row] = doctor_codex_daemon.check(env)
        assert row.status == doctor.WARN
        assert f"reports from {tmp_path / 'a'}, {tmp_path / 'b'} are dropped" in row.summary
        assert row.fix == doctor_codex_daemon.SEVERAL_CARDS
        assert "codex --no-daemon" in row.fix
