"""The console script ends hook and status-line runs with os._exit (cli.finish):
nothing a harness should read may be lost on the way, and a caller that passes
its own argv keeps its process."""

from __future__ import annotations

import subprocess
import sys

from tests.support.runner import run_command, run_hook


def test_buffered_output_is_flushed_before_the_fast_exit(env: dict[str, str]) -> None:
    """The status line writes through sys.stdout (buffered), unlike hooks (os.write)."""
    ran = run_command("lich-hook status-line -- printf 'main status'", b"{}", env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"main status\n", b"")


def test_verdict_bytes_and_exit_code_survive(env: dict[str, str]) -> None:
    ran = run_hook("PreToolUse antigravity", {"conversationId": "c"}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b'{"decision":"allow"}', b"")


def test_a_caller_with_its_own_argv_keeps_its_process(env: dict[str, str]) -> None:
    # In a child process: an os._exit(0) here would end pytest itself with
    # status 0, a "pass" that skipped the rest of the suite.
    probe = "from lich_hooks import cli; print(cli.main(['PreToolUse', 'crush'])); print('after')"
    proc = subprocess.run(
        [sys.executable, "-c", probe], env=env, stdin=subprocess.DEVNULL, capture_output=True
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"0\nafter\n", b"")
