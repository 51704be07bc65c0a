"""`lich-hook demo`: every shipped registration, run the way its harness runs it,
against the built-in stand-in for lich.

For each harness it prints the command, what lich received, and what the
harness saw (stdout and exit code). It needs nothing but this package: the
stand-in listens on a free loopback port and the state directory is temporary.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

from lich_hooks import registrations
from lich_hooks.commands.exit_codes import ExitCode
from lich_hooks.settings.harnesses import HARNESSES
from lich_hooks.settings.ours import our_commands
from lich_hooks.standin.server import Received, StandIn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.commands.environment import Environment

CARD = "demo-card"
CALLS = "lich-calls.jsonl"


class Scenario:
    """One hook run: which harness, what it sends on stdin, which extra variables."""

    def __init__(
        self,
        harness: str,
        event: str,
        provider: str,
        payload: dict[str, object],
        note: str = "",
        env: dict[str, str] | None = None,
    ) -> None:
        self.harness = harness
        self.event = event
        self.provider = provider
        self.payload = payload
        self.note = note
        self.env = env or {}


CLAUDE_SESSION = "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10"
CODEX_SESSION = "018f9c5a-0000-7000-9a3b-1c2d3e4f5c01"
CRUSH_SESSION = "db3492a0-4a6b-4335-8c0b-d4cc43fc4cb0"
ANTIGRAVITY_CONVERSATION = "7bb32ee5-e8e3-42cd-a13c-849723bc4e57"


# A stand-in `lich` executable for the agent-cards scenarios: it notes each
# argv beside itself (so the demo can show what lich was asked), `open`
# answers that the worker has the task (delivery pending), `close` succeeds.
STANDIN_LICH = """
import json, os, sys
with open(os.path.join(os.path.dirname(__file__), CALLS), "a") as calls:
    calls.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:2] == ["open"]:
    delivery = {"ticket": "t-7", "target": "fix-flaky-7", "status": "pending", "answer": None}
    print(json.dumps({"id": "s-7", "label": "Fix the flaky test", "name": "fix-flaky-7",
                      "path": os.getcwd(), "kind": "claude", "delivery": delivery}))
"""


def _standin_lich(directory: str) -> str:
    """An executable `lich`: a sh launcher, since a #! line cannot hold a path with spaces."""
    script = os.path.join(directory, "lich.py")
    with open(script, "w") as handle:
        handle.write(f"CALLS = {CALLS!r}\n{STANDIN_LICH}")
    path = os.path.join(directory, "lich")
    with open(path, "w") as handle:
        handle.write(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(script)} "$@"\n')
    os.chmod(path, 0o700)
    return path


def scenarios(cwd: str) -> list[Scenario]:
    claude_base = {"session_id": CLAUDE_SESSION, "transcript_path": "", "cwd": cwd}
    card_env = {
        "LICH_BIN": _standin_lich(cwd),
        "LICH_SUBAGENT_DEPTH": "0",
        "CLAUDE_CODE_SESSION_ATTENDED": "1",
    }

    def stop(message: str) -> dict[str, object]:
        """Claude Code's Stop payload for a turn that ended with `message`."""
        return {
            **claude_base,
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": message,
            "background_tasks": [],
        }

    agent_call = {
        **claude_base,
        "permission_mode": "auto",
        "hook_event_name": "PreToolUse",
        "tool_use_id": "toolu_01DemoFl4ky",
    }
    return [
        Scenario(
            "claude",
            "SessionStart",
            "claude",
            {**claude_base, "hook_event_name": "SessionStart", "source": "startup"},
            "a new conversation in the card",
        ),
        Scenario(
            "claude",
            "Stop",
            "claude",
            stop("Done."),
            "a top-level session's turn ends: not a worker, nothing to answer",
            env={"LICH_SUBAGENT_DEPTH": "0", "CLAUDE_CODE_SESSION_ATTENDED": "1"},
        ),
        Scenario(
            "claude",
            "PreToolUse",
            "claude",
            {
                **agent_call,
                "tool_name": "Agent",
                "tool_input": {
                    "description": "Fix the flaky test",
                    "prompt": "Find why test_login is flaky and fix it.",
                    "subagent_type": "general-purpose",
                },
            },
            "a general-purpose subagent runs as a lich card (stand-in lich: pending)",
            env=card_env,
        ),
        Scenario(
            "claude",
            "PreToolUse",
            "claude",
            {**agent_call, "tool_name": "TaskStop", "tool_input": {"task_id": "fix-flaky-7"}},
            "TaskStop names that worker: lich closes it",
            env=card_env,
        ),
        Scenario(
            "claude",
            "Stop",
            "claude",
            stop("Rewrote docs/cli.md; the tests pass."),
            "a worker's turn ends: its last message answers the task",
            env={"LICH_SUBAGENT_DEPTH": "1", "CLAUDE_CODE_SESSION_ATTENDED": "1"},
        ),
        Scenario(
            "codex",
            "SessionStart",
            "codex",
            {
                "session_id": CODEX_SESSION,
                "transcript_path": None,
                "cwd": cwd,
                "hook_event_name": "SessionStart",
                "model": "gpt-5.5",
                "permission_mode": "default",
                "source": "startup",
            },
            "Codex starts a session",
        ),
        Scenario(
            "crush",
            "PreToolUse",
            "crush",
            {
                "session_id": CRUSH_SESSION,
                "cwd": cwd,
                "hook_event_name": "PreToolUse",
                "tool_name": "bash",
                "tool_input": {"command": "ls"},
            },
            "first tool call: reports the session",
        ),
        Scenario(
            "crush",
            "PreToolUse",
            "crush",
            {
                "session_id": CRUSH_SESSION,
                "cwd": cwd,
                "hook_event_name": "PreToolUse",
                "tool_name": "view",
                "tool_input": {"file_path": "README.md"},
            },
            "next tool call: already reported, no request",
        ),
        Scenario(
            "antigravity",
            "PreInvocation",
            "antigravity",
            {"conversationId": ANTIGRAVITY_CONVERSATION, "hook_event_name": "PreInvocation"},
            "first model call: reports the conversation",
        ),
        Scenario(
            "antigravity",
            "PreInvocation",
            "antigravity",
            {"conversationId": ANTIGRAVITY_CONVERSATION, "hook_event_name": "PreInvocation"},
            "next model call: already reported, no request",
        ),
    ]


def _shown_as(harness: str) -> tuple[str, str]:
    """The title and file a scenario's harness is shown under."""
    from lich_hooks import module_harnesses

    module = module_harnesses.MODULES.get(harness)
    if module is not None:
        kind = "plugin" if module.key == "opencode" else "extension"
        return module.title, f"{kind} {module.file_name}, run as the {kind} runs it"
    return HARNESSES[harness].title, HARNESSES[harness].shipped_file


def registered_commands() -> dict[str, set[str]]:
    """Every command string each shipped registration file or module runs."""
    from lich_hooks import module_harnesses

    files = registrations.files()
    commands = {
        key: set(our_commands(files[harness.shipped_file])) for key, harness in HARNESSES.items()
    }
    for key, module in module_harnesses.MODULES.items():
        command = module_harnesses.command_of(module_harnesses.template(module))
        commands[key] = {command} if command else set()
    return commands


def run_command(
    command: str,
    payload: bytes,
    env: dict[str, str],
    cwd: str,
) -> subprocess.CompletedProcess[bytes]:
    """Run a registration's command the way the harnesses do: `sh -c`, payload on stdin."""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=payload,
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=30,
        check=False,
    )


def _log_lines(path: str) -> int:
    try:
        with open(path, "rb") as handle:
            return handle.read().count(b"\n")
    except OSError:
        return 0


def wait_for_log(path: str, count: int, timeout: float = 5.0) -> None:
    """Wait until `count` runs have logged: a run that reports logs after its send."""
    deadline = time.monotonic() + timeout
    while _log_lines(path) < count and time.monotonic() < deadline:
        time.sleep(0.01)


def run(environment: Environment, extra: list[Scenario] | None = None) -> ExitCode:
    """OK when every harness behaved (exit 0, no stderr, every command shipped)."""
    out = environment.out
    bin_dir = os.path.dirname(os.path.abspath(environment.executable))
    commands = registered_commands()
    problems = 0
    with tempfile.TemporaryDirectory(prefix="lich-demo-") as tmp, StandIn() as lich:
        log_path = os.path.join(tmp, "hook.log")
        base_env = {
            **{
                k: v
                for k, v in environment.environ.items()
                if not k.startswith(("LICH_", "CLAUDE_"))
            },
            **lich.env(CARD),
            "PATH": bin_dir + os.pathsep + environment.environ.get("PATH", ""),
            "LICH_HOOK_STATE_DIR": os.path.join(tmp, "state"),
            "LICH_HOOK_LOG": log_path,
        }
        out(f"lich stand-in listening on 127.0.0.1:{lich.port} (card {CARD})")
        runs = 0
        current = None
        for scenario in scenarios(tmp) + module_scenarios() + (extra or []):
            name, path = _shown_as(scenario.harness)
            if scenario.harness != current:
                current = scenario.harness
                out("")
                out(f"== {name} ({path})")
            command = registrations.command(scenario.event, scenario.provider)
            if command not in commands[scenario.harness]:
                out(f"  ! {command} is not in {path}")
                problems += 1
                continue
            before = len(lich.received)
            calls_before = _lich_calls(tmp)
            payload = json.dumps(scenario.payload).encode()
            proc = run_command(command, payload, {**base_env, **scenario.env}, tmp)
            runs += 1
            wait_for_log(log_path, runs)
            new = lich.received[before:]
            out(f"  $ {command}    # {scenario.note}")
            out(f"    stdin:         {_short(payload.decode())}")
            for line in [_describe(received) for received in new] or ["(nothing)"]:
                out(f"    lich received: {line}")
            for argv in _lich_calls(tmp)[len(calls_before) :]:
                out(f"    lich CLI ran:  {_short(shlex.join(['lich', *argv]))}")
            seen = proc.stdout.decode(errors="replace")
            out(
                f"    harness saw:   exit {proc.returncode}, stdout {seen!r}"
                + (f", stderr {proc.stderr.decode(errors='replace')!r}" if proc.stderr else "")
            )
            if proc.returncode != 0 or proc.stderr:
                problems += 1
    out("")
    out("all harnesses behaved" if problems == 0 else f"{problems} problem(s) above")
    return ExitCode.OK if problems == 0 else ExitCode.PROBLEM_FOUND


def _lich_calls(directory: str) -> list[list[str]]:
    """Every argv the stand-in `lich` executable was run with, in order."""
    try:
        with open(os.path.join(directory, CALLS), encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except OSError:
        return []


def _describe(received: Received) -> str:
    return (
        f"POST /{received.endpoint} {received.body.decode(errors='replace')} -> {received.status}"
        + (f" ({received.reason})" if received.reason else "")
    )


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# What the opencode and omp modules send (no Node or Bun needed to show it).
OPENCODE_SESSION = "ses_dd3c012a1ffeI0xakA9Xos0n4j"
OMP_SESSION = "01a22c51-6760-7535-8f18-3c1900286b44"
OMP_NEW_SESSION = "01a22c51-d79d-7651-8660-5da4b3bc5f86"

OMP_SESSION = "01a22c51-6760-7535-8f18-3c1900286b44"
OMP_NEW_SESSION = "01a22c51-d79d-7651-8660-5da4b3bc5f86"


def module_scenarios() -> list[Scenario]:
    """What each module sends, run as the module runs it (no Node or Bun needed)."""
    from lich_hooks import module_harnesses

    return [
        Scenario(
            "opencode",
            module_harnesses.EVENT,
            "opencode",
            {"session_id": OPENCODE_SESSION},
            "session.created for a top-level session (a subagent's never reports)",
        ),
        Scenario(
            "opencode",
            module_harnesses.EVENT,
            "opencode",
            {"session_id": OPENCODE_SESSION},
            "`opencode run -c` (no creation event): its first message reports the session",
        ),
        Scenario(
            "omp",
            module_harnesses.EVENT,
            "omp",
            {"session_id": OMP_SESSION},
            "session_start (a task subagent's never reports)",
        ),
        Scenario(
            "omp",
            module_harnesses.EVENT,
            "omp",
            {"session_id": OMP_NEW_SESSION},
            "session_switch after /new (also /resume, /fork)",
        ),
    ]
