"""The plugin route on its own: the plugin's copy of the package runs with no pip install,
and never shows an error (two routes at once: test_claims.py).

Each command is run the way Claude Code runs it (`/bin/sh -c <command>`, the
plugin root in CLAUDE_PLUGIN_ROOT), from a copy of the plugin folder named the
way Claude Code's and Codex's caches name it (`…/lich-hooks/<version>/`), with
a PATH that holds no `lich-hook`.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from lich_hooks import __version__
from lich_hooks.human.settings import registrations
from lich_hooks.human.standin.server import StandIn
from tests.support.contract_check import assert_client_body
from tests.support.runner import base_env, run_command, wait_for_log

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_ID = "018f9c5a-0000-7000-9a3b-1c2d3e4f5c02"
HOOKS = json.loads((ROOT / "lich_hooks" / "plugin" / "claude-hooks.json").read_text())["hooks"]


def plugin_command(event: str) -> str:
    [group] = HOOKS[event]
    [handler] = group["hooks"]
    command = handler["command"]
    assert isinstance(command, str)
    return command


def copy_plugin(tmp: Path) -> Path:
    """The plugin folder as Claude Code's cache holds it: `<cache>/<market>/<plugin>/<version>`."""
    target = tmp / "cache" / "lich-hooks" / "lich-hooks" / __version__
    shutil.copytree(
        ROOT / registrations.PLUGIN_SOURCE, target, ignore=shutil.ignore_patterns("__pycache__")
    )
    return target


def only(tmp: Path, **programs: str) -> str:
    """A PATH folder holding `sh` and the given programs (name -> sh script body), nothing else."""
    folder = tmp / "bin"
    folder.mkdir(exist_ok=True)
    (folder / "sh").symlink_to("/bin/sh")
    for name, body in programs.items():
        script = folder / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
    return str(folder)


def python_dir(tmp: Path) -> str:
    """A PATH folder with `sh` and a `python3` of 3.10 or newer (this interpreter)."""
    folder = Path(only(tmp))
    (folder / "python3").symlink_to(sys.executable)
    return str(folder)


def plugin_env(tmp: Path, root: Path, path: str, **extra: str) -> dict[str, str]:
    env = base_env(tmp, **extra)
    env.update(PATH=path, CLAUDE_PLUGIN_ROOT=str(root), CLAUDE_PROJECT_DIR=str(tmp / "project"))
    (tmp / "project").mkdir(exist_ok=True)
    return env


SESSION = {"session_id": SAMPLE_ID, "cwd": "/tmp", "hook_event_name": "SessionStart"}


def test_the_plugin_copy_reports_with_no_pip_install(tmp_path: Path, lich: StandIn) -> None:
    root = copy_plugin(tmp_path)
    env = plugin_env(tmp_path, root, python_dir(tmp_path), **lich.env("card-1"))
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    body = assert_client_body("session-start", request.body)
    assert body == {"session_id": "card-1", "provider_session_id": SAMPLE_ID, "provider": "claude"}
    [record] = wait_for_log(env, 1)
    assert record["outcome"] == "taken"


NO_PYTHON = {
    "no Python at all": {},
    "too old, and a store stub": {
        "python3": 'echo "Python 3.8 says something" >&2; exit 86',
        "python": 'echo "Python was not found; run without arguments to install" >&2; exit 9',
    },
}


@pytest.mark.parametrize("programs", list(NO_PYTHON.values()), ids=list(NO_PYTHON))
def test_no_usable_python_tells_the_person_once_inside_lich(
    tmp_path: Path, lich: StandIn, programs: dict[str, str]
) -> None:
    root = copy_plugin(tmp_path)
    env = plugin_env(tmp_path, root, only(tmp_path, **programs), **lich.env("card-1"))
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (ran.returncode, ran.stderr) == (0, b"")
    message = json.loads(ran.stdout)["systemMessage"]
    assert "needs Python 3.10 or newer" in message and "Fix: " in message
    assert ("python3 is older than 3.10" in message) == ("python3" in programs)
    # every other event: nothing at all, and nothing outside lich
    for event in ("Stop", "PreToolUse"):
        again = run_command(plugin_command(event), {"tool_name": "Agent"}, env, cwd=tmp_path)
        assert (again.returncode, again.stdout, again.stderr) == (0, b"", b"")
    outside = plugin_env(tmp_path, root, env["PATH"])
    quiet = run_command(plugin_command("SessionStart"), SESSION, outside, cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, b"", b"")
    assert lich.received == []


def test_a_broken_copy_tells_the_person_inside_lich(tmp_path: Path, lich: StandIn) -> None:
    root = copy_plugin(tmp_path)
    shutil.rmtree(root / "hook" / "jobs")  # an interrupted copy
    (root / "hook" / "run.py").unlink()
    env = plugin_env(tmp_path, root, python_dir(tmp_path), **lich.env("card-1"))
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (ran.returncode, ran.stderr) == (0, b"")
    message = json.loads(ran.stdout)["systemMessage"]
    assert "plugin copy" in message and "claude plugin uninstall lich-hooks@lich-hooks" in message
    outside = plugin_env(tmp_path, root, env["PATH"])
    quiet = run_command(plugin_command("SessionStart"), SESSION, outside, cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, b"", b"")


def test_python_is_found_past_unusable_candidates(tmp_path: Path, lich: StandIn) -> None:
    """python3 too old and `python` a stub: python3.12 (or any 3.10+) is used, quietly."""
    root = copy_plugin(tmp_path)
    folder = only(
        tmp_path,
        python3='echo "SyntaxError somewhere" >&2; exit 86',
        python="echo stub >&2; exit 9009",
    )
    (Path(folder) / "python3.12").symlink_to(sys.executable)
    env = plugin_env(tmp_path, root, folder, **lich.env("card-1"))
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    lich.wait(1)
    probe = run_command(f'sh "{root}/plugin/lich-hook" --python', b"", env, cwd=tmp_path)
    assert probe.stdout.decode().strip() == str(Path(folder) / "python3.12")
