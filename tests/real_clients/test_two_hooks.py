"""How the real Claude Code runs two hooks registered for one event, which is what the two
routes' claim (lich_hooks/hook/claim.py) is designed to (docs/install.md, "Both routes at
once"):

- the two run side by side, not one after the other: both start before either ends;
- on PreToolUse, one deny and one silent hook deny the call, with the deny's reason.

Each hook here is a small sh script that logs when it starts and ends.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.real_clients.support.agent_calls import agent_prompt
from tests.real_clients.support.claude import claude_env, run_print, seed_home, subagent_tool
from tests.real_clients.support.clients import Client
from tests.real_clients.support.model_api import ModelAPI

pytestmark = pytest.mark.real_client

REASON = "lich: opened this task as a card"


def _hook(folder: Path, name: str, stdout: str = "", sleep: float = 1.0) -> str:
    script = folder / f"{name}.sh"
    log = folder / "runs.log"
    said = f"printf '%s' '{stdout}'" if stdout else ":"
    script.write_text(
        "#!/bin/sh\n"
        f'event=$(cat | tr -d "\\n" | sed "s/.*hook_event_name\\":\\"\\([A-Za-z]*\\).*/\\1/")\n'
        f'echo "$event {name} start $(date +%s.%N)" >> {log}\n'
        f"sleep {sleep}\n"
        f'echo "$event {name} end $(date +%s.%N)" >> {log}\n'
        f"{said}\n"
    )
    script.chmod(0o755)
    return str(script)


def _runs(folder: Path) -> dict[tuple[str, str], dict[str, float]]:
    found: dict[tuple[str, str], dict[str, float]] = {}
    for line in (folder / "runs.log").read_text().splitlines():
        event, name, what, when = line.split()
        found.setdefault((event, name), {})[what] = float(when)
    return found


def test_two_hooks_for_one_event_run_side_by_side_and_one_deny_wins(
    claude_code: Client, tmp_path: Path, project: Path, model_api: ModelAPI
) -> None:
    folder = tmp_path / "hooks"
    folder.mkdir()
    home = tmp_path / "home"
    seed_home(home, project, hooks=False)
    deny = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": REASON,
            }
        }
    )

    def group(*commands: str, matcher: str | None = None) -> list[dict[str, object]]:
        handlers = [{"type": "command", "command": c, "timeout": 30} for c in commands]
        return [{**({"matcher": matcher} if matcher else {}), "hooks": handlers}]

    tool = subagent_tool(claude_code)
    settings = {
        "hooks": {
            "SessionStart": group(_hook(folder, "a"), _hook(folder, "b")),
            "Stop": group(_hook(folder, "c"), _hook(folder, "d")),
            "PreToolUse": group(
                _hook(folder, "deny", deny, sleep=1.0),
                _hook(folder, "silent", sleep=0.2),
                matcher=tool,
            ),
        }
    }
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    env = claude_env(tmp_path, home, model_api.base_url)
    started = time.monotonic()
    ran = run_print(claude_code, agent_prompt(tool=tool), env, project)
    print(ran.stdout, ran.stderr, f"{time.monotonic() - started:.1f} s")
    runs = _runs(folder)
    print(json.dumps({" ".join(k): v for k, v in runs.items()}, indent=1))
    for event, first, second in (("SessionStart", "a", "b"), ("Stop", "c", "d")):
        one, two = runs[(event, first)], runs[(event, second)]
        # side by side: each started before the other ended
        assert one["start"] < two["end"] and two["start"] < one["end"], (event, one, two)
    denied, silent = runs[("PreToolUse", "deny")], runs[("PreToolUse", "silent")]
    assert denied["start"] < silent["end"] and silent["start"] < denied["end"]
    # one deny beside one silent hook: the call is denied, and the model reads the reason
    results = [
        block
        for request in model_api.model_calls()
        for message in request.body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    print(json.dumps(results, indent=1)[:2000])
    assert results and all(REASON in json.dumps(block) for block in results)
