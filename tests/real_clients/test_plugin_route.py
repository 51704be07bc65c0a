"""First contact on the real Claude Code, in a tmux pane, with a throwaway HOME.

The plugin is added the way README.md says (`claude plugin marketplace add
<clone>`, `claude plugin install lich-hooks@lich-hooks`) from a clone that
holds what a developer's clone holds (`.venv`, `.cache`), and nothing is
pip-installed: no `lich-hook` on PATH. What the person sees is the rendered
pane; every screen a test looked at is printed (run with -s to read them) and,
with LICH_TEST_SCREENS_DIR set, saved there.

- the plugin alone: no error line in any session, inside lich or not; inside
  lich the session reports; Claude Code's copy stays small;
- the plugin and the `install` route together: one report, and for an Agent
  call one card and one answer;
- each broken state of the plugin/PATH routes (the old plugin that ran
  `lich-hook` from PATH; no usable Python): doctor names a fix, and after the
  fix the next session shows no error and reports.
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

import pytest

from lich_hooks.human.settings import registrations
from lich_hooks.human.standin.server import StandIn
from tests.real_clients.conftest import CARD
from tests.real_clients.support.agent_calls import agent_prompt
from tests.real_clients.support.claude import claude_env, hook_runs, seed_home, wait_for_hook
from tests.real_clients.support.clients import REPO, Client, run_cli
from tests.real_clients.support.codex import codex_env, run_exec, seed_codex_home, trust_hook
from tests.real_clients.support.fake_lich import FakeLich
from tests.real_clients.support.model_api import REPLY_TEXT, ModelAPI
from tests.real_clients.support.tmux import Screen
from tests.support.runner import LICH_HOOK

pytestmark = pytest.mark.real_client

PLUGIN = "lich-hooks@lich-hooks"
# What Claude Code prints for a hook that failed (2.1.328, 2.1.332): "SessionStart:startup hook
# failed", "/bin/sh: 1: lich-hook: not found", "stop hook reported a problem", "Exit 127".
ERROR_LINE = re.compile(r"hook failed|not found|reported a problem|Exit \d+|hook error", re.I)
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"  # Python 3.10+ here, no lich-hook
JUNK_BYTES = 12 << 20  # what a developer's clone holds beside the code
SCREENS = os.environ.get("LICH_TEST_SCREENS_DIR")  # read now: the tests' fixtures drop LICH_*

# The Claude Code releases the plugin route was measured on: 2.1.328 and 2.1.332.
MEASURED_FROM = "2.1.328"


def save(name: str, screen: str) -> str:
    print(f"\n----- {name} -----\n{screen}\n-----")
    if SCREENS:
        Path(SCREENS).mkdir(parents=True, exist_ok=True)
        Path(SCREENS, f"{name}.txt").write_text(screen + "\n", encoding="utf-8")
    return screen


def error_lines(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines() if ERROR_LINE.search(line)]


def make_clone(tmp: Path, old_plugin: bool = False) -> Path:
    """A clone as a developer has it: the shipped files, the package, a .venv and a .cache.

    `old_plugin`: the marketplace of before, whose plugin was the whole clone and ran
    `lich-hook` from PATH (hooks/hooks.json at the root).
    """
    clone = tmp / "lich-hooks"
    for relative in registrations.files():
        (clone / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / relative, clone / relative)
    shutil.copytree(REPO / "lich_hooks", clone / "lich_hooks", dirs_exist_ok=True)
    for junk in (".venv/lib/python3/site-packages", ".cache/clients/claude-code"):
        (clone / junk).mkdir(parents=True)
        (clone / junk / "blob.bin").write_bytes(os.urandom(JUNK_BYTES // 2))
    if old_plugin:
        market = clone / ".claude-plugin" / "marketplace.json"
        value = json.loads(market.read_text())
        value["plugins"][0]["source"] = "./"
        market.write_text(json.dumps(value, indent=2))
    return clone


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


class Claude:
    """One throwaway HOME with Claude Code onboarded; sessions in tmux panes, `claude -p`."""

    def __init__(
        self, client: Client, tmp: Path, project: Path, api: ModelAPI, lich: StandIn, bin: FakeLich
    ) -> None:
        self.client, self.tmp, self.project, self.api, self.lich = client, tmp, project, api, lich
        home = tmp / "home"
        seed_home(home, project, hooks=False)
        self.card = {**lich.env(CARD), "LICH_BIN": str(bin.path), "LICH_SUBAGENT_DEPTH": "0"}
        self.base = claude_env(tmp, home, api.base_url)
        self.sessions = 0

    def env(self, inside: bool = True, path: str = SYSTEM_PATH) -> dict[str, str]:
        env = {**self.base, "PATH": path}
        if inside:
            env.update(self.card)
        return env

    def cli(self, *args: str, env: dict[str, str] | None = None) -> str:
        ran = run_cli([str(self.client.binary), *args], env or self.env(), self.project)
        assert ran.returncode == 0, (args, ran.stdout, ran.stderr)
        return (ran.stdout + ran.stderr).strip()

    def session(
        self, name: str, env: dict[str, str], prompt: str = "say hello", hooks: bool = True
    ) -> str:
        """A TUI session: type `prompt`, wait for the turn and its Stop hooks; the screen."""
        self.sessions += 1
        folder = self.tmp / f"session-{self.sessions}"
        folder.mkdir()
        debug = folder / "debug.txt"
        args = ("--debug=hooks", "--debug-file", str(debug))
        with Screen(self.client, env, self.project, folder, cols=160, args=args) as screen:
            screen.submit(prompt)
            screen.wait_for(REPLY_TEXT if "[[tool:" not in prompt else "scripted final answer")
            if hooks:
                wait_until(lambda: _stop_hooks_done(debug), f"the Stop hooks of {name}")
            # the turn's last line ("✻ Worked for 0s · done 10:18 AM"), drawn after its Stop
            # hooks; "✻" alone is also the spinner's
            screen.wait_for("· done")
            return save(name, screen.text())

    def reports(self) -> list[dict[str, object]]:
        return [
            r.accepted
            for r in self.lich.received
            if r.probe is None and r.endpoint == "session-start" and r.accepted
        ]


def _stop_hooks_done(debug: Path) -> bool:
    text = debug.read_text(errors="replace") if debug.exists() else ""
    return re.search(r"Hooks: Stop \[.*\] .*finished with status", text) is not None


def wait_until(condition: object, what: str, timeout: float = 60.0) -> None:
    assert callable(condition)
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)  # polling files another process writes


def doctor(env: dict[str, str], project: Path) -> tuple[int, dict[str, object], str]:
    """lich-hook doctor, run by absolute path (as after `pipx install` with no PATH entry)."""
    ran = [run_cli([str(LICH_HOOK), "doctor", *flag], env, project) for flag in ([], ["--json"])]
    assert ran[0].stderr == "" and ran[0].returncode == ran[1].returncode
    print(ran[0].stdout)
    return ran[0].returncode, json.loads(ran[1].stdout), ran[0].stdout


def plugin_rows(report: dict[str, object]) -> list[dict[str, object]]:
    checks = report["checks"]
    assert isinstance(checks, list)
    return [c for c in checks if c["name"] == "Claude Code plugin"]


@pytest.fixture
def claude(
    claude_code: Client,
    tmp_path: Path,
    project: Path,
    model_api: ModelAPI,
    lich: StandIn,
    fake_lich: FakeLich,
) -> Claude:
    if not claude_code.at_least(MEASURED_FROM):
        # what these tests read (the plugin commands, the hooks' debug lines, the screen's
        # "· done") was measured from 2.1.328; older releases in the matrix word them otherwise
        pytest.skip(
            f"the plugin route was measured from {MEASURED_FROM}; this is {claude_code.release}"
        )
    assert shutil.which("lich-hook", path=SYSTEM_PATH) is None, "a lich-hook is on the system PATH"
    return Claude(claude_code, tmp_path, project, model_api, lich, fake_lich)


def add_plugin(claude: Claude, clone: Path) -> float:
    started = time.monotonic()
    out = claude.cli("plugin", "marketplace", "add", str(clone))
    out += "\n" + claude.cli("plugin", "install", PLUGIN)
    print(out)
    return time.monotonic() - started


# --- the plugin alone --------------------------------------------------------------------


def test_the_plugin_alone_shows_no_error_and_reports_inside_lich(
    claude: Claude, tmp_path: Path
) -> None:
    clone = make_clone(tmp_path)
    seconds = add_plugin(claude, clone)
    cache = Path(claude.base["HOME"]) / ".claude" / "plugins" / "cache"
    copied = folder_size(cache)
    print(f"clone {folder_size(clone) / 1e6:.1f} MB; copy {copied / 1e6:.2f} MB in {seconds:.1f} s")
    assert copied < 5_000_000 < folder_size(clone)
    outside = claude.session("plugin-alone-outside-lich", claude.env(inside=False))
    assert error_lines(outside) == []
    assert claude.reports() == []
    inside = claude.session("plugin-alone-inside-lich", claude.env())
    assert error_lines(inside) == []
    [body] = claude.reports()
    assert (body["session_id"], body["provider"]) == (CARD, "claude")
    code, report, _ = doctor(claude.env(), claude.project)
    assert code == 0
    [row] = plugin_rows(report)
    assert row["status"] == "ok" and "runs the plugin's own copy" in json.dumps(row)


# --- the plugin and the install route --------------------------------------------------


def test_plugin_and_install_route_report_once_and_answer_once(
    claude: Claude, tmp_path: Path, fake_lich: FakeLich
) -> None:
    add_plugin(claude, make_clone(tmp_path))
    env = claude.env()
    installed = subprocess.run(
        [str(LICH_HOOK), "install", "claude"], env=env, cwd=claude.project, capture_output=True
    )
    assert installed.returncode == 0, installed.stderr
    assert b"twice" not in installed.stdout  # the two claim each event: no duplicate to warn of
    screen = claude.session("plugin-and-install-agent-call", env, agent_prompt())
    assert error_lines(screen) == [line for line in error_lines(screen) if "hook error" in line]
    runs = wait_for_hook(env, "SessionStart", count=2)
    assert sorted(str(r["decision"]) for r in runs) == ["other-route-acts", "report"]
    assert len(claude.reports()) == 1
    agent_runs = wait_for_hook(env, "PreToolUse", count=2)
    decisions = [str(r["decision"]) for r in agent_runs]
    assert decisions.count("other-route-acts") == 1, decisions
    opens = [c for c in fake_lich.calls() if c["argv"][:1] == ["open"]]
    assert len(opens) == 1, opens  # one card for one Agent call
    # the model was answered once: one tool_result for the one Agent call
    results = [
        block
        for request in claude.api.model_calls()
        for message in request.body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert len({json.dumps(block, sort_keys=True) for block in results}) == 1
    code, report, text = doctor(env, claude.project)
    assert code == 0 and "duplicates" not in text
    [row] = plugin_rows(report)
    assert row["status"] == "ok"
    assert len(hook_runs(env, "Stop")) == 2  # both ran; only one could ever report


# --- broken states: doctor's fix ends each ----------------------------------------------


def test_old_plugin_without_lich_hook_on_path_doctor_fix_path(
    claude: Claude, tmp_path: Path
) -> None:
    """The plugin of before (runs `lich-hook` from PATH), lich-hook installed but not on PATH
    (pipx without `pipx ensurepath`): every session shows errors; doctor names PATH."""
    add_plugin(claude, make_clone(tmp_path, old_plugin=True))
    broken = claude.session("old-plugin-not-on-path", claude.env())
    # its hooks are guarded now: no error line, the person's line once (settings/commandline.py)
    assert error_lines(broken) == []
    assert " ".join(broken.split()).count("lich-hook (on PATH), which is missing") == 1
    code, report, _ = doctor(claude.env(), claude.project)
    assert code == 1
    [row] = plugin_rows(report)
    assert row["status"] == "fail"
    assert "there is no lich-hook on PATH" in str(row["summary"])  # the reason, in --json
    fix = str(row["fix"])
    assert "pipx ensurepath" in fix and f"claude plugin uninstall {PLUGIN}" in fix
    assert not fix.startswith("register this installation")  # install leaves it failing
    # the fix: lich-hook's folder on PATH (what `pipx ensurepath` does), a new terminal
    fixed = claude.env(path=f"{LICH_HOOK.parent}:{SYSTEM_PATH}")
    after = claude.session("old-plugin-after-ensurepath", fixed)
    assert error_lines(after) == []
    assert len(claude.reports()) == 1
    assert doctor(fixed, claude.project)[0] == 0


def test_old_plugin_without_any_lich_hook_doctor_fix_uninstall(
    claude: Claude, tmp_path: Path
) -> None:
    add_plugin(claude, make_clone(tmp_path, old_plugin=True))
    env = claude.env()
    code, report, _ = doctor(env, claude.project)
    [row] = plugin_rows(report)
    assert code == 1 and f"claude plugin uninstall {PLUGIN}" in str(row["fix"])
    claude.cli("plugin", "uninstall", PLUGIN)
    after = claude.session("old-plugin-after-uninstall", env, hooks=False)
    assert error_lines(after) == []
    assert plugin_rows(doctor(env, claude.project)[1]) == []


def test_no_python_tells_the_person_once_and_doctor_names_the_fix(
    claude: Claude, tmp_path: Path
) -> None:
    add_plugin(claude, make_clone(tmp_path))
    bare = tmp_path / "bare-bin"  # a machine with a shell and no Python
    bare.mkdir()
    (bare / "sh").symlink_to("/bin/sh")
    env = claude.env(path=str(bare))
    outside = claude.session("no-python-outside-lich", claude.env(inside=False, path=str(bare)))
    assert error_lines(outside) == [] and "Python" not in outside
    inside = claude.session("no-python-inside-lich", env)
    assert error_lines(inside) == []
    assert inside.count("needs Python 3.10 or newer") == 1  # once, to the person
    assert claude.reports() == []
    code, report, _ = doctor(env, claude.project)
    [row] = plugin_rows(report)
    assert code == 1 and "finds no Python 3.10 or newer" in str(row["summary"])
    assert "install Python 3.10 or newer" in str(row["fix"])
    # the fix: a Python on PATH
    (bare / "python3").symlink_to(sys.executable)
    after = claude.session("no-python-after-fix", env)
    assert error_lines(after) == [] and "needs Python" not in after
    assert len(claude.reports()) == 1


# --- Codex: it gives a plugin's hooks PLUGIN_ROOT (0.171.0), so the same holds there ----


@pytest.fixture
def codex_card(
    codex: Client, tmp_path: Path, model_api: ModelAPI, lich: StandIn, fake_lich: FakeLich
) -> dict[str, str]:
    codex_home = tmp_path / "codex-home"
    seed_codex_home(codex_home, model_api.base_url, hooks=False)
    card = {**lich.env(CARD), "LICH_BIN": str(fake_lich.path), "LICH_SUBAGENT_DEPTH": "0"}
    env = codex_env(tmp_path, codex_home, **card)
    env["PATH"] = SYSTEM_PATH
    return env


def codex_cli(codex: Client, env: dict[str, str], cwd: Path, *args: str) -> str:
    ran = run_cli([str(codex.binary), *args], env, cwd)
    assert ran.returncode == 0, (args, ran.stdout, ran.stderr)
    return ran.stdout + ran.stderr


def test_codex_plugin_alone_reports_and_stands_down_for_install(
    codex: Client,
    codex_card: dict[str, str],
    tmp_path: Path,
    project: Path,
    lich: StandIn,
    model_api: ModelAPI,
) -> None:
    env = codex_card
    clone = make_clone(tmp_path)
    print(codex_cli(codex, env, project, "plugin", "marketplace", "add", str(clone)))
    print(codex_cli(codex, env, project, "plugin", "add", PLUGIN))
    cache = Path(env["CODEX_HOME"]) / "plugins" / "cache" / "lich-hooks" / "lich-hooks"
    [root] = cache.iterdir()
    print(f"Codex's copy: {folder_size(root) / 1e6:.2f} MB")
    assert folder_size(root) < 5_000_000
    trust_hook(
        env,
        f"{PLUGIN}:plugin/codex-hooks.json:session_start:0:0",
        root / "plugin" / "codex-hooks.json",
    )

    def reports() -> list[object]:
        return [r for r in lich.received if r.probe is None and r.endpoint == "session-start"]

    ran = run_exec(codex, "say hello", env, project)
    assert ran.returncode == 0 and REPLY_TEXT in ran.stdout, ran.stderr
    assert "hook: SessionStart Completed" in ran.stderr
    [record] = wait_for_hook(env, "SessionStart")
    assert record["decision"] == "report"
    assert len(lich.wait(1)) == 1
    # and the install route beside it, trusted: the first to claim reports, once
    installed = subprocess.run(
        [str(LICH_HOOK), "install", "codex"], env=env, cwd=project, capture_output=True
    )
    assert installed.returncode == 0, installed.stderr
    hooks_file = Path(env["CODEX_HOME"]) / "hooks.json"
    trust_hook(env, f"{hooks_file}:session_start:0:0", hooks_file)
    before = len(reports())
    ran = run_exec(codex, "say hello", env, project)
    assert ran.returncode == 0, ran.stderr
    runs = wait_for_hook(env, "SessionStart", count=3)
    assert sorted(str(r["decision"]) for r in runs[1:]) == ["other-route-acts", "report"]
    assert len(reports()) == before + 1
    code, _, text = doctor(env, project)
    assert code == 0 and "duplicates" not in text, text


def test_removing_the_codex_plugin_leaves_its_trust_record_and_an_empty_folder(
    codex: Client, codex_card: dict[str, str], tmp_path: Path, project: Path
) -> None:
    """What docs/install.md's Uninstall says the two `codex plugin` lines leave behind: the
    `[hooks.state."lich-hooks@lich-hooks:…"]` trust record in config.toml, and an empty
    plugins/cache/lich-hooks/ folder."""
    env = codex_card
    codex_cli(codex, env, project, "plugin", "marketplace", "add", str(make_clone(tmp_path)))
    codex_cli(codex, env, project, "plugin", "add", PLUGIN)
    codex_home = Path(env["CODEX_HOME"])
    [root] = (codex_home / "plugins" / "cache" / "lich-hooks" / "lich-hooks").iterdir()
    key = f"{PLUGIN}:plugin/codex-hooks.json:session_start:0:0"
    trust_hook(env, key, root / "plugin" / "codex-hooks.json")
    codex_cli(codex, env, project, "plugin", "remove", PLUGIN)
    codex_cli(codex, env, project, "plugin", "marketplace", "remove", "lich-hooks")
    config = (codex_home / "config.toml").read_text()
    assert f'[hooks.state."{key}"]' in config
    assert f'[plugins."{PLUGIN}"]' not in config and "[marketplaces.lich-hooks]" not in config
    assert list((codex_home / "plugins" / "cache" / "lich-hooks").iterdir()) == []
