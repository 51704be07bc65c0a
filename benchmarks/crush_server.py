"""What a Crush hook costs under a shared `crush server`, and what any answer of the server
can cost to parse (Linux only).

    python benchmarks/crush_server.py            # 40 rounds; exit 1 if a goal is missed
    python benchmarks/crush_server.py --quick    # CI: 10 rounds, every limit doubled

Like benchmarks/codex_daemon.py, on the test suite's fake server
(tests/crush_server/fake_crush.py): real processes named `crush`, the server's
API on its Unix socket, real sock_diag and /proc. The server carries card A;
clients for card A (projA) and card B (projB) are connected; every hook is
for projB.

Rows, timed in this process from spawn until the hook exited with its pipes
closed (what Crush waits for), interleaved:
  * python -c pass, the yardstick;
  * crush PreToolUse in its own environment, after the first report: the
    local mode's no-op path (latency.py's row);
  * crush PreToolUse under the server, after the first report: deduped before
    any attribution, so the goal is the local path's cost (no socket, no /proc
    walk), within SAME_PATH_SLACK;
  * crush PreToolUse under the server, a new conversation each time: the
    attribution and the report (the reporting path's budget, REPORT_LIMIT x py).
The server rows include the fake server's relay of each hook over its stdin.

Then the parse bound: `probe.workspaces` in a fresh process against a socket
answering with a 15 MiB hostile list (small nested containers: a
repository's crush.json can put anything in a workspace's config), and with
the worst answers under the caps (8 MiB at the value cap; 4 MiB beyond
ASCII), each timed and its peak RSS read (goal: PARSE_SECONDS and
PEAK_MIB, well inside the 5 s registration timeout).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from latency import LICH_HOOK  # noqa: E402

from lich_hooks.human.standin.server import StandIn  # noqa: E402
from tests.crush_server.fake_crush import FakeCrush  # noqa: E402

QUICK_FACTOR = 2.0
SAME_PATH_SLACK = 1.25  # deduped under the server vs the local no-op path, medians
REPORT_LIMIT = 4.0  # a first call under the server vs python -c pass
PARSE_SECONDS = 1.0
PEAK_MIB = 64.0

PARSE_MAIN = r"""
import sys, time
from lich_hooks.hook.shared.crush import probe
def hwm():  # this process's peak RSS, in MiB (VmHWM: exec resets it, fork would not)
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0
before = hwm()
started = time.perf_counter()
try:
    found = f"{len(probe.workspaces(sys.argv[1]))} workspaces"
except probe.ProbeError as error:
    found = f"refused: {error}"
elapsed = time.perf_counter() - started
print(elapsed, hwm(), before, found)
"""


def spawn_ms(argv: list[str], env: dict[str, str], stdin: bytes, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, check=False)
    return (time.perf_counter() - started) * 1000


def serve_once(path: str, body: bytes) -> threading.Thread:
    """A Unix socket at `path` answering one request with `body` (then closing)."""
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def run() -> None:
        conn, _ = listener.accept()
        conn.recv(4096)
        try:
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + body)
        except OSError:
            pass  # refused part-way: the probe stopped reading at its cap
        conn.close()
        listener.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def answers() -> list[tuple[str, bytes]]:
    """The hostile answer and the worst ones the caps let through."""
    from lich_hooks.hook.shared.crush import probe

    nested = b'{"a":[[],{}]}'
    hostile = b"[" + b",".join([nested] * (15 * 1024 * 1024 // (len(nested) + 1))) + b"]"
    # as many values as the cap allows, padded with long strings up to the size cap
    count = probe.MAX_VALUES // 4
    pad = b"x" * (probe.MAX_RESPONSE // count - 14)
    at_caps = b"[" + b",".join([b'{"a":["' + pad + b'"]}'] * count) + b"]"
    wide = "\U0001f600" * ((probe.MAX_WIDE_RESPONSE - 64) // 4)
    beyond_ascii = json.dumps([{"id": "w", "path": "/p", "env": [wide]}], ensure_ascii=False)
    return [
        ("15 MiB of small nested containers", hostile),
        ("the same, cut under the size cap", hostile[: probe.MAX_RESPONSE - 1]),
        ("8 MiB at the value cap", at_caps[: probe.MAX_RESPONSE]),
        ("4 MiB beyond ASCII", beyond_ascii.encode()),
    ]


def parse_rows(root: Path) -> list[tuple[str, float, float, str]]:
    rows: list[tuple[str, float, float, str]] = []
    for label, body in answers():
        socket_path = str(root / f"p{len(rows)}.sock")
        thread = serve_once(socket_path, body)
        ran = subprocess.run(
            [sys.executable, "-c", PARSE_MAIN, socket_path],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        thread.join(5)
        elapsed, peak, _before, found = ran.stdout.split(" ", 3)
        rows.append(
            (f"{label} ({len(body) / 1048576:.1f} MiB)", float(elapsed), float(peak), found)
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI mode: fewer rounds, 2x limits")
    args = parser.parse_args()
    rounds = 10 if args.quick else 40
    factor = QUICK_FACTOR if args.quick else 1.0
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
            fresh = [f"sess-b{n}" for n in range(rounds)]
            fake = FakeCrush(root / "fake", root)
            try:
                fake.start_server(env_a)
                fake.workspace("ws-a", dirs["projA"], env_a, "sess-a")
                fake.workspace("ws-b", dirs["projB"], env_b, "sess-b", *fresh)
                fake.start_client(env_a, dirs["projA"])
                fake.start_client(env_b, dirs["projB"])

                def payload(sid: str) -> dict[str, object]:
                    return {"event": "PreToolUse", "session_id": sid, "cwd": str(dirs["projB"]),
                            "tool_name": "ls", "tool_input": {}}  # fmt: skip

                hook = f"{LICH_HOOK} PreToolUse crush"
                fake.run_hook(hook, payload("sess-b"), dirs["projB"])  # the first report
                lich_b.wait(1)
                server, first, own, python = [], [], [], []
                raw = json.dumps(payload("sess-b")).encode()
                for _ in range(rounds):
                    python.append(spawn_ms([sys.executable, "-c", "pass"], env_b, raw, root))
                    started = time.perf_counter()
                    fake.run_hook(hook, payload("sess-b"), dirs["projB"])
                    server.append((time.perf_counter() - started) * 1000)
                    own.append(spawn_ms([str(LICH_HOOK), "PreToolUse", "crush"], env_b, raw, root))
                # each new conversation makes the card's last id another (the rows above
                # would report again): measured after them
                for sid in fresh:
                    started = time.perf_counter()
                    fake.run_hook(hook, payload(sid), dirs["projB"])
                    first.append((time.perf_counter() - started) * 1000)
                lich_b.wait(1 + rounds)
                relay = []  # the fake's own relay: a hook that is `true`
                for _ in range(rounds):
                    started = time.perf_counter()
                    fake.run_hook("true", payload("sess-b"), dirs["projB"])
                    relay.append((time.perf_counter() - started) * 1000)
                asked = fake.asked()
            finally:
                fake.close()
            records = [json.loads(line) for line in (root / "hook.log").read_text().splitlines()]
            probe = [r["attribution_ms"] for r in records if "attribution_ms" in r]
            assert lich_a.received == [], "attributed wrongly"
            assert asked.count("/v1/workspaces") == 1 + rounds, "a deduped call asked the server"
        parsed = parse_rows(root)
    py = statistics.median(python)
    hop = statistics.median(relay)
    failures = []
    print(f"crush server, {rounds} interleaved rounds, 2 clients connected")
    print(f"  python -c pass                                   {py:6.1f} ms")
    print(f"  the fake server's relay alone (`true`)           {hop:6.1f} ms")
    own_ms = statistics.median(own)
    print(f"  own environment, already reported (local no-op)  {own_ms:6.1f} ms")
    deduped = statistics.median(server) - hop
    print(f"  under the server, already reported (- relay)     {deduped:6.1f} ms")
    report = statistics.median(first) - hop
    print(f"  under the server, a new conversation (- relay)   {report:6.1f} ms  "
          f"{report / py:.2f} x py")  # fmt: skip
    print(f"  the attribution alone (attribution_ms)           {statistics.median(probe):6.1f} ms")
    if deduped > own_ms * SAME_PATH_SLACK * factor:
        failures.append(f"a deduped call costs {deduped:.1f} ms, the local path {own_ms:.1f} ms")
    if report > py * REPORT_LIMIT * factor:
        failures.append(f"a first call costs {report / py:.2f}x py (goal {REPORT_LIMIT}x)")
    print(f"parsing /v1/workspaces (goal: < {PARSE_SECONDS * factor:g} s, < {PEAK_MIB:g} MiB peak)")
    for label, seconds, peak, found in parsed:
        print(f"  {label:40} {seconds * 1000:6.1f} ms  {peak:5.1f} MiB peak  {found.strip()}")
        if seconds > PARSE_SECONDS * factor or peak > PEAK_MIB:
            failures.append(f"{label}: {seconds:.2f} s, {peak:.0f} MiB")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
