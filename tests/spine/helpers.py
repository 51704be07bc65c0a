"""What the spine tests share: docs/harnesses.md's stdout table written out independently
of lich_hooks.base.harnesses (so the code is checked against docs/harnesses.md, not itself),
and a few sample payloads shaped like each harness's."""

from __future__ import annotations

from lich_hooks.base.harnesses import REGISTRATIONS, ROUTES, SESSION_START, route
from lich_hooks.human.settings.ours import command_argv
from lich_hooks.human.settings.registry import SETTINGS


def _reporting(key: str) -> str:
    """The event a script-hook harness's registration reports its session on."""
    for command in sorted(SETTINGS[key].shipped_commands()):
        argv = command_argv(command)
        found = route(key, argv[1]) if argv else None
        if argv and found is not None and found.job == SESSION_START:
            return argv[1]
    raise AssertionError(f"{key} registers no session-start event")


# The event each script-hook harness reports its session on (docs/session-start.md).
REPORTING = {key: _reporting(key) for key in REGISTRATIONS}
# Providers with no registration of their own: modules run their command, or none ships.
UNREGISTERED = tuple(key for key in ROUTES if key not in REGISTRATIONS)

EVENTS = (
    "SessionStart",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "StopFailure",
    "PreInvocation",
    "PostInvocation",
    "UserPromptSubmit",
    "SessionEnd",
    "NoSuchEvent",
)

SID = "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10"
CONV = "7bb32ee5-e8e3-42cd-a13c-849723bc4e57"


def expected_stdout(provider: str, event: str) -> bytes:
    """docs/harnesses.md when we have no verdict: Antigravity needs bytes, everyone else silence."""
    if provider != "antigravity":
        return b""
    return {
        "PreInvocation": b"{}",
        "PostInvocation": b"{}",
        "PostToolUse": b"{}",
        "PreToolUse": b'{"decision":"allow"}',
        "Stop": b'{"decision":""}',
    }.get(event, b"")


def payload(provider: str, event: str, conversation: str = SID) -> dict[str, object]:
    """A payload shaped like the one `provider` sends on `event` (no Agent call)."""
    if provider == "antigravity":
        return {"conversationId": conversation, "hook_event_name": event}
    body: dict[str, object] = {
        "session_id": conversation,
        "cwd": "/tmp",
        "hook_event_name": event,
    }
    if event == "SessionStart":
        body.update(source="startup", transcript_path="/tmp/t.jsonl")
    if event in ("PreToolUse", "PostToolUse"):
        body.update(tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="toolu_1")
    return body
