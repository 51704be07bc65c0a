"""Esc right after `lich open` answered (docs/agent-cards.md): lich has the task,
so the verdict must reach Claude Code whatever signal lands after that.

The stand-in lich prints its answer, then tells the test it is about to exit
(a Unix socket connection: no sleep is the synchronisation); the test sends SIGTERM or
SIGINT to the hook at a random offset from that moment, 0 to 30 ms, which
spans the hook's whole way from the open's end to its verdict.
"""

from __future__ import annotations

import json
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.agent_cards.fake_lich import agent_payload, session
from tests.support.runner import LICH_HOOK

STAND_IN = """
import os, socket, sys
sys.stdout.write({session!r})
sys.stdout.flush()
ready = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ready.connect({ready!r})
ready.sendall(b"answered")
os._exit(0)
"""

RUNS = 40


def test_a_signal_after_the_open_answered_never_costs_the_verdict(
    card_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    ready = tmp_path / "answered.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(ready))
    listener.listen(4)
    listener.settimeout(30)
    lich = tmp_path / "lich"
    lich.write_text(
        f"#!{sys.executable}\n"
        + STAND_IN.format(session=json.dumps(session("pending", name="w-1")), ready=str(ready))
    )
    lich.chmod(0o755)
    env = {**card_env, "LICH_BIN": str(lich)}
    payload = tmp_path / "payload.json"
    rng = random.Random(12)
    outcomes: list[str] = []
    for run in range(RUNS):
        payload.write_text(json.dumps(agent_payload(project)))  # a call of its own each run
        sig = signal.SIGTERM if run % 4 else signal.SIGINT
        with open(payload, "rb") as stdin:
            hook = subprocess.Popen(
                [str(LICH_HOOK), "PreToolUse", "claude"],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
        connection, _ = listener.accept()  # the stand-in has answered and is exiting
        with connection:
            assert connection.recv(64) == b"answered"
        offset = rng.uniform(0, 0.030)
        until = time.perf_counter() + offset
        while time.perf_counter() < until:
            pass
        try:
            hook.send_signal(sig)
        except ProcessLookupError:
            pass
        out, err = hook.communicate(timeout=30)
        if hook.returncode != 0 or not out:
            outcomes.append(f"{sig.name} +{offset * 1000:.1f} ms: exit {hook.returncode}, {out!r}")
            continue
        verdict = json.loads(out)["hookSpecificOutput"]
        assert verdict["permissionDecision"] == "deny"
        assert err == b""
    listener.close()
    assert outcomes == [], f"{len(outcomes)} of {RUNS} runs lost the verdict: {outcomes}"
