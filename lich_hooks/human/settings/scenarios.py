"""What `lich-hook demo` runs per harness: payloads for `lich-hook <event> <key>`, which demo checks
the shipped file or module really runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from lich_hooks.human.settings import modules


@dataclass(eq=False)
class Demo:
    """What the scenarios may use: the demo's folder and its stand-in `lich` executable."""

    cwd: str
    lich_bin: str


@dataclass(eq=False)
class Scenario:
    """One hook run: its event, what the harness sends on stdin, which extra variables."""

    event: str
    payload: dict[str, object]
    note: str = ""
    env: dict[str, str] = field(default_factory=dict)


CLAUDE_SESSION = "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10"
CODEX_SESSION = "018f9c5a-0000-7000-9a3b-1c2d3e4f5c01"
CRUSH_SESSION = "db3492a0-4a6b-4335-8c0b-d4cc43fc4cb0"
ANTIGRAVITY_CONVERSATION = "7bb32ee5-e8e3-42cd-a13c-849723bc4e57"


def claude(demo: Demo) -> list[Scenario]:
    """A session, a non-worker and a worker Stop, an Agent call and its TaskStop."""
    claude_base = {"session_id": CLAUDE_SESSION, "transcript_path": "", "cwd": demo.cwd}
    top = {"LICH_SUBAGENT_DEPTH": "0", "CLAUDE_CODE_SESSION_ATTENDED": "1"}
    card_env = {"LICH_BIN": demo.lich_bin, **top}

    def stop(message: str) -> dict[str, object]:
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
            "SessionStart",
            {**claude_base, "hook_event_name": "SessionStart", "source": "startup"},
            "A conversation starts in a lich card.",
        ),
        Scenario(
            "Stop",
            stop("Done."),
            "A turn ends in a top-level session: it is no worker, so nothing answers.",
            env=top,
        ),
        Scenario(
            "PreToolUse",
            {
                **agent_call,
                "tool_name": "Agent",
                "tool_input": {
                    "description": "Fix the flaky test",
                    "prompt": "Find why test_login is flaky and fix it.",
                    "subagent_type": "general-purpose",
                },
            },
            "The model starts a general-purpose subagent; lich takes the task as a card.",
            env=card_env,
        ),
        Scenario(
            "PreToolUse",
            {**agent_call, "tool_name": "TaskStop", "tool_input": {"task_id": "fix-flaky-7"}},
            "The model stops that worker with TaskStop.",
            env=card_env,
        ),
        Scenario(
            "Stop",
            stop("Rewrote docs/cli.md; the tests pass."),
            "A worker's turn ends: its last message is the answer to its task.",
            env={"LICH_SUBAGENT_DEPTH": "1", "CLAUDE_CODE_SESSION_ATTENDED": "1"},
        ),
    ]


def codex(demo: Demo) -> list[Scenario]:
    """A session starts."""
    return [
        Scenario(
            "SessionStart",
            {
                "session_id": CODEX_SESSION,
                "transcript_path": None,
                "cwd": demo.cwd,
                "hook_event_name": "SessionStart",
                "model": "gpt-5.5",
                "permission_mode": "default",
                "source": "startup",
            },
            "A Codex session starts in a lich card.",
        ),
    ]


def crush(demo: Demo) -> list[Scenario]:
    """The first tool call reports the session; the next one sends nothing."""
    call = {"session_id": CRUSH_SESSION, "cwd": demo.cwd, "hook_event_name": "PreToolUse"}
    return [
        Scenario(
            "PreToolUse",
            {**call, "tool_name": "bash", "tool_input": {"command": "ls"}},
            "The session's first tool call.",
        ),
        Scenario(
            "PreToolUse",
            {**call, "tool_name": "view", "tool_input": {"file_path": "README.md"}},
            "The next tool call: the session was already reported.",
        ),
    ]


def antigravity(demo: Demo) -> list[Scenario]:
    """The first model call reports the conversation; the next one sends nothing."""
    call: dict[str, object] = {
        "conversationId": ANTIGRAVITY_CONVERSATION,
        "hook_event_name": "PreInvocation",
    }
    return [
        Scenario("PreInvocation", call, "The conversation's first model call."),
        Scenario(
            "PreInvocation", call, "The next model call: the conversation was already reported."
        ),
    ]


# What the opencode and omp modules send (no Node or Bun needed to show it).
OPENCODE_SESSION = "ses_dd3c012a1ffeI0xakA9Xos0n4j"
OMP_SESSION = "01a22c51-6760-7535-8f18-3c1900286b44"
OMP_NEW_SESSION = "01a22c51-d79d-7651-8660-5da4b3bc5f86"


def _sent(session: str, note: str) -> Scenario:
    return Scenario(modules.EVENT, {"session_id": session}, note)


def opencode(demo: Demo) -> list[Scenario]:
    """What the plugin sends, run as the plugin runs it (no Node or Bun needed)."""
    return [
        _sent(OPENCODE_SESSION, "A top-level session is created (a subagent's never reports)."),
        _sent(
            OPENCODE_SESSION, "`opencode run -c` continues a session: its first message reports it."
        ),
    ]


def omp(demo: Demo) -> list[Scenario]:
    """What the extension sends, run as the extension runs it (no Bun needed)."""
    return [
        _sent(OMP_SESSION, "A session starts (a task subagent's never reports)."),
        _sent(OMP_NEW_SESSION, "/new switches to a new session (so do /resume and /fork)."),
    ]
