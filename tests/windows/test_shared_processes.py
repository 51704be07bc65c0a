"""Codex and Crush on Windows: a card's own hooks report, a shared process's never name a card.

The hook reads its parent chain from Toolhelp32 and each process's command
line from its memory (lich_hooks/base/winproc.py). Windows processes play the
harnesses (the real binaries do not start on Wine 8): `codex.exe` and
`crush.exe` TUIs (launchers named like them, with their real argv), and the
shared `codex.exe app-server --managed-daemon` and `crush.exe server` (copies
of python.exe, so they are the hook's direct ancestors as the real ones are).
Each starts the hook the way its harness does: Codex through `cmd.exe /C`
with one command string, Crush directly (its embedded shell).

A shared process carries the environment of the card that started it, so a
report from under one would land on that card whatever conversation fired the
hook: these tests give the shared process card-1's environment and require
silence. Windows offers no cheap way to name a daemon's or server's clients
(docs/harnesses.md, Windows), so under them nothing is sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID, payload
from tests.support.runner import log_records
from tests.windows import wine
from tests.windows.conftest import windows_env

CODEX_HOOK = wine.codex_line("lich-hook SessionStart codex")
CRUSH_HOOK = "lich-hook PreToolUse crush"
# Run from a directory on the drive mapped to Linux's `/`, a Windows path `\proc` is Linux's.
SEES_PROC = r"cmd.exe /C if exist \proc\self\stat (echo visible) else (echo hidden)"


@pytest.fixture(params=["no-proc", "proc-visible"])
def linux_drive(request: pytest.FixtureRequest, windows: wine.Windows) -> Iterator[str | None]:
    """None: Windows sees no Linux path (the suite's default). Else the Windows name of this
    test's project directory through a drive mapped to `/`, like Wine's default `Z:`."""
    if request.param == "no-proc":
        yield None
        return
    wine.visible_linux(True)
    try:
        yield "Y:"
    finally:
        wine.visible_linux(False)


def _project(windows: wine.Windows, tmp_path: Path, drive: str | None) -> str:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    if drive is None:
        return windows.path(project)
    return drive + str(project.resolve()).replace("/", "\\")


def _run_under(
    windows: wine.Windows,
    harness: str,
    hook: str,
    body: dict[str, object],
    env: dict[str, str],
    cwd: str,
    harness_cwd: str | None = None,
) -> tuple[wine.Result, wine.Result]:
    """The hook as `harness`'s child in `cwd`, and what `\\proc` is from there."""
    inner = [
        wine.spec(hook, body, cwd=cwd, inherit=True),
        wine.spec(SEES_PROC, cwd=cwd, inherit=True),
    ]
    [outer] = windows.run([wine.harness(harness, inner, env, harness_cwd)])
    ran, proc = wine.children(outer)
    return ran, proc


def _decisions(tmp_path: Path) -> list[dict[str, object]]:
    return log_records({"LICH_HOOK_LOG": str(tmp_path / "hook.log")})


@pytest.mark.parametrize("argv", ["--no-daemon", ""], ids=["no-daemon", "before-the-daemon"])
def test_a_codex_tui_that_runs_its_hooks_reports_its_card(
    argv: str,
    linux_drive: str | None,
    windows: wine.Windows,
    lich: StandIn,
    tmp_path: Path,
) -> None:
    """`codex --no-daemon` (and any Codex before 0.157) runs hooks as its children."""
    env = windows_env(windows, tmp_path, **lich.env("card-1"))
    cwd = _project(windows, tmp_path, linux_drive)
    body = payload("codex", "SessionStart") | {"cwd": cwd}
    ran, proc = _run_under(windows, f"{wine.CODEX_TUI} {argv}".strip(), CODEX_HOOK, body, env, cwd)
    assert proc.stdout.strip() == (b"hidden" if linux_drive is None else b"visible")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert request.accepted == {
        "session_id": "card-1",
        "provider_session_id": SID,
        "provider": "codex",
    }


def test_a_hook_under_the_codex_daemon_reports_nothing(
    linux_drive: str | None, windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    """The daemon holds card-1's environment (its first TUI's); the conversation may be any
    card's. With /proc visible too: the platform decides how the chain is read."""
    env = windows_env(windows, tmp_path, **lich.env("card-1"))
    cwd = _project(windows, tmp_path, linux_drive)
    body = payload("codex", "SessionStart") | {"cwd": cwd}
    ran, proc = _run_under(windows, wine.CODEX_DAEMON, CODEX_HOOK, body, env, cwd, wine.PLAY)
    assert proc.stdout.strip() == (b"hidden" if linux_drive is None else b"visible")
    assert (ran.returncode, ran.stderr) == (0, b"")
    # inside lich (the daemon carries a card's variables) the person is told the true cause
    # (no way to find the client here, with one card as with several) and the fix, once
    told = json.loads(ran.stdout)["systemMessage"]
    assert "codex --no-daemon" in told and "offers no way to find" in told, told
    assert "several cards" not in told, told
    [record] = _decisions(tmp_path)
    assert record["decision"] == "codex-daemon-unsupported", record
    assert "codex app-server" in str(record["codex_runner"]), record
    assert lich.received == []


def test_a_crush_tui_reports_its_card(
    linux_drive: str | None, windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    """Crush's TUI (local mode, CRUSH_CLIENT_SERVER unset) runs hooks as its children."""
    env = windows_env(windows, tmp_path, **lich.env("card-1"))
    cwd = _project(windows, tmp_path, linux_drive)
    body = payload("crush", "PreToolUse") | {"cwd": cwd}
    ran, _ = _run_under(windows, wine.CRUSH_TUI, CRUSH_HOOK, body, env, cwd)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert request.accepted == {
        "session_id": "card-1",
        "provider_session_id": SID,
        "provider": "crush",
    }


def test_a_hook_under_crush_server_reports_nothing(
    linux_drive: str | None, windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    env = windows_env(windows, tmp_path, **lich.env("card-1"), CRUSH_CLIENT_SERVER="1")
    cwd = _project(windows, tmp_path, linux_drive)
    body = payload("crush", "PreToolUse") | {"cwd": cwd}
    ran, proc = _run_under(windows, wine.CRUSH_SERVER, CRUSH_HOOK, body, env, cwd, wine.PLAY)
    assert proc.stdout.strip() == (b"hidden" if linux_drive is None else b"visible")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = _decisions(tmp_path)
    assert record["decision"] == "crush-server-unsupported", record
    assert "crush server" in str(record["crush_runner"]), record
    assert lich.received == []


def test_doctor_names_a_running_crush_server(windows: wine.Windows, tmp_path: Path) -> None:
    """The server listens on a named pipe there: doctor finds its process instead."""
    env = windows_env(windows, tmp_path)
    doctor = wine.spec("cmd.exe /C lich-hook doctor", None, inherit=True)
    [alone] = windows.run([wine.spec("cmd.exe /C lich-hook doctor", None, env)])
    [outer] = windows.run([wine.harness(wine.CRUSH_SERVER, [doctor], env, wine.PLAY)])
    [under] = wine.children(outer)
    rows = [r.stdout.decode("utf-8", "replace") for r in (alone, under)]
    crush = [next(line for line in text.splitlines() if "crush server" in line) for text in rows]
    assert "no crush server running" in crush[0], rows[0]
    assert "runs; on Windows lich-hook cannot tell" in crush[1], rows[1]


WRITE_PID = (
    rf"{wine.PYTHON} -c "
    "\"import os, json, pathlib; d = pathlib.Path(os.environ['USERPROFILE'], '.codex', "
    "'app-server-daemon'); d.mkdir(parents=True, exist_ok=True); "
    "(d / 'daemon.pid').write_text(json.dumps({'pid': os.getppid()}))\""
)


def test_doctor_names_the_codex_daemon_from_its_pid_file(
    windows: wine.Windows, tmp_path: Path
) -> None:
    """The daemon's pid file names a live `codex.exe app-server`, checked by its process (on
    Windows os.kill(pid, 0) would send Ctrl-C, not check); after it exits, the stale file
    names nobody."""
    env = windows_env(windows, tmp_path)
    doctor = wine.spec("cmd.exe /C lich-hook doctor", None, inherit=True)
    write = wine.spec(WRITE_PID, None, inherit=True)
    [outer] = windows.run([wine.harness(wine.CODEX_DAEMON, [write, doctor], env, wine.PLAY)])
    wrote, under = wine.children(outer)
    assert wrote.returncode == 0, wrote
    [after] = windows.run([wine.spec("cmd.exe /C lich-hook doctor", None, env)])
    rows = [r.stdout.decode("utf-8", "replace") for r in (under, after)]
    daemon = [
        next(line for line in text.splitlines() if "Codex" in line and "daemon" in line)
        for text in rows
    ]
    assert "Codex app-server daemon" in daemon[0] and "runs this CODEX_HOME" in daemon[0], rows[0]
    assert "no Codex app-server daemon running" in daemon[1], rows[1]


def test_the_interactive_check_is_decided_by_the_platform(
    linux_drive: str | None, windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    """A worker's Stop from a Claude Code too old to say whether a person attends it: on
    Linux the hook looks for the claude process in /proc; on Windows it does not look,
    even where a Linux /proc shows through a drive (it would read other pids there)."""
    env = windows_env(windows, tmp_path, **lich.env("card-w"), LICH_SUBAGENT_DEPTH="1")
    cwd = _project(windows, tmp_path, linux_drive)
    body = payload("claude", "Stop") | {"cwd": cwd, "last_assistant_message": "Done."}
    # any Windows parent will do: the check must not look at all
    ran, proc = _run_under(windows, wine.CODEX_TUI, "lich-hook Stop claude", body, env, cwd)
    assert proc.stdout.strip() == (b"hidden" if linux_drive is None else b"visible")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [record] = _decisions(tmp_path)
    assert record["decision"] == "answer", record
    assert "Windows: the claude process is not looked for" in str(record["interactive"]), record
    [request] = lich.wait(1)
    assert request.accepted == {"session_id": "card-w", "text": "Done."}
