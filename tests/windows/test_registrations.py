"""What each harness's shell runs on Windows, as `install` writes it, run the way the harness
runs it there (docs/harnesses.md, Windows).

Codex 0.171 runs a handler's `command_windows` in its session shell: PowerShell (`pwsh`, else
Windows PowerShell) with `-NoProfile -Command`, and `cmd.exe /c` only where it finds no
PowerShell, quoted by Rust's std (wine.codex_line). Wine has no PowerShell (its
`powershell.exe` is a stub), so the PowerShell form is only read here; the cmd.exe form
runs under Wine's cmd. Inside a card it must report, from any profile path; outside lich,
and when the program is gone (uninstalled, its Python removed), it must exit 0 with nothing
Codex would show as an error: an empty stdout, or one JSON object (the person's line).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from lich_hooks.human.settings import commandline
from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import payload
from tests.windows import wine
from tests.windows.conftest import windows_env

MISSING = r"C:\lich\gone\lich-hook.exe"


def _handlers(document: object) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    if isinstance(document, dict):
        if isinstance(document.get("command"), str):
            found.append(document)
        for value in document.values():
            found += _handlers(value)
    elif isinstance(document, list):
        for item in document:
            found += _handlers(item)
    return found


def _quiet_or_one_object(stdout: bytes) -> bool:
    if not stdout.strip():
        return True
    try:
        return isinstance(json.loads(stdout), dict)
    except ValueError:
        return False


RENDER = r"""
import json
import sys
from lich_hooks.human.settings import registrations
shell = sys.argv[1]
lines = [registrations.windows_command("SessionStart", "codex", p, shell) for p in sys.argv[2:]]
sys.stdout.buffer.write(json.dumps(lines).encode())
"""


def rendered(windows: wine.Windows, tmp_path: Path, shell: str, *programs: str) -> list[str]:
    """`command_windows` as Windows' `install` writes it for `shell` (short names are Windows')."""
    script = tmp_path / "render.py"
    script.write_text(RENDER)
    words = " ".join(f'"{program}"' for program in programs)
    ran = windows.one(**wine.spec(f"{wine.PYTHON} {windows.path(script)} {shell} {words}"))
    assert ran.returncode == 0, ran
    found = ran.json()
    assert isinstance(found, list)
    return [str(line) for line in found]


@pytest.mark.slow
def test_install_writes_the_form_for_the_shell_codex_runs(
    windows: wine.Windows, tmp_path: Path
) -> None:
    """Wine has a `powershell.exe` on PATH, so Codex would run hooks in it: PowerShell's form."""
    env = windows_env(windows, tmp_path)
    [ran] = windows.run([wine.spec("cmd.exe /C lich-hook install codex", None, env)])
    assert ran.returncode == 0, ran
    document = json.loads((tmp_path / "home" / ".codex" / "hooks.json").read_text())
    [handler] = [h for h in _handlers(document) if "SessionStart" in str(h["command"])]
    found = commandline.parse(handler.get("command_windows"))
    assert found is not None and (found.guard, found.program) == ("powershell", wine.LICH_HOOK)


@pytest.fixture
def command_windows(windows: wine.Windows, tmp_path: Path) -> str:
    """The SessionStart `command_windows` `install codex` writes where Windows has no PowerShell."""
    [found] = rendered(windows, tmp_path, "cmd", wine.LICH_HOOK)
    assert found.startswith(wine.LICH_HOOK + " "), found
    return found


def test_codex_command_windows_reports_from_a_card(
    command_windows: str, windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    env = windows_env(windows, tmp_path, **lich.env("card-1"))
    body = payload("codex", "SessionStart")
    [ran] = windows.run([wine.spec(wine.codex_line(command_windows), body, env)])
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b""), command_windows
    [request] = lich.wait(1)
    assert request.accepted is not None and request.accepted["session_id"] == "card-1"


@pytest.mark.parametrize("inside", [False, True], ids=["outside-lich", "in-a-card"])
def test_codex_command_windows_with_the_program_gone_shows_no_error(
    inside: bool, command_windows: str, windows: wine.Windows, tmp_path: Path
) -> None:
    """Uninstalled, or its Python removed: Codex must see exit 0 and no error output."""
    gone = command_windows.replace(wine.LICH_HOOK, MISSING)
    card = {"LICH_PORT": "9", "LICH_TOKEN": "tok", "LICH_SESSION_ID": "card-1"}
    env = windows_env(windows, tmp_path, **(card if inside else {}))
    body = payload("codex", "SessionStart")
    [ran] = windows.run([wine.spec(wine.codex_line(gone), body, env)])
    assert ran.returncode == 0, (gone, ran)
    assert ran.stderr == b"", (gone, ran)
    assert _quiet_or_one_object(ran.stdout), (gone, ran)
    if not inside:
        assert ran.stdout == b"", (gone, ran)


# Profile folders a Windows user can have: cmd.exe's metacharacters, a space, non-ASCII.
PROFILES = ["AT&T", "R&D^2", "100%", "Bang!", "a (b)", "Zoë Müller", "張 & 李"]


@pytest.mark.slow
def test_a_codex_card_reports_from_any_profile_path_under_cmd(
    windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    """`C:\\Users\\AT&T\\…` (issue 33): the program as cmd.exe reads it back (`^&`), its 8.3
    name, or where neither is a word cmd.exe keeps whole (`%`, `!`), `lich-hook` on PATH."""
    programs, runs = [], []
    for index, name in enumerate(PROFILES):
        profile = tmp_path / "Users" / name
        scripts = profile / ".local" / "bin"
        scripts.mkdir(parents=True)
        (scripts / "lich-hook.exe").write_bytes(wine.launcher(wine.ENTRY))
        for sub in ("AppData/Local", "AppData/Roaming"):
            (profile / sub).mkdir(parents=True)
        programs.append(windows.path(scripts / "lich-hook.exe"))
        env = {
            "USERPROFILE": windows.path(profile),
            "LOCALAPPDATA": windows.path(profile / "AppData" / "Local"),
            "APPDATA": windows.path(profile / "AppData" / "Roaming"),
            "PATH": windows.path(scripts) + r";C:\windows\system32;C:\windows",
            **lich.env(f"card-{index}"),
        }
        runs.append((env, payload("codex", "SessionStart", f"conversation-{index}")))
    commands = rendered(windows, tmp_path, "cmd", *programs)
    for program, command in zip(programs, commands, strict=True):
        found = commandline.parse(command)
        assert found is not None and found.guard == "cmd", command
        if commandline.cmd_word(program) is not None:  # AT&T, R&D^2: the path itself
            assert found.program == program, command
    ran = windows.run(
        [
            wine.spec(wine.codex_line(command), body, env)
            for command, (env, body) in zip(commands, runs, strict=True)
        ]
    )
    for name, command, result in zip(PROFILES, commands, ran, strict=True):
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b""), (
            name,
            command,
            result,
        )
    got = {r.accepted["session_id"] for r in lich.wait(len(PROFILES)) if r.accepted}
    assert got == {f"card-{i}" for i in range(len(PROFILES))}, commands


def test_the_powershell_form_run_by_cmd_creates_no_file(
    windows: wine.Windows, tmp_path: Path
) -> None:
    """A Codex that ran it in cmd.exe after all (an older one, PowerShell removed since
    `install`) reports nothing (doctor says why), but leaves the project as it was."""
    [command] = rendered(windows, tmp_path, "powershell", r"C:\Users\AT&T\lich-hook.exe")
    project = tmp_path / "project"
    project.mkdir()
    env = windows_env(windows, tmp_path)
    [ran] = windows.run(
        [
            wine.spec(
                wine.codex_line(command),
                payload("codex", "SessionStart"),
                env,
                cwd=windows.path(project),
            )
        ]
    )
    assert list(project.iterdir()) == [], (command, ran)


# What PowerShell does with a native program's two streams (about_Redirection, about_Pipelines):
# each redirection on the call, and each later element of its pipeline, as (stdout, stderr) ->
# (stdout, stderr); True: reaches PowerShell's own stdout, which Codex reads. `2>&1` puts stderr
# into the pipeline as ErrorRecords, beside stdout's lines as strings.
_PS_STEPS: dict[str, Callable[[bool, bool], tuple[bool, bool]]] = {
    "2>&1": lambda out, err: (out, True),
    "2>$null": lambda out, err: (out, False),
    "*>$null": lambda out, err: (False, False),
    ">$null": lambda out, err: (False, err),
    "1>$null": lambda out, err: (False, err),
    "| Out-Null": lambda out, err: (False, False),
    "| Where-Object { $_ -is [string] }": lambda out, err: (out, False),
}


def _ps_streams(command: str, program: str) -> tuple[bool, bool]:
    """Which of the program's stdout and stderr reach the output of `try { & 'P' E p … }`,
    read step by step; a step not in _PS_STEPS fails the test (nothing guessed)."""
    head = "try { & '" + program.replace("'", "''") + "' SessionStart codex "
    assert command.startswith(head), command
    rest, tail = command[len(head) :], " } catch { }; exit 0"
    assert rest.endswith(tail), command
    rest = rest[: -len(tail)]
    out, err = True, False  # unredirected, a native program's stderr is not the output
    while rest:
        step = next((s for s in _PS_STEPS if rest.startswith(s)), None)
        assert step is not None, f"a step this test cannot read: {rest!r}"
        out, err = _PS_STEPS[step](out, err)
        rest = rest[len(step) :].lstrip()
    return out, err


def test_the_powershell_forms_rendered_command_passes_the_programs_stdout(
    windows: wine.Windows, tmp_path: Path
) -> None:
    """A refusal's one `systemMessage` is the only thing that tells the person why their
    conversation is not linked: the form Windows' `install` writes passes the program's stdout
    and drops only its stderr (a launcher's `Fatal error`). Wine has no PowerShell to run it
    (docs/harnesses.md, Windows), so the rendered command is read as PowerShell reads it."""
    program = r"C:\Users\O'Brien\lich-hook.exe"
    [command] = rendered(windows, tmp_path, "powershell", program)
    found = commandline.parse(command)
    assert found is not None and (found.guard, found.program) == ("powershell", program)
    assert _ps_streams(command, program) == (True, False), command
    old = command.replace("| Where-Object { $_ -is [string] }", "| Out-Null")
    assert _ps_streams(old, program) == (False, False)  # the earlier release's form
    earlier = commandline.parse(old)
    assert earlier is not None and earlier.guard == "powershell-muted"


@pytest.mark.slow
def test_doctor_names_a_command_windows_codex_would_not_run(
    windows: wine.Windows, tmp_path: Path
) -> None:
    """The form an older release wrote for cmd.exe, where Codex runs PowerShell: a failure
    with the fix; the form `install` writes now: no such row."""
    env = windows_env(windows, tmp_path)
    hooks = tmp_path / "home" / ".codex" / "hooks.json"
    doctor = wine.spec(f"{wine.LICH_HOOK} doctor --json", None, env)
    installed, fresh = windows.run(
        [wine.spec(f"{wine.LICH_HOOK} install codex", None, env), doctor]
    )
    assert installed.returncode == 0, installed
    assert b"command_windows" not in fresh.stdout, fresh
    document = json.loads(hooks.read_text())
    [handler] = [h for h in _handlers(document) if "SessionStart" in str(h["command"])]
    handler["command_windows"] = f"{wine.LICH_HOOK} SessionStart codex 2>nul & exit /b 0"
    hooks.write_text(json.dumps(document))
    [old] = windows.run([doctor])
    text = old.stdout.decode("utf-8", "replace")
    said = "SessionStart codex: its command_windows is written for cmd, and Codex runs it in "
    said += "powershell here, so nothing reports (fix: lich-hook install codex writes it"
    assert said in text, text
    # the PowerShell form before it passed stdout: it reports, but hides the person's line
    muted = f"try {{ & '{wine.LICH_HOOK}' SessionStart codex 2>&1 | Out-Null }} catch {{ }}; exit 0"
    handler["command_windows"] = muted
    hooks.write_text(json.dumps(document))
    [earlier] = windows.run([doctor])
    text = earlier.stdout.decode("utf-8", "replace")
    said = "SessionStart codex: its command_windows is an earlier release's PowerShell form, "
    said += "which drops the hook's stdout with its stderr"
    assert said in text, text
    reinstalled, again = windows.run(
        [wine.spec(f"{wine.LICH_HOOK} install codex", None, env), doctor]
    )
    assert reinstalled.returncode == 0, reinstalled
    assert b"command_windows" not in again.stdout, again
