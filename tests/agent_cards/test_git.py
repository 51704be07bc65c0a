"""The base branch and the older-lich `subagent/` rule (docs/agent-cards.md), in real
temporary git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.agent_cards.fake_lich import FakeLich, agent_payload, reason, session
from tests.support.runner import run_hook

HOOK = "PreToolUse claude"


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


@pytest.fixture
def repo(project: Path) -> Path:
    git(project, "init", "-q", "-b", "main")
    (project / "README").write_text("hi\n")
    git(project, "add", "README")
    git(project, "commit", "-q", "-m", "first")
    return project


@pytest.fixture(autouse=True)
def _pending(fake: FakeLich) -> None:
    fake.script(open={"json": session("pending")})


def opened(fake: FakeLich) -> list[str]:
    [argv] = fake.argvs()
    return argv


def test_isolated_call_bases_on_the_current_branch(
    repo: Path, card_env: dict[str, str], fake: FakeLich
) -> None:
    git(repo, "checkout", "-q", "-b", "feature/login")
    run_hook(HOOK, agent_payload(repo, isolation="worktree"), card_env)
    argv = opened(fake)
    assert argv[4:8] == [
        "--worktree",
        "subagent/fix-the-login-bug-yz9q",
        "--base",
        "feature/login",
    ]


def test_detached_head_gives_no_base(repo: Path, card_env: dict[str, str], fake: FakeLich) -> None:
    git(repo, "checkout", "-q", "--detach")
    run_hook(HOOK, agent_payload(repo, isolation="worktree"), card_env)
    argv = opened(fake)
    assert "--worktree" in argv
    assert "--base" not in argv


def test_no_repository_gives_no_base(
    project: Path, card_env: dict[str, str], fake: FakeLich
) -> None:
    run_hook(HOOK, agent_payload(project, isolation="worktree"), card_env)
    argv = opened(fake)
    assert "--worktree" in argv
    assert "--base" not in argv


def test_shared_call_never_asks_git(repo: Path, card_env: dict[str, str], fake: FakeLich) -> None:
    run_hook(HOOK, agent_payload(repo), card_env)
    argv = opened(fake)
    assert "--worktree" not in argv
    assert "--base" not in argv


def older_lich(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != "LICH_SUBAGENT_DEPTH"}


def test_row7_older_lich_isolated_call_from_a_worker_branch_stays_native(
    repo: Path, card_env: dict[str, str], fake: FakeLich
) -> None:
    git(repo, "checkout", "-q", "-b", "subagent/earlier-work-ab12")
    ran = run_hook(HOOK, agent_payload(repo, isolation="worktree"), older_lich(card_env))
    assert (ran.stdout, fake.calls()) == (b"", [])


def test_row7_older_lich_shared_call_from_a_worker_branch_is_taken(
    repo: Path, card_env: dict[str, str], fake: FakeLich
) -> None:
    git(repo, "checkout", "-q", "-b", "subagent/earlier-work-ab12")
    ran = run_hook(HOOK, agent_payload(repo), older_lich(card_env))
    assert reason(ran.stdout).startswith("Not an error:")


def test_row7_older_lich_isolated_call_from_another_branch_is_taken(
    repo: Path, card_env: dict[str, str], fake: FakeLich
) -> None:
    ran = run_hook(HOOK, agent_payload(repo, isolation="worktree"), older_lich(card_env))
    assert reason(ran.stdout).startswith("Not an error:")
    assert opened(fake)[6:8] == ["--base", "main"]


def test_row7_a_current_lich_opens_cards_from_a_worker_branch(
    repo: Path, card_env: dict[str, str], fake: FakeLich
) -> None:
    git(repo, "checkout", "-q", "-b", "subagent/earlier-work-ab12")
    env = {**card_env, "LICH_SUBAGENT_DEPTH": "1"}
    ran = run_hook(HOOK, agent_payload(repo, isolation="worktree"), env)
    assert reason(ran.stdout).startswith("Not an error:")
    assert opened(fake)[6:8] == ["--base", "subagent/earlier-work-ab12"]
