"""Drive the real Codex CLI offline: a CODEX_HOME pointing at the scripted Responses API.

`config.toml` names a model provider whose base_url is the loopback server
(wire_api "responses", no retries); nothing else: hooks are on by default in
Codex 0.171 (`[features].hooks`, formerly `codex_hooks`), so a user's plain
config is what is exercised. `hooks.json` is this checkout's registration
(`registrations.codex_hooks()`), so `lich-hook` is found on PATH exactly as a
user's install would have it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from lich_hooks.registrations import codex_hooks
from tests.real_clients.support.clients import Client
from tests.support.runner import BIN_DIR, watch_log

TRUST_FLAG = "--dangerously-bypass-hook-trust"


def seed_codex_home(codex_home: Path, base_url: str, hooks: bool = True) -> None:
    """config.toml for the scripted model; `hooks=False` leaves registering to the test."""
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f"""model = "scripted-model"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "{base_url}/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""
    )
    if hooks:
        (codex_home / "hooks.json").write_text(json.dumps({"hooks": codex_hooks()}, indent=2))


def codex_env(tmp: Path, codex_home: Path, **extra: str) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": f"{BIN_DIR}{os.pathsep}/usr/local/bin{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "LICH_HOOK_LOG": str(tmp / "hook.log"),
        "LICH_HOOK_STATE_DIR": str(tmp / "state"),
    }
    env.update(extra)
    watch_log(env.get("LICH_HOOK_LOG"))
    return env


def exec_help(client: Client, env: dict[str, str]) -> str:
    return subprocess.run(
        [str(client.binary), "exec", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout


def run_exec(
    client: Client,
    prompt: str,
    env: dict[str, str],
    cwd: Path,
    bypass_trust: bool = True,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`codex exec [--dangerously-bypass-hook-trust] --skip-git-repo-check <prompt>`."""
    argv = [str(client.binary), "exec"]
    if bypass_trust:
        argv.append(TRUST_FLAG)
    argv += ["--skip-git-repo-check", prompt]
    return subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
