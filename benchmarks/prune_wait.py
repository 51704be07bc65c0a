"""What a prune costs the paths a person waits for: the Agent verdict and the first status line.

    python benchmarks/prune_wait.py                 # 0, 10,000 and 50,000 stale records
    python benchmarks/prune_wait.py --stale 0 20000 --rounds 5
    python benchmarks/prune_wait.py --hook /old/venv/bin/lich-hook --hook /new/venv/bin/lich-hook
    python benchmarks/prune_wait.py --quick         # CI: 0 and 10,000, exit 1 past the goal
    python benchmarks/prune_wait.py --flood 2000:61440 30000:0   # the flooded-card rows

A prune is due (no `.pruned` marker) and the state directory holds `stale`
records two months old: half under reported/, half as workers under
workers/<card>/ (ten per card), what months of use leave. Each round seeds
a fresh directory, then times, from the spawn until the process exited with
its pipes closed (what Claude Code waits for):

  * `lich-hook PreToolUse claude` for an Agent call, against a stand-in lich
    whose `open` answers `pending` at once: the verdict;
  * `lich-hook status-line` in a card with one recorded worker whose last
    check is old, so the run asks lich and writes its check stamp: the first
    status line;
  * the same in a card whose own directory holds the stale worker records
    (workers lich never closed, months old): the first status line over a
    backlog. Goal: within LINE_GOAL_MS of the run with no stale records
    (records past the prune age are not read; the pruner removes them after
    the line is out).

Then the status line over a flooded card: its own directory holds `N` fresh
records (none past the prune age, so none is the pruner's) of `size` bytes,
no prune due, its last look at lich old: what one refresh reads is bounded
(docs/agent-cards.md, "The status line"), and the row shows its time, its
peak RSS (the hook's process, wait4) and what it printed. Goal: within
LINE_GOAL_MS of the first status line with no stale records.

It prints the median of each and its delay over the run with no stale
records. It times the `lich-hook` next to sys.executable, or each `--hook`
given, in the same rounds one after the other (so a shared machine's load
falls on all of them alike), and imports none of lich_hooks, so the same
script measures any installed version.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DAY = 86400.0
LINE_GOAL_MS = 500.0
RUNS = itertools.count()
LICH_HOOK = Path(sys.executable).parent / "lich-hook"

FAKE_LICH = """#!{python}
import json, sys
if sys.argv[1:2] == ["open"]:
    print(json.dumps({{"id": "s-w", "label": "W", "name": "w-new", "path": "/tmp",
                      "kind": "claude", "delivery": {{"status": "pending"}}}}))
elif sys.argv[1:2] == ["sessions"]:
    print(json.dumps([{{"name": "w-a", "state": "running", "id": "s-a"}}]))
"""


def seed(root: Path, stale: int) -> None:
    old = time.time() - 60 * DAY
    reported = root / "reported"
    reported.mkdir(parents=True, mode=0o700)
    for i in range(stale // 2):
        path = reported / f"old-card-{i:06d}"
        path.write_bytes(b"crush\nconv")
        os.utime(path, (old, old))
    for i in range(stale - stale // 2):
        card = root / "workers" / f"wcard-{i // 10:06d}"
        if i % 10 == 0:
            card.mkdir(parents=True, mode=0o700)
        path = card / f"w-{i}.json"
        path.write_bytes(b'{"name": "w", "when": 0}')
        os.utime(path, (old, old))
    for card in (root / "workers").iterdir() if stale > 1 else ():
        os.utime(card, (old, old))
    # Months-old records are on disk, not in the journal: without this, the
    # fsync of the first record written waits for all of the seeding.
    os.sync()


def worker_of_card(root: Path, backlog: int = 0) -> None:
    """The status line's card: one worker, last checked long ago (and `backlog` stale ones)."""
    card = root / "workers" / "card-1"
    card.mkdir(parents=True, exist_ok=True, mode=0o700)
    (card / "w-a.json").write_text(json.dumps({"name": "w-a", "when": time.time()}))
    (card / ".checked").write_text("0.0")
    old = time.time() - 60 * DAY
    for i in range(backlog):
        path = card / f"w-old-{i}.json"
        path.write_bytes(json.dumps({"name": f"w-old-{i}", "when": old}).encode())
        os.utime(path, (old, old))
    if backlog:
        os.sync()


def flood(root: Path, number: int, size: int) -> None:
    """The status line's card, and `number` fresh records of `size` bytes beside its worker;
    the last prune just now (the line's own reading is measured, not a pruner's)."""
    seed(root, 0)
    worker_of_card(root)
    (root / ".pruned").touch()
    card = root / "workers" / "card-1"
    for i in range(number):
        body = json.dumps({"name": f"w-flood-{i}", "when": time.time(), "description": ""})
        pad = max(0, size - len(body))
        (card / f"w-flood-{i}.json").write_text(body[:-2] + "x" * pad + '"}')
    os.sync()


def timed_rss(
    argv: list[str], payload: bytes, env: dict[str, str], cwd: Path
) -> tuple[float, float, bytes]:
    """ms from the spawn until it exited with its pipes closed, its peak RSS in MiB, its stdout."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(payload)
    proc.stdin.close()
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (time.monotonic() - started) * 1000, usage.ru_maxrss / 1024, out


def timed(argv: list[str], payload: bytes, env: dict[str, str], cwd: Path) -> float:
    started = time.monotonic()
    subprocess.run(argv, input=payload, env=env, cwd=cwd, capture_output=True, check=False)
    return (time.monotonic() - started) * 1000


def fresh_state(tmp: Path, env: dict[str, str]) -> Path:
    """A state directory of its own for each run (the runs before may still be pruning
    theirs, detached, after their output was out)."""
    root = tmp / f"state-{next(RUNS)}"
    env["LICH_HOOK_STATE_DIR"] = str(root)
    return root


def one_round(tmp: Path, hook: str, stale: int, env: dict[str, str]) -> tuple[float, float, float]:
    root = fresh_state(tmp, env)
    seed(root, stale)
    worker_of_card(root)
    project = tmp / "project"
    agent = {
        "session_id": "s",
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "tool_use_id": "toolu_01AbCd",
        "tool_input": {"description": "Fix the thing", "prompt": "p"},
    }
    verdict = timed(
        ["/bin/sh", "-c", f"{hook} PreToolUse claude"],
        json.dumps(agent).encode(),
        env,
        project,
    )
    # The same state again, for the status line: the verdict's own prune is undone.
    root = fresh_state(tmp, env)
    seed(root, stale)
    worker_of_card(root)
    line = timed(["/bin/sh", "-c", f"{hook} status-line"], b"{}", env, project)
    # The card's own backlog: its stale workers, and a prune due.
    root = fresh_state(tmp, env)
    seed(root, 0)
    worker_of_card(root, stale)
    backlog = timed(["/bin/sh", "-c", f"{hook} status-line"], b"{}", env, project)
    return verdict, line, backlog


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--stale", type=int, nargs="+", default=[0, 10000, 50000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hook", action="append", help="a lich-hook to time (repeatable)")
    parser.add_argument("--quick", action="store_true", help="CI: 0 and 10,000, pass or fail")
    parser.add_argument(
        "--flood",
        nargs="*",
        default=["2000:61440", "30000:0"],
        metavar="N:SIZE",
        help="flooded-card rows: N fresh records of SIZE bytes in the card's own directory",
    )
    args = parser.parse_args()
    if args.quick:
        args.stale, args.rounds = [0, 10000], 3
    floods = [tuple(int(part) for part in item.split(":")) for item in args.flood]
    hooks = args.hook or [str(LICH_HOOK)]
    missing = [hook for hook in hooks if not Path(hook).exists()]
    if missing:
        print(f"no such lich-hook: {', '.join(missing)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="prune-wait-", ignore_cleanup_errors=True) as name:
        tmp = Path(name)
        (tmp / "project").mkdir()
        lich = tmp / "lich"
        lich.write_text(FAKE_LICH.format(python=sys.executable))
        lich.chmod(0o755)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp),
            "LICH_HOOK_STATE_DIR": str(tmp / "state"),
            "LICH_PORT": "9",
            "LICH_TOKEN": "t",
            "LICH_SESSION_ID": "card-1",
            "LICH_BIN": str(lich),
            "LICH_SUBAGENT_DEPTH": "0",
            "CLAUDE_CODE_SESSION_ATTENDED": "1",
            "CLAUDE_CODE_ENTRYPOINT": "cli",
        }
        times: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
        flooded: dict[tuple[str, int, int], list[tuple[float, float, bytes]]] = {}
        for _ in range(args.rounds):
            for stale in args.stale:
                for hook in hooks:
                    times.setdefault((hook, stale), []).append(one_round(tmp, hook, stale, env))
            for number, size in floods:
                for hook in hooks:
                    flood(fresh_state(tmp, env), number, size)
                    argv = ["/bin/sh", "-c", f"{hook} status-line"]
                    ran = timed_rss(argv, b"{}", env, tmp / "project")
                    flooded.setdefault((hook, number, size), []).append(ran)
        print(f"median of {args.rounds} rounds, ms (delay over {args.stale[0]} stale records)")
        failures = []
        for hook in hooks:
            print(hook)
            base: tuple[float, float, float] | None = None
            for stale in args.stale:
                rounds = times[(hook, stale)]
                verdict, line, backlog = (statistics.median(r[n] for r in rounds) for n in range(3))
                if base is None:
                    base = (verdict, line, backlog)
                print(
                    f"{stale:>7} stale: Agent verdict {verdict:7.1f} (+{verdict - base[0]:6.1f})"
                    f"   first status line {line:7.1f} (+{line - base[1]:6.1f})"
                    f"   over its own card's backlog {backlog:7.1f} (+{backlog - base[1]:6.1f})"
                )
                if stale <= 10000 and backlog - base[1] > LINE_GOAL_MS:
                    failures.append(f"{hook}: +{backlog - base[1]:.0f} ms over {stale} records")
            assert base is not None
            for number, size in floods:
                runs = flooded[(hook, number, size)]
                line = statistics.median(r[0] for r in runs)
                peak = max(r[1] for r in runs)
                shown = {r[2].decode(errors="replace").strip() for r in runs}
                print(
                    f"  flooded card, {number:>6} fresh records of {size:>6} bytes: status line"
                    f" {line:7.1f} (+{line - base[1]:6.1f})   peak RSS {peak:5.1f} MiB"
                    f"   printed {' | '.join(sorted(shown))!r}"
                )
                if line - base[1] > LINE_GOAL_MS:
                    failures.append(f"{hook}: +{line - base[1]:.0f} ms over {number} fresh records")
        for failure in failures:
            print(f"FAIL (goal +{LINE_GOAL_MS:g} ms): {failure}")
        if args.quick and failures:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
