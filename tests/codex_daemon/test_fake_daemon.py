"""The console script under a daemon-shaped process tree: real /proc, real socket peers.

The daemon's own environment names card A (it was started from card A's
terminal, or from none); every hook it runs must report the card of the client
TUI working in the payload's cwd, or nothing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.standin.server import StandIn
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


def test_each_client_s_report_names_its_own_card(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)  # the daemon carries card A: stale for card B
    fake.start_client(env, projects["a"])
    fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])

    ran = fake.run_hook(HOOK, payload(projects["b"], "conv-B"), projects["b"])
    assert ran == {"rc": 0, "stdout": "", "stderr": ""}
    [got] = lich_b.wait(1)
    assert got.accepted == {
        "session_id": "card-B",
        "provider_session_id": "conv-B",
        "provider": "codex",
    }
    assert got.status == 204
    assert_client_body("session-start", got.body)
    fake.run_hook(HOOK, payload(projects["a"], "conv-A"), projects["a"])
    [got_a] = lich.wait(1)
    assert got_a.accepted is not None and got_a.accepted["session_id"] == "card-A"
    assert [r.accepted["session_id"] for r in lich_b.received if r.accepted] == ["card-B"]
    records = wait_for_log(env, 2)
    assert [r["decision"] for r in records] == ["report", "report"]
    assert "codex app-server" in str(records[0]["codex_runner"])
    assert lich.token not in (tmp_path / "hook.log").read_text()
    assert lich_b.token not in (tmp_path / "hook.log").read_text()


def test_a_daemon_started_outside_lich_still_reports_the_client_s_card(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path)
    fake.start_daemon(env)
    fake.start_client(base_env(tmp_path, **lich.env("card-B")), projects["b"])
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"])
    [got] = lich.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-B"


def test_two_cards_in_one_dir_send_nothing(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    fake.start_client(env, projects["a"])
    fake.start_client(base_env(tmp_path, **lich.env("card-B")), projects["a"])
    ran = fake.run_hook(HOOK, payload(projects["a"]), projects["a"])
    assert ran == {"rc": 0, "stdout": "", "stderr": ""}
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-several-cards"
    assert "card-A" in str(record["attribution"]) and "card-B" in str(record["attribution"])
    assert lich.wait(1, timeout=0.5) == []


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
    fake.start_client(
        base_env(tmp_path, **{**lich.env("card-B"), "LICH_PORT": "80; x"}), projects["b"]
    )
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"])
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "codex-daemon-client-invalid"
    assert lich.wait(1, timeout=0.5) == []


def test_the_cd_flag_moves_the_client_s_conversation(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn
) -> None:
    env = base_env(tmp_path, **lich.env("card-A"))
    fake.start_daemon(env)
    fake.start_client(base_env(tmp_path, **lich.env("card-B")), projects["a"], "--cd", "../projB")
    fake.run_hook(HOOK, payload(projects["b"]), projects["b"])
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
    fake.start_client(env, projects["a"])
    fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"], "resume", SID)
    # B's resumed session (it chose "session directory"), and a new one A starts in projA
    fake.run_hook(HOOK, payload(projects["a"], SID, "resume", str(s1)), projects["a"])
    fake.run_hook(HOOK, payload(projects["a"], "conv-A2"), projects["a"])
    records = wait_for_log(env, 2)
    assert [r["decision"] for r in records] == ["codex-daemon-several-cards"] * 2
    assert lich.wait(1, timeout=0.5) == [] and lich_b.received == []
    # in projB only card B can be: its report is its own
    fake.run_hook(HOOK, payload(projects["b"], "conv-B2"), projects["b"])
    [got] = lich_b.wait(1)
    assert got.accepted is not None and got.accepted["session_id"] == "card-B"


def test_a_session_resumed_into_the_current_dir_is_that_card_s(
    fake: FakeCodex, projects: dict[str, Path], tmp_path: Path, lich: StandIn, lich_b: StandIn
) -> None:
    """ "Use current directory": the resumed session runs in projB, where only card B works."""
    env = base_env(tmp_path, **lich.env("card-A"))
    s1 = rollout(tmp_path, SID, projects["a"])
    fake.start_daemon(env)
    fake.start_client(env, projects["a"])
    fake.start_client(base_env(tmp_path, **lich_b.env("card-B")), projects["b"])  # `/resume`
    fake.run_hook(HOOK, payload(projects["b"], SID, "resume", str(s1)), projects["b"])
    [got] = lich_b.wait(1)
    assert got.accepted == {"session_id": "card-B", "provider_session_id": SID, "provider": "codex"}
    assert lich.received == []
