"""A real CLI in a tmux pane: what a person sees, as text, to assert on and to quote.

`Terminal` (support/claude.py) keeps the raw byte stream; a pane keeps the
rendered screen, so `screen()` reads line by line as the person reads it
(wrapped lines joined). Each pane gets its own tmux server on a socket in the
test's tmp folder, started with exactly the test's environment, and killed on
close.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest


class Pane:
    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        socket: Path,
        cols: int = 160,
        rows: int = 50,
    ) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            pytest.skip("tmux is not installed")
        self._tmux = [tmux, "-S", str(socket), "-f", "/dev/null"]
        assignments = [f"{key}={value}" for key, value in env.items()]
        self._run(
            "new-session", "-d", "-x", str(cols), "-y", str(rows), "-c", str(cwd),
            "env", "-i", *assignments, *argv,
        )  # fmt: skip
        self._run("set-option", "-g", "history-limit", "5000")

    def _run(self, *args: str) -> str:
        ran = subprocess.run(
            [*self._tmux, *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color"},
        )
        return ran.stdout

    def screen(self) -> str:
        """The pane's text, scrollback included, wrapped lines joined, trailing blanks cut."""
        text = self._run("capture-pane", "-p", "-J", "-S", "-5000")
        return "\n".join(line.rstrip() for line in text.rstrip().splitlines())

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """Poll the rendered screen until `text` is on it; the screen."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; screen:\n{screen}")
            time.sleep(0.2)  # polling a pane: tmux has no change notification to wait on

    def type(self, text: str) -> None:
        """Type `text` like a person, wait until the input shows it, press Enter."""
        self._run("send-keys", "-l", text)
        self.wait_for(text[-20:], 30)
        self._run("send-keys", "Enter")

    def close(self) -> None:
        self._run("kill-server")

    def __enter__(self) -> Pane:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
