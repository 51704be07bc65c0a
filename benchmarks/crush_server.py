"""What a Crush hook costs under a shared `crush server`, and what any answer of the server
can cost to parse (Linux only).

    python benchmarks/crush_server.py            # 40 rounds; exit 1 if a goal is missed
    python benchmarks/crush_server.py --quick    # CI: 10 rounds, every limit doubled

Like benchmarks/codex_daemon.py, on the test suite's fake server
(tests/crush_server/fake_crush.py): real processes named `crush`, the server's
API on its Unix socket, real sock_diag and /proc. The server carries card A;
clients for card A (projA) and card B (projB) are connected, and one of each
in projC (where the hook must refuse); every hook is for projB but the refused
ones.

Rows, timed in this process from spawn until the hook exited with its pipes
closed (what Crush waits for), interleaved:
  * python -c pass, the yardstick;
  * crush PreToolUse in its own environment, after the first report: the
    local mode's no-op path (latency.py's row);
  * crush PreToolUse under the server, after the first report: deduped before
    any attribution, so the goal is the local path's cost (no socket, no /proc
    walk), within SAME_PATH_SLACK;
  * crush PreToolUse under the server, a new conversation each time: the
    attribution and the report (the reporting path's budget, REPORT_LIMIT x py);
  * crush PreToolUse under the server, a conversation already refused (two
    cards in projC): the goal is the local path's cost, as for a deduped one.
The server rows include the fake server's relay of each hook over its stdin.

Then the registered command itself in a shell started as `crush` and kept
running, as Crush's in-process shell is (one `$$`): `true`, and the guard for a
conversation this card already reported (its mark found: nothing starts; the
goal is GUARD_MS over `true`, docs/harnesses.md, Crush).

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
GUARD_MS = 3.0  # the guard ending an already-reported call, over the shell running `true`
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


class Shell:
    """/bin/sh started as `crush` and kept running: each command runs in it, as Crush runs
    a hook in its own process's shell (the same `$$` every call)."""

    def __init__(self, env: dict[str, str], cwd: Path, payload: Path) -> None:
        self.payload = payload
        self.proc = subprocess.Popen(
            ["crush"],
            executable="/bin/sh",
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ms(self, command: str) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        started = time.perf_counter()
        self.proc.stdin.write(f"{{ {command}; }} < '{self.payload}' >/dev/null; echo done\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "done"
        return (time.perf_counter() - started) * 1000

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(5)


def guard_rows(
    root: Path, env: dict[str, str], cwd: Path, rounds: int, lich: StandIn, reported: int
) -> tuple[list[float], list[float], int]:
    """The shell running `true`, and the registered guard for an already-reported
    conversation (in the card's own environment), interleaved; how many hooks started."""
    from lich_hooks.human.settings import commandline

    payload = root / "local.json"
    call = {"event": "PreToolUse", "session_id": "sess-local", "cwd": str(cwd), "tool_name": "ls"}
    payload.write_text(json.dumps(call))
    command = commandline.render(commandline.SERVER, str(LICH_HOOK), "PreToolUse", "crush")
    shell = Shell({**env, "CRUSH_SESSION_ID": "sess-local"}, cwd, payload)
    log = Path(env["LICH_HOOK_LOG"])
    try:
        shell.ms(command)  # reports; the second call finds it reported and leaves the mark
        lich.wait(reported + 1)
        shell.ms(command)
        before = len(log.read_text().splitlines())
        true, guard = [], []
        for _ in range(rounds):
            true.append(shell.ms("true"))
            guard.append(shell.ms(command))
        started = len(log.read_text().splitlines()) - before
    finally:
        shell.close()
    return true, guard, started


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
            dirs = {name: root / name for name in ("projA", "projB", "projC")}
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
                fake.workspace("ws-c", dirs["projC"], env_a, "sess-c")
                fake.start_client(env_a, dirs["projA"])
                fake.start_client(env_b, dirs["projB"])
                fake.start_client(env_a, dirs["projC"])
                fake.start_client(env_b, dirs["projC"])  # two cards there: refused

                def payload(sid: str, where: str = "projB") -> dict[str, object]:
                    return {"event": "PreToolUse", "session_id": sid, "cwd": str(dirs[where]),
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
                refused = []  # the first refusal, then the later calls of that conversation
                for _ in range(1 + rounds):
                    started = time.perf_counter()
                    fake.run_hook(hook, payload("sess-c", "projC"), dirs["projC"])
                    refused.append((time.perf_counter() - started) * 1000)
                relay = []  # the fake's own relay: a hook that is `true`
                for _ in range(rounds):
                    started = time.perf_counter()
                    fake.run_hook("true", payload("sess-b"), dirs["projB"])
                    relay.append((time.perf_counter() - started) * 1000)
                asked = fake.asked()
                true, guard, started_hooks = guard_rows(
                    root, env_b, dirs["projB"], rounds, lich_b, 1 + rounds
                )
            finally:
                fake.close()
            records = [json.loads(line) for line in (root / "hook.log").read_text().splitlines()]
            probe = [r["attribution_ms"] for r in records if "attribution_ms" in r]
            assert lich_a.received == [], "attributed wrongly"
            assert asked.count("/v1/workspaces") >= 1 + rounds, "a deduped call asked the server"
            assert started_hooks == 0, f"the guard started {started_hooks} hooks"
        parsed = parse_rows(root)
    py = statistics.median(python)
    hop = statistics.median(relay)
    failures: list[str] = []
    print(f"crush server, {rounds} interleaved rounds, 4 clients connected")
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
    refusal = statistics.median(refused[1:]) - hop
    print(f"  under the server, first refusal (- relay)        {refused[0] - hop:6.1f} ms")
    print(f"  under the server, already refused (- relay)      {refusal:6.1f} ms")
    shell_true = statistics.median(true)
    fast = statistics.median(guard) - shell_true
    print(f"  crush's shell running `true`                     {shell_true:6.1f} ms")
    print(f"  the registered guard, already reported (- true)  {fast:6.1f} ms  "
          f"(no hook started in {rounds} calls)")  # fmt: skip
    if refusal > own_ms * SAME_PATH_SLACK * factor:
        failures.append(f"an already-refused call costs {refusal:.1f} ms, local {own_ms:.1f} ms")
    if fast > GUARD_MS * factor:
        failures.append(f"the guard's already-reported call costs {fast:.1f} ms over `true`")
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
