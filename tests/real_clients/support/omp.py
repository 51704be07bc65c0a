"""Drive the real omp offline: a throwaway HOME, a keyless provider at the scripted model API.

`~/.omp/agent/models.yml` names one provider (`auth: none`, `api:
openai-completions`) whose base URL is the loopback chat-completions server;
`config.yml` turns off the update and marketplace checks, the setup wizard
and the keyless local-engine probes, and makes that model the default.
`OMP_SKIP_SETUP=1` keeps the first-run setup away. omp is a Bun script: the
client's `bin_dir` (a `bun`) goes first on PATH.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.real_clients.support.clients import OmpClient, run_cli
from tests.real_clients.support.sandbox import throwaway_env

MODEL = "scripted/scripted-model"
# omp's keyless discovery of local engines and public model lists: off, so nothing but the
# scripted provider is tried (the models.dev catalog fetch fails fast offline).
PROBED_PROVIDERS = [
    "ollama",
    "llama.cpp",
    "lm-studio",
    "charm-hyper",
    "alibaba-coding-plan",
    "commandcode",
    "kilo",
    "venice",
    "zenmux",
]


def seed_home(env: dict[str, str], base_url: str) -> Path:
    """models.yml and config.yml in ~/.omp/agent; returns that folder."""
    agent = Path(env["HOME"]) / ".omp" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    # YAML is a superset of JSON: no YAML writer needed
    models = {
        "providers": {
            "scripted": {
                "baseUrl": f"{base_url}/v1",
                "auth": "none",
                "api": "openai-completions",
                "models": [
                    {
                        "id": "scripted-model",
                        "name": "Scripted Model",
                        "reasoning": False,
                        "input": ["text"],
                        "contextWindow": 32000,
                        "maxTokens": 1024,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    }
                ],
            }
        }
    }
    (agent / "models.yml").write_text(json.dumps(models, indent=2) + "\n")
    config = {
        "startup": {"checkUpdate": False, "setupWizard": False},
        "marketplace": {"autoUpdate": "off"},
        "modelRoles": {"default": MODEL},
        "disabledProviders": PROBED_PROVIDERS,
        # the task tool waits for its subagent, so a print run ends after it
        "async": {"enabled": False},
    }
    (agent / "config.yml").write_text(json.dumps(config, indent=2) + "\n")
    return agent


def omp_env(client: OmpClient, tmp: Path, **extra: str) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {
        **throwaway_env(tmp, home, [str(client.bin_dir)]),
        "TERM": "xterm-256color",
        "OMP_SKIP_SETUP": "1",
        "PI_NO_TITLE": "1",
        "OTEL_SDK_DISABLED": "true",
    }
    env.update(extra)
    return env


def run_print(
    client: OmpClient, prompt: str, env: dict[str, str], cwd: Path, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`omp -p [args…] <prompt>`."""
    return run_cli([str(client.binary), "-p", *args, prompt], env, cwd, timeout)


def _entries(path: Path) -> list[dict[str, object]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _header_id(entries: list[dict[str, object]]) -> str | None:
    """The `session` entry's id (a `title` entry comes first in omp 18)."""
    return next((str(e.get("id")) for e in entries if e.get("type") == "session"), None)


def session_files(env: dict[str, str]) -> dict[str, Path]:
    """omp's own record: every top-level session file (`<time>_<id>.jsonl`) by its header id."""
    found = {}
    for path in (Path(env["HOME"]) / ".omp" / "agent" / "sessions").glob("*/*.jsonl"):
        session = _header_id(_entries(path))
        if session is not None:
            found[session] = path
    return found


def subagent_files(env: dict[str, str]) -> dict[str, Path]:
    """Every subagent transcript (beside its parent's file, with a `session_init` entry), by id."""
    found = {}
    for path in (Path(env["HOME"]) / ".omp" / "agent" / "sessions").glob("*/*/*.jsonl"):
        entries = _entries(path)
        session = _header_id(entries)
        if session is not None and any(e.get("type") == "session_init" for e in entries):
            found[session] = path
    return found
