"""The stand-in harness's one allowance for Wine (harness.py, `_lost_by_cmd`): a run that
cmd.exe lost before any code of ours ran is made again once, loudly; a missing program is not."""

from __future__ import annotations

import warnings

import pytest

from tests.windows import wine

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
