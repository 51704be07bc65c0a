"""The real Claude Code's subagent calls: a card when interactive, native everywhere else."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.real_clients.conftest import ClaudeEnv
from tests.real_clients.support.agent_calls import (
    AGENT_CALL,
    agent_prompt,
    directive,
    skip_if_stub,
    task_stop_prompt,
)
from tests.real_clients.support.claude import (
    SINCE,
    Terminal,
    hook_runs,
    run_print,
    subagent_tool,
    wait_for_hook,
)
from tests.real_clients.support.clients import Client
from tests.real_clients.support.fake_lich import FakeLich, open_answer
from tests.real_clients.support.model_api import (
    TASK_ID,
    ModelAPI,
    Request,
    messages_tool_results,
    tool_result_text,
)

pytestmark = pytest.mark.real_client

# How Claude Code frames a deny reason for the model (older releases give the bare reason)
HOOK_ERROR = "PreToolUse:{tool} hook error: "
CONTEXT = "PreToolUse:{tool} hook additional context: "


def _asked_for(prompt: str) -> Callable[[Request], bool]:
    """A model request whose prompt (first user text) is `prompt`: a subagent running natively."""

    def match(request: Request) -> bool:
        messages = request.body.get("messages") or []
        first = messages[0].get("content") if messages else None
        if isinstance(first, list):
            return prompt in [b.get("text") for b in first if isinstance(b, dict)]
        return first == prompt

    return match


def _results_of(request: Request, tool: str) -> list[dict[str, Any]]:
    """The tool_result blocks answering the model's `tool` calls in this request."""
    uses = {
        b.get("id")
        for m in request.body.get("messages") or []
        if m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == tool
    }
    return [r for r in messages_tool_results(request.body) if r.get("tool_use_id") in uses]


def _result_for(tool: str) -> Callable[[Request], bool]:
    """A model request that shows the model the result of its `tool` call."""
    return lambda request: bool(_results_of(request, tool))


def _tool_result(request: Request, tool: str) -> dict[str, Any]:
    [result] = _results_of(request, tool)
    return result


def _open_card(
    claude: Terminal, env: dict[str, str], model_api: ModelAPI, tool: str = "Agent"
) -> dict[str, Any]:
    """Type the Agent call, wait for its verdict to reach the model; the tool_result it got."""
    return _open_card_request(claude, env, model_api, tool)[0]


def _open_card_request(
    claude: Terminal, env: dict[str, str], model_api: ModelAPI, tool: str = "Agent"
) -> tuple[dict[str, Any], Request]:
    """The Agent call's tool_result, and the request that showed it to the model."""
    claude.wait_ready()
    claude.submit(agent_prompt(tool=tool))
    wait_for_hook(env, "PreToolUse")
    skip_if_stub(env, "PreToolUse")
    shown = model_api.wait_for(_result_for(tool), what=f"the {tool} call's tool_result")
    wait_for_hook(env, "Stop")
    return _tool_result(shown, tool), shown


def _hook_context(request: Request, tool: str = "Agent") -> str:
    """The PreToolUse hooks' additional context, as the model got it (a role system message)."""
    texts = []
    for message in request.body.get("messages") or []:
        if message.get("role") != "system":
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"text": content}]
        context = CONTEXT.format(tool=tool)
        texts += [str(b.get("text")) for b in blocks if str(b.get("text")).startswith(context)]
    return "\n".join(texts)


def test_interactive_agent_call_becomes_a_card(
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    fake_lich: FakeLich,
    model_api: ModelAPI,
) -> None:
    env = claude_setup()  # Claude Code's own default permission mode (auto in 2.1.3xx)
    tool = subagent_tool(claude_code)
    with Terminal(claude_code, env, project) as claude:
        result, shown = _open_card_request(claude, env, model_api, tool)
    [pre] = hook_runs(env, "PreToolUse")
    # which rung of the interactive check decided (docs/worker-answer.md): the variable, or
    # on a release without it the claude process itself, found among the hook's ancestors
    if claude_code.at_least(SINCE["session_attended"]):
        assert pre["interactive"] == "CLAUDE_CODE_SESSION_ATTENDED=1"
    else:
        assert re.fullmatch(
            r"claude process \d+: no -p, terminal on stdin", str(pre["interactive"])
        )
    opened = fake_lich.wait_for("open")
    argv = opened["argv"]
    assert argv[:4] == ["open", "--kind", "claude", "--subagent"]
    assert argv[argv.index("--prompt") + 1] == AGENT_CALL["prompt"]
    assert argv[-1] == "--json"
    assert "--worktree" not in argv
    assert Path(opened["cwd"]).resolve() == project.resolve()
    # what the model read: the deny verdict, as this Claude Code frames it
    assert result["is_error"] is True
    text = tool_result_text(result)
    prefix = HOOK_ERROR.format(tool=tool) if claude_code.at_least(SINCE["deny_prefix"]) else ""
    assert text.startswith(prefix)
    reason = text[len(prefix) :]
    answer = open_answer()
    assert reason.startswith("Not an error")
    # the rest reaches the model as the hook's additional context (test_claude_card_moment.py)
    context = _hook_context(shown, tool)
    # the task ran as a card, not natively: no subagent ever asked the model
    assert not [r for r in model_api.model_calls() if _asked_for(AGENT_CALL["prompt"])(r)]
    if not claude_code.at_least(SINCE["deny_context"]):
        # this release drops a deny's additionalContext and sets no
        # CLAUDE_CODE_SESSION_ATTENDED: the hook puts the model's part in the reason instead
        assert context == ""
        context = reason
    assert answer["name"] in context
    assert "[lich]" in context
    # TaskStop cannot reach the hook with a roster name (see the TaskStop test below), so the
    # model is also told the lich command that stops the worker
    assert f"`lich close {answer['name']}`" in context
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
    tool = subagent_tool(claude_code)
    ran = run_print(claude_code, agent_prompt(tool=tool), env, project)
    assert ran.returncode == 0, ran.stderr
    [pre] = wait_for_hook(env, "PreToolUse")
    skip_if_stub(env, "PreToolUse")
    assert pre["decision"] == "native:not-interactive"
    # every release sets CLAUDE_CODE_ENTRYPOINT (sdk-cli under -p); the newer variable first
    attended = claude_code.at_least(SINCE["session_attended"])
    evidence = "CLAUDE_CODE_SESSION_ATTENDED=0" if attended else "CLAUDE_CODE_ENTRYPOINT=sdk-cli"
    assert pre["interactive"] == evidence
    assert [c["argv"][0] for c in fake_lich.calls()] == []
    # the subagent ran in Claude Code and the model got its native result, not a verdict
    model_api.wait_for(_asked_for(AGENT_CALL["prompt"]), what="the native subagent's prompt")
    result = _tool_result(model_api.wait_for(_result_for(tool)), tool)
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
    """A custom agent type runs natively (docs/agent-cards.md); its own general-purpose call has
    agent_id (row 1) and must stay native too, although it is interactive and general-purpose."""
    inner = {**AGENT_CALL, "prompt": "Inner work: list the test files."}
    tool = subagent_tool(claude_code)
    outer = {
        "description": "Relay the work",
        "prompt": "Relay this. " + directive(tool, inner),
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
        claude.submit(agent_prompt(outer, tool))
        relay = model_api.wait_for(_asked_for(outer["prompt"]), what="the relay's prompt")
        if tool not in relay.tool_names():
            pytest.skip(f"Claude Code {claude_code.release} gives a subagent no {tool} tool")
        # the inner subagent asking the model proves the nested call ran natively
        model_api.wait_for(_asked_for(inner["prompt"]), what="the nested subagent's prompt")
        runs = wait_for_hook(env, "PreToolUse", 2)
    skip_if_stub(env, "PreToolUse")
    # 2.1.332 may replay the outer call once its background result comes back: each main-loop
    # call is the relay type, each of the relay's own is a subagent's
    decisions = [r["decision"] for r in runs]
    assert decisions[0] == "native:agent-type"
    assert set(decisions) == {"native:agent-type", "native:subagent-call"}
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
        _open_card(claude, env, model_api, subagent_tool(claude_code))
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
    assert "Successfully stopped task" in tool_result_text(result)


def test_task_stop_of_claude_codes_own_task_is_left_to_it(
    claude_code: Client,
    claude_setup: ClaudeEnv,
    project: Path,
    fake_lich: FakeLich,
    model_api: ModelAPI,
) -> None:
    """The TaskStop registration does reach the hook for ids Claude Code knows; a task that is
    not a lich worker gets no verdict and Claude Code stops it itself."""
    env = claude_setup()
    background = directive(
        "Bash", {"command": "sleep 120", "run_in_background": True, "description": "Wait"}
    )
    ran = run_print(claude_code, background + " " + task_stop_prompt(TASK_ID), env, project)
    assert ran.returncode == 0, ran.stderr
    [pre] = wait_for_hook(env, "PreToolUse")
    skip_if_stub(env, "PreToolUse")
    assert pre["decision"] == "native:not-our-task"
    assert fake_lich.calls() == []
    result = _tool_result(model_api.wait_for(_result_for("TaskStop")), "TaskStop")
    assert not result.get("is_error")
    assert "Successfully stopped task" in tool_result_text(result)
