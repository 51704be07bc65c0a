"""The guard that no test leaves anything of ours in the real home (tests/conftest.py) fails
the test that wrote there, and only for what is ours.

Planted tests run in a pytest of their own with the suite's root conftest as a plugin and a
stand-in real home (LICH_TESTS_REAL_HOME), so the planted writes land in tmp, never in the home
of the person running the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support import realhome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lich_hooks.human.settings.kinds import Scope

PLANTED = """
import json, os, pathlib
HOME = pathlib.Path({home!r})
OURS = {{"hooks": {{"SessionStart": [{{"hooks": [
    {{"type": "command", "command": "/opt/x/bin/lich-hook SessionStart"}}]}}]}}}}


def _write(relative, text):
    path = HOME / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_writes_our_entry_into_claude_settings():
    _write(".claude/settings.json", json.dumps(OURS))


def test_removes_our_entry_from_codex_hooks():
    _write(".codex/hooks.json", "{{}}")


def test_writes_our_opencode_plugin():
    _write(".config/opencode/plugins/lich-hooks.js", "// ours")


def test_writes_into_our_state_directory():
    _write(".local/state/lich-hooks/card-1", "x")


def test_leaves_an_install_backup():
    _write(".gemini/config/hooks.json.lich-hook.bak", "{{}}")


def test_adds_our_plugin_to_claude_codes_record():
    _write(".claude/plugins/installed_plugins.json", json.dumps({{"plugins": {{
        "lich-hooks@lich-hooks": [{{"installPath": "/x"}}]}}}}))


def test_a_harness_working_in_its_own_folders():
    # what Codex and Claude Code do as they work: their own files, their own keys
    (HOME / ".codex" / "tmp").mkdir(parents=True, exist_ok=True)
    (HOME / ".codex" / "tmp" / "x").write_text("x")
    (HOME / ".codex" / "tmp" / "x").unlink()
    _write(".codex/config.toml", 'model = "o4"\\n[hooks.state."/h#0"]\\nhash = "1"\\n')
    settings = HOME / ".claude" / "settings.json"
    kept = json.loads(settings.read_text())
    _write(".claude/settings.json", json.dumps({{**kept, "model": "opus", "x": [1, 2]}}))
    _write(".claude/projects/-tmp-x/abc.jsonl", "{{}}\\n")
"""
CAUGHT = {
    "test_writes_our_entry_into_claude_settings": "ours in ~/.claude/settings.json",
    "test_removes_our_entry_from_codex_hooks": "ours in ~/.codex/hooks.json",
    "test_writes_our_opencode_plugin": "~/.config/opencode/plugins/lich-hooks.js",
    "test_writes_into_our_state_directory": "~/.local/state/lich-hooks",
    "test_leaves_an_install_backup": "~/.gemini/config/hooks.json.lich-hook.bak",
    "test_adds_our_plugin_to_claude_codes_record": "ours in ~/.claude/plugins/installed_plugins",
}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each planted test's teardown message ("" where the guard let it pass)."""
    tmp = tmp_path_factory.mktemp("planted")
    home = tmp / "home"
    (home / ".codex").mkdir(parents=True)
    # a person's settings that already hold our entry, and a Codex hooks.json of ours
    ours = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "lich-hook Stop"}]}]}}
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps(ours))
    (home / ".codex" / "hooks.json").write_text(json.dumps(ours))
    planted = tmp / "test_planted.py"
    planted.write_text(PLANTED.format(home=str(home)))
    report = tmp / "report.xml"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.conftest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            f"--junitxml={report}",
            str(planted),
        ],
        cwd=realhome.REPO,
        env={**environ, realhome.OVERRIDE: str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert report.exists(), ran.stdout + ran.stderr
    found: dict[str, str] = {}
    for case in ET.parse(report).iter("testcase"):
        name = case.get("name", "")
        found[name] = " ".join(
            (bad.get("message") or "") + (bad.text or "")
            for bad in (*case.iter("error"), *case.iter("failure"))
        )
    return found


@pytest.mark.parametrize("name", sorted(CAUGHT))
def test_a_write_of_ours_to_the_real_home_fails_the_test_that_made_it(
    outcomes: dict[str, str], name: str
) -> None:
    assert CAUGHT[name] in outcomes[name], outcomes[name]
    assert "left something of ours in the real home" in outcomes[name]


def test_a_harness_s_own_writes_beside_the_suite_fail_nothing(outcomes: dict[str, str]) -> None:
    assert outcomes["test_a_harness_working_in_its_own_folders"] == ""


def test_the_places_come_from_the_registry_for_every_harness_and_scope(tmp_path: Path) -> None:
    from lich_hooks.human.settings.registry import HARNESSES

    partly, whole = realhome.watched({realhome.OVERRIDE: str(tmp_path)}, [tmp_path / "p"])
    scopes: list[tuple[Scope, Path]] = [("user", tmp_path), ("project", tmp_path / "p")]
    for harness in HARNESSES.values():
        for scope, project in scopes:
            place = Path(harness.path(scope, {"HOME": str(tmp_path)}, str(project)))
            assert place in partly | whole, (harness.key, scope)
