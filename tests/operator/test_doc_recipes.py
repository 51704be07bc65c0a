"""docs/troubleshooting.md's examples, run as the doc writes them (read from the markdown), in a
scratch home against the stand-in: the "Reproduce without lich" recipe per route (the plugin
route's block once failed with `sh: 1: null: not found`), and the debug log's two examples (the
page once showed a `POST /session-start: taken (204)` line no run prints)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import lich_hooks
from lich_hooks.human.standin.server import StandIn
from tests.operator.conftest import Scratch
from tests.operator.harness_state import PLUGIN_ID
from tests.support.runner import LICH_HOOK, wait_for_log

DOC = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"


def recipe(route: str) -> str:
    """The sh block of "Reproduce without lich" whose first line names `route`."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## 3. Reproduce without lich", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    [block] = [str(b) for b in blocks if b.startswith(f"# the {route} route")]
    return block


def install_route(scratch: Scratch) -> None:
    assert scratch.cli("install", "claude").returncode == 0


def plugin_route(scratch: Scratch) -> None:
    """What `claude plugin install` leaves: the package folder copied into its cache, listed
    in installed_plugins.json (the marketplace's source is the package folder)."""
    config = scratch.home / ".claude"
    root = config / "plugins" / "cache" / "lich-hooks" / "lich-hooks" / lich_hooks.__version__
    shutil.copytree(
        Path(lich_hooks.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__")
    )
    record = {"version": 2, "plugins": {PLUGIN_ID: [{"scope": "user", "installPath": str(root)}]}}
    (config / "plugins" / "installed_plugins.json").write_text(json.dumps(record))


@pytest.mark.skipif(shutil.which("jq") is None, reason="the recipe needs jq")
@pytest.mark.parametrize(("route", "setup"), [("install", install_route), ("plugin", plugin_route)])
def test_the_recipe_reports_on_each_route(route: str, setup: object, scratch: Scratch) -> None:
    assert callable(setup)
    setup(scratch)
    with StandIn() as lich:
        # the `export` lines `lich-hook listen` prints, pasted into a second terminal
        env = {**scratch.env, **lich.env("card-1"), "PATH": "/usr/bin:/bin"}
        ran = subprocess.run(
            ["sh", "-c", recipe(route)],
            env=env,
            cwd=scratch.project,
            capture_output=True,
            timeout=60,
            check=False,
        )
        received = lich.wait(1)
    assert (ran.returncode, ran.stderr) == (0, b""), ran.stderr
    assert [r.accepted for r in received] == [
        {"session_id": "card-1", "provider_session_id": "test-1", "provider": "claude"}
    ]


@pytest.mark.skipif(shutil.which("jq") is None, reason="the recipe needs jq")
def test_the_wrong_route_says_so(scratch: Scratch) -> None:
    """Nothing of ours where the block looks: jq's error, not a shell running `null`."""
    install_route(scratch)
    ran = subprocess.run(
        ["sh", "-c", recipe("plugin")],
        env=scratch.env,
        cwd=scratch.project,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode != 0
    assert b"null" not in ran.stderr


def debug_examples() -> tuple[list[str], dict[str, object]]:
    """Section 2's LICH_HOOK_DEBUG lines and its LICH_HOOK_LOG line."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## 2. The debug log of a real run", 1)[1].split("\n## ", 1)[0]
    lines = re.findall(r"`(lich-hook: [^`]*)`", section)
    [logged] = re.findall(r"```json\n\s*(.*?)\n\s*```", section, re.S)
    return lines, json.loads(logged)


def test_the_debug_log_examples_are_what_a_run_prints(scratch: Scratch) -> None:
    lines, logged = debug_examples()
    event, provider = lines[0].split(": ")[1].split()
    with StandIn() as lich:
        env = {**scratch.env, **lich.env("card-1"), "LICH_HOOK_DEBUG": "1"}
        ran = subprocess.run(
            [str(LICH_HOOK), event, provider],
            input=b'{"session_id": "test-1"}',
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        lich.wait(1)
    assert (ran.returncode, ran.stderr.decode().splitlines()) == (0, lines)
    [record] = wait_for_log(env, 1)
    assert list(record) == list(logged)
    assert {k: record[k] for k in ("event", "provider", "decision", "outcome", "status")} == {
        k: logged[k] for k in ("event", "provider", "decision", "outcome", "status")
    }
