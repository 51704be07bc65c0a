"""Drive the real opencode offline: a throwaway HOME/XDG, a provider at the scripted model API.

opencode.json (in the user's config folder) names one provider built on
`@ai-sdk/openai-compatible`, which opencode carries inside its binary, whose
base URL is the loopback chat-completions server; the env switches off its
self-update, the models.dev download, sharing and LSP downloads. Every
config folder opencode reads is seeded with `node_modules/`, `package.json`
and `package-lock.json` naming `@opencode-ai/plugin`: without them opencode
npm-installs that package there and, with any plugin present, waits for the
install (about 72 s offline) before loading plugins.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.real_clients.support.clients import Client
from tests.real_clients.support.sandbox import throwaway_env

MODEL = "scripted/scripted-model"


def seed_config_dir(folder: Path, version: str) -> None:
    """Make opencode's background `npm install @opencode-ai/plugin@<its version>` a no-op."""
    (folder / "node_modules").mkdir(parents=True, exist_ok=True)
    dependency = {"@opencode-ai/plugin": version}
    (folder / "package.json").write_text(json.dumps({"dependencies": dependency}) + "\n")
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": dependency}}}
    (folder / "package-lock.json").write_text(json.dumps(lock) + "\n")


def seed_home(env: dict[str, str], base_url: str, client: Client) -> Path:
    """opencode.json with the scripted provider in the user's config folder; returns that folder."""
    config = Path(env["XDG_CONFIG_HOME"]) / "opencode"
    seed_config_dir(config, client.release)
    settings = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "snapshot": False,
        "lsp": False,
        "formatter": False,
        "enabled_providers": ["scripted"],
        "model": MODEL,
        "small_model": MODEL,
        "provider": {
            "scripted": {
                "name": "Scripted (loopback)",
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": f"{base_url}/v1", "apiKey": "not-a-key"},
                "models": {
                    "scripted-model": {
                        "name": "Scripted model",
                        "tool_call": True,
                        "limit": {"context": 100000, "output": 4096},
                    }
                },
            }
        },
    }
    (config / "opencode.json").write_text(json.dumps(settings, indent=2))
    return config


def opencode_env(tmp: Path, **extra: str) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {
        **throwaway_env(tmp, home),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    }
    env.update(extra)
    return env


def run(
    client: Client,
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    stdin: str = "",
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`opencode <args…>` (e.g. `run -c`), with `stdin` as the prompt (`run` appends it).

    The prompt goes through stdin because `opencode run` re-quotes an argument
    with spaces into the message (a directive would arrive as a JSON string).
    """
    return subprocess.run(
        [str(client.binary), *args],
        env=env,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def sessions(client: Client, env: dict[str, str], cwd: Path) -> list[dict[str, object]]:
    """`opencode session list --format json`: opencode's own record of its sessions."""
    listed = run(client, ["session", "list", "--format", "json"], env, cwd, timeout=60)
    assert listed.returncode == 0, listed.stderr
    value = json.loads(listed.stdout or "[]")
    assert isinstance(value, list)
    return value
