"""Run a command the way a developer's machine runs the suite: other work beside it.

    python -m tests.support.working_machine [--busy N] -- <command…>

Beside the command: N busy loops at normal priority (default: one per core), and a stand-in for
Claude Code and Codex at work in the real home, which every 0.2 s creates, rewrites and removes a
file of its own in `~/.codex/tmp/` and `~/.claude/projects/`, as those harnesses do while they
run. Everything it made is removed when the command ends; it never touches a file it did not
create. Exits with the command's status. The suite must pass under it (docs/performance.md).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pwd
import subprocess
import sys
import threading
import time
from pathlib import Path

CHURN_EVERY = 0.2


def _busy() -> None:
    while True:
        pass


def _churn(stop: threading.Event, counts: list[int]) -> list[Path]:
    """Add, rewrite and remove files in the harnesses' own folders; returns what it created."""
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    made: list[Path] = []
    places = [home / ".codex" / "tmp", home / ".claude" / "projects" / "-working-machine"]
    for place in places:
        missing = [p for p in (place, *place.parents) if not p.exists()]
        place.mkdir(parents=True, exist_ok=True)
        made += sorted(missing, key=lambda p: len(p.parts), reverse=True)
    n = 0
    while not stop.wait(CHURN_EVERY):
        for place in places:
            path = place / f"busy-{os.getpid()}-{n % 3}.jsonl"
            path.write_text(f'{{"n": {n}}}\n')
            if n % 3 == 2:
                path.unlink(missing_ok=True)
        n += 1
        counts[0] = n
    for place in places:
        for path in place.glob(f"busy-{os.getpid()}-*.jsonl"):
            path.unlink(missing_ok=True)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--busy", type=int, default=os.cpu_count() or 2)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to run after --")
    loops = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(args.busy)]
    for loop in loops:
        loop.start()
    stop, counts, made = threading.Event(), [0], []
    churner = threading.Thread(target=lambda: made.extend(_churn(stop, counts)), daemon=True)
    churner.start()
    started = time.monotonic()
    try:
        status = subprocess.call(command)
    finally:
        stop.set()
        churner.join()
        for loop in loops:
            loop.terminate()
        for folder in made:  # only the folders this run created, deepest first, if empty
            try:
                folder.rmdir()
            except OSError:
                pass
    took = time.monotonic() - started
    print(
        f"working machine: {args.busy} busy loops, {counts[0]} home churn rounds, "
        f"command exit {status} after {took:.0f} s",
        file=sys.stderr,
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
