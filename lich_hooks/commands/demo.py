"""`lich-hook demo`: every shipped registration, run the way its harness runs it,
against the built-in stand-in for lich.

For each harness in the registry (settings/harnesses.py), in its order, it
runs the entry's scenarios (settings/scenarios.py) and prints the command,
what lich received, and what the harness saw (stdout and exit code). It
needs nothing but this package: the stand-in listens on a free loopback port
and the state directory is temporary.
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
from lich_hooks.settings.scenarios import Demo
from lich_hooks.standin.server import Received, StandIn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.commands.environment import Environment
    from lich_hooks.settings.scenarios import Scenario

CARD = "demo-card"
CALLS = "lich-calls.jsonl"


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


def registered_commands() -> dict[str, set[str]]:
    """Every command string each shipped registration file or module runs, per harness."""
    return {key: harness.shipped_commands() for key, harness in HARNESSES.items()}


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


def run(environment: Environment, extra: list[tuple[str, Scenario]] | None = None) -> ExitCode:
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
        demo = Demo(tmp, _standin_lich(tmp))
        every = [(key, s) for key, harness in HARNESSES.items() for s in harness.scenarios(demo)]
        for key, scenario in every + (extra or []):
            harness = HARNESSES[key]
            path = harness.shown_as
            if key != current:
                current = key
                out("")
                out(f"== {harness.title} ({path})")
            command = registrations.command(scenario.event, key)
            if command not in commands[key]:
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
