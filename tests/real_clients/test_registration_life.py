"""A registration's life after install, on the real Claude Code in a tmux pane (throwaway
HOME, scripted model): the `install` route's program removed the normal way, an entry whose
`#!` interpreter is gone beside the plugin, an entry under `"matcher": "startup"` beside the
plugin (docs/install.md, "Both routes at once" and "Uninstall").

The `install` entries are the ones `lich-hook install claude` writes (the registry's
`desired()`, which tests/operator/test_install.py holds equal to what install writes), for
a program in a scratch venv folder that each test then breaks the way a machine does.
Every screen is printed (run with -s) and saved under LICH_TEST_SCREENS_DIR when set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from lich_hooks.human.settings.registry import SETTINGS
from tests.real_clients.support.tmux import Screen
from tests.real_clients.test_plugin_route import (
    Claude,
    add_plugin,
    claude,
    doctor,
    error_lines,
    make_clone,
    save,
    wait_until,
)
from tests.support.runner import LICH_HOOK

__all__ = ["claude"]  # the fixture, shared

import pytest

pytestmark = pytest.mark.real_client


def install_entries(claude: Claude, program: Path, matcher: str | None = None) -> Path:
    """What `lich-hook install claude` writes into ~/.claude/settings.json for `program`;
    `matcher`: its SessionStart group under that matcher (a hand edit)."""
    path = Path(claude.base["HOME"]) / ".claude" / "settings.json"
    before = json.loads(path.read_text()) if path.exists() else {}  # the plugin's enablement
    document = SETTINGS["claude"].merged(before, str(program), str(path))
    if matcher is not None:
        hooks = document["hooks"]
        assert isinstance(hooks, dict)
        hooks["SessionStart"][0]["matcher"] = matcher
    path.write_text(json.dumps(document, indent=2))
    return path


def pipx_venv(tmp: Path) -> Path:
    """A `lich-hook` as pipx leaves it: a script in its own venv's bin, `#!` to that venv."""
    folder = tmp / "pipx" / "venvs" / "lich-hooks" / "bin"
    folder.mkdir(parents=True)
    program = folder / "lich-hook"
    shutil.copyfile(LICH_HOOK, program)
    program.chmod(0o755)
    return program


def conversation_reports(claude: Claude) -> list[str]:
    return [str(body["provider_session_id"]) for body in claude.reports()]


def test_install_route_with_its_program_removed_shows_no_error_line(
    claude: Claude, tmp_path: Path
) -> None:
    program = pipx_venv(tmp_path)
    settings = install_entries(claude, program)
    shutil.rmtree(tmp_path / "pipx")  # `pipx uninstall lich-hooks`, no `lich-hook uninstall`
    outside = claude.session("removed-outside-lich", claude.env(inside=False))
    assert error_lines(outside) == []
    assert "lich-hooks" not in outside  # outside lich: silence
    inside = claude.session("removed-inside-lich", claude.env())
    assert error_lines(inside) == []
    # inside lich, once: what is missing and the fix, to the person
    flat = " ".join(inside.split())
    assert flat.count(f"runs {program}, which is missing or cannot start") == 1, flat
    assert str(settings) in flat
    assert claude.reports() == []


def test_plugin_beside_an_entry_whose_interpreter_is_gone_reports_each_conversation_once(
    claude: Claude, tmp_path: Path
) -> None:
    add_plugin(claude, make_clone(tmp_path))
    program = pipx_venv(tmp_path)
    program.write_text(f"#!{tmp_path}/pipx/venvs/lich-hooks/bin/python3.11\n")  # upgraded away
    install_entries(claude, program)
    env = claude.env()
    folder = tmp_path / "session-clear"
    folder.mkdir()
    args = ("--debug=hooks", "--debug-file", str(folder / "debug.txt"))
    with Screen(claude.client, env, claude.project, folder, cols=160, args=args) as screen:
        screen.submit("say hello")
        wait_until(lambda: len(claude.reports()) == 1, "the first conversation's report")
        screen.wait_for("scripted reply")
        screen.submit("/clear")
        screen.submit("say hello again")
        wait_until(lambda: len(claude.reports()) == 2, "the cleared conversation's report")
        time.sleep(1.0)  # a duplicate report would have arrived by now
        shown = save("interpreter-gone-beside-plugin", screen.text())
    assert error_lines(shown) == []
    ids = conversation_reports(claude)
    assert len(ids) == 2 and ids[0] != ids[1], ids


def test_plugin_beside_an_entry_under_a_startup_matcher_reports_clear(
    claude: Claude, tmp_path: Path
) -> None:
    add_plugin(claude, make_clone(tmp_path))
    install_entries(claude, LICH_HOOK, matcher="startup")
    env = claude.env()
    folder = tmp_path / "session-startup-matcher"
    folder.mkdir()
    args = ("--debug=hooks", "--debug-file", str(folder / "debug.txt"))
    with Screen(claude.client, env, claude.project, folder, cols=160, args=args) as screen:
        screen.submit("say hello")
        wait_until(lambda: len(claude.reports()) == 1, "the first conversation's report")
        screen.wait_for("scripted reply")
        screen.submit("/clear")  # only the plugin's SessionStart fires for "clear"
        screen.submit("say hello again")
        wait_until(lambda: len(claude.reports()) == 2, "the cleared conversation's report")
        time.sleep(1.0)
        shown = save("startup-matcher-beside-plugin", screen.text())
    assert error_lines(shown) == []
    ids = conversation_reports(claude)
    assert len(ids) == 2 and ids[0] != ids[1], ids


def test_plugin_beside_an_uninstalled_install_route_says_nothing_untrue(
    claude: Claude, tmp_path: Path
) -> None:
    """Both routes, then `pipx uninstall` alone: the plugin reports once per conversation, the
    install entry's line says the plugin still does, and doctor fails nothing and names
    `uninstall` as the fix."""
    add_plugin(claude, make_clone(tmp_path))
    program = pipx_venv(tmp_path)
    settings = install_entries(claude, program)
    shutil.rmtree(tmp_path / "pipx")  # `pipx uninstall lich-hooks`, no `lich-hook uninstall`
    shown = claude.session("uninstalled-beside-plugin", claude.env())
    assert error_lines(shown) == []
    flat = " ".join(shown.split())
    assert flat.count("which is missing or cannot start") == 1, flat
    assert "(the lich-hooks plugin, where installed, still does)" in flat
    assert len(claude.reports()) == 1
    code, report, text = doctor(claude.env(), claude.project)
    checks = report["checks"]
    assert isinstance(checks, list)
    [row] = [c for c in checks if str(settings) in str(c["summary"])]
    assert code == 0 and row["status"] == "warn", text
    assert str(row["fix"]).startswith("`lich-hook uninstall claude`"), row


def test_after_a_python_upgrade_the_named_fix_makes_the_next_session_report(
    claude: Claude, tmp_path: Path
) -> None:
    """A pipx install whose Python went away: the session names `pipx reinstall lich-hooks`,
    which is run as the line words it, and the next session reports with no line."""
    from tests.registrations.test_named_fixes import NETWORK, REPO, movable_python, run

    tools = tmp_path / "tools"
    subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True)
    env = {k: v for k, v in os.environ.items() if re.match(NETWORK, k)}
    home = Path(claude.base["HOME"])
    env.update(
        HOME=str(home),
        PATH=f"{tools / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        PIPX_HOME=str(home / ".local" / "share" / "pipx"),
        PIPX_BIN_DIR=str(home / ".local" / "bin"),
    )
    if subprocess.run(
        [str(tools / "bin" / "pip"), "install", "-q", "pipx"], check=False
    ).returncode:
        pytest.skip("pipx could not be installed from the package index")
    python = movable_python(tmp_path / "old-python")
    run(["pipx", "install", "--python", str(python), str(REPO)], env)
    run([str(home / ".local" / "bin" / "lich-hook"), "install", "claude"], env)
    shutil.rmtree(tmp_path / "old-python")  # the Python upgrade
    shown = claude.session("python-upgraded-away", claude.env())
    assert error_lines(shown) == []
    found = re.search(r"Fix: (.*?);", " ".join(shown.split()))
    assert found is not None and found.group(1) == "pipx reinstall lich-hooks", shown
    assert claude.reports() == []
    run(["/bin/sh", "-c", found.group(1)], env)
    after = claude.session("after-pipx-reinstall", claude.env())
    assert error_lines(after) == [] and "lich-hooks" not in after
    wait_until(lambda: len(claude.reports()) == 1, "the next session's report")
