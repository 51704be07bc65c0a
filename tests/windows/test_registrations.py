"""What each harness's shell runs on Windows, as `install` writes it, run the way the harness
runs it there (docs/harnesses.md, Windows).

Codex hands a handler's `command_windows` to `%COMSPEC% /C`, quoted by Rust's std
(wine.codex_line). Inside a card it must report; outside lich, and when the program is gone
(uninstalled, its Python removed), it must exit 0 with nothing Codex would show as an error:
an empty stdout, or one JSON object (the person's line).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import SID, payload
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


@pytest.fixture
def command_windows(windows: wine.Windows, tmp_path: Path) -> str:
    """The SessionStart `command_windows` `install codex` writes on Windows."""
    env = windows_env(windows, tmp_path)
    [ran] = windows.run([wine.spec("cmd.exe /C lich-hook install codex", None, env)])
    assert ran.returncode == 0, ran
    document = json.loads((tmp_path / "home" / ".codex" / "hooks.json").read_text())
    [handler] = [h for h in _handlers(document) if "SessionStart" in str(h["command"])]
    found = handler.get("command_windows")
    assert isinstance(found, str), handler
    assert wine.LICH_HOOK in found, found
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


SHORT = r"""
import sys
from lich_hooks.human.settings import registrations
print(registrations.windows_command("SessionStart", "codex", sys.argv[1]))
"""


def test_a_program_path_with_a_space_runs_by_its_short_name(
    windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    """`C:\\Users\\a b\\…\\lich-hook.exe` cannot be quoted for Codex's cmd: install writes
    its 8.3 name, which runs."""
    folder = tmp_path / "lich hooks env" / "Scripts"
    folder.mkdir(parents=True)
    exe = folder / "lich-hook.exe"
    exe.write_bytes(wine.launcher(wine.ENTRY))
    script = tmp_path / "short.py"
    script.write_text(SHORT)
    rendered = windows.one(
        **wine.spec(f'{wine.PYTHON} {windows.path(script)} "{windows.path(exe)}"', timeout=60)
    )
    assert rendered.returncode == 0, rendered
    command = rendered.stdout.decode().strip()
    assert " " not in command.split(" SessionStart")[0] and '"' not in command, command
    assert command.split(" ")[0] != "lich-hook", command  # a short name, not the fallback
    env = windows_env(windows, tmp_path, **lich.env("card-1"))
    [ran] = windows.run(
        [wine.spec(wine.codex_line(command), payload("codex", "SessionStart"), env)]
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b""), (command, ran)
    assert [r.accepted for r in lich.wait(1)] == [
        {"session_id": "card-1", "provider_session_id": SID, "provider": "codex"}
    ], command
