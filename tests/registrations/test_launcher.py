"""The plugin launcher's edge cases (docs/install.md, "The plugin's launcher").

Each is run as the harness runs the plugin's command (`/bin/sh -c`, stdin a
pipe), with fake interpreters on PATH: a `python3` that hangs, one that prints
to stdout and fails, one in `.` or a relative PATH entry, a Python 2, and a
copy without boot.py. A hang is bounded by the subprocess timeout, never waited
out with a sleep.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from lich_hooks.human.standin.server import StandIn
from tests.registrations.test_plugin_route import (
    SESSION,
    copy_plugin,
    only,
    plugin_command,
    plugin_env,
)
from tests.support.runner import run_command

# A Python that never answers (a broken shim, a dead network mount).
HANGS = f"exec {shutil.which('sleep')} 600"
NOISY = 'echo "{\\"decision\\": \\"block\\"}"; echo oops; exit 1'  # bytes the harness would parse
# What Python 2.7 does with the launcher's arguments: -I is unknown to it; the version probe
# (`-E -S -c <code>`) runs, and Python 2 computes 86 ("older than 3.10") from it.
PYTHON2 = 'case "$1" in -I) echo "Unknown option: -I" >&2; exit 2 ;; esac; exit 86'


def message(stdout: bytes) -> str:
    text = json.loads(stdout)["systemMessage"]
    assert isinstance(text, str)
    return text


def test_a_hanging_python_is_skipped_within_the_probe_limit(tmp_path: Path, lich: StandIn) -> None:
    root = copy_plugin(tmp_path)
    folder = only(tmp_path, python3=HANGS)
    (Path(folder) / "python3.12").symlink_to(sys.executable)
    env = plugin_env(tmp_path, root, folder, **lich.env("card-1"))
    started = time.monotonic()
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path, timeout=20)
    took = time.monotonic() - started
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert len(lich.wait(1)) == 1
    assert 2.0 <= took < 10, took  # the probe limit (2 s), not the fake's 600 s


def test_hanging_pythons_end_inside_the_timeout_and_say_so(tmp_path: Path, lich: StandIn) -> None:
    root = copy_plugin(tmp_path)
    asked = tmp_path / "asked"
    asked.mkdir()
    touch = shutil.which("touch")
    hang = {
        name: f"{touch} {asked}/{name}; {HANGS}" for name in ("python3", "python", "python3.12")
    }
    folder = only(tmp_path, **hang)
    env = plugin_env(tmp_path, root, folder, **lich.env("card-1"))
    started = time.monotonic()
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path, timeout=20)
    took = time.monotonic() - started
    assert (ran.returncode, ran.stderr) == (0, b"")
    # two probes at most (2 x 2 s, inside the 5 s timeout), then the person is told
    assert sorted(p.name for p in asked.iterdir()) == ["python", "python3"]
    assert 4.0 <= took < 12, took
    text = message(ran.stdout)
    assert "python3 on PATH did not start within 2 seconds" in text and "Fix: " in text
    outside = plugin_env(tmp_path, root, folder)
    quiet = run_command(plugin_command("Stop"), {}, outside, cwd=tmp_path, timeout=20)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, b"", b"")
    assert lich.received == []


def test_a_candidate_that_prints_and_fails_never_reaches_the_harness(
    tmp_path: Path, lich: StandIn
) -> None:
    root = copy_plugin(tmp_path)
    folder = only(tmp_path, python3=NOISY, python=NOISY)
    env = plugin_env(tmp_path, root, folder, **lich.env("card-1"))
    ran = run_command(plugin_command("PreToolUse"), {"tool_name": "Agent"}, env, cwd=tmp_path)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    said = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert "found none on PATH" in message(said.stdout)  # the one line, and nothing else
    (Path(folder) / "python3.11").symlink_to(sys.executable)
    works = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (works.returncode, works.stdout, works.stderr) == (0, b"", b"")
    assert len(lich.wait(1)) == 1


def test_python_in_the_current_directory_never_runs(tmp_path: Path, lich: StandIn) -> None:
    """`.`, an empty entry and a relative one all name the cwd (a repository): skipped."""
    root = copy_plugin(tmp_path)
    repo = tmp_path / "repo"
    (repo / "bin").mkdir(parents=True)
    ran_marker = tmp_path / "repository-python-ran"
    for fake in (repo / "python3", repo / "bin" / "python3"):
        fake.write_text(f"#!/bin/sh\ntouch {ran_marker}\nexit 0\n")
        fake.chmod(0o755)
    good = only(tmp_path)
    (Path(good) / "python3.12").symlink_to(sys.executable)
    for path in (f".:{good}", f":{good}", f"{good}::", f"bin:{good}"):
        env = plugin_env(tmp_path, root, path, **lich.env("card-1"))
        ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=repo)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b""), path
        probe = run_command(f'sh "{root}/plugin/lich-hook" --python', b"", env, cwd=repo)
        assert probe.stdout.decode().strip() == str(Path(good) / "python3.12"), path
    assert not ran_marker.exists()
    assert len(lich.wait(4)) == 4


def test_python_2_is_named_as_too_old(tmp_path: Path, lich: StandIn) -> None:
    root = copy_plugin(tmp_path)
    env = plugin_env(tmp_path, root, only(tmp_path, python3=PYTHON2), **lich.env("card-1"))
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (ran.returncode, ran.stderr) == (0, b"")
    assert "(python3 is older than 3.10)" in message(ran.stdout)
    assert lich.received == []


def test_a_copy_without_boot_py_says_the_copy_is_incomplete(tmp_path: Path, lich: StandIn) -> None:
    root = copy_plugin(tmp_path)
    (root / "plugin" / "boot.py").unlink()
    folder = only(tmp_path)
    (Path(folder) / "python3").symlink_to(sys.executable)
    env = plugin_env(tmp_path, root, folder, **lich.env("card-1"))
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (ran.returncode, ran.stderr) == (0, b"")
    text = message(ran.stdout)
    assert "plugin copy is incomplete (no plugin/boot.py)" in text
    assert "claude plugin install lich-hooks@lich-hooks" in text
    codex = run_command(f'sh "{root}/plugin/lich-hook" SessionStart codex', SESSION, env)
    assert "codex plugin add lich-hooks@lich-hooks" in message(codex.stdout)
    for event in ("Stop", "PreToolUse"):  # the other events, and outside lich: silence
        again = run_command(plugin_command(event), {"tool_name": "Agent"}, env, cwd=tmp_path)
        assert (again.returncode, again.stdout, again.stderr) == (0, b"", b"")
    outside = plugin_env(tmp_path, root, folder)
    quiet = run_command(plugin_command("SessionStart"), SESSION, outside, cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, b"", b"")
    assert lich.received == []


def test_the_probe_leaves_no_process_behind(tmp_path: Path, lich: StandIn) -> None:
    """A watchdog that outlived the hook would hold nothing of the harness's, but would
    linger: after runs that probed a hanging, an instantly failing and a good Python,
    none of ours is left."""
    root = copy_plugin(tmp_path)
    folder = only(tmp_path, python3=HANGS, python="exit 3")
    (Path(folder) / "python3.12").symlink_to(sys.executable)
    env = plugin_env(tmp_path, root, folder, **lich.env("card-1"))
    for _ in range(3):
        run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path, timeout=20)
    # Looked at right after the runs, not after waiting on reports (claims may make the three
    # runs one report): a timer told to stop may take a moment to die, so look until it has,
    # never past 1 s; an orphaned 2 s timer of the last run is still there then.
    assert _settled_sleeps(tmp_path) == []


def test_a_timer_stopped_at_once_leaves_no_sleep(tmp_path: Path, lich: StandIn) -> None:
    """A timer stopped right after it forks its sleep: a TERM that reached the child
    before it became `sleep` was caught by its inherited trap and lost (dash), leaving
    the sleep; 140 such stops left one or two in most runs of this test before the
    timer ended its sleep with KILL."""
    root = copy_plugin(tmp_path)
    names = ("python3", "python", *(f"python3.{minor}" for minor in range(10, 15)))
    folder = only(tmp_path, **dict.fromkeys(names, "exit 3"))
    env = plugin_env(tmp_path, root, folder, **lich.env("card-1"))
    for _ in range(20):
        ran = run_command(plugin_command("Stop"), {}, env, cwd=tmp_path, timeout=20)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert _settled_sleeps(tmp_path) == []
    assert lich.received == []


def _settled_sleeps(tmp_path: Path) -> list[list[bytes]]:
    """The leftovers once every stopped timer has had up to 1 s to die; an orphaned 2 s
    timer of the last run is still there then."""
    deadline = time.monotonic() + 1.0
    while (leftovers := _sleeps(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return leftovers


def _sleeps(tmp_path: Path) -> list[list[bytes]]:
    """The `sleep` processes started with this test's environment and not told to die: a
    stopped timer whose TERM is still pending (a loaded machine has not run it yet) is on
    its way out; an orphaned one has no signal pending."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            argv = Path("/proc", pid, "cmdline").read_bytes().split(b"\0")
            environ = Path("/proc", pid, "environ").read_bytes()
            status = Path("/proc", pid, "status").read_text()
        except OSError:
            continue
        if os.path.basename(argv[0]) == b"sleep" and str(tmp_path).encode() in environ:
            if not _dying(status):
                found.append(argv)
    return found


def _dying(status: str) -> bool:
    """A TERM or KILL pending for the process (/proc/<pid>/status SigPnd, ShdPnd)."""
    pending = 0
    for line in status.splitlines():
        name, _, value = line.partition(":")
        if name in ("SigPnd", "ShdPnd"):
            pending |= int(value.strip(), 16)
    return bool(pending & (1 << (signal.SIGTERM - 1) | 1 << (signal.SIGKILL - 1)))


def test_a_hook_that_runs_past_the_start_limit_is_never_cut(tmp_path: Path) -> None:
    """The limit is on starting, not running: an Agent call whose `lich open` answers after
    the 2 s limit still gets its card and its verdict (boot.py said it runs)."""
    import subprocess

    from tests.agent_cards.fake_lich import FakeLich, agent_payload, session

    root = copy_plugin(tmp_path)
    folder = only(tmp_path)
    (Path(folder) / "python3").symlink_to(sys.executable)
    fake = FakeLich(tmp_path)
    gate = tmp_path / "lich-may-answer"
    fake.script(open={"json": session("pending"), "wait_for": str(gate)})
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = plugin_env(
        tmp_path,
        root,
        folder,
        **fake.env(),
        LICH_PORT="9",
        LICH_TOKEN="t",
        LICH_SESSION_ID="card-1",
        LICH_SUBAGENT_DEPTH="0",
        CLAUDE_CODE_SESSION_ATTENDED="1",
        CLAUDE_CODE_ENTRYPOINT="cli",
    )
    hook = subprocess.Popen(
        ["/bin/sh", "-c", plugin_command("PreToolUse")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=project,
    )
    try:
        assert hook.stdin is not None
        hook.stdin.write(json.dumps(agent_payload(project)).encode())
        hook.stdin.close()
        deadline = time.monotonic() + 20
        while not fake.calls() and time.monotonic() < deadline:
            time.sleep(0.02)  # until `lich open` runs: the hook is past its start
        assert fake.calls(), "lich open never ran"
        time.sleep(2.5)  # the scenario: lich answers later than the launcher's start limit
        gate.touch()
        assert hook.stdout is not None and hook.stderr is not None
        hook.wait(timeout=30)
        stdout, stderr = hook.stdout.read(), hook.stderr.read()
    finally:
        hook.kill()
    assert (hook.returncode, stderr) == (0, b"")
    verdict = json.loads(stdout)["hookSpecificOutput"]
    assert verdict["permissionDecision"] == "deny"


def test_a_hung_candidates_child_never_holds_the_harness_stdout(
    tmp_path: Path, lich: StandIn
) -> None:
    """A `python3` shim that writes to fd 4 and hangs after starting a background child: neither
    ever had the harness's stdout (boot.py had not shown it runs), so a harness reading stdout
    to its end sees EOF once the next Python has reported, not when the child ends, and
    nothing the shim wrote. The launcher's private directory goes with it."""
    root = copy_plugin(tmp_path)
    child = tmp_path / "child-pid"
    sleep = shutil.which("sleep")
    shim = f'{sleep} 60 & echo $! > {child}; echo \'{{"decision": "block"}}\' >&4; {HANGS}'
    folder = only(tmp_path, python3=shim)
    (Path(folder) / "python3.12").symlink_to(sys.executable)
    temp = tmp_path / "temp"
    temp.mkdir()
    env = plugin_env(tmp_path, root, folder, TMPDIR=str(temp), **lich.env("card-1"))
    try:
        ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path, timeout=20)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
        assert 2.0 <= ran.seconds < 10, ran.seconds  # the start limit, not the child's 60 s
        assert len(lich.wait(1)) == 1
        assert list(temp.iterdir()) == []
    finally:
        if child.exists():
            os.kill(int(child.read_text()), 9)


def test_without_a_private_directory_the_hook_still_answers(tmp_path: Path) -> None:
    """No directory for the candidates' output (TMPDIR unwritable, or no mktemp): fd 4 is the
    harness's stdout, as before, and the verdict arrives whole."""
    from tests.agent_cards.fake_lich import FakeLich, agent_payload, session

    root = copy_plugin(tmp_path)
    folder = only(tmp_path)
    (Path(folder) / "python3").symlink_to(sys.executable)
    fake = FakeLich(tmp_path)
    fake.script(open={"json": session("pending")})
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    verdicts: list[str] = []
    for temp in (str(tmp_path / "missing"), str(tmp_path)):
        env = plugin_env(
            tmp_path,
            root,
            folder,
            **fake.env(),
            TMPDIR=temp,
            LICH_PORT="9",
            LICH_TOKEN="t",
            LICH_SESSION_ID="card-1",
            LICH_SUBAGENT_DEPTH="0",
            CLAUDE_CODE_SESSION_ATTENDED="1",
            CLAUDE_CODE_ENTRYPOINT="cli",
        )
        payload = agent_payload(project) | {"tool_use_id": f"toolu_{len(verdicts)}"}
        ran = run_command(plugin_command("PreToolUse"), payload, env, cwd=project)
        assert (ran.returncode, ran.stderr) == (0, b"")
        verdicts.append(json.loads(ran.stdout)["hookSpecificOutput"]["permissionDecision"])
    assert verdicts == ["deny", "deny"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("lich-hook.")]
