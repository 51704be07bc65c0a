"""Fake `claude` parents: real processes that run the hook as their child.

Claude Code runs a hook as `sh -c "<command>"` with the payload piped to it,
while its own stdin is the user's terminal (interactive) or whatever started
`claude -p`. These launchers reproduce exactly what the interactive check
reads from /proc: the claude process's argv (in each launcher shape) and what
its fd 0 points at. The hook's stdout, stderr and exit code are written to
files, because the launcher's own stdio is part of the experiment.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from tests.support.runner import base_env

HOOK = "lich-hook Stop claude"

PY_LAUNCHER = """\
import os, subprocess, sys
out = os.environ["FAKE_OUT"]
with open(os.environ["FAKE_PAYLOAD"], "rb") as handle:
    payload = handle.read()
proc = subprocess.run(
    ["/bin/sh", "-c", os.environ["FAKE_HOOK"]], input=payload, capture_output=True
)
for name, data in (("stdout", proc.stdout), ("stderr", proc.stderr)):
    with open(os.path.join(out, name), "wb") as handle:
        handle.write(data)
with open(os.path.join(out, "rc"), "w") as handle:
    handle.write(str(proc.returncode))
"""

JS_LAUNCHER = """\
const fs = require("fs");
const cp = require("child_process");
if (process.env.FAKE_TITLE) process.title = process.env.FAKE_TITLE;
const out = process.env.FAKE_OUT;
const r = cp.spawnSync("/bin/sh", ["-c", process.env.FAKE_HOOK], {
  input: fs.readFileSync(process.env.FAKE_PAYLOAD),
});
fs.writeFileSync(out + "/stdout", r.stdout);
fs.writeFileSync(out + "/stderr", r.stderr);
fs.writeFileSync(out + "/rc", String(r.status));
"""

SH_SCRIPT = (
    '/bin/sh -c "$FAKE_HOOK" < "$FAKE_PAYLOAD" > "$FAKE_OUT/stdout" 2> "$FAKE_OUT/stderr"; '
    'echo $? > "$FAKE_OUT/rc"'
)

NODE = shutil.which("node")
BASH = os.path.realpath(shutil.which("bash") or "/bin/bash")
SHAPES = ["native", "python", "python-shebang"] + (["node"] if NODE else [])


class Hooked:
    """What the hook run by a fake claude printed, and how it exited."""

    def __init__(self, out: Path) -> None:
        self.stdout = (out / "stdout").read_bytes()
        self.stderr = (out / "stderr").read_bytes()
        self.returncode = int((out / "rc").read_text().strip())


def launcher_argv(shape: str, directory: Path, args: list[str]) -> list[str]:
    """argv that starts a process /proc shows as claude, in the given shape, with `args`.

    native: a copy of bash named `claude` (argv[0] is `…/claude`);
    python: `python …/claude args`; python-shebang: the script exec'd directly,
    which the kernel turns into `python …/claude args` like npm's
    `#!/usr/bin/env node` link; node: `node …/claude args`.
    """
    directory.mkdir(parents=True, exist_ok=True)
    claude = directory / "claude"
    if shape == "native":
        # bash, not dash: dash applies a simple command's redirections in the
        # shell itself (and restores them after), so the "claude" would show
        # the payload file on its own fd 0 while the hook runs.
        shutil.copy(BASH, claude)
        return [str(claude), "-c", SH_SCRIPT, "claude", *args]
    if shape == "python":
        claude.write_text(PY_LAUNCHER)
        return [sys.executable, str(claude), *args]
    if shape == "python-shebang":
        claude.write_text(f"#!{sys.executable}\n{PY_LAUNCHER}")
        claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
        return [str(claude), *args]
    if shape == "node":
        assert NODE is not None
        claude.write_text(JS_LAUNCHER)
        return [NODE, str(claude), *args]
    raise ValueError(shape)


def run_under_claude(
    tmp: Path,
    shape: str,
    args: list[str],
    payload: dict[str, object] | bytes,
    env: dict[str, str],
    stdin: str = "tty",
    hook: str = HOOK,
    name: str = "launch",
) -> Hooked:
    """Start a fake claude with `args` and fd 0 = `stdin` (tty, pipe, devnull); it runs `hook`."""
    work = tmp / name
    out = work / "out"
    out.mkdir(parents=True)
    payload_file = work / "payload.json"
    payload_file.write_bytes(
        payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    )
    argv = launcher_argv(shape, work / "bin", args)
    full_env = {
        **env,
        "FAKE_OUT": str(out),
        "FAKE_PAYLOAD": str(payload_file),
        "FAKE_HOOK": hook,
    }
    master = slave = None
    if stdin == "tty":
        master, slave = os.openpty()
        source: int = slave
    elif stdin == "pipe":
        source = subprocess.PIPE
    else:
        source = subprocess.DEVNULL
    try:
        proc = subprocess.run(
            argv,
            stdin=source,
            env=full_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=30,
            check=False,
        )
    finally:
        for fd in (master, slave):
            if fd is not None:
                os.close(fd)
    assert proc.returncode == 0, proc.stderr
    return Hooked(out)


def nested_command(tmp: Path, shape: str, args: list[str], name: str = "inner") -> tuple[str, Path]:
    """A shell command that starts a second fake claude (stdin /dev/null, as a tool's
    `claude -p` has) which runs the hook; returns it and where its hook's output lands."""
    import shlex

    work = tmp / name
    out = work / "out"
    out.mkdir(parents=True)
    argv = launcher_argv(shape, work / "bin", args)
    command = (
        f"FAKE_OUT={shlex.quote(str(out))} FAKE_HOOK={shlex.quote(HOOK)} "
        + " ".join(shlex.quote(arg) for arg in argv)
        + " < /dev/null"
    )
    return command, out


def worker_env(tmp: Path, lich_vars: dict[str, str], **extra: str) -> dict[str, str]:
    """A worker card's terminal (depth 1) with no Claude Code variables unless given."""
    return base_env(tmp, **lich_vars, LICH_SUBAGENT_DEPTH="1", **extra)
