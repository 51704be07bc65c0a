"""The console script ends hook and status-line runs with os._exit (cli._finish):
nothing a harness should read may be lost on the way, and a caller that passes
its own argv keeps its process."""

from __future__ import annotations

from pathlib import Path

from lich_hooks import cli
from tests.support.runner import run_command, run_hook


def test_buffered_output_is_flushed_before_the_fast_exit(env: dict[str, str]) -> None:
    """The status line writes through sys.stdout (buffered), unlike hooks (os.write)."""
    ran = run_command("lich-hook status-line -- printf 'main status'", b"{}", env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"main status\n", b"")


def test_verdict_bytes_and_exit_code_survive(env: dict[str, str]) -> None:
    ran = run_hook("PreToolUse antigravity", {"conversationId": "c"}, env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b'{"decision":"allow"}', b"")


def test_a_caller_with_its_own_argv_keeps_its_process(tmp_path: Path) -> None:
    # Outside lich (the autouse fixture clears LICH_*), decided before stdin is read.
    assert cli.main(["PreToolUse", "crush"]) == 0
