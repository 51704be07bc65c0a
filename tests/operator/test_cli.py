"""The human CLI's manners: help with examples, versions, exit codes, one-line errors."""

from __future__ import annotations

import io

import pytest

from lich_hooks import __version__
from lich_hooks.commands import run_cli, style
from tests.operator.conftest import Scratch

COMMANDS = ["demo", "listen", "doctor", "install", "uninstall", "help", "version"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(scratch: Scratch, command: str) -> None:
    ran = scratch.cli(command, "--help")
    assert ran.returncode == 0
    assert "Example" in ran.stdout
    assert ran.stderr == ""


def test_top_level_help_and_versions(scratch: Scratch) -> None:
    for args in ([], ["--help"], ["-h"], ["help"]):
        ran = scratch.cli(*args)
        assert ran.returncode == 0
        assert "lich-hook doctor" in ran.stdout and "As a hook: lich-hook <event>" in ran.stdout
    assert "Usage: lich-hook install" in scratch.cli("help", "install").stdout
    assert scratch.cli("--version").stdout == f"lich-hook {__version__}\n"
    assert scratch.cli("version").stdout == f"lich-hook {__version__}\n"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["install"], "Missing argument 'HARNESS'"),
        (["install", "vim"], "'vim' is not one of"),
        (["install", "claude", "--scope", "galaxy"], "'galaxy' is not one of"),
        (["doctor", "--nope"], "No such option '--nope'"),
        (["--bogus"], "No such option '--bogus'"),
        (["help", "nosuch"], "no command named 'nosuch'"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(scratch: Scratch, args: list[str], words: str) -> None:
    ran = scratch.cli(*args)
    assert ran.returncode == 2
    assert ran.stdout == ""
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr
    assert lines[0].startswith("lich-hook: ") and words in lines[0]


def test_no_colour_when_not_a_terminal(scratch: Scratch) -> None:
    ran = scratch.cli("doctor")
    assert "\x1b[" not in ran.stdout
    assert "\x1b[" not in scratch.cli("install", "claude", "--dry-run").stdout


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_under_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert style.wanted(_Tty())
    assert not style.wanted(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not style.wanted(_Tty())
    assert style.paint("x", "red", False) == "x"
    assert style.paint("x", "red", True) == "\x1b[31mx\x1b[0m"


def test_an_internal_error_is_one_line_unless_debugging(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lich_hooks.commands import doctor

    def explode(**_: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(doctor, "run", explode)
    assert run_cli(["doctor"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "lich-hook: internal error: RuntimeError: boom (LICH_HOOK_DEBUG=1 shows the traceback)"
    ]
    monkeypatch.setenv("LICH_HOOK_DEBUG", "1")
    assert run_cli(["doctor"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_a_write_failure_is_one_line(scratch: Scratch) -> None:
    blocker = scratch.home / ".claude"
    blocker.write_text("not a directory")
    ran = scratch.cli("install", "claude")
    assert ran.returncode == 1
    out = (ran.stdout + ran.stderr).strip().splitlines()
    assert len(out) == 1 and "Traceback" not in ran.stderr


def test_demo_still_runs(scratch: Scratch) -> None:
    ran = scratch.cli("demo")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "all harnesses behaved" in ran.stdout


def test_hook_invocations_are_not_commands(scratch: Scratch) -> None:
    ran = scratch.cli("SessionStart", "claude")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
