"""Drive the real Crush CLI offline: a global crush.json pointing at the scripted chat API.

Crush (a Go module, built by support/clients.py) reads `$XDG_CONFIG_HOME/crush/crush.json`
and the project's `crush.json`/`.crush.json`. The seeded global file names one
`openai-compat` provider at the loopback chat-completions server, fully
specified (models, api_key) so nothing is fetched; the offline switches are
`CRUSH_DISABLE_PROVIDER_AUTO_UPDATE` (the embedded provider catalog is used)
and `CRUSH_DISABLE_METRICS`/`DO_NOT_TRACK`. The hooks are this checkout's
shipped registration (`registrations.crush_hooks()`), so `lich-hook` is found
on PATH as a user's install has it.

Sessions live in the project's `.crush/crush.db`; `crush session list --json`
is Crush's own record of them, the one tests check reported ids against.

The client/server mode (`CRUSH_CLIENT_SERVER=1`) starts one detached
`crush server` per socket path, `$XDG_RUNTIME_DIR/crush-<uid>.sock` (else
`$TMPDIR`, else /tmp; /tmp when the path is over 104 bytes). Each test gets
its own short XDG_RUNTIME_DIR, so parallel runs never share a server, and
`stop_servers` ends every server started under it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from lich_hooks.registrations import crush_hooks
from tests.real_clients.support.clients import Client
from tests.real_clients.support.sandbox import throwaway_env
from tests.support.runner import watch_log

MODEL = "scripted-model"


def crush_config(base_url: str, hooks: bool = True) -> dict[str, Any]:
    config: dict[str, Any] = {
        "providers": {
            "scripted": {
                "name": "Scripted",
                "type": "openai-compat",
                "base_url": f"{base_url}/v1",
                "api_key": "scripted-key",
                "models": [
                    {
                        "id": MODEL,
                        "name": "Scripted",
                        "context_window": 100000,
                        "default_max_tokens": 1000,
                    }
                ],
            }
        },
        "models": {
            "large": {"model": MODEL, "provider": "scripted"},
            "small": {"model": MODEL, "provider": "scripted"},
        },
        "options": {"disable_provider_auto_update": True, "disable_metrics": True},
    }
    if hooks:
        config["hooks"] = crush_hooks()
    return config


def global_config(home: Path) -> Path:
    return home / ".config" / "crush" / "crush.json"


def seed_home(home: Path, base_url: str, hooks: bool = True) -> Path:
    """The global crush.json (scripted model; the shipped hooks unless told not to)."""
    path = global_config(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(crush_config(base_url, hooks), indent=2))
    return path


def runtime_dir() -> Path:
    """A short private folder for the server's socket (the full tmp path can pass 104 bytes)."""
    return Path(tempfile.mkdtemp(prefix="lc-", dir="/tmp"))


def crush_env(tmp: Path, home: Path, run_dir: Path, **extra: str) -> dict[str, str]:
    env = throwaway_env(tmp, home)
    env.update(
        {
            "XDG_RUNTIME_DIR": str(run_dir),
            "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE": "1",
            "CRUSH_DISABLE_METRICS": "1",
            "DO_NOT_TRACK": "1",
            "TERM": "xterm-256color",
            "SHELL": "/bin/sh",
        }
    )
    env.update(extra)
    watch_log(env.get("LICH_HOOK_LOG"))
    return env


def run(
    client: Client,
    prompt: str,
    env: dict[str, str],
    cwd: Path,
    *args: str,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`crush run [args…] <prompt>`, stdin closed, as a script runs it."""
    return subprocess.run(
        [str(client.binary), "run", *args, prompt],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def sessions(client: Client, env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    """Crush's own record of the project's sessions (`crush session list --json`)."""
    proc = subprocess.run(
        [str(client.binary), "session", "list", "--json"],
        env={k: v for k, v in env.items() if k != "CRUSH_CLIENT_SERVER"},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout or "[]")
    assert isinstance(listed, list)
    return listed


def hook_times(project: Path) -> list[float]:
    """When Crush logged each "Hook completed" (epoch seconds), from the project's crush.log."""
    from datetime import datetime

    log = project / ".crush" / "logs" / "crush.log"
    found = []
    for line in log.read_text().splitlines() if log.exists() else []:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("msg") == "Hook completed":
            found.append(datetime.fromisoformat(record["time"].replace("Z", "+00:00")).timestamp())
    return found


def servers(run_dir: Path) -> list[int]:
    """Pids of the `crush server` processes listening under `run_dir` (their XDG_RUNTIME_DIR)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) > 1 and argv[0].endswith(b"crush") and argv[1] == b"server":
            if f"XDG_RUNTIME_DIR={run_dir}".encode() in environ:
                found.append(int(name))
    return found


def stop_servers(run_dir: Path, timeout: float = 15) -> None:
    """SIGTERM, then SIGKILL, every server started under `run_dir`; remove the folder.

    A server is detached (its own session, reparented to init): no process
    group of the test reaches it, so it is found by its environment.
    """
    for pid in servers(run_dir):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while servers(run_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in servers(run_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    shutil.rmtree(run_dir, ignore_errors=True)


class Tui:
    """An interactive `crush` in its own tmux server, read as the rendered screen.

    Crush's TUI redraws the composer piecemeal, so the raw byte stream (what
    the Claude Code driver reads) never holds the typed text in one piece;
    `tmux capture-pane` gives the screen a person sees. `env -i` hands crush
    exactly the card's environment; each Tui has its own tmux socket.
    """

    def __init__(
        self, client: Client, env: dict[str, str], cwd: Path, *args: str, name: str = "crush"
    ) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            import pytest

            pytest.skip("tmux is not on PATH: cannot drive the Crush TUI")
        self.tmux = tmux
        self.socket = Path(tempfile.mkdtemp(prefix="lt-", dir="/tmp")) / name
        assignments = [f"{key}={value}" for key, value in env.items()]
        self._tmux(
            "new-session", "-d", "-s", "crush", "-x", "200", "-y", "50", "-c", str(cwd),
            "/usr/bin/env", "-i", *assignments, str(client.binary), *args,
        )  # fmt: skip
        self.pid = int(self._tmux("display-message", "-p", "-t", name, "#{pane_pid}").strip())

    def _tmux(self, *args: str) -> str:
        proc = subprocess.run(
            [self.tmux, "-S", str(self.socket), "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 0, (args[:1], proc.stderr)
        return proc.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-J")

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared on crush's screen:\n{screen}")
            time.sleep(0.1)

    def submit(self, prompt: str) -> None:
        """Type `prompt` (literally), wait until the composer shows its end, press Enter."""
        self._tmux("send-keys", "-t", "crush", "-l", prompt)
        self.wait_for(prompt[-12:], timeout=30)
        self._tmux("send-keys", "-t", "crush", "Enter")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "crush", *keys)

    def close(self) -> None:
        subprocess.run(
            [self.tmux, "-S", str(self.socket), "kill-server"],
            capture_output=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while Path(f"/proc/{self.pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        shutil.rmtree(self.socket.parent, ignore_errors=True)

    def __enter__(self) -> Tui:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
