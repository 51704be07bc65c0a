"""Windows side of the listen test: start `lich-hook listen --port 0`, send it one report
through a hook with the variables it printed, stop it, and print what each showed (JSON).

Runs under the Windows CPython (tests/windows/test_commands.py); stdlib only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

LISTEN = r"C:\lich\python\lich-hook.exe listen --port 0"
BODY = b'{"session_id": "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10", "source": "startup"}'


def main() -> None:
    listen = subprocess.Popen(LISTEN, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert listen.stdout is not None
    lines: list[str] = []
    env = dict(os.environ)
    while True:
        line = listen.stdout.readline().decode("utf-8", "replace")
        if not line:
            break
        lines.append(line)
        for word in ("set ", "export "):
            if line.startswith(word) and "=" in line:
                key, _, value = line[len(word) :].strip().partition("=")
                env[key] = value
        if line.startswith("(Ctrl-C"):
            break
    hook = subprocess.run(
        "cmd.exe /C lich-hook SessionStart claude", input=BODY, env=env, capture_output=True
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        line = listen.stdout.readline().decode("utf-8", "replace")
        lines.append(line)
        if "session-start" in line or not line:
            break
    listen.kill()
    listen.wait()
    print(
        json.dumps(
            {
                "listen": "".join(lines),
                "hook": [hook.returncode, hook.stdout.decode(), hook.stderr.decode()],
            }
        )
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
