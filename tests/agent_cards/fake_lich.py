"""A stand-in `lich` executable for agent-card tests.

The test writes this program into its tmp directory as an executable script
(`FakeLich.install`). Each run appends one JSON line to $FAKE_LICH_CALLS
(argv without the program, cwd, pid) and then behaves as the test's script
file ($FAKE_LICH_SCRIPT, a JSON object keyed by subcommand) tells it:

    {"open": {"json": {...}, "stdout": "...", "stderr": "...", "exit": 0,
              "pidfile": "...", "wait_for": "...", "done_file": "...", "linger": "..."}}

`json` is printed JSON-encoded with every "$PID" replaced by the process id
(so parallel opens get distinct roster names); `wait_for` blocks until that
file exists (up to 60 s), which is how a test holds an open mid-flight;
`linger` leaves a helper process (its pid in that file) holding stdout and
stderr open after lich exits.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path

PROGRAM = r"""
import json, os, sys, time
record = {"argv": sys.argv[1:], "cwd": os.getcwd(), "pid": os.getpid()}
line = (json.dumps(record) + "\n").encode()
fd = os.open(os.environ["FAKE_LICH_CALLS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
os.write(fd, line)
os.close(fd)
with open(os.environ["FAKE_LICH_SCRIPT"]) as handle:
    script = json.load(handle)
step = script.get(sys.argv[1] if len(sys.argv) > 1 else "", {})
if "pidfile" in step:
    # written aside and renamed, so a test waiting for the file never reads it half-written
    with open(step["pidfile"] + ".tmp", "w") as handle:
        handle.write(str(os.getpid()))
    os.replace(step["pidfile"] + ".tmp", step["pidfile"])
if "wait_for" in step:
    deadline = time.monotonic() + 60
    while not os.path.exists(step["wait_for"]) and time.monotonic() < deadline:
        time.sleep(0.02)
if "linger" in step:
    # a helper lich leaves behind, holding the inherited stdout and stderr open
    import subprocess
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(step["linger"], "w") as handle:
        handle.write(str(helper.pid))
out = step.get("stdout", "")
if "json" in step:
    out = json.dumps(step["json"]).replace("$PID", str(os.getpid()))
sys.stdout.write(out)
sys.stdout.flush()
sys.stderr.write(step.get("stderr", ""))
sys.stderr.flush()
if "done_file" in step:
    with open(step["done_file"], "w") as handle:
        handle.write("done")
sys.exit(step.get("exit", 0))
"""


class FakeLich:
    def __init__(self, tmp: Path) -> None:
        self.dir = tmp / "fake-lich"
        self.dir.mkdir(exist_ok=True)
        self.bin = self.dir / "lich"
        self.calls_path = self.dir / "calls.jsonl"
        self.script_path = self.dir / "script.json"
        self.bin.write_text(f"#!{sys.executable}\n{PROGRAM}")
        self.bin.chmod(0o755)
        self.script()

    def script(self, **steps: dict[str, object]) -> None:
        self.script_path.write_text(json.dumps(steps))

    def env(self) -> dict[str, str]:
        return {
            "LICH_BIN": str(self.bin),
            "FAKE_LICH_CALLS": str(self.calls_path),
            "FAKE_LICH_SCRIPT": str(self.script_path),
        }

    def calls(self) -> list[dict[str, object]]:
        if not self.calls_path.exists():
            return []
        lines = self.calls_path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def argvs(self) -> list[list[str]]:
        return [list(call["argv"]) for call in self.calls()]  # type: ignore[call-overload]


def session(
    status: str | None,
    *,
    name: str = "fix-login-a1",
    label: str = "Fix login",
    path: str = "/work/project",
    answer: str | None = None,
) -> dict[str, object]:
    """What `lich open --json` prints: the session, plus delivery unless status is None."""
    printed: dict[str, object] = {
        "id": f"sess-{name}",
        "label": label,
        "name": name,
        "path": path,
        "kind": "claude",
    }
    if status is not None:
        printed["delivery"] = {
            "ticket": "t-1",
            "target": name,
            "status": status,
            "answer": answer,
        }
    return printed


# A call of its own each time (Claude Code never repeats an id): two runs for one id are
# the two routes' runs of one call, of which one acts (lich_hooks/hook/claim.py). The
# first is the id the slug tests name.
TOOL_USE_IDS = (f"toolu_{n:x}_01XyZ_9Q" if n else "toolu_01XyZ_9Q" for n in itertools.count())


def agent_payload(
    cwd: Path | str, tool: str = "Agent", /, **tool_input: object
) -> dict[str, object]:
    """The PreToolUse payload Claude Code 2.1.328 sends for a subagent call (docs/harnesses.md)."""
    fields: dict[str, object] = {
        "description": "Fix the login bug",
        "prompt": "Find and fix the login bug.",
        "subagent_type": "general-purpose",
    }
    fields.update(tool_input)
    return {
        "session_id": "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": str(cwd),
        "prompt_id": "p-1",
        "permission_mode": "auto",
        "effort": {"level": "medium"},
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {k: v for k, v in fields.items() if v is not None},
        "tool_use_id": next(TOOL_USE_IDS),
    }


def stop_payload(cwd: Path | str, **tool_input: object) -> dict[str, object]:
    return {
        "session_id": "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10",
        "cwd": str(cwd),
        "permission_mode": "auto",
        "hook_event_name": "PreToolUse",
        "tool_name": "TaskStop",
        "tool_input": dict(tool_input),
        "tool_use_id": "toolu_stop_0001",
    }


class Deny:
    """A deny split by reader (docs/agent-cards.md): `person` (systemMessage, never sent to
    the model), `reason` (the error line both read), `context` (additionalContext, the model's
    only); `model` is what the model reads, the reason then the context."""

    def __init__(self, stdout: bytes) -> None:
        verdict = json.loads(stdout)
        assert set(verdict) <= {"hookSpecificOutput", "systemMessage"}, verdict
        out = verdict["hookSpecificOutput"]
        assert set(out) - {"additionalContext"} == {
            "hookEventName",
            "permissionDecision",
            "permissionDecisionReason",
        }
        assert out["hookEventName"] == "PreToolUse"
        assert out["permissionDecision"] == "deny"
        self.person: str | None = verdict.get("systemMessage")
        self.reason: str = out["permissionDecisionReason"]
        self.context: str | None = out.get("additionalContext")
        for part in (self.person, self.reason, self.context):
            assert part is None or (isinstance(part, str) and part), verdict
        self.model: str = self.reason + ("\n" + self.context if self.context else "")


def reason(stdout: bytes) -> str:
    """Everything the model reads from a deny (its reason, then its additional context),
    asserting the deny's shape."""
    return Deny(stdout).model


def toast(stdout: bytes) -> str:
    verdict = json.loads(stdout)
    assert list(verdict) == ["systemMessage"]
    message = verdict["systemMessage"]
    assert isinstance(message, str)
    return message


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
