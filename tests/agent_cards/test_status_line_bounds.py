"""docs/agent-cards.md: the user's own status line command, bounded in bytes and time.

`status-line -- <command…>` keeps the first OUTPUT_LIMIT bytes the command
prints, ends it once it printed more, and at USER_COMMAND_SECONDS kills its
whole process group: nothing it started outlives the status line, and nothing
holds Claude Code's pipes past the limit. Each case runs the real console
script through `sh -c` as Claude Code does.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from lich_hooks.hook.status_line import OUTPUT_LIMIT, USER_COMMAND_SECONDS
from tests.agent_cards.test_status_line import STATUS_PAYLOAD
from tests.support.runner import run_hook, start_seconds


def alive(pid: int) -> bool:
    """Running (a zombie whose parent has not reaped it yet counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] != "Z"


def gone(pid: int) -> bool:
    """Dead within 5 s: a SIGKILL to the group is sent, not waited for, so the kernel may
    still be ending the process when the hook returns (CI on a loaded machine saw it alive)."""
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def peak_rss_mib(command: str, env: dict[str, str]) -> tuple[float, bytes, float]:
    """Run the status line under a parent that reports its descendants' peak RSS."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "started = time.monotonic()\n"
        "out = subprocess.run(['/bin/sh', '-c', sys.argv[1]], input=sys.stdin.buffer.read(),"
        " capture_output=True).stdout\n"
        "took = time.monotonic() - started\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "sys.stdout.write(f'{peak} {took} {len(out)}\\n')\n"
    )
    import json
    import subprocess

    ran = subprocess.run(
        [sys.executable, "-c", probe, command],
        input=json.dumps(STATUS_PAYLOAD).encode(),
        env=env,
        capture_output=True,
        timeout=60,
        check=True,
    )
    peak, took, size = ran.stdout.split()
    return int(peak) / 1024, size, float(took)


def lich_hook() -> str:
    return str(Path(sys.executable).parent / "lich-hook")


def printer(tmp: Path, chunks: int | None) -> str:
    """A status command printing 1 MiB lines: `chunks` of them, or without end."""
    script = tmp / "printer.py"
    script.write_text(
        "import itertools, sys\n"
        "line = b'status ' * 149796 + b'\\n'\n"
        f"for _ in {'itertools.count()' if chunks is None else f'range({chunks})'}:\n"
        "    sys.stdout.buffer.write(line)\n"
    )
    return f"{sys.executable} {script}"


def test_a_huge_output_is_cut_not_buffered(card_env: dict[str, str], tmp_path: Path) -> None:
    """256 MiB printed: before, 525 MiB peak and all of it passed on; now 64 KiB at most."""
    command = f"{lich_hook()} status-line -- {printer(tmp_path, 256)}"
    start = start_seconds()
    peak, size, took = peak_rss_mib(command, card_env)
    assert int(size) <= OUTPUT_LIMIT + 1  # and our newline
    print(f"peak RSS {peak:.1f} MiB, {took:.2f} s, {int(size)} bytes")
    assert peak < 64, f"peak RSS {peak:.0f} MiB"
    assert took - start < 5


def test_a_command_that_never_stops_printing_is_ended_at_once(
    card_env: dict[str, str], tmp_path: Path
) -> None:
    """Before: it grew for the whole 10 s (or died with a MemoryError traceback)."""
    start = start_seconds()
    started = time.monotonic()
    ran = run_hook(f"status-line -- {printer(tmp_path, None)}", STATUS_PAYLOAD, card_env)
    took = time.monotonic() - started
    assert (ran.returncode, ran.stderr) == (0, b"")
    assert 0 < len(ran.stdout) <= OUTPUT_LIMIT + 1  # one line of 1 MiB: cut at the limit
    assert set(ran.stdout.rstrip(b"\n")) <= set(b"status ")
    assert took - start < USER_COMMAND_SECONDS / 2


def test_the_size_limit_ends_the_whole_group(card_env: dict[str, str], tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    script = f"sleep 300 & echo $! > {pid_file}; yes"
    ran = run_hook(f"status-line -- sh -c '{script}'", STATUS_PAYLOAD, card_env)
    assert ran.returncode == 0 and len(ran.stdout) <= OUTPUT_LIMIT + 1
    assert gone(int(pid_file.read_text()))


def test_the_time_limit_kills_the_grandchild_too(card_env: dict[str, str], tmp_path: Path) -> None:
    """Before: only `sh` was killed; its `sleep` kept stderr open and lived on (an orphan)."""
    pid_file = tmp_path / "grandchild"
    script = f"echo mine; sleep 25 & echo $! > {pid_file}; wait"
    start = start_seconds()
    started = time.monotonic()
    ran = run_hook(f"status-line -- sh -c '{script}'", STATUS_PAYLOAD, card_env)
    took = time.monotonic() - started  # until our pipes closed: nobody holds them past the limit
    assert (ran.returncode, ran.stderr, ran.stdout) == (0, b"", b"mine\n")
    assert USER_COMMAND_SECONDS - 0.5 < took < start + USER_COMMAND_SECONDS + 3
    assert gone(int(pid_file.read_text()))


def test_a_background_child_left_on_the_output_does_not_hold_the_line(
    card_env: dict[str, str],
) -> None:
    """A status script that starts `git fetch &` and exits: its line prints when it exits."""
    start = start_seconds()
    ran = run_hook("status-line -- sh -c 'echo mine; sleep 3 &'", STATUS_PAYLOAD, card_env)
    assert ran.stdout == b"mine\n"
    assert ran.seconds - start < 2
