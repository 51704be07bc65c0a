"""What a person sees: an interactive CLI (`claude`, `crush`) in tmux, read back as rendered rows.

support/claude.py's Terminal keeps the raw byte stream, which is enough to
drive the CLI but not to say what is on which row, in what order. tmux is a
real terminal emulator: `capture-pane` gives the rows as drawn (wrapped at the
pane's width, colours on request). Each Screen runs its own tmux server on a
socket in the test's folder, so nothing is shared with another test or a
person's tmux; without tmux on PATH the test skips.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.real_clients.support.clients import Client

_SGR = re.compile(r"\x1b\[[0-9;]*m")


class Screen:
    """`with Screen(client, env, cwd, folder) as screen:` a session of the CLI at `cols`×50.

    `args` go to the CLI (claude: `--debug=hooks --debug-file <file>`); `ready` is
    what it draws once its input box takes typing (claude's `❯`); `pid` is the
    CLI's own process (tmux execs the launcher, which execs it).
    """

    def __init__(
        self,
        client: Client,
        env: dict[str, str],
        cwd: Path,
        folder: Path,
        cols: int = 100,
        args: tuple[str, ...] = (),
        ready: str = "❯",
    ) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            pytest.skip(f"tmux is not on PATH: cannot read back what {client.name} draws")
        self._tmux = tmux
        self._name = client.name
        self._ready = ready
        folder.mkdir(parents=True, exist_ok=True)
        self._socket = folder / "tmux.sock"
        # the session's environment exactly, not the tmux server's: a launcher with env -i
        launcher = folder / f"{client.name}-in-tmux.sh"
        assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        argv = " ".join(shlex.quote(a) for a in (str(client.binary), *args))
        launcher.write_text(f"#!/bin/sh\nexec env -i {assignments} {argv}\n")
        launcher.chmod(0o700)
        self._run(
            "new-session", "-d", "-s", "cli", "-x", str(cols), "-y", "50", "-c", str(cwd),
            str(launcher),
        )  # fmt: skip
        self.pid = int(self._run("display-message", "-p", "-t", "cli", "#{pane_pid}").strip())

    def _run(self, *args: str) -> str:
        ran = subprocess.run(
            [self._tmux, "-S", str(self._socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return ran.stdout

    def rows(self, colours: bool = False) -> list[str]:
        """Every row drawn so far (scrollback included), trailing blanks removed."""
        flags = ["-e"] if colours else []
        text = self._run("capture-pane", "-p", *flags, "-t", "cli", "-S", "-2000")
        return [row.rstrip() for row in text.splitlines()]

    def text(self) -> str:
        return "\n".join(self.rows()).strip("\n")

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        """Wait until `text` (whitespace ignored, so wrapping does not matter) is drawn."""
        needle = re.sub(r"\s+", "", text)
        deadline = time.monotonic() + timeout
        while needle not in re.sub(r"\s+", "", self.text()):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{text!r} never appeared on {self._name}'s screen:\n{self.text()}"
                )
            time.sleep(0.2)

    def submit(self, prompt: str) -> None:
        """Type `prompt` into the input box, wait until it shows, press Enter."""
        self.wait_for(self._ready)
        self._run("send-keys", "-t", "cli", "-l", prompt)
        self.wait_for(prompt[-20:])
        self._run("send-keys", "-t", "cli", "Enter")

    def keys(self, *keys: str) -> None:
        """Press keys by tmux's names (`C-n`, `Enter`)."""
        self._run("send-keys", "-t", "cli", *keys)

    def close(self) -> None:
        """End the session and wait (10 s at most) for the CLI itself to exit."""
        self._run("kill-server")
        deadline = time.monotonic() + 10
        while Path(f"/proc/{self.pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def __enter__(self) -> Screen:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def plain(row: str) -> str:
    return _SGR.sub("", row)


def block_under(rows: list[str], heading: str) -> list[str]:
    """The `⎿` entries drawn under the tool call row `heading`, each with its wrapped rows
    joined (whitespace collapsed), in screen order."""
    at = next(i for i, row in enumerate(rows) if plain(row).lstrip().startswith(heading))
    entries: list[str] = []
    for row in rows[at + 1 :]:
        text = plain(row)
        if text.lstrip().startswith("⎿"):
            entries.append(text.lstrip()[1:].strip())
        elif entries and text.startswith("     ") and text.strip():
            entries[-1] += " " + text.strip()
        else:
            break
    return entries
