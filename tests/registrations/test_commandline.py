"""The registered command (human/settings/commandline.py): one reader and writer for every
harness, and a guard that never shows an error and starts nothing outside lich.

Every form is run by the shells that run it for real (`/bin/sh` — dash here —, bash for
Git Bash and Codex's login shell), over every state our program can be in after its life on
a machine: there, deleted (`pipx uninstall` without `lich-hook uninstall`), its `#!`
interpreter gone (a Python upgrade under the venv), a 0-byte file, not executable, its venv
moved. Inside and outside lich.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.base.harnesses import REGISTRATIONS
from lich_hooks.human.settings import commandline, ours, registrations
from lich_hooks.human.settings.commandline import (
    ANSWER,
    CARD,
    CMD,
    LOGIN,
    OLD_POWERSHELL,
    POWERSHELL,
    SERVER,
)
from lich_hooks.human.settings.errors import Refused
from lich_hooks.human.settings.registry import SETTINGS

SHELLS = [shell for shell in ("/bin/sh", shutil.which("bash")) if shell]
POSIX_GUARDS = (CARD, SERVER, ANSWER, LOGIN)

# --- reading back what was written ---------------------------------------------------

paths = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\0"), max_size=30
).map(lambda folder: "/" + folder.strip("/") + "/bin/lich-hook")
words = st.from_regex(r"[A-Za-z][A-Za-z_-]{0,12}", fullmatch=True).filter(
    lambda w: w != "status-line"
)
messages = st.from_regex(r"[A-Za-z0-9 .,:;/()@+=_~<>#-]{1,80}", fullmatch=True)


@given(
    guard=st.sampled_from(POSIX_GUARDS),
    program=paths,
    event=words,
    provider=words,
    message=st.none() | messages,
)
@settings(max_examples=300, deadline=None)
def test_every_written_command_reads_back(
    guard: commandline.Guard, program: str, event: str, provider: str, message: str | None
) -> None:
    if guard != CARD and guard != LOGIN:
        message = None
    command = commandline.render(guard, program, event, provider, message)
    found = commandline.parse(command)
    assert found is not None, command
    assert (found.program, found.event, found.provider, found.guard, found.message) == (
        program,
        event,
        provider,
        guard,
        message,
    )
    assert not found.launcher


# A Windows path: any character but the ones Windows forbids in a name (`<>:"/\\|?*`, controls).
windows_paths = st.lists(
    st.text(
        st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters='<>:"/\\|?*'),
        min_size=1,
        max_size=12,
    ),
    max_size=4,
).map(lambda folders: "\\".join(["C:", *folders, "lich-hook.exe"]))


@given(program=windows_paths)
@settings(max_examples=300, deadline=None)
def test_the_windows_forms_read_back_or_refuse(program: str) -> None:
    """No quote and no message in either (Codex's quoting turns `"` into `\\"`, which cmd.exe
    does not read); PowerShell's literal takes any path, cmd.exe's word only one it reads
    back whole (tests/windows/test_registrations.py runs them)."""
    for guard in (POWERSHELL, OLD_POWERSHELL):  # today's form, and the one before it
        command = commandline.render(guard, program, "SessionStart", "codex", "Fix: this")
        found = commandline.parse(command)
        assert found is not None and (found.program, found.guard, found.message) == (
            program,
            guard,
            None,
        )
        assert '"' not in command
    word = commandline.cmd_word(program)
    if word is None:
        with pytest.raises(ValueError):
            commandline.render(CMD, program, "SessionStart", "codex")
        return
    command = commandline.render(CMD, program, "SessionStart", "codex")
    assert '"' not in command and not any(c.isspace() for c in word)
    found = commandline.parse(command)
    assert found is not None and (found.program, found.guard) == (program, CMD)


@pytest.mark.parametrize(
    "command",
    [
        # what release 0.x wrote for C:\Users\AT&T: cmd.exe runs `C:\Users\AT` (issue 33)
        "C:\\Users\\AT&T\\lich-hook.exe SessionStart codex 2>nul & exit /b 0",
        "C:\\R&D^x\\lich-hook.exe SessionStart codex 2>nul & exit /b 0",
        "C:\\100%\\lich-hook.exe SessionStart codex 2>nul & exit /b 0",
        "C:\\Bang!\\lich-hook.exe SessionStart codex 2>nul & exit /b 0",
        "try { & 'C:\\O'Brien\\lich-hook.exe' SessionStart codex 2>&1 | Out-Null } catch { }; "
        "exit 0",
        "try { & 'C:\\x\\lich-hook.exe' SessionStart codex 2>&1 | Out-Null } catch { }; exit 0; "
        "rm x",
    ],
)
def test_a_windows_command_its_shell_would_not_run_is_not_ours(command: str) -> None:
    assert commandline.parse(command) is None


@pytest.mark.parametrize("guard", [CARD, LOGIN])
def test_a_launcher_reads_back(guard: commandline.Guard) -> None:
    command = commandline.render(guard, "lich-hook", "Stop", "claude", None, "CLAUDE_PLUGIN_ROOT")
    found = commandline.parse(command)
    assert found is not None and found.launcher
    assert found.program == "${CLAUDE_PLUGIN_ROOT}/plugin/lich-hook"


@pytest.mark.parametrize(
    "command",
    [
        "lich-hook SessionStart claude",
        "/opt/venv/bin/lich-hook Stop claude",
        "'/home/a b/.venv/bin/lich-hook' PreToolUse claude",
        '"C:\\Users\\a b\\lich-hook.exe" SessionStart codex',
        "/x/lich-hook SessionStart",
        'sh "${CLAUDE_PLUGIN_ROOT}/plugin/lich-hook" Stop claude',
    ],
)
def test_the_forms_older_releases_wrote_are_ours(command: str) -> None:
    found = commandline.parse(command)
    assert found is not None and found.guard is None


def test_the_powershell_form_before_it_passed_stdout_is_an_earlier_releases() -> None:
    """Its `| Out-Null` dropped the person's line with stderr: ours (install replaces it,
    uninstall removes it), read as the earlier form, never as today's."""
    old = "try { & 'C:\\O''Brien\\lich-hook.exe' SessionStart codex 2>&1 | Out-Null } catch { }; "
    old += "exit 0"
    found = commandline.parse(old)
    assert found is not None
    assert (found.guard, found.program) == (OLD_POWERSHELL, "C:\\O'Brien\\lich-hook.exe")
    new = commandline.render(POWERSHELL, found.program, "SessionStart", "codex")
    assert new != old and "Out-Null" not in new
    again = commandline.parse(new)
    assert again is not None and again.guard == POWERSHELL


@pytest.mark.parametrize(
    "command",
    [
        "lich-hook Stop claude && notify-send done",
        "lich-hook status-line",
        "/x/not-lich-hook SessionStart claude",
        "echo lich-hook SessionStart claude",
        '[ -z "$LICH_PORT" ] || lich-hook Stop claude 2>/dev/null || rm -rf ~',
        '[ -z "$LICH_PORT" ] || lich-hook Stop claude 2>/dev/null || echo "$(id)"',
        '[ -z "$LICH_PORT" ] || lich-hook Stop claude 2>/dev/null; rm x || :',
        "sh -c '\"$0\" SessionStart codex 2>/dev/null; rm -rf ~' /x/lich-hook",
        'sh "${HOME}/plugin/lich-hook" Stop claude',
        '"C:\\x\\lich-hook.exe" SessionStart codex 2>nul & del x',
        "C:\\x\\lich-hook.exe SessionStart codex 2>nul & exit /b 0 & del x",
    ],
)
def test_commands_that_only_look_like_ours_are_not(command: str) -> None:
    assert commandline.parse(command) is None
    assert not ours.is_ours({"command": command})


def test_no_registered_command_holds_a_backslash_or_a_quote_in_its_message() -> None:
    """Claude Code on Windows turns every backslash into `/` before Git Bash reads the
    command; cmd.exe's echo prints the rest of its line as it is."""
    assert commandline.safe_message(
        registrations.missing("/a/bin/lich-hook", "/a/.claude/settings.json")
    )
    for key, row in REGISTRATIONS.items():
        if row.plugin_fix:
            found = commandline.parse(registrations.plugin_command("SessionStart", key))
            assert found is not None and found.message and commandline.safe_message(found.message)


# --- running them: the program's states, inside and outside lich ---------------------


def program_states(tmp: Path) -> dict[str, Path]:
    """Our program in each state it can be found in; each working one leaves a mark."""
    states: dict[str, Path] = {}
    for name in ("there", "no-shebang-interpreter", "zero-bytes", "not-executable"):
        folder = tmp / name / "bin"
        folder.mkdir(parents=True)
        states[name] = folder / "lich-hook"
    mark = tmp / "ran"
    states["there"].write_text(f'#!/bin/sh\ncat >/dev/null\necho "$@" >> {mark}\n')
    states["no-shebang-interpreter"].write_text(f"#!{tmp}/gone/python3\nprint('x')\n")
    states["zero-bytes"].write_text("")
    states["not-executable"].write_text("#!/bin/sh\necho never\n")
    for name in ("there", "no-shebang-interpreter", "zero-bytes"):
        states[name].chmod(0o755)
    states["deleted"] = tmp / "deleted" / "bin" / "lich-hook"  # pipx uninstall
    moved = tmp / "moved-from" / "bin"
    moved.mkdir(parents=True)
    (moved / "lich-hook").write_text(states["there"].read_text())
    (moved / "lich-hook").chmod(0o755)
    moved.parent.rename(tmp / "moved-to")
    states["venv-moved"] = moved / "lich-hook"
    return states


def run(
    shell: str, command: str, env: dict[str, str], payload: bytes
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [shell, "-c", command], input=payload, env=env, capture_output=True, timeout=30, check=False
    )


CASES = [
    ("claude", "SessionStart"),
    ("claude", "Stop"),
    ("claude", "PreToolUse"),
    ("codex", "SessionStart"),
    ("crush", "PreToolUse"),
    ("antigravity", "PreInvocation"),
]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(("provider", "event"), CASES)
def test_no_state_of_the_program_shows_an_error(
    tmp_path: Path, shell: str, provider: str, event: str
) -> None:
    states = program_states(tmp_path)
    mark = tmp_path / "ran"
    guard = REGISTRATIONS[provider].guard
    for state, program in states.items():
        command = registrations.command(event, provider, str(program), "/home/u/settings.json")
        for inside in (False, True):
            mark.unlink(missing_ok=True)
            env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
            if inside:
                env.update(LICH_PORT="4711", LICH_TOKEN="t", LICH_SESSION_ID="card-1")
            ran = run(shell, command, env, b'{"session_id": "s"}')
            where = (state, inside)
            assert (ran.returncode, ran.stderr) == (0, b""), where
            started = mark.exists()
            runs = state == "there" and (inside or guard == LOGIN)
            assert started == runs, where
            # a 0-byte file "runs" as an empty script: exit 0, nothing said (doctor names it)
            empty = state == "zero-bytes" and (inside or guard == LOGIN)
            expected = b"{}" if provider == "antigravity" and not (runs or empty) else b""
            if inside and not (runs or empty) and registrations.says_on(guard, event):
                said = json.loads(ran.stdout)["systemMessage"]
                assert said.startswith("lich-hooks: a lich-hooks hook in /home/u/settings.json")
                assert "Fix: " in said and "/home/u/settings.json" in said
            else:
                assert ran.stdout == expected, where


def test_crush_lets_its_server_through_without_lich(tmp_path: Path) -> None:
    """`crush server`'s environment is the first client's: the hook finds its card there."""
    program = program_states(tmp_path)["there"]
    command = registrations.command("PreToolUse", "crush", str(program))
    env = {"PATH": "/usr/bin:/bin", "CRUSH_CLIENT_SERVER": "1"}
    ran = run("/bin/sh", command, env, b"{}")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert (tmp_path / "ran").read_text() == "PreToolUse crush\n"


def test_outside_lich_the_guard_starts_no_process(tmp_path: Path) -> None:
    """Outside lich the shell leaves at its own `[`: no program of ours, no other process."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    program = program_states(tmp_path)["there"]
    for provider, event in CASES:
        if REGISTRATIONS[provider].guard == LOGIN:
            continue  # Codex's daemon: the hook must run (docs/harnesses.md)
        command = registrations.command(event, provider, str(program))
        traced = subprocess.run(
            [
                "strace",
                "-f",
                "-e",
                "trace=execve,clone,clone3,fork,vfork",
                "/bin/sh",
                "-c",
                command,
            ],
            env={"PATH": "/usr/bin:/bin"},
            capture_output=True,
            check=False,
        )
        calls = traced.stderr.decode().splitlines()
        assert [c for c in calls if "execve(" in c and "/bin/sh" not in c] == [], calls
        assert not [c for c in calls if c.startswith(("clone", "fork", "vfork"))], calls


# --- install's entries: both forms in, both out; Windows' forms -------------------------


def test_install_upgrades_the_plain_form_and_uninstall_removes_both() -> None:
    from lich_hooks.human.settings.registry import SETTINGS

    harness = SETTINGS["claude"]
    old = {
        "hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "/old/venv/bin/lich-hook SessionStart"}]},
                {"hooks": [{"type": "command", "command": "echo mine"}]},
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "lich-hook Stop claude"}]}],
        }
    }
    installed = harness.merged(old, "/new/bin/lich-hook", "/h/.claude/settings.json")
    found = [commandline.parse(c) for c in ours.our_commands(installed)]
    assert found and all(f is not None and f.guard == CARD for f in found)
    assert {f.program for f in found if f is not None} == {"/new/bin/lich-hook"}
    assert "echo mine" in json.dumps(installed)
    mixed = json.loads(json.dumps(installed))
    mixed["hooks"]["Stop"].append(old["hooks"]["Stop"][0])  # an old entry left beside
    removed = harness.merged(mixed, None)
    assert ours.our_commands(removed) == []
    assert "echo mine" in json.dumps(removed)


def test_a_provider_without_a_registration_gets_no_command() -> None:
    """An unguarded command would break its harness's sessions once we are gone."""
    for provider in ("opencode", "aider"):
        with pytest.raises(Refused):
            registrations.command("SessionStart", provider)


@pytest.mark.parametrize("shell", [POWERSHELL, CMD])
def test_windows_install_writes_git_bash_and_codex_shell_forms(
    shell: commandline.Guard, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's Git Bash reads `C:/…` (it turns backslashes into `/` anyway); Codex runs
    `command_windows` in its session shell: PowerShell, where there is none cmd.exe."""
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(registrations, "codex_windows_shell", lambda path=None: shell)
    exe = "C:\\Users\\a b\\pipx\\venvs\\lich-hooks\\Scripts\\lich-hook.exe"
    [claude] = ours.our_commands(SETTINGS["claude"].desired(exe))[:1]
    found = commandline.parse(claude)
    assert found is not None and found.program == exe.replace("\\", "/")
    assert "\\" not in claude
    codex = SETTINGS["codex"].desired(exe)
    [handler] = codex["hooks"]["SessionStart"][0]["hooks"]  # type: ignore[index]
    windows = commandline.parse(handler["command_windows"])
    # cmd.exe cannot be handed a quoted path under Codex: its 8.3 name (none off Windows),
    # else lich-hook on PATH
    program = exe if shell == POWERSHELL else "lich-hook"
    assert windows is not None and (windows.guard, windows.program) == (shell, program)
    assert '"' not in handler["command_windows"]
    posix = commandline.parse(handler["command"])
    assert posix is not None and posix.guard == LOGIN
    assert ours.is_ours(handler)
