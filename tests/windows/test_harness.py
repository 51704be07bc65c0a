"""The stand-in harness's allowances for Wine (harness.py): a run that cmd.exe or CreateProcess
lost before any code of ours ran is made again once, loudly; a missing program is not."""

from __future__ import annotations

import warnings

import pytest

from tests.windows import harness, wine

LOST = "Can't recognize '{}' as an internal or external command, or batch script."


def test_a_program_cmd_lost_is_run_again_once_and_said(windows: wine.Windows) -> None:
    # cmd.exe's 9009 line for lich-hook, which PATH has: what Wine's cmd.exe now and then says
    said = LOST.format("lich-hook Stop claude")
    run = wine.spec(f"cmd.exe /C echo {said}>&2& exit /b 9009")
    with pytest.warns(UserWarning, match="made again"):
        [ran] = windows.run([run])
    assert ran.returncode == 9009, ran  # the second run said the same, and that is what a test sees


def test_a_missing_program_is_not_run_again(windows: wine.Windows) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [ran] = windows.run([wine.spec("cmd.exe /C lich-hook-gone Stop claude")])
    assert ran.returncode == 9009, ran
    assert ran.stderr.startswith(b"Can't recognize 'lich-hook-gone"), ran


def test_a_run_createprocess_lost_is_run_again_once_and_said(windows: wine.Windows) -> None:
    # Wine's CreateProcess failing with its internal error, asked for on the first launch only
    run = {**wine.spec("cmd.exe /C echo started& exit /b 3"), "fault": harness.LOST_BY_WINE}
    with pytest.warns(UserWarning, match=r"CreateProcess.*made again"):
        [ran] = windows.run([run])
    assert (ran.returncode, ran.stdout) == (3, b"started\r\n"), ran


def test_a_program_that_cannot_start_fails_the_batch_loudly(windows: wine.Windows) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeError, match=r"WinError 2\b"):
            windows.run([wine.spec(r"C:\lich\gone\lich-hook.exe Stop claude")])
