"""The real Claude Code's subagent calls: a card when interactive, native everywhere else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lich_hooks.standin.server import StandIn
from tests.real_clients.conftest import ClaudeEnv
from tests.real_clients.support.agent_calls import (
    AGENT_CALL,
    agent_prompt,
    directive,
    skip_if_stub,
    task_stop_prompt,
)
from tests.real_clients.support.claude import Terminal, hook_runs, run_print, wait_for_hook
from tests.real_clients.support.clients import Client
from tests.real_clients.support.fake_lich import FakeLich, open_answer
from tests.real_clients.support.model_api import (
    ModelAPI,
    Request,
    messages_tool_results,
    tool_result_text,
)

pytestmark = pytest.mark.real_client

HOOK_ERROR = "PreToolUse:Agent hook error: "


def _asked_for(prompt: str) -> callable:  # type: ignore[valid-type]
    """A model request whose prompt (first user text) is `prompt`: a subagent running natively."""

    def match(request: Request) -> bool:
        messages = request.body.get("messages") or []
        first = messages[0].get("content") if messages else None
        texts = [b.get("text") for b in first if isinstance(b, dict)] if isinstance(first, list) else [first]
        return prompt in texts

    return match


def _result_for(tool: str):  # type: ignore[no-untyped-def]
    """A model request that shows the model the result of its `tool` call."""

    def match(request: Request) -> bool:
        uses = {
            b.get("id")
            for m in request.body.get("messages") or []
            if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == tool
        }
        return any(r.get("tool_use_id") in uses for r in messages_tool_results(request.body))

    return match


def _tool_result(request: Request, tool: str) -> dict[str, object]:
    uses = {
        b.get("id")
        for m in request.body.get("messages") or []
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == tool
    }
    [result] = [r for r in messages_tool_results(request.body) if r.get("tool_use_id") in uses]
    return result


def _open_card(claude: Terminal, env: dict[str, str], model_api: ModelAPI) -> dict[str, object]:
    """Type the Agent call, wait for its verdict to reach the model; the tool_result it got."""
    claude.wait_ready()
    claude.submit(agent_prompt())
    wait_for_hook(env, "PreToolUse")
    skip_if_stub(env, "PreToolUse")
    shown = model_api.wait_for(_result_for("Agent"), what="the Agent call's tool_result")
    wait_for_hook(env, "Stop")
    return _tool_result(shown, "Agent")


def test_interactive_agent_call_becomes_a_card(
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    fake_lich: FakeLich,
    model_api: ModelAPI,
) -> None:
    env = claude_setup()  # Claude Code's own default permission mode (auto in 2.1.3xx)
    with Terminal(claude_code, env, project) as claude:
        result = _open_card(claude, env, model_api)
    opened = fake_lich.wait_for("open")
    argv = opened["argv"]
    assert argv[:4] == ["open", "--kind", "claude", "--subagent"]
    assert argv[argv.index("--prompt") + 1] == AGENT_CALL["prompt"]
    assert argv[-1] == "--json"
    assert "--worktree" not in argv
    assert Path(opened["cwd"]).resolve() == project.resolve()
    # what the model read: the deny verdict, as Claude Code 2.1.328 frames it
    assert result["is_error"] is True
    text = tool_result_text(result)
    assert text.startswith(HOOK_ERROR)
    reason = text[len(HOOK_ERROR) :]
    answer = open_answer()
    assert answer["name"] in reason
    assert "[lich]" in reason
    # the task ran as a card, not natively: no subagent ever asked the model
    assert not [r for r in model_api.model_calls() if _asked_for(AGENT_CALL["prompt"])(r)]


def test_print_mode_agent_call_stays_native(
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    fake_lich: FakeLich,
    model_api: ModelAPI,
) -> None:
    env = claude_setup()
    ran = run_print(claude_code, agent_prompt(), env, project)
    assert ran.returncode == 0, ran.stderr
    [pre] = wait_for_hook(env, "PreToolUse")
    skip_if_stub(env, "PreToolUse")
    assert pre["decision"] != "not-built"
    assert [c["argv"][0] for c in fake_lich.calls()] == []
    # the subagent ran in Claude Code and the model got its native result, not a verdict
    model_api.wait_for(_asked_for(AGENT_CALL["prompt"]), what="the native subagent's prompt")
    result = _tool_result(model_api.wait_for(_result_for("Agent")), "Agent")
    assert not result.get("is_error")
    assert not tool_result_text(result).startswith("PreToolUse:")


def test_a_subagents_own_agent_call_stays_native(
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    fake_lich: FakeLich,
    model_api: ModelAPI,
    tmp_path: Path,
) -> None:
    """A custom agent type runs natively (SPEC §6.1 row 2); its own general-purpose call has
    agent_id (row 1) and must stay native too, although it is interactive and general-purpose."""
    inner = {**AGENT_CALL, "prompt": "Inner work: list the test files."}
    outer = {
        "description": "Relay the work",
        "prompt": "Relay this. " + directive("Agent", inner),
        "subagent_type": "relay",
    }
    # native agents need no permission prompt in acceptEdits (auto mode's check needs Anthropic)
    env = claude_setup(permission_mode="acceptEdits")
    agents = tmp_path / "home" / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "relay.md").write_text(
        "---\nname: relay\ndescription: Passes work on to another agent.\n---\n"
        "You pass the work you get on to another agent.\n"
    )
    with Terminal(claude_code, env, project) as claude:
        claude.wait_ready()
        claude.submit(agent_prompt(outer))
        # the inner subagent asking the model proves the nested call ran natively
        model_api.wait_for(_asked_for(inner["prompt"]), what="the nested subagent's prompt")
        runs = wait_for_hook(env, "PreToolUse", 2)
    skip_if_stub(env, "PreToolUse")
    assert len(runs) == 2
    assert all(r["decision"] != "not-built" for r in runs)
    assert fake_lich.calls() == []


def test_task_stop_on_the_cards_roster_name_closes_it(
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    fake_lich: FakeLich,
    model_api: ModelAPI,
) -> None:
    env = claude_setup()
    name = str(open_answer()["name"])
    with Terminal(claude_code, env, project) as claude:
        _open_card(claude, env, model_api)
        claude.submit(task_stop_prompt(name))
        shown = model_api.wait_for(_result_for("TaskStop"), what="the TaskStop call's tool_result")
        wait_for_hook(env, "Stop", 2)
    result = _tool_result(shown, "TaskStop")
    stops = [r for r in hook_runs(env, "PreToolUse")][1:]
    if not stops and "No task found with ID" in tool_result_text(result):
        pytest.xfail(
            "Claude Code validates TaskStop's task_id against its own tasks before any "
            f"PreToolUse hook runs: the hook never saw {name!r} ({tool_result_text(result)!r})"
        )
    closed = fake_lich.wait_for("close")
    assert closed["argv"] == ["close", name]
    assert json.dumps(result)  # the model read lich's outcome
    assert "Successfully stopped task" in tool_result_text(result)
