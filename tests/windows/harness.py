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
import shutil
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

    def launch() -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            str(spec["command"]),
            input=payload,
            env=env,
            cwd=cwd if isinstance(cwd, str) and cwd else None,
            capture_output=True,
            timeout=float(timeout) if isinstance(timeout, (int, float)) else 60.0,
            check=False,
        )

    try:
        try:
            if spec.get("fault") == LOST_BY_WINE:  # test_harness.py: Wine's failure, on demand
                raise OSError(None, "a fault the test asked for", None, LOST_BY_WINE)
            proc = launch()
            relaunched = "cmd" if _lost_by_cmd(proc, env) else ""
        except OSError as error:
            if getattr(error, "winerror", None) != LOST_BY_WINE:
                raise
            relaunched = "createprocess"
        if relaunched:
            proc = launch()
    except subprocess.TimeoutExpired as error:
        return {"rc": None, "timeout": True, "stdout": "", "stderr": str(error)}
    return {
        "rc": proc.returncode,
        "stdout": base64.b64encode(proc.stdout).decode(),
        "stderr": base64.b64encode(proc.stderr).decode(),
        "seconds": time.perf_counter() - started,
        "relaunched": relaunched,
    }


# ERROR_INTERNAL_ERROR from Wine 8.0's CreateProcess: once in the 7 full runs of the last round
# (the Windows dedupe test, a hook run on the shared prefix under load), before any code of ours
# ran; the runs before and after it started. The run is made again, once, and reported.
LOST_BY_WINE = 1359


def _lost_by_cmd(proc: subprocess.CompletedProcess[bytes], env: dict[str, str] | None) -> bool:
    """Wine 8.0's cmd.exe now and then answers 9009 "Can't recognize 'lich-hook ...'" for a
    program on PATH (once in 19 Windows-suite runs; the runs before and after it found it). No
    code of ours ran, so the run is made again, once, and reported (wine.py warns). A program
    really missing stays 9009: its name is not found here either."""
    if proc.returncode != 9009 or not proc.stderr.startswith(b"Can't recognize '"):
        return False
    words = proc.stderr[len(b"Can't recognize '") :].split()
    if not words or b'"' in words[0]:
        return False
    search = (env or os.environ).get("PATH")
    return shutil.which(words[0].decode("ascii", "replace"), path=search) is not None


def main() -> None:
    runs = json.loads(sys.stdin.buffer.read() or b"[]")
    results = [run(spec) for spec in runs]
    sys.stdout.write(json.dumps(results))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
