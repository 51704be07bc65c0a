"""The interactive check under real fake-`claude` parent processes (Linux /proc).

Each test starts a process that /proc shows as claude, in one of the launcher
shapes Claude Code ships as (a native executable named `claude`; an
interpreter running a script named `claude`, directly or through a shebang
like npm's link), with its fd 0 on a pty, a pipe or /dev/null, and lets it run
the check as its child, the way Claude Code runs a hook.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.interactive.launchers import (
    HOOK,
    NODE,
    SHAPES,
    nested_command,
    run_under_claude,
    worker_env,
)
from tests.support.runner import base_env, wait_for_log

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

PROBE = (
    shlex.quote(sys.executable)
    + " -c "
    + shlex.quote(
        "import json, os\n"
        "from lich_hooks.hook import interactive\n"
        "e = interactive.check(os.environ)\n"
        "print(json.dumps([e.interactive, e.why]))"
    )
)
STOP = {
    "session_id": "s-1",
    "transcript_path": "",
    "cwd": "/tmp",
    "hook_event_name": "Stop",
    "stop_hook_active": False,
    "last_assistant_message": "Done: the tests pass.",
    "background_tasks": [],
}


def probe(tmp: Path, shape: str, args: list[str], stdin: str, **environ: str) -> tuple[bool, str]:
    hooked = run_under_claude(tmp, shape, args, {}, base_env(tmp, **environ), stdin, PROBE)
    assert (hooked.returncode, hooked.stderr) == (0, b"")
    interactive, why = json.loads(hooked.stdout)
    return interactive, why


@pytest.mark.parametrize("shape", SHAPES)
def test_terminal_without_print_is_interactive(tmp_path: Path, shape: str) -> None:
    interactive, why = probe(tmp_path, shape, ["--resume", "x"], "tty")
    assert interactive is True, why
    assert why.endswith("no -p, terminal on stdin")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("args", [["-p", "hi"], ["hi", "--print"], ["--model", "opus", "-p"]])
def test_print_flag_is_not_interactive(tmp_path: Path, shape: str, args: list[str]) -> None:
    # A terminal on stdin does not help: the flag alone decides.
    interactive, why = probe(tmp_path, shape, args, "tty")
    assert interactive is False
    assert why.endswith("runs with -p/--print")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("stdin", ["pipe", "devnull"])
def test_no_terminal_on_stdin_is_not_interactive(tmp_path: Path, shape: str, stdin: str) -> None:
    interactive, why = probe(tmp_path, shape, [], stdin)
    assert interactive is False
    assert "has no terminal on stdin" in why


@pytest.mark.skipif(NODE is None, reason="needs node")
def test_node_claude_that_renames_itself_is_caught_by_stdin(tmp_path: Path) -> None:
    """Claude Code sets process.title = "claude": /proc then shows argv "claude" alone,
    and the -p is gone from it. A tool's `claude -p` has no terminal on stdin."""
    hooked = run_under_claude(
        tmp_path, "node", ["-p", "x"], {}, base_env(tmp_path, FAKE_TITLE="claude"), "pipe", PROBE
    )
    interactive, why = json.loads(hooked.stdout)
    assert interactive is False
    assert "has no terminal on stdin" in why


def test_sdk_entrypoint_under_an_interactive_looking_parent(tmp_path: Path) -> None:
    env = {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}
    assert probe(tmp_path, "native", [], "tty", **env) == (False, "CLAUDE_CODE_ENTRYPOINT=sdk-cli")


def test_attended_overrides_the_process_evidence(tmp_path: Path) -> None:
    assert probe(tmp_path, "native", ["-p"], "pipe", CLAUDE_CODE_SESSION_ATTENDED="1")[0] is True
    (tmp_path / "b").mkdir()
    attended_0 = probe(tmp_path / "b", "native", [], "tty", CLAUDE_CODE_SESSION_ATTENDED="0")
    assert attended_0[0] is False


def test_claude_pid_names_the_launcher(tmp_path: Path) -> None:
    """A claude under another name (here a python script `cc`): CLAUDE_PID finds it."""
    hook = f"CLAUDE_PID=$PPID {PROBE}"  # $PPID of the hook's shell: the launcher
    env = base_env(tmp_path)
    named = run_under_claude(tmp_path, "python", ["-p"], {}, env, "tty", hook, name="named")
    assert json.loads(named.stdout)[0] is False
    plain = run_under_claude(tmp_path, "python", [], {}, env, "pipe", hook, name="plain")
    assert json.loads(plain.stdout)[0] is False


def test_nested_print_inside_an_interactive_claude(tmp_path: Path) -> None:
    """The worker (interactive, on a pty) runs `claude -p` from a tool: the nearest wins."""
    inner, inner_out = nested_command(tmp_path, "python", ["-p", "summarise"])
    probe_inner = inner.replace(f"FAKE_HOOK={shlex.quote(HOOK)}", f"FAKE_HOOK={shlex.quote(PROBE)}")
    run_under_claude(tmp_path, "native", [], {}, base_env(tmp_path), "tty", probe_inner)
    interactive, why = json.loads((inner_out / "stdout").read_bytes())
    assert interactive is False
    assert why.endswith("runs with -p/--print")


# -- through the console script: a worker's Stop -----------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_interactive_worker_answers(tmp_path: Path, lich: StandIn, shape: str) -> None:
    env = worker_env(tmp_path, lich.env("card-w"))
    hooked = run_under_claude(tmp_path, shape, [], STOP, env, "tty")
    assert (hooked.returncode, hooked.stdout, hooked.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert (request.status, request.accepted) == (
        204,
        {"session_id": "card-w", "text": "Done: the tests pass."},
    )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("args", "stdin"), [(["-p", "x"], "tty"), ([], "pipe"), ([], "devnull")])
def test_print_mode_inside_a_worker_never_answers(
    tmp_path: Path, lich: StandIn, shape: str, args: list[str], stdin: str
) -> None:
    env = worker_env(tmp_path, lich.env("card-w"))
    hooked = run_under_claude(tmp_path, shape, args, STOP, env, stdin)
    assert (hooked.returncode, hooked.stdout, hooked.stderr) == (0, b"", b"")
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "not-interactive"
    assert lich.received == []


def test_nested_print_in_a_worker_never_answers(tmp_path: Path, lich: StandIn) -> None:
    env = worker_env(tmp_path, lich.env("card-w"))
    inner, inner_out = nested_command(tmp_path, "python", ["-p", "summarise"])
    run_under_claude(tmp_path, "native", [], STOP, env, "tty", inner)
    assert (inner_out / "stdout").read_bytes() == b""
    [record] = wait_for_log(env, 1)
    assert record["decision"] == "not-interactive"
    assert lich.received == []
