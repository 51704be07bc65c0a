"""Which Agent calls start a teammate in the real Claude Code, and that exactly those stay native.

A teammate is Claude Code's own (agent teams): lich must not turn it into a card. What starts
one was measured here on each version in the matrix (docs/harnesses.md): with agent teams on
(`CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1`) a call with a `name` does from 2.1.178, which
documents `team_name` as "Deprecated; ignored"; before 2.1.178 it took `name` and `team_name`
(and a team made first with spawnTeam: the call is answered `Team "…" does not exist`); with
agent teams off no call does (a `team_name` there is refused: "Agent Teams is not yet
available on your plan"). `run_in_background` changes nothing about it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.real_clients.conftest import ClaudeEnv
from tests.real_clients.support.agent_calls import AGENT_CALL, agent_prompt, skip_if_stub
from tests.real_clients.support.claude import SINCE, Terminal, subagent_tool, wait_for_hook
from tests.real_clients.support.clients import Client
from tests.real_clients.support.fake_lich import FakeLich
from tests.real_clients.support.model_api import ModelAPI, messages_tool_results, tool_result_text

pytestmark = pytest.mark.real_client

TEAMS = {"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1"}
# Claude Code's answer to a call that took the teammate route
SPAWNED = "Spawned successfully."  # 2.1.178+
NO_TEAM = "does not exist. Call spawnTeam first"  # before 2.1.178, no team made
TEAM_NAME_IGNORED = SINCE["team_name_ignored"]

CASES: list[tuple[bool, dict[str, Any]]] = [
    (True, {}),
    (True, {"name": "helper"}),
    (True, {"team_name": "crew"}),
    (True, {"name": "helper", "team_name": "crew"}),
    (True, {"run_in_background": True}),
    (True, {"name": "helper", "run_in_background": False}),
    (True, {"name": "helper", "run_in_background": True}),
    (False, {"name": "helper"}),
    (False, {"name": "helper", "run_in_background": False}),
]


def _starts_teammate(client: Client, teams: bool, call: dict[str, Any]) -> bool:
    """What the real CLI does (measured): the table this file proves, per version."""
    if not teams or not call.get("name"):
        return False
    return client.at_least(TEAM_NAME_IGNORED) or bool(call.get("team_name"))


def _call(client: Client, extra: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return subagent_tool(client), {**AGENT_CALL, **extra}


def _first_result(model_api: ModelAPI) -> str:
    shown = model_api.wait_for(
        lambda r: bool(messages_tool_results(r.body)), what="the Agent call's tool_result"
    )
    return tool_result_text(messages_tool_results(shown.body)[0])


@pytest.mark.parametrize(("teams", "extra"), CASES, ids=[f"{t}-{sorted(e)}" for t, e in CASES])
def test_which_calls_start_a_teammate(
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    model_api: ModelAPI,
    teams: bool,
    extra: dict[str, Any],
) -> None:
    """Claude Code left alone (cards off): does this call take the teammate route?"""
    switch = TEAMS if teams else {}
    env = claude_setup(permission_mode="acceptEdits", LICH_SUBAGENT_CARDS="off", **switch)
    tool, call = _call(claude_code, extra)
    with Terminal(claude_code, env, project) as claude:
        claude.wait_ready()
        claude.submit(agent_prompt(call, tool))
        result = _first_result(model_api)
        wait_for_hook(env, "PreToolUse")
    teammate = SPAWNED in result or NO_TEAM in result
    assert teammate is _starts_teammate(claude_code, teams, call), result[:200]


@pytest.mark.parametrize("name", ["helper", None])
def test_a_teammate_stays_native_and_a_plain_subagent_becomes_a_card(
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    fake_lich: FakeLich,
    model_api: ModelAPI,
    name: str | None,
) -> None:
    """In a lich card with agent teams on: a named call is Claude Code's teammate (it runs
    natively and Claude Code spawns it); the same call without a name becomes a card."""
    env = claude_setup(permission_mode="acceptEdits", **TEAMS)
    tool, call = _call(claude_code, {"name": name} if name else {})
    with Terminal(claude_code, env, project) as claude:
        claude.wait_ready()
        claude.submit(agent_prompt(call, tool))
        [pre] = wait_for_hook(env, "PreToolUse")
        skip_if_stub(env, "PreToolUse")
        result = _first_result(model_api)
    if name:
        assert pre["decision"] == "native:teammate"
        assert fake_lich.calls() == []
        if claude_code.at_least(TEAM_NAME_IGNORED):
            assert SPAWNED in result
    else:
        assert not str(pre["decision"]).startswith("native:")
        assert [c["argv"][0] for c in fake_lich.calls()] == ["open"]
        framed = claude_code.at_least(SINCE["deny_prefix"])
        assert result.startswith(f"PreToolUse:{tool} hook error: " * framed + "Not an error")
