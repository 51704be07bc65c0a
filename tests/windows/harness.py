"""The Windows side of the Windows suite: runs what a harness runs, under Windows CPython.

Started by tests/windows/wine.py under Wine, with a JSON list of runs on
stdin; prints one JSON result per run. Each run is a command line handed to
CreateProcess verbatim (a string, as Codex hands `cmd.exe /C <command>` and
Crush its own argv), with its payload on stdin and its three streams on
pipes (Wine needs pipes). The same file, copied as `app-server` or `server`
into C:\\lich\\play, is what the stand-in `codex.exe app-server` and `crush.exe
server` run: a harness process whose children are the hooks.

Standard library only, and Python 3.10 syntax: it runs on the embeddable CPython.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time

# What a Windows process needs of its environment; the rest of what Wine passes
# through from Linux is dropped, so a hook sees a Windows-shaped environment.
KEEP = (
    "ALLUSERSPROFILE",
    "COMPUTERNAME",
    "COMSPEC",
    "NUMBER_OF_PROCESSORS",
    "OS",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PUBLIC",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERDOMAIN",
    "USERNAME",
    "WINDIR",
)


def windows_env(extra: dict[str, str] | None, unset: list[str]) -> dict[str, str]:
    env = {key: os.environ[key] for key in KEEP if key in os.environ}
    env["PATH"] = r"C:\lich\python;C:\windows\system32;C:\windows"
    env.update(extra or {})
    for key in unset:
        env.pop(key, None)
    return env


def run(spec: dict[str, object]) -> dict[str, object]:
    extra = spec.get("env")
    unset = spec.get("unset")
    env = (
        None
        if spec.get("inherit")
        else windows_env(
            {str(k): str(v) for k, v in extra.items()} if isinstance(extra, dict) else None,
            [str(key) for key in unset] if isinstance(unset, list) else [],
        )
    )
    data = spec.get("stdin")
    payload = base64.b64decode(data) if isinstance(data, str) else b""
    cwd = spec.get("cwd")
    timeout = spec.get("timeout")
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            str(spec["command"]),
            input=payload,
            env=env,
            cwd=cwd if isinstance(cwd, str) and cwd else None,
            capture_output=True,
            timeout=float(timeout) if isinstance(timeout, (int, float)) else 60.0,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        return {"rc": None, "timeout": True, "stdout": "", "stderr": str(error)}
    return {
        "rc": proc.returncode,
        "stdout": base64.b64encode(proc.stdout).decode(),
        "stderr": base64.b64encode(proc.stderr).decode(),
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    runs = json.loads(sys.stdin.buffer.read() or b"[]")
    results = [run(spec) for spec in runs]
    sys.stdout.write(json.dumps(results))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
