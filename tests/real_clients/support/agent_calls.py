"""Scripted prompts: what the model is made to call, and how tests read the hooks' decisions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.real_clients.support.claude import hook_runs

AGENT_CALL: dict[str, Any] = {
    "description": "Find the flaky test",
    "prompt": "Find which test in this project is flaky, and why.",
    "subagent_type": "general-purpose",
}
STUB_DECISION = "not-built"


def directive(tool: str, tool_input: dict[str, Any]) -> str:
    """The text that makes the scripted model call `tool` (see support/model_api.py)."""
    return f"[[tool:{tool} {json.dumps(tool_input)}]]"


def agent_prompt(call: dict[str, Any] | None = None, tool: str = "Agent") -> str:
    """`tool`: `Agent`, or `Task` for a Claude Code older than 2.1.63."""
    return f"Please delegate this. {directive(tool, call or AGENT_CALL)}"


def task_stop_prompt(task_id: str) -> str:
    """TaskStop is a deferred tool in 2.1.3xx: the model loads it with ToolSearch first."""
    return (
        "Stop that task. "
        + directive("ToolSearch", {"query": "select:TaskStop", "max_results": 1})
        + " "
        + directive("TaskStop", {"task_id": task_id})
    )


def skip_if_stub(env: dict[str, str], event: str) -> None:
    """The job behind `event` is still the spine's stub on this branch: nothing to prove yet."""
    decisions = [r.get("decision") for r in hook_runs(env, event)]
    if STUB_DECISION in decisions:
        job = "agent cards (PreToolUse)" if event == "PreToolUse" else "worker answer (Stop)"
        pytest.skip(f"the {job} job is still a stub on this branch (decision {STUB_DECISION!r})")
