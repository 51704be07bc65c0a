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

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.registrations.test_plugin_route import (
    SESSION,
    copy_plugin,
    only,
    plugin_command,
    plugin_env,
    python_dir,
)
from tests.support.runner import run_command, wait_for_log

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


@pytest.mark.parametrize("part", ["boot.py", "lich_hooks_boot.py"])
def test_a_copy_without_boot_py_says_the_copy_is_incomplete(
    part: str, tmp_path: Path, lich: StandIn
) -> None:
    """boot.py and the module it runs (compiled once, not on every run like a script)."""
    root = copy_plugin(tmp_path)
    (root / "plugin" / part).unlink()
    folder = only(tmp_path)
    (Path(folder) / "python3").symlink_to(sys.executable)
    env = plugin_env(tmp_path, root, folder, **lich.env("card-1"))
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (ran.returncode, ran.stderr) == (0, b"")
    text = message(ran.stdout)
    assert f"plugin copy is incomplete (no plugin/{part})" in text
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
    env = _agent_env(tmp_path, root, folder, fake)
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
        env = _agent_env(tmp_path, root, folder, fake, TMPDIR=temp)
        payload = agent_payload(project) | {"tool_use_id": f"toolu_{len(verdicts)}"}
        ran = run_command(plugin_command("PreToolUse"), payload, env, cwd=project)
        assert (ran.returncode, ran.stderr) == (0, b"")
        verdicts.append(json.loads(ran.stdout)["hookSpecificOutput"]["permissionDecision"])
    assert verdicts == ["deny", "deny"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("lich-hook.")]


BOUND = 256 * 1024  # plugin/lich-hook's BOUND_BLOCKS of 512 bytes


def _agent_env(
    tmp_path: Path, root: Path, folder: str, fake: object, **extra: str
) -> dict[str, str]:
    from tests.agent_cards.fake_lich import FakeLich

    assert isinstance(fake, FakeLich)
    return plugin_env(
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
        **extra,
    )


def _private_mounts() -> list[str]:
    """`unshare` words that give a command its own mount namespace (root, or a user namespace)."""
    import subprocess

    unshare = shutil.which("unshare")
    if unshare is None or shutil.which("mount") is None:
        pytest.skip("no unshare or mount here: a full TMPDIR needs a private tmpfs")
    for words in ([unshare, "-m"], [unshare, "-rm"]):
        probe = subprocess.run([*words, "true"], capture_output=True, check=False)
        if probe.returncode == 0:
            return words
    pytest.skip("unshare cannot make a mount namespace here (not root, no user namespaces)")


def _on_a_full_tmpdir(words: list[str], temp: Path, command: str) -> str:
    """`command`, run by sh in a mount namespace where `temp` is a 32 kB tmpfs filled to the
    last block (exit 97 if it is not full)."""
    import shlex

    mount, head = shutil.which("mount"), shutil.which("head")
    script = (
        f'{mount} -t tmpfs -o size=32k tmpfs "$1" || exit 96; '
        f'{head} -c 1048576 /dev/zero > "$1/fill" 2>/dev/null; '
        f'if printf x 2>/dev/null > "$1/probe"; then exit 97; fi; exec /bin/sh -c "$2"'
    )
    argv = [*words, "/bin/sh", "-c", script, "sh", str(temp), command]
    return " ".join(shlex.quote(word) for word in argv)


def test_a_full_tmpdir_still_delivers_the_deny_and_the_toast(tmp_path: Path) -> None:
    """A full `$TMPDIR` leaves the private directory and the empty file makeable (an inode each)
    and fails every write of the hook's output: the Agent call's deny came after `lich open`
    had run, so a lost one ran the task twice. The output goes through the directory's FIFO,
    and each call's `lich open` runs once."""
    from tests.agent_cards.fake_lich import FakeLich, agent_payload, session, toast

    words = _private_mounts()
    root = copy_plugin(tmp_path)
    folder = only(tmp_path)
    (Path(folder) / "python3").symlink_to(sys.executable)
    fake = FakeLich(tmp_path)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    temp = tmp_path / "temp"
    temp.mkdir()
    env = _agent_env(tmp_path, root, folder, fake, TMPDIR=str(temp))
    command = _on_a_full_tmpdir(words, temp, plugin_command("PreToolUse"))
    fake.script(open={"json": session("pending")})
    denied = run_command(command, agent_payload(project) | {"tool_use_id": "toolu_1"}, env)
    assert (denied.returncode, denied.stderr) == (0, b""), denied.stdout
    verdict = json.loads(denied.stdout)["hookSpecificOutput"]
    assert verdict["permissionDecision"] == "deny"
    fake.script(open={"stdout": "[1, 2]", "exit": 0})
    toasted = run_command(command, agent_payload(project) | {"tool_use_id": "toolu_2"}, env)
    assert (toasted.returncode, toasted.stderr) == (0, b"")
    said = toast(toasted.stdout)
    assert said.endswith("lich open failed: it printed no JSON (exit 0)"), said
    assert len(fake.calls()) == 2  # one `lich open` per call
    records = wait_for_log(env, 2)
    assert [record.get("stdout_via") for record in records] == ["relayed", "relayed"]
    assert list(temp.iterdir()) == []  # the tmpfs was the namespace's only


def test_a_candidate_that_writes_without_end_is_cut_at_the_bound(tmp_path: Path) -> None:
    """A `python3` first on PATH that writes to the hook's output file without end (here its
    own child, before it runs boot.py): the file stops at 256 KiB, where today's launcher let
    it fill the disk; what it wrote never reaches the harness, the hook's verdict does, whole."""
    from tests.agent_cards.fake_lich import FakeLich, agent_payload, session

    root = copy_plugin(tmp_path)
    count = tmp_path / "written"
    writer = (
        "import os, sys\n"
        "n = 0\n"
        "try:\n"
        "    while n < 8 << 20:\n"  # 8 MiB: where the test stops a writer nothing cut
        "        n += os.write(4, b'y' * 4096)\n"
        "except OSError:\n"
        "    pass\n"
        "open(sys.argv[1], 'w').write(str(n))\n"
    )
    script = tmp_path / "writer.py"
    script.write_text(writer)
    shim = f'{sys.executable} {script} {count}\nexec {sys.executable} "$@"'
    folder = only(tmp_path, python3=shim)
    fake = FakeLich(tmp_path)
    fake.script(open={"json": session("pending")})
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    temp = tmp_path / "temp"
    temp.mkdir()
    env = _agent_env(tmp_path, root, folder, fake, TMPDIR=str(temp))
    ran = run_command(plugin_command("PreToolUse"), agent_payload(project), env, timeout=60)
    assert int(count.read_text()) == BOUND
    assert (ran.returncode, ran.stderr) == (0, b"")
    assert b"yyyy" not in ran.stdout
    verdict = json.loads(ran.stdout)["hookSpecificOutput"]
    assert verdict["permissionDecision"] == "deny"
    assert len(fake.calls()) == 1
    assert list(temp.iterdir()) == []


def test_the_bound_is_the_candidates_not_the_hooks(tmp_path: Path, lich: StandIn) -> None:
    """boot.py lifts the launcher's bound for itself: the hook's log past 256 KiB still takes
    its line (and `lich open`, the sender, every child of the hook, write files of any size)."""
    root = copy_plugin(tmp_path)
    env = plugin_env(tmp_path, root, python_dir(tmp_path), **lich.env("card-1"))
    log = Path(env["LICH_HOOK_LOG"])
    log.write_text(json.dumps({"event": "earlier"}) + "\n" + " " * BOUND + "\n")
    ran = run_command(plugin_command("SessionStart"), SESSION, env, cwd=tmp_path)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert len(lich.wait(1)) == 1
    [record] = [r for r in wait_for_log(env, 2) if r.get("event") == "SessionStart"]
    assert record["outcome"] == "taken"
