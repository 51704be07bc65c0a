"""What attributing a Codex hook under the shared app-server daemon costs (Linux only).

    python benchmarks/codex_daemon.py            # 60 rounds
    python benchmarks/codex_daemon.py --quick    # CI: 15 rounds, every limit doubled

A separate script rather than a row of latency.py because the row needs a
process tree latency.py does not build: the hook must run as the child of a
process named `codex app-server … --managed-daemon` holding Unix sockets
connected to client processes named `codex`. It uses the test suite's fake
daemon (tests/codex_daemon/fake_codex.py): real processes, real /proc, real
sock_diag, so the probe does exactly the work it does under Codex 0.171.0.
The daemon carries card A; two clients of card B are connected, in projA and
projB; every hook is for projB's conversation, tied by the daemon's log (the fake
writes its rows at once, so the sender does not wait for the daemon's write).

Rows, each run by the fake daemon the way Codex runs hooks (`sh -c`, payload on
stdin, pipes; timed from spawn until it exited and both pipes closed, in the
daemon), paired with an adjacent run of the shell reference (latency.py's
sh + jq + curl reporter), ratios = median of the paired ratios:
  * codex SessionStart under the daemon: the attributed report (card B);
  * info: codex SessionStart in its own environment (`--no-daemon`), spawned
    by this script, for the attribution's share of the wait.
Also, in this process: the probe alone (`who_runs` + `find_card`), in ms, with
the daemon as above, then holding 1,000 more connected Unix sockets (a busy
daemon: its peers are looked up in netlink batches), then 19,000 open files
(a leaking daemon: refused without reading them).

Goals, as latency.py's reporting paths: ratio ≤ 1.0 against the reference,
and lich has the report within 1 s of the spawn.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from latency import LICH_HOOK, QUICK_FACTOR, RECEIVE_CAP, REFERENCE_SH, REPORT_LIMIT  # noqa: E402

import lich_hooks  # noqa: E402
from lich_hooks.hook.shared import codex as codex_daemon  # noqa: E402
from lich_hooks.human.standin.server import StandIn  # noqa: E402
from tests.codex_daemon.fake_codex import FakeCodex  # noqa: E402


def payload(cwd: Path, n: int) -> dict[str, object]:
    return {
        "session_id": f"01a22c85-0000-7000-8000-{n:012d}",
        "transcript_path": "/dev/null",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "model": "scripted-model",
        "permission_mode": "default",
        "source": "startup",
    }


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": f"{LICH_HOOK.parent}:/usr/bin:/bin",
        "HOME": str(tmp / "home"),
        "LICH_HOOK_STATE_DIR": str(tmp / "state"),
        "LANG": "C.UTF-8",
        **extra,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="CI mode: fewer rounds, 2x limits")
    parser.add_argument("--rounds", type=int, help="measured rounds (default 60, quick 15)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (15 if args.quick else 60)
    factor = QUICK_FACTOR if args.quick else 1.0
    if not sys.platform.startswith("linux"):
        print("codex_daemon.py: the daemon attribution reads /proc; Linux only")
        return 0
    if shutil.which("jq") is None or shutil.which("curl") is None:
        print("codex_daemon.py: needs jq and curl for the shell reference")
        return 0

    rng = random.Random(0)
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lich-codex-bench-") as name, StandIn() as lich:
        tmp = Path(name)
        (tmp / "home").mkdir()
        dirs = {"a": tmp / "projA", "b": tmp / "projB"}
        for folder in dirs.values():
            folder.mkdir()
        reference = tmp / "report-session-start.sh"
        reference.write_text(
            REFERENCE_SH.replace("{version}", lich_hooks.__version__).replace(
                "{release}", lich_hooks.PLUGIN_RELEASE
            )
        )
        reference.chmod(0o755)
        card_a = env_for(tmp, **lich.env("card-A"))
        card_b = env_for(tmp, **lich.env("card-B"))
        fake = FakeCodex(tmp / "fake")
        try:
            fake.start_daemon(card_a)
            fake.start_client(card_b, dirs["a"])
            client = fake.start_client(card_b, dirs["b"])  # its window holds its own alone
            assert fake.daemon is not None
            hook = f"{shlex.quote(str(LICH_HOOK))} SessionStart codex"
            ref = f"{shlex.quote(str(reference))} codex"
            arrived: list[float] = []
            waits: dict[str, list[float]] = {"daemon": [], "reference": [], "own": []}
            ratios: dict[str, list[float]] = {"daemon": [], "own": []}
            receives: list[float] = []
            wrong: list[object] = []

            def via_daemon(command: str, n: int) -> tuple[float, float]:
                seen = len(lich.received)
                ran = fake.run_hook(command, payload(dirs["b"], n), dirs["b"], True, client)
                got = lich.wait(seen + 1, timeout=5.0)
                arrived.append(time.perf_counter())
                if len(got) <= seen:
                    failures.append(f"no report for {command}")
                elif command == hook and (got[seen].accepted or {}).get("session_id") != "card-B":
                    wrong.append(got[seen].accepted)
                started, seconds = ran["started"], ran["seconds"]
                assert isinstance(started, float) and isinstance(seconds, float)
                return started, seconds

            def own(n: int) -> float:
                seen = len(lich.received)
                started = time.perf_counter()
                subprocess.run(
                    ["/bin/sh", "-c", hook],
                    input=json.dumps(payload(dirs["b"], n)).encode(),
                    env=card_b,
                    cwd=dirs["b"],
                    capture_output=True,
                    check=False,
                )
                seconds = time.perf_counter() - started
                lich.wait(seen + 1, timeout=5.0)
                return seconds

            n = 0
            for _ in range(3):  # warm-up
                for command in (hook, ref):
                    n += 1
                    via_daemon(command, n)
                own(n)
            for _ in range(rounds):
                for row in rng.sample(["daemon", "own"], 2):
                    pair = [row, "reference"]
                    rng.shuffle(pair)
                    measured = {}
                    for one in pair:
                        n += 1
                        if one == "own":
                            measured[one] = own(n)
                            continue
                        seen = len(lich.received)
                        started, seconds = via_daemon(hook if one == "daemon" else ref, n)
                        measured[one] = seconds
                        if one == "daemon" and len(lich.received) > seen:
                            receives.append(arrived[-1] - started)
                    for one, seconds in measured.items():
                        waits[one].append(seconds)
                    ratios[row].append(measured[row] / measured["reference"])

            # the probe alone, in this process (no interpreter start, no send)
            daemon = fake.daemon.pid

            def probe(times: int) -> tuple[list[float], codex_daemon.decide.Attribution | None]:
                spent = []
                for _ in range(times):
                    t0 = time.perf_counter()
                    runner = codex_daemon.who_runs(start=daemon)
                    found = codex_daemon.find_card(daemon)
                    spent.append((time.perf_counter() - t0) * 1000)
                assert runner.kind == "daemon"
                return sorted(spent), found

            probe_ms, found = probe(200)
            assert found is None, found  # the log decides
            fake.hold_sockets(500)
            busy_ms, found = probe(100)
            if found is not None:
                failures.append(f"a daemon holding 1,000 more sockets: {found.why}")
            fake.hold_sockets(9000)
            leaking_ms, found = probe(30)
            if found is None or found.decision != codex_daemon.PROBE_FAILED:
                failures.append(f"a daemon holding 19,000 files was read: {found}")
        finally:
            fake.close()

    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:7.1f} ms"

    limit = REPORT_LIMIT * factor
    print(f"codex daemon attribution, {rounds} rounds (goal: ratio <= {limit:g} x reference)")
    print(f"  {'row':58} {'median':>10} {'ratio':>7}")
    d_ratio = statistics.median(ratios["daemon"])
    o_ratio = statistics.median(ratios["own"])
    print(
        f"  {'codex SessionStart under the daemon (attributed report)':58} "
        f"{ms(waits['daemon'])} {d_ratio:6.2f}x"
    )
    print(
        f"  {'info: codex SessionStart, own environment (--no-daemon)':58} "
        f"{ms(waits['own'])} {o_ratio:6.2f}x"
    )
    print(f"  {'shell reference (sh+jq+curl), run by the daemon':58} {ms(waits['reference'])}")
    for label, spent in (
        ("probe alone (who_runs + find_card, in process)", probe_ms),
        ("  the daemon holding 1,000 more sockets", busy_ms),
        ("  the daemon holding 19,000 files (refused)", leaking_ms),
    ):
        print(
            f"  {label:48} median {statistics.median(spent):6.2f} ms,"
            f" p90 {spent[int(len(spent) * 0.9)]:6.2f} ms, max {spent[-1]:6.2f} ms"
        )
    if receives:
        slowest = max(receives) * 1000
        print(f"  report at lich after spawn: median {ms(receives).strip()}, max {slowest:.1f} ms")
    if wrong:
        failures.append(f"{len(wrong)} report(s) named the wrong card: {wrong[:2]}")
    if d_ratio > limit:
        failures.append(f"the daemon path is {d_ratio:.2f}x the reference (goal {limit:g}x)")
    if receives and max(receives) > RECEIVE_CAP * factor:
        failures.append(f"a report reached lich {max(receives):.2f} s after the spawn")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
