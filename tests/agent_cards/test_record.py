"""docs/agent-cards.md: the worker record, under concurrency, and TaskStop both ways."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.agent_cards.fake_lich import (
    Deny,
    FakeLich,
    agent_payload,
    reason,
    session,
    stop_payload,
)
from tests.support.runner import run_hook, run_together, wait_for_log

HOOK = "PreToolUse claude"


def workers_dir(env: dict[str, str]) -> Path:
    return Path(env["LICH_HOOK_STATE_DIR"]) / "workers" / "card-1"


def recorded(env: dict[str, str]) -> dict[str, dict[str, object]]:
    found = {}
    for path in workers_dir(env).glob("*.json"):
        worker = json.loads(path.read_text())
        found[worker["name"]] = worker
    return found


def open_worker(
    env: dict[str, str], fake: FakeLich, project: Path, name: str, **tool_input: object
) -> None:
    fake.script(open={"json": session("pending", name=name, label=name.title())})
    ran = run_hook(HOOK, agent_payload(project, **tool_input), env)
    assert reason(ran.stdout).startswith("Not an error:")


def test_pending_worker_is_recorded_privately(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-one", isolation="worktree")
    worker = recorded(card_env)["w-one"]
    assert worker["label"] == "W-One"
    assert worker["description"] == "Fix the login bug"
    assert worker["branch"] == "subagent/fix-the-login-bug-yz9q"
    assert isinstance(worker["when"], float)
    directory = workers_dir(card_env)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(directory.parent.stat().st_mode) == 0o700
    for path in directory.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_eight_parallel_agent_calls_are_all_recorded(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    fake.script(open={"json": session("pending", name="w-$PID", label="Worker $PID")})
    payloads = [json.dumps(agent_payload(project)).encode() for _ in range(8)]  # 8 calls
    runs = run_together("PreToolUse claude", payloads, card_env)
    assert all(ran.returncode == 0 for ran in runs)
    assert all(ran.stderr == b"" for ran in runs)
    names = {f"w-{call['pid']}" for call in fake.calls()}
    assert len(names) == 8
    assert set(recorded(card_env)) == names
    for ran in runs:
        assert reason(ran.stdout).startswith("Not an error:")


def test_broken_state_dir_still_gives_the_verdict(
    tmp_path: Path, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the state dir should be")
    env = {**card_env, "LICH_HOOK_STATE_DIR": str(blocker)}
    open_worker(env, fake, project, "w-lost")
    assert wait_for_log(env, 1)[0]["recorded"] is False


def test_taskstop_closes_a_shared_worker(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-shared")
    fake.script(close={"exit": 0})
    ran = run_hook(HOOK, stop_payload(project, task_id="w-shared"), card_env)
    assert fake.argvs()[-1] == ["close", "w-shared"]
    deny = Deny(ran.stdout)
    assert deny.person == 'lich closed card "W-Shared".'  # drawn first, above the error line
    assert deny.model == (
        "Successfully stopped task: w-shared (Fix the login bug)."
        ' lich closed its session "W-Shared".'
    )
    assert recorded(card_env) == {}


@pytest.mark.parametrize("code", [0, 2])
def test_taskstop_aborts_an_isolated_workers_turn(
    code: int, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-iso", isolation="worktree")
    fake.script(control={"exit": code})
    ran = run_hook(HOOK, stop_payload(project, shell_id="w-iso"), card_env)
    assert fake.argvs()[-1] == ["control", "w-iso", "abort"]
    assert Deny(ran.stdout).person == 'lich stopped card "W-Iso"; the card and its worktree stay.'
    assert reason(ran.stdout) == (
        "Successfully stopped task: w-iso (Fix the login bug). lich stopped the turn of"
        ' session "W-Iso"; its card and its worktree on branch subagent/fix-the-login-bug-yz9q'
        " stay for the user."
    )
    assert recorded(card_env) == {}


@pytest.mark.parametrize("code", [1, 2])  # 2 means "taken" only for `control`
def test_taskstop_refused_denies_with_lichs_reason(
    code: int, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-shared")
    fake.script(close={"exit": code, "stderr": "error: no session named w-shared\n"})
    ran = run_hook(HOOK, stop_payload(project, task_id="w-shared"), card_env)
    assert reason(ran.stdout) == (
        "lich did not stop task w-shared (Fix the login bug): error: no session named w-shared"
    )
    assert "w-shared" in recorded(card_env)


def test_taskstop_control_exit_1_is_refused(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-iso", isolation="worktree")
    fake.script(control={"exit": 1})
    ran = run_hook(HOOK, stop_payload(project, task_id="w-iso"), card_env)
    assert reason(ran.stdout) == "lich did not stop task w-iso (Fix the login bug): exit 1"


@pytest.mark.parametrize("task_id", ["a1b2c3d4", "../w-shared", "", None])
def test_taskstop_for_other_ids_gets_no_verdict(
    task_id: str | None, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-shared")
    calls = len(fake.calls())
    ran = run_hook(HOOK, stop_payload(project, task_id=task_id), card_env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert len(fake.calls()) == calls


def test_taskstop_from_another_card_gets_no_verdict(
    card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    open_worker(card_env, fake, project, "w-shared")
    env = {**card_env, "LICH_SESSION_ID": "card-2"}
    ran = run_hook(HOOK, stop_payload(project, task_id="w-shared"), env)
    assert ran.stdout == b""
