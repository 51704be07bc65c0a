"""`lich-hook install crush` on the real Crush v0.90.0, with doctor's verdict checked against it.

A fresh HOME whose global crush.json names only the scripted model; then, in
each state (nothing registered, installed globally, installed for the
project, uninstalled, crush-hooks.json merged by hand), a `crush run` with a
tool call either reports to lich or not, and `lich-hook doctor` must exit 0
exactly when it does. Whether Crush ran a hook, Crush's own log says ("Hook
completed"), so a missing report is never mistaken for a slow one.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lich_hooks.human.settings import registrations
from lich_hooks.human.standin.server import StandIn
from tests.real_clients.conftest import CARD
from tests.real_clients.support import crush as cr
from tests.real_clients.support.clients import REPO, Client
from tests.real_clients.support.fake_lich import FakeLich
from tests.real_clients.support.model_api import ModelAPI
from tests.real_clients.test_registration_routes import REPORT_WAIT, doctor, reports
from tests.support.runner import LICH_HOOK

pytestmark = pytest.mark.real_client

LS = '[[tool:ls {"path": "."}]]'


@pytest.fixture
def card(
    tmp_path: Path, model_api: ModelAPI, lich: StandIn, fake_lich: FakeLich
) -> Iterator[dict[str, str]]:
    home = tmp_path / "home"
    cr.seed_home(home, model_api.base_url, hooks=False)
    run_dir = cr.runtime_dir()
    extra = {**lich.env(CARD), "LICH_BIN": str(fake_lich.path), "LICH_SUBAGENT_DEPTH": "0"}
    yield cr.crush_env(tmp_path, home, run_dir, **extra)
    cr.stop_servers(run_dir)


def reported(crush: Client, env: dict[str, str], project: Path, lich: StandIn) -> bool:
    """One `crush run` with a tool call: did lich get a report? (Crush's log says if it ran one.)"""
    before, hooks = len(reports(lich)), len(cr.hook_times(project))
    done = cr.run(crush, f"one tool {LS}", env, project)
    assert done.returncode == 0, done.stderr
    ran = len(cr.hook_times(project)) > hooks
    if ran:
        seen = len(lich.received)
        while len(reports(lich)) <= before:
            got = lich.wait(seen + 1, REPORT_WAIT)
            assert len(got) > seen, "Crush ran the hook but no report arrived"
            seen = len(got)
    arrived = len(reports(lich)) > before
    assert arrived == ran, "a report from a hook Crush did not run"
    if arrived:
        body = reports(lich)[-1].accepted
        assert body is not None and body["provider"] == "crush"
        assert body["provider_session_id"] in [s["uuid"] for s in cr.sessions(crush, env, project)]
    return arrived


def lich_hook(env: dict[str, str], project: Path, *args: str) -> None:
    ran = subprocess.run(
        [str(LICH_HOOK), *args], env=env, cwd=project, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_install_global_and_project_uninstall_and_doctor_agree(
    crush: Client, card: dict[str, str], project: Path, lich: StandIn
) -> None:
    env = card
    assert doctor(env, project)[0] == 1  # nothing registered
    assert not reported(crush, env, project, lich)

    lich_hook(env, project, "install", "crush")
    written = json.loads(cr.global_config(Path(env["HOME"])).read_text())
    assert written["hooks"]["PreToolUse"] == [
        {"command": registrations.command("PreToolUse", "crush", str(LICH_HOOK)), "timeout": 5}
    ]
    assert written["providers"], "install kept the user's own settings"
    code, out = doctor(env, project)
    assert code == 0, out
    assert reported(crush, env, project, lich)

    lich_hook(env, project, "uninstall", "crush")
    left = json.loads(cr.global_config(Path(env["HOME"])).read_text())
    assert not left.get("hooks", {}).get("PreToolUse") and left["providers"]
    assert doctor(env, project)[0] == 1
    assert not reported(crush, env, project, lich)

    lich_hook(env, project, "install", "crush", "--scope", "project")
    assert (project / "crush.json").is_file()
    code, out = doctor(env, project)
    assert code == 0, out
    assert reported(crush, env, project, lich)

    lich_hook(env, project, "uninstall", "crush", "--scope", "project")
    assert doctor(env, project)[0] == 1
    assert not reported(crush, env, project, lich)


def test_crush_hooks_json_merged_by_hand(
    crush: Client, card: dict[str, str], project: Path, lich: StandIn
) -> None:
    env = card
    shipped = json.loads((REPO / "crush-hooks.json").read_text())
    path = cr.global_config(Path(env["HOME"]))
    mine = json.loads(path.read_text())
    mine["hooks"] = shipped["hooks"]  # what a person pasting the file's "hooks" does
    path.write_text(json.dumps(mine, indent=2))
    code, out = doctor(env, project)
    assert code == 0, out
    assert reported(crush, env, project, lich)
