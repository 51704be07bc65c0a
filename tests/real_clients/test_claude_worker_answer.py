"""A lich worker's turn in the real Claude Code answers its errand, only when interactive."""

from __future__ import annotations

from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.real_clients.conftest import CARD, ClaudeEnv
from tests.real_clients.support.agent_calls import skip_if_stub
from tests.real_clients.support.claude import SINCE, Terminal, run_print, wait_for_hook
from tests.real_clients.support.clients import Client
from tests.real_clients.support.model_api import REPLY_TEXT, ModelAPI

pytestmark = pytest.mark.real_client


def test_interactive_worker_turn_answers_its_errand(
    claude_code: Client, claude_setup: ClaudeEnv, project: Path, lich: StandIn, model_api: ModelAPI
) -> None:
    env = claude_setup(depth="1")
    with Terminal(claude_code, env, project) as claude:
        claude.wait_ready()
        claude.submit("Do the errand and report.")
        [stop] = wait_for_hook(env, "Stop")
    skip_if_stub(env, "Stop")
    # a release without Stop's last_assistant_message: the answer came from the transcript
    read_transcript = not claude_code.at_least(SINCE["last_assistant_message"])
    assert ("transcript" in stop) is read_transcript, stop
    if not claude_code.at_least(SINCE["session_attended"]):
        assert str(stop["interactive"]).startswith("claude process "), stop
    answers = [r for r in lich.wait(2) if r.endpoint == "mod/answer"]
    assert [(r.status, r.accepted) for r in answers] == [
        (204, {"session_id": CARD, "text": REPLY_TEXT})
    ], stop  # its transcript and transcript_wait_ms say why where the answer came out blank


def test_print_mode_inside_a_worker_never_answers(
    claude_code: Client, claude_setup: ClaudeEnv, project: Path, lich: StandIn, model_api: ModelAPI
) -> None:
    """A `claude -p` a worker's tool starts inherits LICH_SUBAGENT_DEPTH=1; it is not the worker."""
    env = claude_setup(depth="1")
    ran = run_print(claude_code, "Summarise this file.", env, project)
    assert ran.returncode == 0, ran.stderr
    [stop] = wait_for_hook(env, "Stop")
    skip_if_stub(env, "Stop")
    assert stop["decision"] == "not-interactive"
    # each hook run logs after its own send, so by now every report has arrived
    wait_for_hook(env, "SessionStart")
    assert [r.endpoint for r in lich.received] == ["session-start"]


def test_each_turn_answers_with_its_own_reply(
    claude_code: Client, claude_setup: ClaudeEnv, project: Path, lich: StandIn, model_api: ModelAPI
) -> None:
    """On 2.1.45 a later turn's Stop fires before the turn is written (docs/worker-answer.md,
    "The transcript fallback"): read as the file ends, 31 of 38 later turns answered with the
    turn before's reply. Each turn's answer is its own reply."""
    env = claude_setup(depth="1")
    turns = 5
    with Terminal(claude_code, env, project) as claude:
        claude.wait_ready()
        for k in range(1, turns + 1):
            claude.submit(f"Turn {k}. [[reply:reply of turn {k}]]")
            wait_for_hook(env, "Stop", count=k)
        stops = wait_for_hook(env, "Stop", count=turns)
    skip_if_stub(env, "Stop")
    answers = [r.accepted for r in lich.wait(turns + 1) if r.endpoint == "mod/answer"]
    assert answers == [
        {"session_id": CARD, "text": f"reply of turn {k}"} for k in range(1, turns + 1)
    ], stops
