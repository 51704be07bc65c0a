"""The plugin route on its own: the plugin's copy of the package runs with no pip install,
never shows an error, and stands down where the `install` route runs the same event.

Each command is run the way Claude Code runs it (`/bin/sh -c <command>`, the
plugin root in CLAUDE_PLUGIN_ROOT), from a copy of the plugin folder named the
way Claude Code's and Codex's caches name it (`…/lich-hooks/<version>/`), with
a PATH that holds no `lich-hook`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from lich_hooks import __version__
from lich_hooks.hook import plugin_route as routes
from lich_hooks.human.settings import registrations
from lich_hooks.human.settings.harnesses import SETTINGS
from lich_hooks.human.settings.ours import command_argv
from lich_hooks.human.standin.server import StandIn
from tests.support.contract_check import assert_client_body
from tests.support.runner import LICH_HOOK, base_env, log_records, run_command, wait_for_log

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
    assert "plugin copy" in message and "claude plugin install lich-hooks@lich-hooks" in message
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


# --- who runs: the plugin stands down where the install route runs ---------------------


def write_settings(path: Path, command: str, matcher: str | None = None) -> None:
    group: dict[str, object] = {"hooks": [{"type": "command", "command": command, "timeout": 5}]}
    if matcher is not None:
        group["matcher"] = matcher
    event = command.split()[-2]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": {event: [group]}}))


def test_the_plugin_stands_down_for_a_runnable_install_entry(tmp_path: Path, lich: StandIn) -> None:
    root = copy_plugin(tmp_path)
    env = plugin_env(tmp_path, root, python_dir(tmp_path), **lich.env("card-1"))
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    write_settings(settings, f"{LICH_HOOK} SessionStart claude")
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "install-route-runs" and record["install_route"] == str(settings)
    # the install route's own entry is the one that reports: once
    run_command(f"{LICH_HOOK} SessionStart claude", SESSION, env, cwd=tmp_path)
    wait_for_log(env, 2)
    assert len(lich.wait(1)) == 1
    # its lich-hook gone (a deleted virtualenv): the plugin reports again
    write_settings(settings, f"{tmp_path}/gone/bin/lich-hook SessionStart claude")
    run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert len(lich.wait(2)) == 2
    assert log_records(env)[-1]["decision"] == "report"


def test_agent_calls_stand_down_per_tool(tmp_path: Path, lich: StandIn) -> None:
    """An install entry whose matcher covers Agent but not TaskStop: the plugin answers
    TaskStop only, so one call never gets two answers (or two cards)."""
    root = copy_plugin(tmp_path)
    env = plugin_env(tmp_path, root, python_dir(tmp_path), **lich.env("card-1"))
    settings = Path(env["CLAUDE_PROJECT_DIR"]) / ".claude" / "settings.local.json"
    write_settings(settings, f"{LICH_HOOK} PreToolUse claude", matcher="Agent|Task")
    for tool, decision in (("Agent", "install-route-runs"), ("TaskStop", None)):
        payload = {"tool_name": tool, "tool_input": {"task_id": "x"}, "session_id": SAMPLE_ID}
        ran = run_command(plugin_command("PreToolUse"), payload, env, cwd=tmp_path)
        assert (ran.returncode, ran.stderr) == (0, b"")
        record = log_records(env)[-1]
        if decision is None:
            assert record["decision"] != "install-route-runs"
        else:
            assert (ran.stdout, record["decision"]) == (b"", decision)


# --- the rule's pieces -------------------------------------------------------------------


def test_settings_files_are_the_harness_tables(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "cx")}
    for key in ("claude", "codex"):
        places = [path for _, path in SETTINGS[key].places(env, str(tmp_path / "p"))]
        assert routes.settings_files(key, env, str(tmp_path / "p")) == places
        assert routes.INSTALL_ROUTES[key].off_switch == SETTINGS[key].off_switch
    assert set(routes.INSTALL_ROUTES) == set(registrations.PLUGIN_ROOT_VARIABLE)


@pytest.mark.parametrize(
    "command",
    [
        "lich-hook SessionStart claude",
        "/opt/venv/bin/lich-hook Stop claude",
        "'/home/a b/.venv/bin/lich-hook' PreToolUse claude",
        "/x/lich-hook SessionStart",
        "lich-hook Stop claude && notify-send done",
        "lich-hook status-line",
        "/x/not-lich-hook SessionStart claude",
        "echo lich-hook SessionStart claude",
    ],
)
def test_the_cheap_reader_agrees_with_install_on_what_is_ours(command: str) -> None:
    assert routes.command_argv(command) == command_argv(command)


@pytest.mark.parametrize(
    ("matcher", "tool", "covered"),
    [
        (None, "Agent", True),
        ("", "Agent", True),
        ("*", "TaskStop", True),
        ("Agent|Task|TaskStop", "TaskStop", True),
        ("Agent|Task", "TaskStop", False),
        ("Agent", "AgentX", False),
        ("Ag.*", "Agent", True),
        ("Bash", "Agent", False),
    ],
)
def test_matchers(matcher: str | None, tool: str, covered: bool) -> None:
    assert routes.covers(matcher, tool) is covered


def test_runnable(tmp_path: Path) -> None:
    assert routes.runnable(str(LICH_HOOK), {})
    assert not routes.runnable(str(tmp_path / "lich-hook"), {})
    assert routes.runnable("lich-hook", {"PATH": str(LICH_HOOK.parent)})
    assert not routes.runnable("lich-hook", {"PATH": os.pathsep.join(["", "relative/bin"])})
