"""Run a real CLI while timing when lich's stand-in gets each report, without sleeping.

The CLI runs in a thread (its whole output collected there); the test's thread
waits on the stand-in, so "start → report" is measured when the request lands,
whether the CLI is still running or has already exited.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from lich_hooks.human.standin.server import Received, StandIn
from tests.real_clients.support.clients import run_cli
from tests.support.runner import LICH_HOOK


class Timed:
    """The CLI's run, the reports that arrived, and when (seconds from its start)."""

    def __init__(
        self,
        proc: subprocess.CompletedProcess[str],
        reports: list[Received],
        report_after: float | None,
        exited_after: float,
        started_at: float,
    ) -> None:
        self.proc = proc
        self.reports = reports
        self.report_after = report_after
        self.exited_after = exited_after
        self.started_at = started_at  # wall clock, to compare with a CLI's own log times

    def timing(self) -> str:
        landed = "no report" if self.report_after is None else f"{self.report_after:.2f} s"
        return f"start → report {landed}, start → exit {self.exited_after:.2f} s"


def run_timed(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    lich: StandIn,
    expect: int,
    stdin: str = "",
    timeout: float = 180,
    settle: float = 0.0,
) -> Timed:
    """Run `argv`; wait for `expect` new reports, and for the CLI to exit.

    `settle`: after the exit, how long more to wait for a report beyond the
    expected ones (a subagent's would be late): the count must then still be
    `expect`. A wait on the listener with a timeout, never a sleep.
    """
    before = len(lich.received)
    result: dict[str, object] = {}

    def run() -> None:
        proc = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        result["exit"] = time.monotonic()
        result["proc"] = subprocess.CompletedProcess(argv, proc.returncode, out, err)

    started_at = time.time()
    started = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    report_after = None
    if expect:
        got = lich.wait(before + expect, timeout)
        if len(got) >= before + expect:
            report_after = time.monotonic() - started
    worker.join(timeout + 30)
    proc = result["proc"]
    assert isinstance(proc, subprocess.CompletedProcess)
    exited = result["exit"]
    assert isinstance(exited, float)
    got = lich.wait(before + expect + 1, settle) if settle else list(lich.received)
    return Timed(proc, got[before:], report_after, exited - started, started_at)


def lich_hook(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """This checkout's console script, as a person runs `lich-hook install opencode`."""
    return run_cli([str(LICH_HOOK), *args], env, cwd, timeout=60)
