"""Run the real `lich-hook` console script the way a harness does.

Harnesses run a registration's command string with `sh -c`, the payload on
stdin, in their own environment; these helpers do exactly that, with an
environment built from scratch so no test can see or touch the real home.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias

BIN_DIR = Path(sys.executable).parent
LICH_HOOK = BIN_DIR / "lich-hook"

# A crash inside a job looks, from outside, like a quiet "no verdict": exit 0,
# the harness's default stdout, nothing on stderr. The only trace is the run's
# `internal-error` decision, so every log a test hands a hook is remembered
# here, and tests/conftest.py's guard reads them after each test.
_watched_logs: set[Path] = set()
_debug_errors: list[str] = []
INTERNAL_ERROR = "internal-error"

# What a test puts on a hook's stdin: raw bytes or text, or an object to JSON-encode.
Stdin: TypeAlias = "bytes | str | Mapping[str, object] | None"


class Ran:
    """What the harness saw: exit code, stdout, stderr, and how long it waited."""

    def __init__(self, proc: subprocess.CompletedProcess[bytes], seconds: float) -> None:
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.seconds = seconds

    def json(self) -> object:
        return json.loads(self.stdout)


def base_env(tmp: Path, **extra: str) -> dict[str, str]:
    """A harness-like environment: PATH to this venv, a private HOME, our state and log."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": f"{BIN_DIR}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "LICH_HOOK_STATE_DIR": str(tmp / "state"),
        "LICH_HOOK_LOG": str(tmp / "hook.log"),
        "LANG": "C.UTF-8",
    }
    env.update(extra)
    watch_log(env.get("LICH_HOOK_LOG"))
    return env


def watch_log(path: str | os.PathLike[str] | None) -> None:
    """Have the crash guard read this LICH_HOOK_LOG after the test."""
    if path:
        _watched_logs.add(Path(path))


def forget_watched() -> None:
    _watched_logs.clear()
    _debug_errors.clear()


def internal_errors() -> list[str]:
    """Every hook run since forget_watched() that logged `internal-error`, as text.

    Read from each watched LICH_HOOK_LOG (its `error` field) and from the
    LICH_HOOK_DEBUG lines of runs made through run_command.
    """
    found = list(_debug_errors)
    for path in sorted(_watched_logs):
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("decision") == INTERNAL_ERROR:
                found.append(f"{path}: {record.get('error')}")
    return found


def run_command(
    command: str,
    payload: Stdin,
    env: dict[str, str],
    cwd: Path | None = None,
    timeout: float = 30,
) -> Ran:
    """`sh -c command` with `payload` on stdin (a dict is JSON-encoded)."""
    if isinstance(payload, Mapping):
        data = json.dumps(dict(payload)).encode()
    elif isinstance(payload, str):
        data = payload.encode()
    else:
        data = payload or b""
    started = time.monotonic()
    proc = subprocess.run(
        ["/bin/sh", "-c", command],
        input=data,
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    watch_log(env.get("LICH_HOOK_LOG"))
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("lich-hook: ") and line.endswith(f": {INTERNAL_ERROR}"):
            _debug_errors.append(line)
    return Ran(proc, time.monotonic() - started)


def run_hook(
    args: str,
    payload: Stdin,
    env: dict[str, str],
    cwd: Path | None = None,
    timeout: float = 30,
) -> Ran:
    """`lich-hook <args>` through `sh -c`, as a registration would run it."""
    return run_command(f"lich-hook {args}", payload, env, cwd, timeout)


def run_together(
    args: str, payloads: list[bytes], env: dict[str, str]
) -> list[subprocess.CompletedProcess[bytes]]:
    """`lich-hook <args>` once per payload, all at one moment, as a harness's parallel calls.

    Each waits at a gate with its payload ready, so none waits on the spawning of the
    others: the hook's stdin deadline is 2 s, which 50 spawns on a loaded machine exceed.
    """
    gate, opener = os.pipe()
    script = f'read -r _; printf %s "$1" | exec "$0" {args}'
    procs = [
        subprocess.Popen(
            ["/bin/sh", "-c", script, str(LICH_HOOK), payload.decode()],
            stdin=gate,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for payload in payloads
    ]
    os.close(gate)
    os.close(opener)  # the gate opens: every `read` ends
    watch_log(env.get("LICH_HOOK_LOG"))
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def start_seconds() -> float:
    """What a hook run costs on this machine right now: one run outside lich, which does
    nothing. A wall-clock bound on a run counts from this, not from zero, so a loaded
    machine's slow process start cannot fail it and a wait the bound forbids still does."""
    env = {"PATH": f"{BIN_DIR}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(Path.home())}
    return run_hook("PreToolUse crush", b"{}", env).seconds


def log_records(env: dict[str, str]) -> list[dict[str, object]]:
    path = Path(env["LICH_HOOK_LOG"])
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for_log(env: dict[str, str], count: int, timeout: float = 5.0) -> list[dict[str, object]]:
    """Each run writes one log line, after its report when it sends one: wait for `count`."""
    deadline = time.monotonic() + timeout
    while True:
        records = log_records(env)
        if len(records) >= count or time.monotonic() > deadline:
            return records
        time.sleep(0.01)
