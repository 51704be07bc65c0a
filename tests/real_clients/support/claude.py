"""Drive the real Claude Code: a throwaway HOME, `claude -p`, and `claude` on a pseudo-terminal.

The HOME is seeded the way a user who finished onboarding has it: the API key
approved, the project trusted, and `~/.claude/settings.json` registering this
checkout's `lich-hook` exactly as the shipped registration does
(`lich_hooks.human.settings.registrations.claude_hooks()`, found on PATH in this venv).
Everything the CLI writes (HOME, TMPDIR) stays under the test's tmp folder.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path
from typing import Any

import pyte

from lich_hooks.human.settings.registrations import claude_hooks
from tests.real_clients.support.clients import Client, run_cli
from tests.real_clients.support.sandbox import throwaway_env
from tests.support.runner import log_records, watch_log

API_KEY = "sk-ant-api03-lich-hooks-offline-test-key-" + "x" * 40

# The release that brought each behaviour the tests (and the hooks) depend on, read from the
# packages and run in the matrix (docs/harnesses.md, Supported versions).
SINCE = {
    "last_assistant_message": "2.1.47",  # Stop; before it the hook reads the transcript
    "agent_tool": "2.1.63",  # the subagent tool is Agent; before it, Task
    "background_tasks": "2.1.145",  # Stop
    "claude_pid": "2.1.213",
    "team_name_ignored": "2.1.178",  # a teammate is picked by `name` alone
    "deny_prefix": "2.1.281",  # a deny reaches the model as "PreToolUse:<tool> hook error: …"
    "session_attended": "2.1.269",  # CLAUDE_CODE_SESSION_ATTENDED
    # additionalContext beside a deny reaches the model (2.1.178 and older: it does not)
    "deny_context": "2.1.269",
}


def subagent_tool(client: Client) -> str:
    return "Agent" if client.at_least(SINCE["agent_tool"]) else "Task"


def seed_home(
    home: Path, project: Path, permission_mode: str | None = None, hooks: bool = True
) -> None:
    """A HOME where `claude` starts straight into the project, with our hooks registered.

    `hooks=False` registers nothing, for tests that register through a route of their own.
    """
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    state = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": "2.1.328",
        "theme": "dark",
        "autoUpdates": False,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {
            str(project): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
        },
    }
    (home / ".claude.json").write_text(json.dumps(state, indent=2))
    settings: dict[str, Any] = {"hooks": claude_hooks()} if hooks else {}
    if permission_mode is not None:
        settings["permissions"] = {"defaultMode": permission_mode}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))


def claude_env(tmp: Path, home: Path, base_url: str, **extra: str) -> dict[str, str]:
    """The CLI's environment: offline, no updater, no telemetry; lich's variables in `extra`."""
    env = {
        **throwaway_env(tmp, home),
        "TERM": "xterm-256color",
        "ANTHROPIC_API_KEY": API_KEY,
        "ANTHROPIC_BASE_URL": base_url,
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    env.update(extra)
    watch_log(env.get("LICH_HOOK_LOG"))
    return env


def hook_runs(env: dict[str, str], event: str | None = None) -> list[dict[str, object]]:
    """lich-hook's own log lines (one per hook run), optionally for one event."""
    return [r for r in log_records(env) if event is None or r.get("event") == event]


def wait_for_hook(
    env: dict[str, str], event: str, count: int = 1, timeout: float = 60.0
) -> list[dict[str, object]]:
    """Wait until lich-hook logged `count` runs of `event` (each run logs once, after its send)."""
    deadline = time.monotonic() + timeout
    while True:
        runs = hook_runs(env, event)
        if len(runs) >= count:
            return runs
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{count} {event} hook run(s) expected within {timeout:.0f}s; log: {hook_runs(env)}"
            )
        time.sleep(0.05)


def run_print(
    client: Client, prompt: str, env: dict[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`claude -p <prompt>`, the way a script (or a tool inside a lich session) runs it."""
    return run_cli([str(client.binary), "-p", prompt], env, cwd, timeout)


_ANSI = re.compile(
    rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]"  # CSI
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    rb"|\x1b[()][0-9A-Za-z]|\x1b[=>78]"  # charset, keypad, save/restore
)


# Startup dialogs that take the keyboard from the input box (declined with Esc).
STARTUP_DIALOGS = ["Make auto mode your default permission mode?"]


class Terminal:
    """An interactive `claude` on a pseudo-terminal, typed into like a person would.

    The screen is kept as the raw byte stream with escape sequences and all
    whitespace removed: enough to see that the input box is up and that the
    typed text arrived, which is all the driver needs before pressing Enter.
    """

    def __init__(
        self,
        client: Client,
        env: dict[str, str],
        cwd: Path,
        rows: int = 50,
        cols: int = 200,
        args: tuple[str, ...] = (),
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(
            [str(client.binary), *args],
            env=env,
            cwd=cwd,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self._master = master
        self._raw = bytearray()
        self._drawn = pyte.Screen(cols, rows)
        self._stream = pyte.ByteStream(self._drawn)
        self._declined = False
        self._closing = False
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        # Polls, so that `close` can stop it before closing the fd: a read on a closed fd
        # number may read (or a second close may close) a socket that reused the number.
        while not self._closing:
            try:
                if not select.select([self._master], [], [], 0.2)[0]:
                    continue
                data = os.read(self._master, 65536)
            except OSError:
                data = b""
            with self._changed:
                if not data:
                    self._changed.notify_all()
                    return
                self._raw.extend(data)
                self._stream.feed(data)
                self._changed.notify_all()

    def screen(self) -> str:
        """Everything printed so far, without escapes or whitespace."""
        with self._changed:
            raw = bytes(self._raw)
        text = _ANSI.sub(b"", raw).decode("utf-8", "replace")
        return re.sub(r"\s+", "", text)

    def drawn(self) -> str:
        """What the terminal shows now, whitespace removed. A TUI that repaints only the
        cells that change (Codex's ratatui) never prints a character its cell already
        showed, so text drawn over other text may be missing from `screen`."""
        with self._changed:
            return re.sub(r"\s+", "", "".join(self._drawn.display))

    def wait_for_text(
        self, text: str, timeout: float = 60.0, after: int = 0, drawn: bool = False
    ) -> int:
        """Wait until `text` (whitespace ignored) shows up past offset `after`; its end offset.
        `drawn`: or is shown on the terminal now (for text that cannot have been shown
        before `after`), and then the offset is the stream's end."""
        needle = re.sub(r"\s+", "", text)
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            found = screen.find(needle, after)
            if found >= 0:
                return found + len(needle)
            if drawn and needle in self.drawn():
                return len(screen)
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.proc.poll() is not None:
                raise AssertionError(
                    f"{text!r} never appeared on claude's screen (exit {self.proc.poll()}); "
                    f"screen tail: {screen[-1500:]!r}"
                )
            with self._changed:
                self._changed.wait(min(remaining, 0.5))

    def wait_ready(self, timeout: float = 60.0) -> None:
        """The input box is drawn (its `❯` prompt and the mode line under it)."""
        self.wait_for_text("❯", timeout)

    def submit(self, prompt: str, timeout: float = 30.0) -> None:
        """Type `prompt`, wait until the input box shows it, then press Enter.

        A dialog Claude Code opens over the input box at startup takes no typed text
        (2.1.33x: "Make auto mode your default permission mode?" in another default mode):
        it is declined with Esc, and the prompt typed again.
        """
        dialogs = [re.sub(r"\s+", "", text) for text in STARTUP_DIALOGS]
        declined = sum(self.screen().count(d) for d in dialogs) if self._declined else 0
        deadline = time.monotonic() + timeout
        while True:
            mark = len(self.screen())
            os.write(self._master, prompt.encode())
            # the box echoes what was typed; Enter before that could land mid-paste. Only
            # the last characters are looked for: a TUI that repaints only the cells that
            # change (Codex) may never print a typed character its cell already showed
            tail = re.sub(r"\s+", "", prompt)[-6:]
            while True:
                screen = self.screen()
                if screen.find(tail, max(0, mark - 1)) >= 0:
                    os.write(self._master, b"\r")
                    return
                shown = sum(screen.count(d) for d in dialogs)
                if shown > declined:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.proc.poll() is not None:
                    raise AssertionError(
                        f"{prompt[-20:]!r} never appeared on claude's screen "
                        f"(exit {self.proc.poll()}); screen tail: {screen[-1500:]!r}"
                    )
                with self._changed:
                    self._changed.wait(min(remaining, 0.5))
            os.write(self._master, b"\x1b")  # decline the dialog; it is drawn again as it closes
            self.wait_for_text("❯", timeout, after=len(self.screen()))
            self._declined = True
            declined = sum(self.screen().count(d) for d in dialogs)
            os.write(self._master, b"\x15")  # ctrl+u: whatever of the prompt did land

    def press_enter(self) -> None:
        os.write(self._master, b"\r")

    def type(self, text: str) -> None:
        """Send `text` as keystrokes, without Enter (escape sequences included)."""
        os.write(self._master, text.encode())

    def close(self) -> None:
        """End the session: SIGTERM to the process group this Terminal started, then SIGKILL."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                break
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                continue
        if self._closing:
            return
        self._closing = True
        self._reader.join()
        os.close(self._master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
