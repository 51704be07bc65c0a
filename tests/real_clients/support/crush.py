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
`stop_servers` ends every server started under it. The TUI runs in tmux
(support/tmux.py).
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

from lich_hooks.human.settings.registrations import crush_hooks
from tests.real_clients.support.clients import Client
from tests.real_clients.support.sandbox import throwaway_env
from tests.real_clients.support.tmux import Screen
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


READY = "ctrl+c quit"  # Crush's help line: the composer takes input (its placeholder varies)


def tui(client: Client, env: dict[str, str], cwd: Path, folder: Path, *args: str) -> Screen:
    """The interactive `crush` in tmux (tests/real_clients/support/tmux.py), ready for a prompt.

    Its composer redraws piecemeal, so the raw pty stream never holds typed
    text whole: tmux's rendered rows do.
    """
    screen = Screen(client, env, cwd, folder, cols=200, args=args, ready=READY)
    screen.wait_for(READY)
    return screen
