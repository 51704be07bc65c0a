"""A hook interrupted while `lich open` runs denies, and leaves the open running
(docs/agent-cards.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.agent_cards.fake_lich import Deny, FakeLich, agent_payload, is_alive, session
from tests.support.runner import LICH_HOOK


def wait_for_file(path: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_open_denies_and_leaves_lich_running(
    signum: int, tmp_path: Path, card_env: dict[str, str], fake: FakeLich, project: Path
) -> None:
    pidfile, release, done = tmp_path / "pid", tmp_path / "release", tmp_path / "done"
    fake.script(
        open={
            "pidfile": str(pidfile),
            "wait_for": str(release),
            "json": session("pending"),
            "done_file": str(done),
        }
    )
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(agent_payload(project, isolation="worktree")))
    with payload.open("rb") as stdin:
        hook = subprocess.Popen(
            [str(LICH_HOOK), "PreToolUse", "claude"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # warnings on, as in a developer's shell: leaving lich running must stay silent
            env={**card_env, "PYTHONWARNINGS": "always"},
            start_new_session=True,  # its own group, as Claude Code kills a hook's group
        )
    try:
        wait_for_file(pidfile)
        lich_pid = int(pidfile.read_text())
        os.killpg(hook.pid, signum)
        out, err = hook.communicate(timeout=20)
    finally:
        release.touch()
    assert (hook.returncode, err) == (0, b"")
    # Claude Code 2.1.3xx drops a hook's output when Esc interrupts it (docs/agent-cards.md);
    # this deny is for a signal from anyone else: one warning both read, the rest the model's
    deny = Deny(out)
    assert deny.reason == (
        "Interrupted while lich was opening a card for this task: a lich card (on branch"
        " subagent/fix-the-login-bug-yz9q) may already be running it."
    )
    assert deny.context == (
        "If one is, its report arrives at this prompt as a [lich] note, so check before"
        " running the task again."
    )
    assert deny.person is None
    # the open outlived the hook and finishes its job once lich answers
    assert is_alive(lich_pid) or done.exists()
    wait_for_file(done)
