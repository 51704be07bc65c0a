"""What attributing a Crush hook under a shared `crush server` costs (Linux only).

    python benchmarks/crush_server.py            # 40 rounds
    python benchmarks/crush_server.py --quick    # 10 rounds

Like benchmarks/codex_daemon.py, on the test suite's fake server
(tests/crush_server/fake_crush.py): real processes named `crush`, the server's
two API calls on its Unix socket, real sock_diag and /proc, so the probe does
the work it does under Crush v0.90.0. The server carries card A; clients for
card A (projA) and card B (projB) are connected; every hook is for projB.

Rows, timed in this process from spawn until the hook exited with its pipes
closed (what Crush waits for), interleaved:
  * python -c pass, the yardstick of the no-op paths;
  * crush PreToolUse under the server, after the first report: the
    attribution plus the no-op (every later tool call of a conversation pays
    this, and only under the server);
  * crush PreToolUse in its own environment, after the first report: the
    local mode's no-op path (latency.py's row), for the attribution's share.
Also: the probe alone (`who_runs` + `find_card`), in ms, from the hooks' log.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from latency import LICH_HOOK  # noqa: E402

from lich_hooks.human.standin.server import StandIn  # noqa: E402
from tests.crush_server.fake_crush import FakeCrush  # noqa: E402


def spawn_ms(argv: list[str], env: dict[str, str], stdin: bytes, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, check=False)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    rounds = 10 if parser.parse_args().quick else 40
    if sys.platform != "linux":
        print("crush server attribution: Linux only (it reads /proc and sock_diag)")
        return 0
    with tempfile.TemporaryDirectory(prefix="lb-", dir="/tmp") as scratch, StandIn() as lich_a:
        root = Path(scratch)
        with StandIn() as lich_b:
            dirs = {name: root / name for name in ("projA", "projB")}
            for folder in dirs.values():
                folder.mkdir()
            base = {"PATH": f"{LICH_HOOK.parent}:/usr/bin:/bin", "HOME": str(root),
                    "LICH_HOOK_STATE_DIR": str(root / "state"),
                    "LICH_HOOK_LOG": str(root / "hook.log")}  # fmt: skip
            env_a = {**base, **lich_a.env("card-A"), "XDG_RUNTIME_DIR": str(root)}
            env_b = {**env_a, **lich_b.env("card-B")}
            fake = FakeCrush(root / "fake", root)
            try:
                fake.start_server(env_a)
                fake.workspace("ws-a", dirs["projA"], env_a, "sess-a")
                fake.workspace("ws-b", dirs["projB"], env_b, "sess-b")
                fake.start_client(env_a, dirs["projA"])
                fake.start_client(env_b, dirs["projB"])
                payload: dict[str, object] = {
                    "event": "PreToolUse",
                    "session_id": "sess-b",
                    "cwd": str(dirs["projB"]),
                    "tool_name": "ls",
                    "tool_input": {},
                }
                hook = f"{LICH_HOOK} PreToolUse crush"
                fake.run_hook(hook, payload, dirs["projB"])  # the first report
                lich_b.wait(1)
                server, own, python = [], [], []
                raw = json.dumps(payload).encode()
                for _ in range(rounds):
                    python.append(spawn_ms([sys.executable, "-c", "pass"], env_b, raw, root))
                    started = time.perf_counter()
                    fake.run_hook(hook, payload, dirs["projB"])
                    server.append((time.perf_counter() - started) * 1000)
                    own.append(spawn_ms([str(LICH_HOOK), "PreToolUse", "crush"], env_b, raw, root))
            finally:
                fake.close()
            records = [json.loads(line) for line in (root / "hook.log").read_text().splitlines()]
            probe = [r["attribution_ms"] for r in records if "attribution_ms" in r]
            assert len(lich_b.received) == 1 and lich_a.received == [], "attributed wrongly"
    # the server rows include the fake server's own round trip on its stdin pipe
    py = statistics.median(python)
    print(f"crush server attribution, {rounds} interleaved rounds, 2 clients connected")
    print(f"  python -c pass                              {py:6.1f} ms")
    for label, times in (("own environment", own), ("under the server", server)):
        median = statistics.median(times)
        print(
            f"  crush PreToolUse, {label + ' (no-op)':27} {median:6.1f} ms  {median / py:.2f} x py"
        )
    print("  (the server row includes the fake server's relay of each hook over its stdin)")
    print(f"  the probe alone (attribution_ms)            {statistics.median(probe):6.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
