"""install / uninstall / doctor / demo for opencode and omp, whose registration is a module file.

Run as the real console script on a scratch home; the module's text is
checked as data (settings/modules.py) and, where Node is on PATH, parsed by it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lich_hooks.human.settings import modules
from lich_hooks.human.settings.errors import Refused
from lich_hooks.human.settings.registry import MODULES
from lich_hooks.human.standin.server import StandIn
from tests.operator.conftest import Scratch
from tests.support.contract_check import assert_client_body
from tests.support.runner import LICH_HOOK

EXE = str(LICH_HOOK)
HARNESSES = ["opencode", "omp"]


def module_path(box: Scratch, harness: str, scope: str = "user") -> Path:
    return {
        ("opencode", "user"): box.home / ".config" / "opencode" / "plugins" / "lich-hooks.js",
        ("opencode", "project"): box.project / ".opencode" / "plugins" / "lich-hooks.js",
        ("omp", "user"): box.home / ".omp" / "agent" / "extensions" / "lich-hooks.ts",
        ("omp", "project"): box.project / ".omp" / "extensions" / "lich-hooks.ts",
    }[harness, scope]


# --- the module text --------------------------------------------------------------------


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_module_names_the_executable_and_runs_session_start_for_its_provider(
    harness: str,
) -> None:
    text = modules.render(MODULES[harness].template, EXE)
    assert modules.is_ours(text)
    assert modules.executable_of(text) == EXE
    assert modules.command_of(text) == f"lich-hook SessionStart {harness}"
    assert modules.PLACEHOLDER not in text


@settings(deadline=None)
@given(st.text(min_size=1).filter(lambda s: "\x00" not in s))
def test_any_path_survives_the_round_trip_through_the_module(path: str) -> None:
    """Quotes, backslashes, newlines, any script: a JSON string is a JS string literal."""
    for harness in MODULES.values():
        text = modules.render(harness.template, path)
        assert modules.executable_of(text) == path
        assert text.count("\n") == modules.template(harness.template).count("\n")


def test_the_opencode_plugin_feeds_stdin_through_argv_never_the_script() -> None:
    text = modules.template(MODULES["opencode"].template)
    assert """'printf %s "$1" | exec "$2" "$3" "$4"'""" in text
    assert '"sh", payload, LICH_HOOK, ...ARGS' in text


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_node_parses_the_rendered_opencode_plugin(tmp_path: Path) -> None:
    module = tmp_path / "lich-hooks.mjs"
    module.write_text(modules.render(MODULES["opencode"].template, '/a "quoted"\\path'))
    checked = subprocess.run(
        ["node", "--check", str(module)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stderr


def test_plans_decide_from_what_is_at_the_path(tmp_path: Path) -> None:
    harness = MODULES["opencode"]
    environ = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    path = Path(harness.path("user", environ, str(tmp_path)))
    path.parent.mkdir(parents=True)
    ours = modules.render(harness.template, EXE)
    older = ours.replace("const ARGS", "// an older version\nconst ARGS")

    def plan(text: str | None, exe: str | None = EXE) -> str:
        if text is not None:
            path.write_text(text)
        elif path.exists():
            path.unlink()
        return harness.plan("user", exe, environ, str(tmp_path)).action

    assert plan(None) == "write"
    assert plan(ours) == "nothing"
    assert plan(older) == "write"
    assert plan(ours, "/elsewhere/lich-hook") == "write"
    with pytest.raises(Refused, match="was not written by lich-hook"):
        plan("// mine\n")
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere.js")
    with pytest.raises(Refused, match="symlink"):
        harness.plan("user", EXE, environ, str(tmp_path))
    assert harness.plan("user", None, environ, str(tmp_path)).action == "nothing"
    path.unlink()
    assert plan(older, None) == "remove"
    assert plan("// mine\n", None) == "nothing"
    assert plan(None, None) == "nothing"


# --- install / uninstall ------------------------------------------------------------------


@pytest.mark.parametrize("harness", HARNESSES)
@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_writes_the_module_and_uninstall_removes_it(
    scratch: Scratch, harness: str, scope: str
) -> None:
    path = module_path(scratch, harness, scope)
    ran = scratch.cli("install", harness, "--scope", scope, "--verbose")
    assert ran.returncode == 0, ran.stderr
    assert path.read_text() == modules.render(MODULES[harness].template, EXE)
    assert f"runs: {EXE} SessionStart {harness}" in ran.stdout
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()
    again = scratch.cli("install", harness, "--scope", scope)
    assert again.returncode == 0 and "nothing written" in again.stdout
    gone = scratch.cli("uninstall", harness, "--scope", scope)
    assert gone.returncode == 0, gone.stderr
    assert not path.exists()
    assert path.parent.is_dir()  # the folders stay: others' plugins may live there
    nothing = scratch.cli("uninstall", harness, "--scope", scope)
    assert nothing.returncode == 0 and "nothing to remove" in nothing.stdout


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_reinstall_replaces_an_older_module_of_ours_keeping_its_mode(
    scratch: Scratch, harness: str
) -> None:
    path = module_path(scratch, harness)
    path.parent.mkdir(parents=True)
    old = modules.render(MODULES[harness].template, "/old/venv/bin/lich-hook")
    path.write_text(old + "// from an older lich-hooks\n")
    path.chmod(0o640)
    ran = scratch.cli("install", harness)
    assert ran.returncode == 0, ran.stderr
    assert "Updated" in ran.stdout
    assert path.read_text() == modules.render(MODULES[harness].template, EXE)
    assert path.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_file_that_is_not_ours_is_refused_and_left_alone(scratch: Scratch, harness: str) -> None:
    path = module_path(scratch, harness)
    path.parent.mkdir(parents=True)
    mine = "// my own lich plugin, copied from a blog post\nexport default () => {}\n"
    path.write_text(mine)
    ran = scratch.cli("install", harness)
    assert ran.returncode == 1
    assert "not written by lich-hook" in ran.stderr and ran.stdout == ""
    gone = scratch.cli("uninstall", harness)
    assert gone.returncode == 0 and "left as it is" in gone.stdout
    assert path.read_text() == mine


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_symlink_at_the_module_path_is_refused(scratch: Scratch, harness: str) -> None:
    path = module_path(scratch, harness)
    path.parent.mkdir(parents=True)
    target = scratch.tmp / "dotfiles-module"
    target.write_text(modules.render(MODULES[harness].template, EXE))
    path.symlink_to(target)
    ran = scratch.cli("install", harness)
    assert ran.returncode == 1 and "symlink" in ran.stderr
    gone = scratch.cli("uninstall", harness)
    assert gone.returncode == 0
    assert path.is_symlink() and target.exists()


@pytest.mark.parametrize("harness", HARNESSES)
def test_dry_run_prints_the_module_and_writes_nothing(scratch: Scratch, harness: str) -> None:
    ran = scratch.cli("install", harness, "--dry-run")
    assert ran.returncode == 0, ran.stderr
    assert f"+const {'LICH_HOOK: string' if harness == 'omp' else 'LICH_HOOK'} = " in ran.stdout
    assert "dry run" in ran.stdout
    assert not module_path(scratch, harness).exists()


def test_the_user_paths_follow_the_harnesses_own_variables(scratch: Scratch) -> None:
    config = scratch.tmp / "xdg"
    agent = scratch.tmp / "omp-agent"
    env = {**scratch.env, "XDG_CONFIG_HOME": str(config), "PI_CODING_AGENT_DIR": str(agent)}
    assert scratch.cli("install", "opencode", env=env).returncode == 0
    assert scratch.cli("install", "omp", env=env).returncode == 0
    assert (config / "opencode" / "plugins" / "lich-hooks.js").is_file()
    assert (agent / "extensions" / "lich-hooks.ts").is_file()
    # relative values are invalid (XDG rules; omp would resolve against its cwd): ignored
    relative = {**scratch.env, "XDG_CONFIG_HOME": "cfg", "PI_CODING_AGENT_DIR": "agent"}
    assert scratch.cli("install", "opencode", env=relative).returncode == 0
    assert scratch.cli("install", "omp", env=relative).returncode == 0
    assert module_path(scratch, "opencode").is_file() and module_path(scratch, "omp").is_file()
    assert not (scratch.project / "cfg").exists() and not (scratch.project / "agent").exists()


# --- doctor ---------------------------------------------------------------------------------


def _doctor(box: Scratch, lich: StandIn) -> dict[str, dict[str, object]]:
    ran = box.cli("doctor", "--json", env={**box.env, **lich.env("card-9")})
    report = json.loads(ran.stdout)
    rows = {row["name"]: row for row in report["checks"]}
    rows["_ok"] = {"status": report["ok"]}
    return rows


@pytest.mark.parametrize("harness", HARNESSES)
def test_doctor_shows_the_module_and_the_lich_hook_it_runs(scratch: Scratch, harness: str) -> None:
    with StandIn() as lich:
        before = _doctor(scratch, lich)
        assert before["registrations"]["status"] == "fail"
        assert scratch.cli("install", harness).returncode == 0
        rows = _doctor(scratch, lich)
        row = rows[f"{harness} user module"]
        assert row["status"] == "ok"
        assert EXE in str(row["summary"])
        assert "registrations" not in rows  # a working module is a working registration
        assert rows["_ok"]["status"] is True
        # a module naming a lich-hook that is gone fails, and says how to fix it
        path = module_path(scratch, harness)
        path.write_text(modules.render(MODULES[harness].template, "/gone/bin/lich-hook"))
        rows = _doctor(scratch, lich)
        assert rows[f"{harness} user module"]["status"] == "fail"
        assert f"lich-hook install {harness}" in str(rows[f"{harness} user module"]["fix"])
        assert "registrations" not in rows  # one cause, one failure
        assert rows["_ok"]["status"] is False
        # an older module of ours: works, but doctor says to re-install
        path.write_text(modules.render(MODULES[harness].template, EXE) + "// older\n")
        rows = _doctor(scratch, lich)
        assert rows[f"{harness} user module"]["status"] == "warn"
        assert "older version" in str(rows[f"{harness} user module"]["summary"])


def test_doctor_points_out_a_module_in_both_scopes(scratch: Scratch) -> None:
    assert scratch.cli("install", "omp").returncode == 0
    installed = scratch.cli("install", "omp", "--scope", "project")
    assert "every report would be sent twice" in installed.stdout
    with StandIn() as lich:
        rows = _doctor(scratch, lich)
    assert rows["omp duplicates"]["status"] == "warn"


# --- demo and the hook itself ------------------------------------------------------------------


@pytest.mark.slow
def test_demo_shows_what_each_module_sends(scratch: Scratch) -> None:
    ran = scratch.cli("demo")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for provider in HARNESSES:
        assert f"lich received: card demo-card is running {provider} session" in ran.stdout
    ran = scratch.cli("demo", "--verbose")
    for provider in HARNESSES:
        assert f"$ lich-hook SessionStart {provider}" in ran.stdout
        assert f'"provider":"{provider}"}} -> 204' in ran.stdout


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_command_the_module_runs_reports_with_its_provider(
    scratch: Scratch, harness: str
) -> None:
    """The opencode plugin's exact shell line (payload and path as argv), and omp's argv."""
    session = "ses_dd3c012a1ffeI0xakA9Xos0n4j" if harness == "opencode" else "01a22c51-6760"
    payload = json.dumps({"session_id": session})
    script = 'printf %s "$1" | exec "$2" "$3" "$4"'
    with StandIn() as lich:
        env = {**scratch.env, **lich.env("card-7")}
        if harness == "opencode":
            argv = ["/bin/sh", "-c", script, "sh", payload, EXE, "SessionStart", harness]
            ran = subprocess.run(argv, env=env, capture_output=True, timeout=30, check=False)
        else:
            argv = [EXE, "SessionStart", harness]
            ran = subprocess.run(
                argv, env=env, input=payload.encode(), capture_output=True, timeout=30, check=False
            )
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
        [received] = lich.wait(1)
    body = assert_client_body("session-start", received.body)
    assert body == {"session_id": "card-7", "provider_session_id": session, "provider": harness}
