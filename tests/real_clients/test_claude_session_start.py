"""SessionStart from the real Claude Code reaches lich, in print mode and interactively."""

from __future__ import annotations

from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.real_clients.conftest import CARD, ClaudeEnv
from tests.real_clients.support.claude import Terminal, run_print, wait_for_hook
from tests.real_clients.support.clients import Client
from tests.real_clients.support.model_api import REPLY_TEXT, ModelAPI

pytestmark = pytest.mark.real_client


def _session_starts(lich: StandIn) -> list[dict[str, object]]:
    return [r.accepted or {} for r in lich.received if r.endpoint == "session-start"]


def test_print_mode_reports_its_session(
    claude_code: Client, claude_setup: ClaudeEnv, project: Path, lich: StandIn, model_api: ModelAPI
) -> None:
    env = claude_setup()
    ran = run_print(claude_code, "say hello", env, project)
    assert ran.returncode == 0, ran.stderr
    assert REPLY_TEXT in ran.stdout
    [record] = wait_for_hook(env, "SessionStart")
    assert record["decision"] == "report"
    [request] = [r for r in lich.wait(1) if r.endpoint == "session-start"]
    assert request.status == 204
    body = request.accepted
    assert body is not None
    assert body["session_id"] == CARD
    assert body["provider"] == "claude"
    # the id lich stores is the conversation the CLI actually ran: its transcript's name
    transcripts = list((Path(env["HOME"]) / ".claude" / "projects").rglob("*.jsonl"))
    assert [t.stem for t in transcripts] == [body["provider_session_id"]]


def test_interactive_session_reports_at_startup(
    claude_code: Client, claude_setup: ClaudeEnv, project: Path, lich: StandIn, model_api: ModelAPI
) -> None:
    env = claude_setup()
    with Terminal(claude_code, env, project) as claude:
        claude.wait_ready()
        # SessionStart fires before the first prompt: nothing typed, nothing asked of the model
        wait_for_hook(env, "SessionStart")
        [request] = [r for r in lich.wait(1) if r.endpoint == "session-start"]
        assert not model_api.model_calls()
        claude.submit("say hello")
        wait_for_hook(env, "Stop")
    assert request.status == 204
    body = request.accepted
    assert body is not None
    assert (body["session_id"], body["provider"]) == (CARD, "claude")
    transcripts = list((Path(env["HOME"]) / ".claude" / "projects").rglob("*.jsonl"))
    assert [t.stem for t in transcripts] == [body["provider_session_id"]]
    assert len(_session_starts(lich)) == 1
