"""Drive the real Codex CLI offline: a CODEX_HOME pointing at the scripted Responses API.

`config.toml` names a model provider whose base_url is the loopback server
(wire_api "responses", no retries); hooks are on by default in Codex 0.171
(`[features].hooks`, formerly `codex_hooks`), so a user's plain config is what
is exercised. `hooks.json` is this checkout's registration
(`registrations.codex_hooks()`), so `lich-hook` is found on PATH exactly as a
user's install would have it.

Codex runs a hook only once the user has trusted it (the `/hooks` review,
"Trust all and continue"), which it records in `config.toml`;
`trust_records` writes the same record, so no test needs
`--dangerously-bypass-hook-trust` (which also makes the TUI skip the shared
app-server daemon, the very thing tests/real_clients/test_codex_daemon.py must
exercise). Project directories can be marked trusted too, so the TUI starts
straight into its composer.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from lich_hooks.human.settings.registrations import codex_hooks
from tests.real_clients.support.clients import Client, run_cli
from tests.support.codex_trust import trusted_hash
from tests.support.runner import BIN_DIR, watch_log

TRUST_FLAG = "--dangerously-bypass-hook-trust"


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trust_records(hooks_path: Path, hooks: dict[str, object]) -> str:
    """`[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` tables trusting every handler."""
    tables = []
    for event, groups in hooks.items():
        assert isinstance(groups, list)
        for g, group in enumerate(groups):
            for h, handler in enumerate(group["hooks"]):
                key = f"{hooks_path.resolve()}:{_snake(event)}:{g}:{h}"
                digest = trusted_hash(_snake(event), group, handler)
                tables.append(
                    f"[hooks.state.{json.dumps(key)}]\ntrusted_hash = {json.dumps(digest)}\n"
                )
    return "\n".join(tables)


def trust_hook(env: dict[str, str], key: str, hooks_file: Path) -> None:
    """What "Trust all and continue" writes for one SessionStart handler: its key and hash
    (lich_hooks' formula, so a report arriving proves it is the one Codex checks)."""
    from lich_hooks.human.settings.codex_state import trust_hash

    [group] = json.loads(hooks_file.read_text())["hooks"]["SessionStart"]
    [handler] = group["hooks"]
    digest = trust_hash("SessionStart", None, handler)
    with (Path(env["CODEX_HOME"]) / "config.toml").open("a") as config:
        config.write(f'\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n')


def seed_codex_home(
    codex_home: Path,
    base_url: str,
    trust: bool = True,
    projects: Iterable[Path] = (),
    hooks: bool = True,
) -> None:
    """config.toml (scripted model; trusted hooks and `projects` unless told not to), hooks.json.

    `hooks=False` writes no hooks.json and no trust: registering is left to the test.
    """
    codex_home.mkdir(parents=True, exist_ok=True)
    extra = "".join(
        f'\n[projects.{json.dumps(str(p.resolve()))}]\ntrust_level = "trusted"\n' for p in projects
    )
    if hooks:
        registered = codex_hooks()
        hooks_path = codex_home / "hooks.json"
        hooks_path.write_text(json.dumps({"hooks": registered}, indent=2))
        if trust:
            extra += "\n" + trust_records(hooks_path, registered)
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
        + extra
    )


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
    bypass_trust: bool = False,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`codex exec [--dangerously-bypass-hook-trust] --skip-git-repo-check <prompt>`."""
    argv = [str(client.binary), "exec"]
    if bypass_trust:
        argv.append(TRUST_FLAG)
    argv += ["--skip-git-repo-check", prompt]
    return run_cli(argv, env, cwd, timeout)


def running_for(codex_home: Path) -> list[tuple[int, str]]:
    """(pid, command line) of every process whose command line names this CODEX_HOME."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            raw = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        line = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
        if str(codex_home) in line:
            found.append((int(name), line))
    return found


def stop_daemon(client: Client, env: dict[str, str], timeout: float = 30) -> None:
    """Stop this CODEX_HOME's app-server daemon and its updater loop (which outlives `stop`).

    Neither is in a test's process group (the daemon is reparented to init), so
    killpg never reaches them: `codex app-server daemon stop`, then SIGTERM to
    the pid in app-server-daemon/daemon-updater.pid, checked to be ours first.
    """
    codex_home = Path(env["CODEX_HOME"])
    subprocess.run(
        [str(client.binary), "app-server", "daemon", "stop"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    updater = codex_home / "app-server-daemon" / "daemon-updater.pid"
    try:
        pid = int(json.loads(updater.read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        pid = 0
    if pid and any(p == pid for p, _ in running_for(codex_home)):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while running_for(codex_home) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid, _ in running_for(codex_home):  # last resort: never leave one behind
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
