"""The human commands on the official Windows CPython (under Wine): install, uninstall, doctor,
demo, listen, the status line, and the state directory the hooks keep there.

`install` writes this installation's `lich-hook.exe` (pip's Windows launcher,
beside python.exe) into each harness's Windows settings path, under the
profile the test gives Windows (USERPROFILE, LOCALAPPDATA; Windows has no HOME).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from lich_hooks.human.settings import commandline
from lich_hooks.human.standin.server import StandIn
from tests.spine.helpers import payload
from tests.support.contract_check import assert_client_body
from tests.support.runner import log_records
from tests.windows import wine
from tests.windows.conftest import windows_env

LICH_HOOK = "cmd.exe /C lich-hook"
EXE = wine.LICH_HOOK  # C:\lich\python\lich-hook.exe


def _commands(document: object) -> list[str]:
    """Every `command` string anywhere in a settings document."""
    found: list[str] = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "command" and isinstance(value, str):
                found.append(value)
            else:
                found += _commands(value)
    elif isinstance(document, list):
        for item in document:
            found += _commands(item)
    return found


# harness -> its user settings file under the profile, as Windows names it
SETTINGS = {
    "claude": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "crush": "AppData/Local/crush/crush.json",
    "antigravity": ".gemini/config/hooks.json",
}


def test_install_writes_each_windows_settings_path_and_uninstall_restores_it(
    windows: wine.Windows, tmp_path: Path
) -> None:
    env = windows_env(windows, tmp_path)
    home = tmp_path / "home"
    claude = home / ".claude" / "settings.json"
    claude.parent.mkdir()
    original = b'{\r\n  "model": "opus"\r\n}\r\n'
    claude.write_bytes(original)
    runs = [wine.spec(f"{LICH_HOOK} install {key}", None, env) for key in SETTINGS]
    runs.append(wine.spec(f"{LICH_HOOK} doctor", None, env))
    runs += [wine.spec(f"{LICH_HOOK} uninstall {key}", None, env) for key in SETTINGS]
    installed: dict[str, list[str]] = {}
    results = windows.run(runs[: len(SETTINGS)])
    for key, ran in zip(SETTINGS, results, strict=True):
        assert ran.returncode == 0, (key, ran)
        document = json.loads((home / SETTINGS[key]).read_text(encoding="utf-8"))
        installed[key] = _commands(document)
    for key, commands in installed.items():
        assert commands, key
        # this installation's launcher, by absolute path (Claude Code's Git Bash reads C:/…)
        programs = {getattr(commandline.parse(c), "program", None) for c in commands}
        assert programs <= {EXE, EXE.replace("\\", "/")} and programs, (key, commands)
    [doctor] = windows.run([runs[len(SETTINGS)]])
    text = doctor.stdout.decode("utf-8", "replace")
    assert "Traceback" not in text + doctor.stderr.decode("utf-8", "replace"), doctor
    for key in SETTINGS:
        assert str(Path(SETTINGS[key]).name) in text, (key, text)
    results = windows.run(runs[len(SETTINGS) + 1 :])
    assert [r.returncode for r in results] == [0] * len(SETTINGS), results
    # ours removed, the user's own bytes back as they were (CRLF included)
    assert claude.read_bytes() == original
    for key in ("codex", "crush", "antigravity"):
        path = home / SETTINGS[key]
        assert not path.exists() or _commands(json.loads(path.read_text())) == [], key


def test_demo_shows_every_harness_behaving(windows: wine.Windows, tmp_path: Path) -> None:
    env = windows_env(windows, tmp_path)
    [ran] = windows.run([wine.spec(f"{LICH_HOOK} demo", None, env, timeout=240)], timeout=300)
    text = ran.stdout.decode("utf-8", "replace")
    assert ran.returncode == 0, text + ran.stderr.decode("utf-8", "replace")
    assert "All harnesses behaved" in text, text
    assert "✗" not in text, text


def test_the_status_line_counts_workers_and_keeps_the_users_line(
    windows: wine.Windows, tmp_path: Path
) -> None:
    env = windows_env(windows, tmp_path, LICH_SESSION_ID="card-1", LICH_PORT="1", LICH_TOKEN="t")
    body = {"session_id": "5b0c8f0e-3d1a-4c2e-9f7a-2b6d1e8c4a10", "cwd": "C:\\"}
    own, wrapped = windows.run(
        [
            wine.spec(f"{LICH_HOOK} status-line", body, env),
            wine.spec(f"{LICH_HOOK} status-line -- cmd.exe /C echo my line", body, env),
        ]
    )
    assert (own.returncode, own.stderr) == (0, b""), own
    assert (wrapped.returncode, wrapped.stderr) == (0, b""), wrapped
    assert wrapped.stdout.splitlines()[0].strip() == b"my line", wrapped


def test_listen_prints_what_a_hook_sends(windows: wine.Windows, tmp_path: Path) -> None:
    env = windows_env(windows, tmp_path)
    probe = wine.spec(rf"{wine.PYTHON} W:\tests\windows\listen_probe.py", None, env, timeout=60)
    [ran] = windows.run([probe])
    assert ran.returncode == 0, ran
    result = ran.json()
    assert isinstance(result, dict)
    shown = str(result["listen"])
    # what it tells a Windows user to run is what cmd.exe understands
    assert "set LICH_PORT=" in shown and "export " not in shown, shown
    assert "session-start" in shown and "listen-card" in shown, shown
    assert result["hook"] == [0, "", ""], result


def test_the_state_directory_is_under_localappdata_and_pruned_without_fork(
    windows: wine.Windows, lich: StandIn, tmp_path: Path
) -> None:
    """No fork: the send runs inline and the same run prunes after it (hook/run.py)."""
    env = windows_env(windows, tmp_path, **lich.env("card-1"))
    state = tmp_path / "home" / "AppData" / "Local" / "lich-hooks"
    # what earlier runs left: a card's record from 40 days ago, a claim a killed sender left
    (state / "reported").mkdir(parents=True)
    (state / "sending").mkdir()
    old = time.time() - 40 * 86400
    for stale in (state / "reported" / "card-gone", state / "sending" / "card-gone"):
        stale.write_text("claude\nold\n")
        os.utime(stale, (old, old))
    run = wine.spec(f"{LICH_HOOK} PreToolUse crush", payload("crush", "PreToolUse"), env)
    [ran] = windows.run([run])
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    [request] = lich.wait(1)
    assert_client_body("session-start", request.body)
    made = sorted(p.relative_to(state).as_posix() for p in state.rglob("*"))
    assert made == [".pruned", "reported", "reported/card-1", "sending"], made
    records = log_records({"LICH_HOOK_LOG": str(tmp_path / "hook.log")})
    assert [(r["event"], r["decision"]) for r in records] == [
        ("PreToolUse", "report"),
        ("prune", "pruned"),
    ], records
