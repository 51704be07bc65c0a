"""Both registration routes on the real CLIs, with doctor's verdict checked against reality.

The commands are the ones README.md and docs/install.md give a user: the
plugin route (`claude plugin marketplace add` + `claude plugin install`;
`codex plugin marketplace add` + `codex plugin add`) and the `install` route
(`lich-hook install claude|codex`). In every state a user can reach — enabled,
disabled, uninstalled, trusted, untrusted — `lich-hook doctor` must exit 0
exactly when a run of the CLI reports to lich.

Codex hooks run only once trusted. A person trusts them in the TUI ("Hooks
need review" → "Trust all and continue", or /hooks), which writes a
`[hooks.state."<key>"] trusted_hash` record into config.toml; these tests
write that record themselves (never `--dangerously-bypass-hook-trust`, which
also changes how Codex runs hooks), with the hash lich_hooks computes, so a
report arriving proves the formula is the one Codex checks.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from lich_hooks.human.settings import registrations
from lich_hooks.human.standin.server import Received, StandIn
from tests.real_clients.conftest import CARD
from tests.real_clients.support import clients
from tests.real_clients.support.claude import claude_env, hook_runs, seed_home, wait_for_hook
from tests.real_clients.support.clients import REPO, Client
from tests.real_clients.support.codex import codex_env, run_exec, seed_codex_home, trust_hook
from tests.real_clients.support.fake_lich import FakeLich
from tests.real_clients.support.model_api import REPLY_TEXT, ModelAPI
from tests.support.runner import LICH_HOOK

pytestmark = pytest.mark.real_client

PLUGIN = "lich-hooks@lich-hooks"
CODEX_PLUGIN_KEY = f"{PLUGIN}:plugin/codex-hooks.json:session_start:0:0"
# A hook that ran reports within its 2 s send deadline (the sender is detached, so the
# report may land after the CLI exits); whether it ran, each CLI says itself.
REPORT_WAIT = 10.0
HOOK_LOG_WAIT = 3.0  # lich-hook logs a run within its 2 s send deadline


def reports(lich: StandIn) -> list[Received]:
    """What lich received as reports (doctor's probes are not reports)."""
    return [r for r in lich.received if r.probe is None and r.endpoint == "session-start"]


def reported(lich: StandIn, before: int, ran_hook: bool) -> bool:
    """Did a report arrive? Waited for only when the CLI says it ran the hook."""
    if ran_hook:
        seen = len(lich.received)
        while len(reports(lich)) <= before:
            got = lich.wait(seen + 1, REPORT_WAIT)
            assert len(got) > seen, "the hook ran but no report arrived"
            seen = len(got)
    arrived = len(reports(lich)) > before
    assert arrived == ran_hook, "a report from a hook the CLI did not run"
    return arrived


def doctor(env: dict[str, str], cwd: Path) -> tuple[int, str]:
    ran = subprocess.run(
        [str(LICH_HOOK), "doctor"],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.stderr == ""
    return ran.returncode, ran.stdout


def run_cli(binary: Path, *args: str, env: dict[str, str], cwd: Path) -> str:
    ran = clients.run_cli([str(binary), *args], env, cwd)
    assert ran.returncode == 0, (args, ran.stdout, ran.stderr)
    return ran.stdout + ran.stderr


@pytest.fixture
def marketplace(tmp_path: Path) -> Path:
    """A copy of this repository's plugin files, as a user's clone has them."""
    copy = tmp_path / "lich-hooks"
    # the marketplace's plugin is the package folder: the clone has all of it
    shutil.copytree(REPO / "lich_hooks", copy / "lich_hooks")
    for relative in registrations.files():
        target = copy / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / relative, target)
    return copy


# --- Claude Code ------------------------------------------------------------------------


def test_the_marketplace_passes_claudes_strict_validation(
    claude_code: Client, claude_card: dict[str, str], marketplace: Path, project: Path
) -> None:
    """Before: `✘ Validation failed` (the marketplace had no description)."""
    argv = [str(claude_code.binary), "plugin", "validate", "--strict", str(marketplace)]
    ran = subprocess.run(
        argv, env=claude_card, cwd=project, capture_output=True, text=True, timeout=120
    )
    if "unknown option '--strict'" in ran.stderr:
        pytest.skip(f"Claude Code {claude_code.release} has no `plugin validate --strict`")
    assert ran.returncode == 0, (ran.stdout, ran.stderr)
    assert "Validation passed" in ran.stdout + ran.stderr, ran.stdout


@pytest.fixture
def claude_card(
    tmp_path: Path, project: Path, model_api: ModelAPI, lich: StandIn, fake_lich: FakeLich
) -> dict[str, str]:
    """A lich card's environment with Claude Code onboarded and no hooks registered."""
    home = tmp_path / "home"
    seed_home(home, project, hooks=False)
    card = {**lich.env(CARD), "LICH_BIN": str(fake_lich.path), "LICH_SUBAGENT_DEPTH": "0"}
    return claude_env(tmp_path, home, model_api.base_url, **card)


def claude_reports(
    client: Client, env: dict[str, str], project: Path, lich: StandIn, model_api: ModelAPI
) -> bool:
    """Run `claude -p`; did a session-start report reach lich?

    Claude Code's hook debug log says whether it ran our SessionStart hook.
    """
    before, calls = len(reports(lich)), len(model_api.model_calls())
    runs = len(hook_runs(env, "SessionStart"))
    debug = Path(env["TMPDIR"]) / f"claude-debug-{calls}.txt"
    ran = subprocess.run(
        [str(client.binary), "-p", "say hello", "--debug=hooks", "--debug-file", str(debug)],
        env=env,
        cwd=project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert REPLY_TEXT in ran.stdout
    assert len(model_api.model_calls()) > calls  # the turn happened either way
    log = debug.read_text() if debug.exists() else ""
    # e.g. `Hooks: SessionStart:startup [sh "/…/plugin/lich-hook" SessionStart claude] (plugin …)
    # finished with status 0`, or with the absolute path `install` writes
    ran_hook = (
        re.search(
            r'Hooks: SessionStart\S* \[[^\]]*lich-hook"? SessionStart claude\].* finished', log
        )
        is not None
    )
    if not ran_hook:
        # Claude Code before 2.1.3xx logs no such line (2.1.269: only "Found 0 total hooks in
        # registry"): lich-hook's own log line (one per run, written within its send deadline)
        # is then the sign that it ran
        deadline = time.monotonic() + HOOK_LOG_WAIT
        while len(hook_runs(env, "SessionStart")) <= runs and time.monotonic() < deadline:
            time.sleep(0.1)
        ran_hook = len(hook_runs(env, "SessionStart")) > runs
    return reported(lich, before, ran_hook)


def test_claude_plugin_route_and_doctor_agree(
    claude_code: Client,
    claude_card: dict[str, str],
    marketplace: Path,
    project: Path,
    lich: StandIn,
    model_api: ModelAPI,
) -> None:
    env, claude = claude_card, claude_code.binary
    assert doctor(env, project)[0] == 1  # nothing registered yet
    added = run_cli(claude, "plugin", "marketplace", "add", str(marketplace), env=env, cwd=project)
    installed = run_cli(claude, "plugin", "install", PLUGIN, env=env, cwd=project)
    print(added, installed, sep="\n")
    # Installed and enabled: doctor is content, and `claude -p` reports.
    code, out = doctor(env, project)
    print(out)
    assert code == 0, out
    assert "Claude Code plugin: " in out and f"({PLUGIN}, user scope)" in out
    assert claude_reports(claude_code, env, project, lich, model_api)
    [record] = wait_for_hook(env, "SessionStart")
    assert (record["provider"], record["decision"]) == ("claude", "report")
    # Disabled: nothing reports, and doctor says so.
    run_cli(claude, "plugin", "disable", PLUGIN, env=env, cwd=project)
    code, out = doctor(env, project)
    print(out)
    assert code == 1, out
    assert f"claude plugin enable {PLUGIN}" in out
    assert not claude_reports(claude_code, env, project, lich, model_api)
    # Uninstalled (the cache stays behind, marked orphaned): the same.
    run_cli(claude, "plugin", "enable", PLUGIN, env=env, cwd=project)
    run_cli(claude, "plugin", "uninstall", PLUGIN, env=env, cwd=project)
    caches = list((Path(env["HOME"]) / ".claude" / "plugins" / "cache").rglob(".orphaned_at"))
    assert caches, "Claude Code no longer leaves the cache behind: simplify this test"
    code, out = doctor(env, project)
    print(out)
    assert code == 1, out
    assert "Claude Code plugin" not in out
    assert not claude_reports(claude_code, env, project, lich, model_api)


def test_claude_install_route_and_doctor_agree(
    claude_code: Client,
    claude_card: dict[str, str],
    project: Path,
    lich: StandIn,
    model_api: ModelAPI,
) -> None:
    env = claude_card
    ran = subprocess.run(
        [str(LICH_HOOK), "install", "claude"],
        env=env,
        cwd=project,
        capture_output=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    code, out = doctor(env, project)
    assert code == 0, out
    assert claude_reports(claude_code, env, project, lich, model_api)


# --- Codex ------------------------------------------------------------------------------


@pytest.fixture
def codex_card(
    tmp_path: Path, model_api: ModelAPI, lich: StandIn, fake_lich: FakeLich
) -> dict[str, str]:
    codex_home = tmp_path / "codex-home"
    seed_codex_home(codex_home, model_api.base_url, hooks=False)
    card = {**lich.env(CARD), "LICH_BIN": str(fake_lich.path), "LICH_SUBAGENT_DEPTH": "0"}
    return codex_env(tmp_path, codex_home, **card)


def codex_reports(
    client: Client, env: dict[str, str], project: Path, lich: StandIn, model_api: ModelAPI
) -> bool:
    """Run `codex exec` (hooks trusted or not, as the user left them); did a report arrive?"""
    before, calls = len(reports(lich)), len(model_api.model_calls())
    ran = run_exec(client, "say hello", env, project, bypass_trust=False)
    assert ran.returncode == 0, ran.stderr
    assert REPLY_TEXT in ran.stdout
    assert len(model_api.model_calls()) > calls
    ran_hook = "hook: SessionStart Completed" in ran.stderr  # codex exec runs hooks as children
    return reported(lich, before, ran_hook)


def test_codex_plugin_route_and_doctor_agree(
    codex: Client,
    codex_card: dict[str, str],
    marketplace: Path,
    project: Path,
    lich: StandIn,
    model_api: ModelAPI,
) -> None:
    env = codex_card
    out = run_cli(
        codex.binary, "plugin", "marketplace", "add", str(marketplace), env=env, cwd=project
    )
    out += run_cli(codex.binary, "plugin", "add", PLUGIN, env=env, cwd=project)
    print(out)
    [root] = (Path(env["CODEX_HOME"]) / "plugins" / "cache" / "lich-hooks" / "lich-hooks").iterdir()
    # Added but not trusted: Codex runs nothing and says nothing; doctor names trust.
    code, report = doctor(env, project)
    print(report)
    assert code == 1, report
    assert "not trusted yet" in report and "Hooks need review" in report and "/hooks" in report
    assert not codex_reports(codex, env, project, lich, model_api)
    # Trusted: doctor is content and `codex exec` reports.
    trust_hook(env, CODEX_PLUGIN_KEY, root / "plugin" / "codex-hooks.json")
    code, report = doctor(env, project)
    print(report)
    assert code == 0, report
    assert codex_reports(codex, env, project, lich, model_api)
    body = reports(lich)[-1].accepted
    assert body is not None and (body["session_id"], body["provider"]) == (CARD, "codex")


def test_codex_install_route_and_doctor_agree(
    codex: Client,
    codex_card: dict[str, str],
    project: Path,
    lich: StandIn,
    model_api: ModelAPI,
) -> None:
    env = codex_card
    ran = subprocess.run(
        [str(LICH_HOOK), "install", "codex"], env=env, cwd=project, capture_output=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    hooks_file = Path(env["CODEX_HOME"]) / "hooks.json"
    code, report = doctor(env, project)
    assert code == 1, report
    assert "not trusted yet" in report
    assert not codex_reports(codex, env, project, lich, model_api)
    trust_hook(env, f"{hooks_file}:session_start:0:0", hooks_file)
    code, report = doctor(env, project)
    assert code == 0, report
    assert codex_reports(codex, env, project, lich, model_api)
