"""The human CLI's manners: help with examples, versions, exit codes, one-line errors."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from lich_hooks import __version__
from lich_hooks.base.runlog import debug_wanted
from lich_hooks.hook.run import HOOK_USAGE
from lich_hooks.human.commands import listen, run_cli
from lich_hooks.human.commands.environment import Environment, ExitCode, paint, wanted
from tests.operator.conftest import Scratch
from tests.support.runner import LICH_HOOK, run_hook, wait_for_log

COMMANDS = ["demo", "listen", "doctor", "install", "uninstall", "status-line", "help", "version"]


def environment(environ: dict[str, str], cwd: Path) -> tuple[Environment, io.StringIO, io.StringIO]:
    """A command's whole world, with its two streams kept for the test to read."""
    stdout, stderr = io.StringIO(), io.StringIO()
    made = Environment(
        stdout=stdout,
        stderr=stderr,
        environ=environ,
        cwd=str(cwd),
        colour=False,
        stderr_colour=False,
        executable=sys.executable,
    )
    return made, stdout, stderr


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
        assert "  status-line " in ran.stdout
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
    assert wanted(_Tty())
    assert not wanted(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wanted(_Tty())
    assert paint("x", "red", False) == "x"
    assert paint("x", "red", True) == "\x1b[31mx\x1b[0m"


def test_an_internal_error_is_one_line_unless_debugging(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lich_hooks.human.commands import doctor

    def explode(*_: object, **__: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(doctor, "run", explode)
    # not PROBLEM_FOUND: a script must tell "doctor found a problem" from "doctor broke"
    assert run_cli(["doctor"]) == ExitCode.INTERNAL_ERROR
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "lich-hook: internal error: RuntimeError: boom (LICH_HOOK_DEBUG=1 shows the traceback)"
    ]
    monkeypatch.setenv("LICH_HOOK_DEBUG", "off")  # off means off, as it does for hooks
    assert run_cli(["doctor"]) == ExitCode.INTERNAL_ERROR
    assert "Traceback" not in capsys.readouterr().err
    monkeypatch.setenv("LICH_HOOK_DEBUG", "1")
    assert run_cli(["doctor"]) == ExitCode.INTERNAL_ERROR
    assert "Traceback" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "on"),
    [
        *[(v, True) for v in ("1", "true", "yes", "on", "TRUE", " On ", "2", "verbose")],
        *[(v, False) for v in ("", "0", "false", "no", "off", "OFF", " no ", "False")],
    ],
)
def test_lich_hook_debug_is_read_one_way(value: str, on: bool) -> None:
    assert debug_wanted({"LICH_HOOK_DEBUG": value}) is on
    assert debug_wanted({}) is False


def test_exit_codes_keep_their_numbers() -> None:
    # scripts and docs/install.md depend on these
    assert [int(code) for code in ExitCode] == [0, 1, 2, 3, 130]


def test_commands_write_only_to_their_environment(scratch: Scratch) -> None:
    made, stdout, stderr = environment(scratch.env, scratch.project)
    assert run_cli(["install", "claude", "--scope", "project", "--dry-run"], made) == ExitCode.OK
    assert "+++ " in stdout.getvalue() and stderr.getvalue() == ""
    assert not (scratch.project / ".claude").exists()  # the environment's cwd, dry run
    settings = scratch.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    made, stdout, stderr = environment(scratch.env, scratch.project)
    assert run_cli(["install", "claude", "--scope", "project"], made) == ExitCode.PROBLEM_FOUND
    assert stdout.getvalue() == ""
    assert stderr.getvalue().startswith("lich-hook: install refused: ")


def test_listen_on_a_taken_port_says_so_on_its_stderr(scratch: Scratch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        made, stdout, stderr = environment(scratch.env, scratch.project)
        assert listen.run(made, port) == ExitCode.PROBLEM_FOUND
    assert stdout.getvalue() == ""
    assert stderr.getvalue().startswith(f"lich-hook listen: cannot listen on 127.0.0.1:{port}: ")


def test_status_line_help_is_help_not_a_status_line(scratch: Scratch) -> None:
    for args in (["status-line", "--help"], ["status-line", "-h"], ["help", "status-line"]):
        ran = scratch.cli(*args)
        assert (ran.returncode, ran.stderr) == (0, "")
        assert ran.stdout.startswith("Usage: lich-hook status-line"), ran.stdout
    # after `--` the words are the user's command, --help included
    ran = scratch.cli("status-line", "--", sys.executable, "-c", "print('mine')", "--help")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "mine\n", "")


def test_a_write_failure_is_one_line(scratch: Scratch) -> None:
    blocker = scratch.home / ".claude"
    blocker.write_text("not a directory")
    ran = scratch.cli("install", "claude")
    assert ran.returncode == ExitCode.PROBLEM_FOUND
    out = (ran.stdout + ran.stderr).strip().splitlines()
    assert len(out) == 1 and "Traceback" not in ran.stderr


def test_demo_still_runs(scratch: Scratch) -> None:
    ran = scratch.cli("demo")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "All harnesses behaved:" in ran.stdout


def test_hook_invocations_are_not_commands(scratch: Scratch) -> None:
    ran = scratch.cli("SessionStart", "claude")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")


def test_an_unknown_event_typed_at_a_terminal_gets_a_usage_line(scratch: Scratch) -> None:
    """A person (stdin a terminal) who mistypes is told how lich-hook is called: exit 2,
    like every usage error, and nothing on stdout."""
    terminal, person = os.openpty()
    try:
        ran = subprocess.run(
            [str(LICH_HOOK), "SesionStart", "claude"],
            stdin=person,
            capture_output=True,
            env=scratch.env,
            cwd=scratch.project,
            timeout=60,
            check=False,
        )
    finally:
        os.close(person)
        os.close(terminal)
    assert (ran.returncode, ran.stdout) == (2, b"")
    assert ran.stderr.decode().splitlines() == [
        "lich-hook: no command or event named 'SesionStart' (see: lich-hook --help)",
        HOOK_USAGE,
    ]


def test_an_unknown_event_from_a_harness_is_silent(scratch: Scratch) -> None:
    """A harness's stdin is a pipe: an event it sends that we do not know is a no-op."""
    ran = run_hook("SesionStart claude", {"session_id": "x"}, scratch.env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = wait_for_log(scratch.env, 1)
    assert record["decision"] == "unknown-event"


def test_ctrl_c_in_a_command_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lich_hooks.human.commands import doctor

    def interrupted(*_: object, **__: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(doctor, "run", interrupted)
    assert run_cli(["doctor"]) == 130  # a shell's 128 + SIGINT
    assert capsys.readouterr().err.strip() == "lich-hook: aborted"
